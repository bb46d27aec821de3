import pytest

from spar_desktop.core.retrieval.fusion import ranked, rrf_fuse, tm2c2_fuse, tm2c2_normalize


def test_tm2c2_normalize_uses_theoretical_minimum_and_observed_max():
    # Cosine: inf = -1, max over the candidates = 0.6  ->  (s + 1) / 1.6
    dense = tm2c2_normalize({"a": 0.6, "b": 0.2, "c": -0.2}, inf=-1.0)
    assert dense == pytest.approx({"a": 1.0, "b": 0.75, "c": 0.5})
    # BM25: inf = 0, max = 8  ->  s / 8 (the lowest candidate does NOT become 0, unlike min-max)
    bm25 = tm2c2_normalize({"a": 8.0, "d": 6.0, "e": 2.0}, inf=0.0)
    assert bm25 == pytest.approx({"a": 1.0, "d": 0.75, "e": 0.25})
    assert tm2c2_normalize({}, 0.0) == {}
    assert tm2c2_normalize({"x": -1.0}, -1.0) == {"x": 0.0}


def test_tm2c2_fuse_hand_computed():
    dense = {"a": 0.6, "b": 0.2, "c": -0.2}
    bm25 = {"a": 8.0, "d": 6.0, "e": 2.0}
    fused = tm2c2_fuse(dense, bm25, alpha=0.3)  # alpha weights the dense side
    assert fused == pytest.approx({
        "a": 0.3 * 1.0 + 0.7 * 1.0,    # 1.0
        "b": 0.3 * 0.75 + 0.7 * 0.0,   # 0.225  (missing BM25 -> normalised minimum 0)
        "c": 0.3 * 0.5,                # 0.15
        "d": 0.7 * 0.75,               # 0.525  (missing dense -> 0)
        "e": 0.7 * 0.25,               # 0.175
    })
    assert [k for k, _ in ranked(fused)] == ["a", "d", "b", "e", "c"]
    # alpha = 0 is pure BM25, alpha = 1 pure dense
    assert [k for k, _ in ranked(tm2c2_fuse(dense, bm25, 0.0))][:3] == ["a", "d", "e"]
    assert [k for k, _ in ranked(tm2c2_fuse(dense, bm25, 1.0))][:3] == ["a", "b", "c"]
    with pytest.raises(ValueError):
        tm2c2_fuse(dense, bm25, 1.5)


def test_rrf_hand_computed():
    fused = rrf_fuse([["a", "b", "c"], ["c", "a"]], k=60)
    assert fused == pytest.approx({"a": 1 / 61 + 1 / 62, "b": 1 / 62, "c": 1 / 63 + 1 / 61})
    assert [k for k, _ in ranked(fused)] == ["a", "c", "b"]

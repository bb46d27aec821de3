"""Query-aware fusion weight (eq. 19–22) and conditional reranking with a Wilson-calibrated tau."""

from __future__ import annotations

import random

import numpy as np
import pytest

from spar_desktop.core.retrieval.alpha import (
    AlphaModel, fit_alpha, optimal_alpha, query_features, score_features,
)
from spar_desktop.core.retrieval.rerank import ConditionalReranker, calibrate_tau, wilson_lower


def test_query_features():
    assert query_features("What is the EGFR dose in 2019?").tolist() == [7, 1, 1, 1]
    assert query_features("gearbox oil").tolist() == [2, 0, 0, 0]


def test_optimal_alpha_is_the_closed_form_least_squares_weight():
    # Dense ranks the relevant candidate first, BM25 ranks it last: alpha* leans to dense.
    dense = {"a": 0.9, "b": 0.2, "c": 0.1}
    bm25 = {"a": 1.0, "b": 8.0, "c": 6.0}
    labels = {"a": 1.0}
    a = optimal_alpha(dense, bm25, labels)
    grid = np.linspace(0, 1, 1001)
    from spar_desktop.core.retrieval.fusion import tm2c2_fuse

    mse = [sum((labels.get(k, 0) - v) ** 2 for k, v in tm2c2_fuse(dense, bm25, g).items()) for g in grid]
    assert a == pytest.approx(float(grid[int(np.argmin(mse))]), abs=1e-3) and a > 0.5
    assert optimal_alpha({"a": 0.5}, {"a": 3.0}, {"a": 1.0}) is None  # both normalise to 1: alpha is moot
    assert optimal_alpha({}, {}, {}) is None


def synthetic_targets(n: int, seed: int = 0):
    """alpha* depends on the query: keyword-style queries (short, digits, acronyms) want BM25,
    long wh-questions want dense, as paper 002 §5.3 found."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        if rng.random() < 0.5:
            q = f"{rng.choice(['EGFR', 'BRCA1', 'TP53'])} {rng.randint(1, 99)} mg"
            a = 0.15 + rng.uniform(-0.05, 0.05)
        else:
            q = "why does " + " ".join(rng.choice(["the", "drug", "reduce", "tumour", "growth", "in", "mice"]) for _ in range(rng.randint(6, 12)))
            a = 0.85 + rng.uniform(-0.05, 0.05)
        out.append((q, a, np.zeros(21)))
    return out


def test_learned_alpha_beats_a_fixed_weight_on_query_dependent_targets(tmp_path):
    train, test = synthetic_targets(120, 0), synthetic_targets(60, 1)
    model = fit_alpha(train, "ridge")
    assert model.kind == "ridge" and model.r2 > 0.8
    err_learned = np.mean([(model.predict(q, {}, {}) - a) ** 2 for q, a, _ in test])
    fixed = np.mean([a for _, a, _ in train])  # the best single weight for these targets
    err_fixed = np.mean([(fixed - a) ** 2 for _, a, _ in test])
    assert err_learned < 0.1 * err_fixed
    assert 0.0 <= model.predict("x" * 10_000, {}, {}) <= 1.0  # clipped however odd the query
    again = AlphaModel.load(model.save(tmp_path / "alpha.json"))
    assert again.predict("BRCA1 5 mg", {}, {}) == pytest.approx(model.predict("BRCA1 5 mg", {}, {}))
    import copy

    around = copy.copy(model)
    around.anchor = 0.8  # deviations from the mean alpha*, around a weight tuned for ranking
    raw = model.predict("BRCA1 5 mg", {}, {})
    assert around.predict("BRCA1 5 mg", {}, {}) == pytest.approx(min(1.0, max(0.0, 0.8 + raw - model.mean_alpha)))
    assert AlphaModel.load(around.save(tmp_path / "a2.json")).anchor == 0.8
    gbt = fit_alpha([(q, a, score_features({"x": 0.5}, {"x": 2.0})) for q, a, _ in train], "gbt")
    assert abs(gbt.predict("TP53 7 mg", {"x": 0.5}, {"x": 2.0}) - 0.15) < 0.1
    with pytest.raises(ValueError, match="at least 10"):
        fit_alpha(train[:3])


def test_learned_alpha_is_used_by_the_searcher_only_when_no_alpha_is_given(encoder):
    from spar_desktop.core.documents.types import Chunk
    from spar_desktop.core.embedding.cache import CachedDocument
    from spar_desktop.core.retrieval.searcher import HybridSearcher

    texts = {"a": "gearbox oil contamination", "b": "blade erosion repair", "c": "grid voltage dip"}
    docs = {d: CachedDocument(d, "k", encoder.model_id, (Chunk("c0", t, 0, len(t), 1, 1),), encoder.encode([t]))
            for d, t in texts.items()}

    class Constant:
        def predict(self, query, dense, bm25):
            return 0.25

    s = HybridSearcher(docs, encoder, alpha_model=Constant())
    assert s.search("gearbox oil").alpha == 0.25
    assert s.search("gearbox oil", alpha=0.6).alpha == 0.6
    assert HybridSearcher(docs, encoder).search("gearbox oil").alpha == s.default_alpha


def test_wilson_lower_bound():
    assert wilson_lower(0, 0) == 0.0
    # Textbook value: 8 of 10, 95%: lower bound ≈ 0.490.
    assert wilson_lower(8, 10) == pytest.approx(0.4902, abs=1e-3)
    assert wilson_lower(50, 100) < 0.5 < wilson_lower(60, 100)


def test_calibrate_tau_on_a_constructed_labelled_run():
    # 200 queries: the higher the top fused score, the likelier a relevant top-5 result.
    rng = random.Random(3)
    run = []
    for i in range(200):
        s = i / 200
        run.append((s, rng.random() < s))
    tau = calibrate_tau(run, beta=0.7)
    assert tau is not None
    skipped = [ok for s, ok in run if s >= tau]
    assert len(skipped) >= 30 and wilson_lower(sum(skipped), len(skipped)) >= 0.7
    lower = [t for t in sorted({s for s, _ in run}) if t < tau]
    for t in lower:  # tau is the smallest threshold that qualifies
        sk = [ok for s, ok in run if s >= t]
        assert len(sk) < 30 or wilson_lower(sum(sk), len(sk)) < 0.7
    assert calibrate_tau(run, beta=0.99) is None  # nothing that precise with n >= 30
    assert calibrate_tau(run[:20], beta=0.0) is None  # fewer than 30 queries never qualify
    assert calibrate_tau(run, beta=0.7, grid=[0.0, 0.5, 0.8, 0.9]) in (0.5, 0.8, 0.9)


def test_conditional_reranker_runs_only_below_tau_and_counts_cost():
    from spar_desktop.core.llm.helpers import RerankResult
    from spar_desktop.core.retrieval.searcher import ChunkHit, FileHit, SearchResults

    def results(top: float) -> SearchResults:
        hits = tuple(ChunkHit(i + 1, f"d{i}#c0", f"d{i}", None, "c0", f"text {i}", 1, 1, None, None, top - i * 0.1, 1.0, 0.5)
                     for i in range(3))
        files = tuple(FileHit(i + 1, f"d{i}", None, None, top - i * 0.1, f"d{i}#c0", 1) for i in range(3))
        return SearchResults("q", "hybrid", "tm2c2", 0.8, hits, files)

    calls = []

    def reverse(query, passages):
        calls.append(passages)
        return RerankResult(tuple(reversed(range(len(passages)))), False)

    rr = ConditionalReranker(reverse, tau=0.9)
    confident = rr(results(0.95))
    assert [f.doc_id for f in confident.files] == ["d0", "d1", "d2"] and not calls
    unsure = rr(results(0.6))
    assert [f.doc_id for f in unsure.files] == ["d2", "d1", "d0"] and [h.rank for h in unsure.hits] == [1, 2, 3]
    st = rr.stats.to_json()
    assert st["queries"] == 2 and st["reranked"] == 1 and st["rate"] == 0.5 and st["fell_back"] == 0

    junk = ConditionalReranker(lambda q, p: RerankResult(tuple(range(len(p))), True, "not JSON"), tau=0.9)
    same = junk(results(0.6))
    assert [f.doc_id for f in same.files] == ["d0", "d1", "d2"] and junk.stats.fell_back == 1


def test_workspaces_use_a_trained_alpha_and_ignore_a_broken_one(ws, caplog):
    import logging

    from spar_desktop.core.retrieval.alpha import DEFAULT_FILE

    mgr, _ = ws
    path = mgr.library.settings.data_dir / DEFAULT_FILE
    AlphaModel("ridge", [0.0, 0.0, 0.0, 0.0], 0.3).save(path)
    mgr.searchers.clear()
    mgr.search("ops", "yaw motor")
    searcher = mgr.searchers.items()[0][1]
    assert searcher.search("yaw motor").alpha == pytest.approx(0.3)
    path.write_text("{not json", encoding="utf-8")
    caplog.set_level(logging.WARNING)
    mgr.searchers.clear()
    mgr.search("ops", "yaw motor")
    searcher = mgr.searchers.items()[0][1]
    assert searcher.alpha_model is None and "fixed alpha instead" in caplog.text

"""The default dense weight follows BM25's flatness per query (fusion.py): a flat keyword ranking
hands weight to meaning, a sharp one keeps it; small collections, explicit weights, learned models
and the 'fixed' rule keep their weight; the explanation reports the weight actually used."""

from __future__ import annotations

import json

import numpy as np
import pytest

from spar_desktop.core.documents.types import Chunk
from spar_desktop.core.embedding.cache import CachedDocument
from spar_desktop.core.retrieval import fusion as fz
from spar_desktop.core.retrieval import searcher_state
from spar_desktop.core.retrieval.explain import explain_score
from spar_desktop.core.retrieval.searcher import HybridSearcher

TOPICS = ["gearbox oil", "blade erosion", "grid voltage", "yaw motor", "tower crack", "pitch bearing",
          "brake pad", "cable twist", "rotor icing", "nacelle fire", "anemometer drift", "foundation bolt"]
# Every report mentions the turbine once (a flat keyword ranking for "turbine"); only one mentions
# corrosion (a sharp one).
TEXTS = {f"r{i}": f"Inspection report on the turbine: {t} found during the visit." for i, t in enumerate(TOPICS)}
TEXTS["r0"] += " Corrosion on the flange."


def docs_for(texts: dict[str, str], encoder) -> dict[str, CachedDocument]:
    return {d: CachedDocument(d, "k", encoder.model_id, (Chunk("c0", t, 0, len(t), 1, 1),), encoder.encode([t]))
            for d, t in texts.items()}


@pytest.fixture(scope="module")
def documents(encoder):
    return docs_for(TEXTS, encoder)


def expected_flatness(s: HybridSearcher, query: str) -> float:
    top = np.sort(s.bm25.scores(query))[::-1]
    return float(top[9] / top[0])


def test_flatness_and_weight_by_hand():
    assert fz.keyword_flatness([8.0, 6.0, 5, 5, 5, 5, 5, 5, 5, 4.0], units=50) == pytest.approx(0.5)
    assert fz.keyword_flatness([8.0, 6.0], units=50) == 0.0  # two matches in fifty units: sharp
    assert fz.keyword_flatness([8.0, 6.0], units=5) is None  # too few units to say
    assert fz.keyword_flatness([], units=50) is None  # nothing matched
    beta = (1 - fz.DEFAULT_ALPHA) / (1 - fz.FLATNESS_REFERENCE)
    assert fz.flatness_alpha(fz.FLATNESS_REFERENCE) == pytest.approx(fz.DEFAULT_ALPHA)
    assert fz.flatness_alpha(1.0) == 1.0  # BM25 cannot tell its candidates apart: meaning decides
    assert fz.flatness_alpha(0.0) == pytest.approx(1 - beta)
    assert fz.flatness_alpha(None) == fz.DEFAULT_ALPHA and fz.flatness_alpha(None, 0.6) == 0.6
    assert fz.flatness_alpha(0.9, 0.6) > 0.6 > fz.flatness_alpha(0.2, 0.6)  # around the searcher's weight
    weights = [fz.flatness_alpha(f) for f in np.linspace(0, 1, 11)]
    assert weights == sorted(weights) and all(0.0 <= w <= 1.0 for w in weights)
    with pytest.raises(ValueError):
        fz.check_alpha_rule("entropy")


def test_flat_keyword_ranking_gets_more_dense_weight_than_a_sharp_one(documents, encoder):
    s = HybridSearcher(documents, encoder)
    assert s.alpha_rule == "flatness"
    flat, sharp = s.search("turbine inspection", k=5), s.search("corrosion", k=5)
    assert flat.keyword_flatness == pytest.approx(expected_flatness(s, "turbine inspection"))
    assert flat.alpha == pytest.approx(fz.flatness_alpha(flat.keyword_flatness))
    assert sharp.keyword_flatness == 0.0 and sharp.alpha == pytest.approx(fz.flatness_alpha(0.0))
    assert flat.alpha > s.default_alpha > sharp.alpha
    assert sharp.files[0].doc_id == "r0"
    # The explanation reports the weight this query used, and the parts still add up.
    for res, q in ((flat, "turbine inspection"), (sharp, "corrosion")):
        for h in res.hits:
            assert h.alpha == res.alpha
            assert h.keyword_part + h.meaning_part == pytest.approx(h.score)
        assert f"weight {res.alpha:.2f})" in explain_score(res.hits[0], q).lines()[0]


def test_explicit_learned_and_fixed_weights_are_kept(documents, encoder):
    s = HybridSearcher(documents, encoder)
    assert s.search("turbine inspection", alpha=0.3).alpha == 0.3
    assert s.search("turbine inspection", alpha=0.3).keyword_flatness is None
    assert s.search("turbine inspection", method="bm25").alpha is None

    class Constant:
        def predict(self, query, dense, bm25):
            return 0.25

    assert HybridSearcher(documents, encoder, alpha_model=Constant()).search("corrosion").alpha == 0.25
    fixed = HybridSearcher(documents, encoder, alpha_rule="fixed")
    assert fixed.search("corrosion").alpha == fixed.search("turbine inspection").alpha == fz.DEFAULT_ALPHA
    # Assigning a weight (what `spar eval --alpha X` with learning does) means "use this weight".
    s.use_fixed_alpha(0.6)
    assert s.alpha_rule == "fixed" and s.search("turbine inspection").alpha == 0.6
    with pytest.raises(ValueError):
        HybridSearcher(documents, encoder, alpha_rule="guess")


def test_small_collections_keep_the_default_weight(encoder):
    few = {d: t for d, t in list(TEXTS.items())[:5]}
    res = HybridSearcher(docs_for(few, encoder), encoder).search("corrosion")
    assert res.keyword_flatness is None and res.alpha == fz.DEFAULT_ALPHA


def test_saved_searcher_keeps_its_rule(documents, encoder, tmp_path):
    fixed = HybridSearcher(documents, encoder, alpha_rule="fixed")
    searcher_state.save(fixed, tmp_path / "fixed")
    assert searcher_state.load(tmp_path / "fixed", encoder).alpha_rule == "fixed"
    s = HybridSearcher(documents, encoder)
    searcher_state.save(s, tmp_path / "s")
    # A state saved before the rule existed has no entry and takes today's default.
    manifest = json.loads((tmp_path / "s" / "manifest.json").read_text(encoding="utf-8"))
    del manifest["alpha_rule"]
    (tmp_path / "s" / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    loaded = searcher_state.load(tmp_path / "s", encoder)
    assert loaded.alpha_rule == fz.DEFAULT_ALPHA_RULE
    assert loaded.search("turbine inspection") == s.search("turbine inspection")

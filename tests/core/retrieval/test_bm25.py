import json

import numpy as np
import pytest

from spar_desktop.core.retrieval.bm25_index import META_FILE, BM25Index, TokenizerConfig

CORPUS = [
    "Aspirin reduces the risk of heart attack in adults with cardiovascular disease.",
    "Heart disease is the leading cause of death; exercise lowers heart risk.",
    "Statins lower cholesterol levels and reduce cardiovascular events.",
    "Children with asthma benefit from inhaled corticosteroids.",
    "Vitamin D deficiency is common in northern countries during winter.",
    "Regular exercise improves mood, sleep and cardiovascular fitness.",
    "Smoking increases the risk of lung cancer and heart disease.",
    "Inhaled steroids can slow growth in children when used for years.",
    "Cholesterol-lowering diets include oats, beans and nuts.",
    "Sleep deprivation raises blood pressure and the risk of stroke.",
    "Cancer screening programs detect tumours at an earlier stage.",
    "Winter sunlight is too weak for skin to synthesise vitamin D.",
]
QUERIES = [
    "heart attack risk",
    "cholesterol statins",
    "children asthma steroids",
    "vitamin D winter",
    "exercise sleep",
    "lung cancer smoking",
]


def test_tokenizer_lowercases_strips_punctuation_stopwords_and_stems():
    tok = TokenizerConfig()
    assert tok.tokenize("The Cats, running; in the U.S.A.!") == ["cat", "run", "u", "s"]
    assert tok.tokenize("5 mg/kg of IL-6") == ["5", "mg", "kg", "il", "6"]
    assert tok.tokenize("?!... --") == []
    plain = TokenizerConfig(stopwords=False, stem=False)
    assert plain.tokenize("The Cats") == ["the", "cats"]


def test_scores_equal_rank_bm25_okapi_up_to_the_constant_factor():
    """bm25s 'robertson' = BM25Okapi's formula without its constant (k1 + 1) factor; every query
    term here is in fewer than half the documents, so rank_bm25's negative-IDF floor never fires."""
    from rank_bm25 import BM25Okapi

    tok = TokenizerConfig()
    k1, b = 1.5, 0.75
    ours = BM25Index(k1=k1, b=b, method="robertson").build(CORPUS)
    ref = BM25Okapi([tok.tokenize(t) for t in CORPUS], k1=k1, b=b)
    for q in QUERIES:
        expected = ref.get_scores(tok.tokenize(q)) / (k1 + 1)
        np.testing.assert_allclose(ours.scores(q), expected, rtol=1e-5, atol=1e-6)


def test_default_lucene_ranking_matches_rank_bm25():
    from rank_bm25 import BM25Okapi

    tok = TokenizerConfig()
    ours = BM25Index().build(CORPUS)  # lucene IDF (paper eq. 12)
    ref = BM25Okapi([tok.tokenize(t) for t in CORPUS], k1=1.5, b=0.75)
    for q in QUERIES:
        got, _ = ours.top_k(q, 3)
        expected = np.argsort(-ref.get_scores(tok.tokenize(q)), kind="stable")[:3]
        assert got[0] == expected[0], q
        assert len(set(got.tolist()) & set(expected.tolist())) >= 2, q


def test_top_k_and_empty_queries():
    ix = BM25Index().build(CORPUS, [f"d{i}" for i in range(len(CORPUS))])
    pos, scores = ix.top_k("heart", 10)
    assert {ix.doc_ids[p] for p in pos} == {"d0", "d1", "d6"}
    assert np.all(np.diff(scores) <= 0) and np.all(scores > 0)
    assert ix.top_k("the of and", 5)[0].size == 0  # only stopwords
    assert ix.top_k("zebra", 5)[0].size == 0  # unknown word
    assert not ix.scores("").any()


def test_save_load_roundtrip(tmp_path):
    ix = BM25Index(k1=1.2, b=0.6, tokenizer=TokenizerConfig(stem=False)).build(CORPUS, [f"d{i}" for i in range(12)])
    ix.save(tmp_path / "bm25")
    meta = json.loads((tmp_path / "bm25" / META_FILE).read_text())
    assert meta["format"] == "spar-bm25" and meta["version"] == 1 and meta["tokenizer"]["stem"] is False
    assert not list((tmp_path / "bm25").glob("*.pkl"))
    loaded = BM25Index.load(tmp_path / "bm25")
    assert (loaded.k1, loaded.b, loaded.doc_ids) == (1.2, 0.6, ix.doc_ids)
    for q in QUERIES:
        np.testing.assert_allclose(loaded.scores(q), ix.scores(q))
    meta["version"] = 99
    (tmp_path / "bm25" / META_FILE).write_text(json.dumps(meta))
    with pytest.raises(ValueError):
        BM25Index.load(tmp_path / "bm25")

import numpy as np
import pytest

from spar_desktop.core.config import load_settings
from spar_desktop.core.documents.types import ChunkerConfig, ExtractedDocument, PageText
from spar_desktop.core.embedding.cache import EmbeddingCache
from spar_desktop.core.embedding.pipeline import content_hash, embed_documents
from spar_desktop.core.retrieval.collection_sync import sync_collection
from spar_desktop.core.retrieval.searcher import HybridSearcher
from spar_desktop.core.retrieval.vector_store import ChromaCollection, make_chroma_client

DOCS = {
    "solar": "Solar panels convert sunlight into electricity. Photovoltaic cells are made of silicon. "
    "Rooftop installations reduce household energy bills.\n\nInverters turn direct current into "
    "alternating current for the grid. Battery storage keeps power for the night.",
    "budget": "The city council approved the 2023 budget. Road repairs receive 4 million euros. "
    "Libraries get a small increase.\n\nThe mayor said taxes will not rise this year.",
    "vaccine": "Measles vaccination of infants starts at twelve months. A second dose follows later. "
    "Side effects such as mild fever are common and harmless.",
    "football": "The football club signed a new striker from Brazil. He scored twice on his debut. "
    "Fans celebrated the victory in the stadium.",
    "cooking": "To bake bread, mix flour, water, yeast and salt. Knead the dough and let it rise "
    "for two hours before baking at 230 degrees.",
}
CONFIG = ChunkerConfig(child_tokens=40, parent_tokens=120, overlap_tokens=5)


@pytest.fixture(scope="module")
def documents(tmp_path_factory, encoder):
    def load(text):
        return ExtractedDocument((PageText(1, text),), "text", title=None)

    items = [(content_hash(t), (lambda t=t: load(t))) for t in DOCS.values()]
    with EmbeddingCache(tmp_path_factory.mktemp("cache")) as cache:
        by_hash = embed_documents(items, CONFIG, encoder, cache)
    return {doc_id: by_hash[content_hash(t)] for doc_id, t in DOCS.items()}


@pytest.fixture(scope="module")
def searcher(documents, encoder):
    return HybridSearcher(documents, encoder, file_ids={"solar": 11})


def test_hybrid_finds_the_right_file_with_context(searcher):
    res = searcher.search("how do photovoltaic panels make electricity", k=3)
    assert res.message is None
    assert res.files[0].doc_id == "solar" and res.files[0].file_id == 11
    top = res.hits[0]
    assert top.doc_id == "solar" and top.key.startswith("solar#c")
    assert top.parent_text and top.text in top.parent_text
    assert (top.page_start, top.page_end) == (1, 1)
    assert top.bm25_score > 0 and -1 <= top.dense_score <= 1
    assert res.alpha == searcher.default_alpha
    scores = [h.score for h in res.hits]
    assert scores == sorted(scores, reverse=True)


def test_file_score_is_its_best_chunk(searcher):
    res = searcher.search("budget road repairs taxes", k=10)
    best = {}
    for h in res.hits:
        best.setdefault(h.doc_id, h.score)
    for f in res.files:
        if f.doc_id in best:
            assert f.score == pytest.approx(best[f.doc_id])
    assert len({f.doc_id for f in res.files}) == len(res.files)


def test_methods_and_alpha_extremes(searcher):
    q = "measles vaccine fever in infants"
    bm25 = searcher.search(q, k=5, method="bm25")
    dense = searcher.search(q, k=5, method="dense")
    assert bm25.files[0].doc_id == dense.files[0].doc_id == "vaccine"
    assert all(h.dense_score is None for h in bm25.hits)
    # alpha = 0 ranks BM25's candidates exactly as BM25 does; alpha = 1 as dense does
    pure_bm25 = [h.key for h in searcher.search(q, k=3, alpha=0.0).hits if h.score > 0]
    assert pure_bm25 == [h.key for h in bm25.hits[:3]]
    assert [h.key for h in searcher.search(q, k=3, alpha=1.0).hits] == [h.key for h in dense.hits[:3]]
    rrf = searcher.search(q, k=3, fusion="rrf")
    assert rrf.files[0].doc_id == "vaccine" and rrf.alpha is None
    exact = searcher.search(q, k=5, fill_missing="exact")
    assert all(h.bm25_score is not None and h.dense_score is not None for h in exact.hits)
    zero = searcher.search(q, k=10, fill_missing="zero")
    assert zero.files[0].doc_id == "vaccine"
    for h in zero.hits:  # a chunk only one retriever proposed scores alpha- or (1-alpha)-weighted 0
        if h.bm25_score is None:
            assert h.score <= searcher.default_alpha + 1e-9
    with pytest.raises(ValueError):
        searcher.search(q, fill_missing="guess")


def test_empty_and_odd_queries(searcher, documents):
    for q in ("", "   ", "?!...", "--"):
        res = searcher.search(q)
        assert res.empty and res.message and res.files == ()
    res = searcher.search("zzzqqq", method="bm25")
    assert res.empty and "search words" in res.message
    assert not searcher.search("zzzqqq").empty  # dense still proposes something
    with pytest.raises(ValueError):
        searcher.search("bread", method="magic")
    bm25_only = HybridSearcher(documents, None)
    assert bm25_only.search("bread dough", method="bm25").files[0].doc_id == "cooking"
    with pytest.raises(ValueError):
        bm25_only.search("bread dough")
    empty = HybridSearcher({}, None).search("bread", method="bm25")
    assert empty.empty and empty.message


def test_chroma_backend_gives_the_same_results(tmp_path, documents, encoder, searcher):
    client = make_chroma_client(load_settings(tmp_path))
    collection = ChromaCollection(client, "workspace test 1", encoder.model_id)
    in_memory = HybridSearcher(documents, encoder, file_ids={"solar": 11})
    assert collection.count() == 0  # building a searcher writes nothing to a store
    chroma, rewritten = sync_collection(in_memory, collection)
    assert collection.count() == len(searcher) and rewritten == 0
    for q in ("solar energy at night", "football striker debut", "bread baking temperature", "taxes"):
        for method in ("dense", "hybrid"):
            a = searcher.search(q, k=8, method=method)
            b = chroma.search(q, k=8, method=method)
            assert [h.key for h in a.hits] == [h.key for h in b.hits]
            np.testing.assert_allclose([h.score for h in a.hits], [h.score for h in b.hits], atol=1e-4)
    # Re-opening over the same collection adds nothing new
    again = ChromaCollection(client, "workspace test 1", encoder.model_id)
    assert again.sync(chroma.keys, chroma.vectors) == (0, 0)

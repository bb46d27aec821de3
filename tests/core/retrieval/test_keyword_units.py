"""BM25 over keyword units (parents) and the per-hit explanation of a fused score."""

import numpy as np
import pytest

from spar_desktop.core.documents.types import ChunkerConfig, ExtractedDocument, PageText
from spar_desktop.core.embedding.cache import EmbeddingCache
from spar_desktop.core.embedding.pipeline import content_hash, embed_documents
from spar_desktop.core.retrieval import searcher_state
from spar_desktop.core.retrieval.explain import explain_score, matched_spans, matched_words
from spar_desktop.core.retrieval.keyword_units import UnitMap
from spar_desktop.core.retrieval.searcher import HybridSearcher, KeyOverride

# Each document splits into several children under one parent: the query's words are spread
# over different children, so only a parent-level BM25 sees them together.
DOCS = {
    "heat": "Heat pumps move warmth from outside air into a house. They run on electricity. "
    "In cold winters the efficiency of the compressor falls. Insulation of the walls matters a lot. "
    "Subsidies for installation exist in many countries.",
    "pump": "A bicycle pump pushes air into a tyre. The valve keeps the air inside. "
    "Cyclists check the pressure weekly. A floor pump is faster than a hand pump.",
    "winter": "Winters in the north are long and cold. Snow covers the roads for months. "
    "People heat their houses with wood stoves. Days are short and nights are long.",
}
CONFIG = ChunkerConfig(child_tokens=16, parent_tokens=200, overlap_tokens=0)


@pytest.fixture(scope="module")
def documents(tmp_path_factory, encoder):
    items = [(content_hash(t), (lambda t=t: ExtractedDocument((PageText(1, t),), "text", None))) for t in DOCS.values()]
    with EmbeddingCache(tmp_path_factory.mktemp("cache")) as cache:
        by_hash = embed_documents(items, CONFIG, encoder, cache)
    return {doc_id: by_hash[content_hash(t)] for doc_id, t in DOCS.items()}


def test_units_are_parents_and_children_share_their_score(documents, encoder):
    s = HybridSearcher(documents, encoder)
    assert s.keyword_unit == "parent"
    assert len(s.units) == len(DOCS) < len(s)  # one parent per short document, several children each
    scores = s.bm25.scores("heat pump compressor efficiency in winter")
    res = s.search("heat pump compressor efficiency in winter", k=20, method="bm25")
    for h in res.hits:  # a child's BM25 score is its parent's
        assert h.bm25_score == pytest.approx(float(scores[s.units.unit_of[s.position(h.key)]]))
    # The parent holding all the words ranks first; child-level BM25 can only see one child's words.
    assert res.files[0].doc_id == "heat"
    chunk_level = HybridSearcher(documents, encoder, keyword_unit="chunk")
    assert len(chunk_level.units) == len(chunk_level)
    top_parent = s.search("heat pump compressor efficiency in winter", k=1, method="bm25").hits[0].bm25_score
    top_chunk = chunk_level.search("heat pump compressor efficiency in winter", k=1, method="bm25").hits[0].bm25_score
    assert top_parent != top_chunk


def test_unit_map_for_flat_chunks_and_orphans():
    class Table:
        keys = ["a#c0", "a#c1", "b#c0", "b#c1"]
        doc_of = ["a", "a", "b", "b"]
        parent_pos = np.array([0, 0, -1, -1])
        parent_ids = ["p0"]
        parent_texts = ["parent of a"]
        contexts = {1: "context of a#c1"}
        texts = ["x", "y", "flat b0", "flat b1"]

        def embed_text(self, p):
            return self.texts[p]

    units = UnitMap.build(Table(), "parent")
    assert units.ids == ["a#p0", "b#c0", "b#c1"]
    assert units.unit_of.tolist() == [0, 0, 1, 2]
    assert units.chunks_of([0, 2]) == [0, 1, 3]
    assert units.texts(Table()) == ["context of a#c1\n\nparent of a", "flat b0", "flat b1"]
    assert UnitMap.build(Table(), "chunk").ids == Table.keys
    with pytest.raises(ValueError):
        UnitMap.build(Table(), "sentence")


def test_saved_searcher_keeps_its_unit_and_results(documents, encoder, tmp_path):
    s = HybridSearcher(documents, encoder, keyword_unit="parent")
    searcher_state.save(s, tmp_path / "state")
    again = searcher_state.load(tmp_path / "state", encoder)
    assert again.keyword_unit == "parent" and again.units.ids == s.units.ids
    q = "cold winter heating"
    assert [h.key for h in again.search(q, k=5).hits] == [h.key for h in s.search(q, k=5).hits]
    manifest = searcher_state.read_manifest(tmp_path / "state")
    assert manifest["keyword_unit"] == "parent" and manifest["version"] == searcher_state.FORMAT_VERSION


def test_evolved_bm25_text_joins_the_unit(documents, encoder):
    s = HybridSearcher(documents, encoder)
    key = next(k for k in s.keys if k.startswith("pump#"))
    assert s.search("velocipede", k=3, method="bm25").empty
    evolved = s.with_keys({key: KeyOverride(None, "velocipede")})
    hits = evolved.search("velocipede", k=10, method="bm25").hits
    assert {h.doc_id for h in hits} == {"pump"}  # every child of the parent gets the unit's score
    assert len(hits) == sum(1 for k in s.keys if k.startswith("pump#"))


def test_hits_explain_their_fused_score(documents, encoder):
    s = HybridSearcher(documents, encoder)
    res = s.search("heat pumps in cold winters", k=5)
    for h in res.hits:
        assert h.keyword_part is not None and h.meaning_part is not None and h.alpha == res.alpha
        assert h.keyword_part + h.meaning_part == pytest.approx(h.score)
        assert not h.evolved and h.rank_without_evolution is None
    e = explain_score(res.hits[0], "heat pumps in cold winters")
    assert e.keyword_part == res.hits[0].keyword_part
    assert any(line.startswith("score ") and "keywords" in line and "meaning" in line for line in e.lines())
    # BM25- and dense-only lists have no fusion parts
    assert s.search("heat", k=2, method="bm25").hits[0].keyword_part is None


def test_an_evolved_key_reports_how_far_it_moved(documents, encoder):
    s = HybridSearcher(documents, encoder)
    q = "riding a bike"
    before = s.search(q, k=len(s))
    last = before.hits[-1]
    # Evolve the last-ranked chunk's dense key onto the query itself: it must move up, and the
    # explanation must say where its original key had it.
    evolved = s.with_keys({last.key: KeyOverride(encoder.encode_query(q), "", "test")})
    after = evolved.search(q, k=len(s))
    hit = next(h for h in after.hits if h.key == last.key)
    assert hit.evolved and hit.rank < last.rank
    assert hit.rank_without_evolution == last.rank
    moved = explain_score(hit, q).moved_by_evolution()
    assert moved == last.rank - hit.rank > 0
    assert any("moved it up" in line for line in explain_score(hit, q).lines())


def test_matched_words_follow_the_bm25_tokenizer():
    text = "Infections after surgery: the infected wound and THE infections rate."
    spans = matched_spans("infection of wounds", text)
    assert [text[a:b] for a, b in spans] == ["Infections", "infected", "wound", "infections"]
    assert matched_words("infection of wounds", text) == ("Infections", "infected", "wound")
    assert matched_spans("the of", text) == []  # stop-words match nothing


def test_the_passage_shown_for_a_document_is_the_child_that_matches(documents, encoder):
    s = HybridSearcher(documents, encoder)
    q = "weekly tyre pressure check"
    res = s.search(q, k=3)
    top = res.hits[0]
    assert top.doc_id == "pump" and "pressure" in top.text.lower()
    siblings = [h for h in res.hits if h.doc_id == "pump"]
    for h in siblings:  # the parts still add up after the passage adjustment
        assert h.keyword_part + h.meaning_part == pytest.approx(h.score)
    # Files are ranked by the unadjusted scores: the same as with passages left as dense ranked them.
    assert [f.doc_id for f in res.files] == [f.doc_id for f in s.search(q, k=3, fill_missing="exact").files]

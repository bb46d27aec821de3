"""Chunking: offsets, pages, token budgets, parent/child structure, overlap, fixed windows."""

from __future__ import annotations

import pytest

from spar_desktop.core.documents.chunking import chunk_document
from spar_desktop.core.documents.extract import extract
from spar_desktop.core.documents.segment import Units, sentences
from spar_desktop.core.documents.types import ChunkerConfig, ExtractedDocument, PageText
from tests.support.tokens import chunker_tokens

PROSE = (
    "Centrifugal pumps move fluid by converting rotational energy. Dr. Smith measured the "
    "efficiency of pump No. 7 at the plant, e.g. under partial load. The results were poor! "
    "Why did the seals fail so often? Maintenance logs from 2019 show 1234567 cycles.\n\n"
    "## Maintenance schedule\n- inspect bearings monthly\n- replace seals yearly\n\n"
    # a paragraph of record lines with no full stops: longer than a child, split at lines
    + "".join(f"id: {i}; part: bearing {i}; supplier: ACME-GmbH; price_eur: {i}.50\n"
              for i in range(40)) + "\n"
    "東京の工場では新しいポンプを導入しました。性能は良好です。\n\n"
    + "A very long sentence without any full stop that just keeps going and going " * 30
)


def _doc(*pages: str, title: str | None = None) -> ExtractedDocument:
    return ExtractedDocument(tuple(PageText(i + 1, t) for i, t in enumerate(pages)), "txt", title)


def _fake_embed(texts: list[str]):
    import numpy as np

    topics = ("apple", "engine", "ocean")
    out = np.zeros((len(texts), len(topics) + 1), dtype=np.float32)
    for i, t in enumerate(texts):
        hits = [k for k, word in enumerate(topics) if word in t.lower()]
        out[i, hits[0] if hits else len(topics)] = 1.0
    return out


CONFIGS = [
    ChunkerConfig(),
    ChunkerConfig(child_tokens=40, parent_tokens=120, overlap_tokens=8),
    ChunkerConfig(method="fixed", child_tokens=50, overlap_tokens=10),
    ChunkerConfig(method="fixed", child_tokens=50, overlap_tokens=0),
    ChunkerConfig(method="semantic", child_tokens=60),
]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: c.cache_key)
def test_every_chunk_text_is_its_span_of_the_document(config):
    doc = _doc(PROSE, "Second page. " * 80, PROSE[::-1])
    text = doc.text
    chunks = chunk_document(doc, config, embed_fn=_fake_embed, file_id=9)
    assert chunks
    for c in chunks:
        assert text[c.char_start:c.char_end] == c.text
        assert c.text and c.text == c.text.strip()
        assert c.file_id == 9
        assert 1 <= c.page_start <= c.page_end <= 3
    units = Units(text)
    starts, ends = set(units.starts), set(units.ends)
    for c in chunks:  # chunks never cut through a word or token unit
        assert c.char_start in starts and c.char_end in ends, c
    # Searchable chunks together cover every word of the document.
    searchable = [c for c in chunks if c.level != "parent"]
    covered = sorted((c.char_start, c.char_end) for c in searchable)
    for s, e in zip(units.starts, units.ends):
        assert any(a <= s and e <= b for a, b in covered), text[s:e]


@pytest.mark.parametrize("config", CONFIGS[:4], ids=lambda c: c.cache_key)
def test_searchable_chunks_stay_within_child_budget(config):
    doc = _doc(PROSE * 3)
    for c in chunk_document(doc, config):
        limit = config.parent_tokens if c.level == "parent" else config.child_tokens
        assert chunker_tokens(c.text) <= limit, c


@pytest.mark.parametrize("config", [
    ChunkerConfig(child_tokens=60, parent_tokens=200, overlap_tokens=10),
    ChunkerConfig(method="fixed", child_tokens=60, overlap_tokens=10),
], ids=["hierarchical", "fixed"])
def test_page_spans_follow_pdf_pages(make_pdf, config):
    # Every word names its page ('p2w17.'), so a chunk's true page span can be read off its text.
    pages = [" ".join(f"p{n}w{i}." for i in range(120)) for n in (1, 2, 3)]
    doc = extract(make_pdf("three.pdf", pages))
    assert [p.page for p in doc.pages] == [1, 2, 3]
    chunks = chunk_document(doc, config)
    spanning = 0
    for c in chunks:
        words = c.text.split()
        first_page = int(words[0].split("w")[0][1:])
        last_page = int(words[-1].split("w")[0][1:])
        assert (c.page_start, c.page_end) == (first_page, last_page)
        spanning += c.page_start != c.page_end
    assert {c.page_start for c in chunks} == {1, 2, 3}
    if config.method == "fixed":
        assert spanning >= 1  # windows ignore structure and do cross page breaks


def test_parents_and_children_are_linked_and_nested():
    doc = _doc(PROSE * 4)
    config = ChunkerConfig(child_tokens=50, parent_tokens=200, overlap_tokens=10)
    chunks = chunk_document(doc, config)
    parents = [c for c in chunks if c.level == "parent"]
    children = [c for c in chunks if c.level == "child"]
    assert len(parents) >= 3 and len(children) > len(parents)
    assert [p.chunk_id for p in parents] == [f"p{i}" for i in range(len(parents))]
    assert [c.chunk_id for c in children] == [f"c{i}" for i in range(len(children))]
    by_id = {p.chunk_id: p for p in parents}
    for c in children:
        parent = by_id[c.parent_id]
        assert parent.char_start <= c.char_start and c.char_end <= parent.char_end
    for a, b in zip(parents, parents[1:]):
        assert a.char_end <= b.char_start  # parents partition the text
        assert a.parent_id is None
    # every parent has children, listed right after it (document order)
    seen_parent = None
    for c in chunks:
        if c.level == "parent":
            seen_parent = c.chunk_id
        else:
            assert c.parent_id == seen_parent


def test_children_overlap_by_at_most_overlap_tokens():
    words = " ".join(f"w{i:04d}" for i in range(600))  # no sentence ends: pure windows
    doc = _doc(words)
    config = ChunkerConfig(child_tokens=40, parent_tokens=400, overlap_tokens=8)
    children = [c for c in chunk_document(doc, config) if c.level == "child"]
    text = doc.text
    overlaps = 0
    for a, b in zip(children, children[1:]):
        if a.parent_id != b.parent_id:
            continue
        assert b.char_start < a.char_end  # they do overlap
        assert b.char_start > a.char_start  # and always advance
        shared = text[b.char_start:a.char_end]
        assert 0 < chunker_tokens(shared) <= config.overlap_tokens
        overlaps += 1
    assert overlaps >= 5
    no_overlap = [c for c in chunk_document(doc, ChunkerConfig(child_tokens=40, parent_tokens=400,
                                                                 overlap_tokens=0)) if c.level == "child"]
    for a, b in zip(no_overlap, no_overlap[1:]):
        assert b.char_start >= a.char_end


def test_overlap_snaps_to_a_sentence_start_when_one_fits():
    text = " ".join(f"Sentence number {i} is short." for i in range(60))
    config = ChunkerConfig(child_tokens=40, parent_tokens=800, overlap_tokens=12)
    children = [c for c in chunk_document(_doc(text), config) if c.level == "child"]
    assert len(children) > 3
    for c in children[1:]:
        assert c.text.startswith("Sentence number")


def test_parents_prefer_paragraph_starts():
    paras = [" ".join(f"Para {p} sentence {s} has a few words." for s in range(6)) for p in range(20)]
    doc = _doc("\n\n".join(paras))
    config = ChunkerConfig(child_tokens=60, parent_tokens=200, overlap_tokens=0)
    parents = [c for c in chunk_document(doc, config) if c.level == "parent"]
    assert len(parents) > 3
    for p in parents:
        assert p.text.startswith("Para ") and " sentence 0 " in p.text[:30]


def test_fixed_windows_exact_arithmetic():
    text = " ".join("abc" for _ in range(230))  # 3-letter words cost exactly 1 token
    doc = _doc(text)
    chunks = chunk_document(doc, ChunkerConfig(method="fixed", child_tokens=50, overlap_tokens=10))
    assert all(c.level == "flat" and c.parent_id is None for c in chunks)
    assert [c.chunk_id for c in chunks] == [f"c{i}" for i in range(len(chunks))]
    starts = [c.char_start // 4 for c in chunks]  # word index: each word is 'abc '
    assert starts == [0, 40, 80, 120, 160, 200]
    assert [len(c.text.split()) for c in chunks] == [50, 50, 50, 50, 50, 30]


def test_empty_and_blank_documents_give_no_chunks():
    assert chunk_document(_doc(), ChunkerConfig()) == []
    assert chunk_document(_doc("   \n\n  "), ChunkerConfig(method="fixed")) == []
    assert chunk_document(ExtractedDocument((), "pdf", no_text_reason="scan"), ChunkerConfig()) == []


def test_chunking_is_deterministic():
    doc = _doc(PROSE * 2)
    assert chunk_document(doc) == chunk_document(doc)


@pytest.mark.parametrize("bad", [
    ChunkerConfig(method="magic"),
    ChunkerConfig(child_tokens=50, overlap_tokens=50),
    ChunkerConfig(child_tokens=300, parent_tokens=200),
    ChunkerConfig(child_tokens=0),
])
def test_invalid_configs_are_rejected(bad):
    with pytest.raises(ValueError):
        chunk_document(_doc("some text."), bad)


def test_sentence_splitter_handles_abbreviations_lists_and_cjk():
    text = ("Dr. Smith met Mr. Jones at 5 p.m. yesterday. They discussed e.g. the J. R. R. "
            "Tolkien books. Then they left!\n- item one\n- item two\n\n"
            "東京です。大阪です。")
    got = [text[s.start:s.end] for s in sentences(text)]
    assert got == [
        "Dr. Smith met Mr. Jones at 5 p.m. yesterday.",
        "They discussed e.g. the J. R. R. Tolkien books.",
        "Then they left!",
        "- item one",
        "- item two",
        "東京です。",
        "大阪です。",
    ]
    assert [s.para for s in sentences(text)] == [True, False, False, False, False, True, False]

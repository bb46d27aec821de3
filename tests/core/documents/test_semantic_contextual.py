"""Semantic breakpoints with a deterministic fake encoder, and the contextual-enhancement hook."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from spar_desktop.core.documents.chunking import chunk_document, contextualize
from spar_desktop.core.documents.semantic import breakpoints
from spar_desktop.core.documents.types import ChunkerConfig, ExtractedDocument, PageText
from tests.support.tokens import chunker_tokens

TOPICS = ("apple", "engine", "ocean")


def topic_embed(texts: list[str]) -> np.ndarray:
    """One-hot topic vectors: sentences on the same topic are identical, others orthogonal."""
    out = np.zeros((len(texts), len(TOPICS)), dtype=np.float32)
    for i, t in enumerate(texts):
        out[i, next(k for k, w in enumerate(TOPICS) if w in t)] = 1.0
    return out


def _topic_doc() -> tuple[ExtractedDocument, list[str]]:
    blocks = [
        [f"The apple orchard row {i} is in bloom." for i in range(5)],
        [f"The engine block {i} needs new gaskets." for i in range(4)],
        [f"The ocean current {i} turns north in spring." for i in range(6)],
    ]
    # One paragraph: only the embeddings can tell where topics change.
    text = " ".join(s for b in blocks for s in b)
    return ExtractedDocument((PageText(1, text),), "txt"), [" ".join(b) for b in blocks]


def test_semantic_breaks_exactly_at_topic_changes():
    doc, expected = _topic_doc()
    chunks = chunk_document(doc, ChunkerConfig(method="semantic", child_tokens=200), embed_fn=topic_embed)
    assert [c.text for c in chunks] == expected
    assert all(c.level == "flat" and c.parent_id is None for c in chunks)
    assert [c.chunk_id for c in chunks] == ["c0", "c1", "c2"]
    for c in chunks:
        assert doc.text[c.char_start:c.char_end] == c.text


def test_semantic_chunks_are_capped_without_crossing_topics():
    doc, _ = _topic_doc()
    chunks = chunk_document(doc, ChunkerConfig(method="semantic", child_tokens=25), embed_fn=topic_embed)
    assert len(chunks) > 3
    for c in chunks:
        assert chunker_tokens(c.text) <= 25
        assert sum(w in c.text for w in TOPICS) == 1  # never mixes two topics


def test_semantic_without_embed_fn_is_a_clear_error():
    doc, _ = _topic_doc()
    with pytest.raises(ValueError, match="embed_fn"):
        chunk_document(doc, ChunkerConfig(method="semantic"))


def test_semantic_rejects_wrongly_shaped_vectors():
    doc, _ = _topic_doc()
    with pytest.raises(ValueError, match="shape"):
        chunk_document(doc, ChunkerConfig(method="semantic"),
                       embed_fn=lambda texts: np.ones((len(texts) + 1, 3)))


def test_breakpoint_percentile_rule():
    # half the pairs are drops: the tie at the quantile still counts as a break
    assert breakpoints(np.array([1.0, 0.0, 1.0, 0.0]), 0.25).tolist() == [1, 3]
    # a few drops among many similar pairs: only the drops break
    sims = np.array([0.9, 0.92, 0.2, 0.95, 0.91, 0.3, 0.9, 0.93])
    assert breakpoints(sims, 0.25).tolist() == [2, 5]
    # uniform similarity: nothing to cut at
    assert breakpoints(np.full(6, 0.8), 0.25).tolist() == []
    assert breakpoints(np.array([]), 0.25).tolist() == []


def test_unnormalised_vectors_are_normalised():
    doc, expected = _topic_doc()
    scaled = chunk_document(doc, ChunkerConfig(method="semantic"),
                            embed_fn=lambda t: topic_embed(t) * 7.5)
    assert [c.text for c in scaled] == expected


# ------------------------------------------------------------------------------ contextual hook

def _doc() -> ExtractedDocument:
    text = " ".join(f"Section {i} explains pump maintenance step {i}." for i in range(80))
    return ExtractedDocument((PageText(1, text),), "txt", title="Pump Manual")


def test_contextualize_sets_context_on_searchable_chunks_only():
    doc = _doc()
    chunks = chunk_document(doc, ChunkerConfig(child_tokens=50, parent_tokens=150, overlap_tokens=0))
    calls = []

    def context_fn(excerpt: str, chunk_text: str) -> str:
        calls.append((excerpt, chunk_text))
        return f"  From the Pump Manual;\n about {chunk_text.split()[1]}  "

    out = contextualize(chunks, doc, context_fn)
    assert len(out) == len(chunks)
    for before, after in zip(chunks, out):
        assert (after.chunk_id, after.text, after.char_start) == (before.chunk_id, before.text,
                                                                  before.char_start)
        if before.level == "parent":
            assert after.context is None
        else:
            assert after.context == f"From the Pump Manual; about {before.text.split()[1]}"
            assert after.embed_text == f"{after.context}\n\n{after.text}"
    assert len(calls) == sum(c.level == "child" for c in chunks)
    assert all(excerpt.startswith("Pump Manual\n\n") for excerpt, _ in calls)


def test_contextual_config_applies_context_fn_in_chunk_document():
    doc = _doc()
    on = chunk_document(doc, ChunkerConfig(contextual=True), context_fn=lambda d, c: "ctx")
    off = chunk_document(doc, ChunkerConfig(), context_fn=lambda d, c: "ctx")
    assert all(c.context == "ctx" for c in on if c.level == "child")
    assert all(c.context is None for c in off)


def test_contextualize_failure_or_missing_fn_returns_chunks_unchanged(caplog):
    doc = _doc()
    chunks = chunk_document(doc, ChunkerConfig(child_tokens=50, parent_tokens=150, overlap_tokens=0))
    seen = []

    def flaky(excerpt: str, chunk_text: str) -> str:
        seen.append(chunk_text)
        if len(seen) == 3:
            raise ConnectionError("ollama not reachable")
        return "context"

    with caplog.at_level(logging.WARNING):
        assert contextualize(chunks, doc, flaky) is chunks
        assert contextualize(chunks, doc, None) is chunks
    assert all(c.context is None for c in chunks)
    assert "ollama not reachable" in caplog.text


def test_excerpt_of_long_document_includes_the_chunk_neighbourhood():
    from spar_desktop.core.documents.contextual import document_excerpt

    text = "".join(f"[{i:05d}]" for i in range(10_000))  # 70k chars
    start = text.index("[08000]")
    excerpt = document_excerpt(text, "T", start, start + 7, limit=2000)
    assert excerpt.startswith("T\n\n[00000]")
    assert "[08000]" in excerpt
    assert len(excerpt) <= 2000 + 20


def test_a_cached_documents_text_is_rebuilt_from_its_chunks_for_the_model():
    """Enhancement asks about cached documents without reading the files again: the text the
    model sees is the document's own, at the same offsets (whitespace between sections aside)."""
    from spar_desktop.core.documents.contextual import document_excerpt, text_from_chunks

    doc = _doc()
    chunks = chunk_document(doc, ChunkerConfig(child_tokens=50, parent_tokens=150, overlap_tokens=10))
    rebuilt = text_from_chunks(chunks)
    assert len(rebuilt) <= len(doc.text)
    for c in chunks:
        assert rebuilt[c.char_start:c.char_end] == c.text
    assert rebuilt.split() == doc.text.split()
    child = next(c for c in chunks if c.level == "child")
    assert document_excerpt(rebuilt, doc.title, child.char_start, child.char_end).split() == \
        document_excerpt(doc.text, doc.title, child.char_start, child.char_end).split()


def test_a_context_failure_that_must_not_fall_back_goes_through():
    """An evaluation must not cache or measure plain passages as contextual ones."""
    from spar_desktop.core.documents.contextual import ContextFailed

    doc = _doc()

    def strict(excerpt: str, chunk_text: str) -> str:
        raise ContextFailed("the language model failed: 500")

    with pytest.raises(ContextFailed):
        chunk_document(doc, ChunkerConfig(contextual=True), context_fn=strict)

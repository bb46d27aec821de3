import numpy as np
import pytest

from spar_desktop.core.documents.types import ChunkerConfig, ExtractedDocument, PageText
from spar_desktop.core.embedding.cache import EmbeddingCache
from spar_desktop.core.embedding.pipeline import content_hash, embed_documents
from spar_desktop.core.progress import CancelToken, Cancelled

TEXTS = [
    "Solar panels convert sunlight into electricity. " * 30,
    "The committee approved the annual budget after a long debate about road repairs.",
    "Vaccination schedules for infants were revised. " * 40 + "\n\nA second paragraph on side effects.",
    "",  # no text: cached as an empty document, never re-read
]
CONFIG = ChunkerConfig(child_tokens=64, parent_tokens=256, overlap_tokens=8)


class CountingLoader:
    def __init__(self) -> None:
        self.calls = 0

    def items(self, texts):
        def load(text):
            self.calls += 1
            return ExtractedDocument((PageText(1, text),), "text", title=None)

        return [(content_hash(t), (lambda t=t: load(t))) for t in texts]


def test_second_build_embeds_nothing(tmp_path, encoder):
    loader = CountingLoader()
    with EmbeddingCache(tmp_path) as cache:
        before_texts, before_calls = encoder.texts_encoded, encoder.encode_calls
        first = embed_documents(loader.items(TEXTS), CONFIG, encoder, cache)
        n_children = sum(len(d.children) for d in first.values())
        assert n_children > len(TEXTS)  # the long texts were split into several children
        assert encoder.texts_encoded - before_texts == n_children
        assert encoder.encode_calls - before_calls == 1  # all documents in one big encode call
        assert loader.calls == 4

        mid_texts, mid_calls = encoder.texts_encoded, encoder.encode_calls
        second = embed_documents(loader.items(TEXTS), CONFIG, encoder, cache)
        assert (encoder.texts_encoded, encoder.encode_calls) == (mid_texts, mid_calls)
        assert loader.calls == 4  # cache hits never open the document
    for h, doc in first.items():
        assert second[h].chunks == doc.chunks
        np.testing.assert_array_equal(second[h].vectors, doc.vectors)
    empty = first[content_hash("")]
    assert empty.chunks == () and empty.vectors.shape == (0, encoder.dim)


def test_vectors_match_direct_encoding_and_only_new_docs_embed(tmp_path, encoder):
    with EmbeddingCache(tmp_path) as cache:
        embed_documents(CountingLoader().items(TEXTS[:2]), CONFIG, encoder, cache)
        before = encoder.texts_encoded
        docs = embed_documents(CountingLoader().items(TEXTS[:3]), CONFIG, encoder, cache)
        new = docs[content_hash(TEXTS[2])]
        assert encoder.texts_encoded - before == len(new.children)
    direct = encoder.encode([c.embed_text for c in new.children])
    np.testing.assert_allclose(new.vectors, direct, atol=1e-5)


def test_errors_and_cancel(tmp_path, encoder):
    def broken():
        raise OSError("unreadable")

    items = CountingLoader().items(TEXTS[:2]) + [("bad", broken)]
    errors = []
    with EmbeddingCache(tmp_path) as cache:
        docs = embed_documents(items, CONFIG, encoder, cache, on_error=lambda h, e: errors.append((h, str(e))))
        assert set(docs) == {content_hash(TEXTS[0]), content_hash(TEXTS[1])}
        assert errors == [("bad", "unreadable")]
        with pytest.raises(OSError):
            embed_documents([("bad", broken)], CONFIG, encoder, cache)
        token = CancelToken()
        token.cancel()
        with pytest.raises(Cancelled):
            embed_documents(CountingLoader().items(TEXTS[2:3]), CONFIG, encoder, cache, cancel=token)
        assert not cache.has(content_hash(TEXTS[2]), CONFIG.cache_key, encoder.model_id)


def test_duplicate_content_is_processed_once(tmp_path, encoder):
    loader = CountingLoader()
    with EmbeddingCache(tmp_path) as cache:
        docs = embed_documents(loader.items([TEXTS[1], TEXTS[1]]), CONFIG, encoder, cache)
    assert len(docs) == 1 and loader.calls == 1


def test_progress_never_runs_backwards_and_its_numbers_match_its_words(tmp_path, encoder):
    """A build flushes chunks to the encoder several times; the chunk count in the message must
    keep growing across flushes, and the done/total the bar uses are the ones the text names."""
    seen = []
    texts = [f"Note {i}: " + "turbine blades were inspected and repaired. " * 20 for i in range(12)]
    with EmbeddingCache(tmp_path) as cache:
        embed_documents(CountingLoader().items(texts), CONFIG, encoder, cache, progress=seen.append,
                        flush_texts=8, batch_size=4)
    embedding = [p for p in seen if p.message.startswith("embedding")]
    assert len(embedding) > 3
    fractions = [p.done / p.total for p in embedding]
    assert fractions == sorted(fractions)
    chunk_counts = [int(p.message.split()[1].replace(",", "")) for p in embedding]
    assert chunk_counts == sorted(chunk_counts)
    for p in embedding:
        assert f"({p.done:,}/{p.total:,} documents)" in p.message


def test_an_edited_document_embeds_only_its_passages_whose_text_is_new(tmp_path, encoder):
    original = " ".join(f"Paragraph {i} says the pump at site {i} was serviced on schedule." for i in range(40))
    edited = original + " A cracked bracket was found behind the valve."
    with EmbeddingCache(tmp_path) as cache:
        old = embed_documents(CountingLoader().items([original]), CONFIG, encoder, cache)[content_hash(original)]
        before = encoder.texts_encoded
        new = embed_documents(CountingLoader().items([edited]), CONFIG, encoder, cache)[content_hash(edited)]
        kept = {c.embed_text for c in old.children}
        fresh = [c for c in new.children if c.embed_text not in kept]
        assert len(old.children) > 3 and 1 <= len(fresh) < len(new.children)
        assert encoder.texts_encoded - before == len(fresh)  # the unchanged passages' vectors were copied
        stored = cache.get(content_hash(edited), CONFIG.cache_key, encoder.model_id)
        np.testing.assert_array_equal(stored.vectors, new.vectors)
    np.testing.assert_allclose(new.vectors, encoder.encode([c.embed_text for c in new.children]), atol=1e-5)


class FailingEncoder:
    """The real encoder until its ``fail_on``-th encode call, which raises (a model error mid-build)."""

    def __init__(self, inner, fail_on: int) -> None:
        self.inner, self.fail_on, self.calls = inner, fail_on, 0
        self.model_id, self.dim = inner.model_id, inner.dim

    def encode(self, texts, **kw):
        self.calls += 1
        if self.calls == self.fail_on:
            raise RuntimeError("encoder broke")
        return self.inner.encode(texts, **kw)


def test_an_encoder_failure_on_the_worker_reaches_the_caller_and_finished_documents_stay_cached(tmp_path, encoder):
    texts = [f"Report {i}: the pump at site {i} was serviced and its seals replaced." for i in range(12)]
    failing = FailingEncoder(encoder, fail_on=3)
    with EmbeddingCache(tmp_path) as cache:
        with pytest.raises(RuntimeError, match="encoder broke"):
            embed_documents(CountingLoader().items(texts), CONFIG, failing, cache, commit_texts=2, flush_texts=4)
        kept = [t for t in texts if cache.has(content_hash(t), CONFIG.cache_key, encoder.model_id)]
        assert len(kept) >= 2  # the groups encoded before the failure were committed
        assert len(kept) < len(texts)
        # The next build resumes: it embeds only what the failed one had not committed.
        before = encoder.texts_encoded
        docs = embed_documents(CountingLoader().items(texts), CONFIG, encoder, cache)
        assert len(docs) == len(texts)
        assert encoder.texts_encoded - before == sum(len(docs[content_hash(t)].children) for t in texts
                                                     if t not in kept)

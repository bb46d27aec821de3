import sqlite3

import numpy as np
import pytest

from spar_desktop.core.data_layout import DataLayout
from spar_desktop.core.documents.types import Chunk
from spar_desktop.core.embedding.cache import CachedDocument, EmbeddingCache

MODEL = "model-a"
KEY = "hierarchical-c200-p800-o30"


def make_doc(content_hash: str = "h1", model: str = MODEL, key: str = KEY, dim: int = 4) -> CachedDocument:
    chunks = (
        Chunk("p0", "Parent text. Child one. Child two.", 0, 34, 1, 2, "parent", None),
        Chunk("c0", "Parent text. Child one.", 0, 23, 1, 1, "child", "p0", context="About parents."),
        Chunk("c1", "Child two.", 24, 34, 2, 2, "child", "p0"),
    )
    rng = np.random.default_rng(0)
    vecs = rng.standard_normal((2, dim)).astype(np.float32)
    return CachedDocument(content_hash, key, model, chunks, vecs, title="T", warnings=("w",))


def test_roundtrip_persists_every_field(tmp_path):
    doc = make_doc()
    with EmbeddingCache(tmp_path) as cache:
        assert cache.get("h1", KEY, MODEL) is None
        cache.put(doc)
        assert cache.has("h1", KEY, MODEL)
    with EmbeddingCache(tmp_path) as cache:  # reopened: it is on disk
        got = cache.get("h1", KEY, MODEL)
    assert got is not None
    assert got.chunks == doc.chunks
    np.testing.assert_array_equal(got.vectors, doc.vectors)
    assert got.vectors.dtype == np.float32
    assert (got.title, got.warnings) == ("T", ("w",))
    assert [c.chunk_id for c in got.children] == ["c0", "c1"]
    assert set(got.parents) == {"p0"}
    assert all(c.file_id == 7 for c in got.with_file_id(7).chunks)


def test_keys_are_independent(tmp_path):
    with EmbeddingCache(tmp_path) as cache:
        cache.put(make_doc())
        assert not cache.has("h1", KEY, "model-b")
        assert not cache.has("h1", "fixed-c200-p800-o30", MODEL)
        cache.put(make_doc(model="model-b", dim=8))
        assert cache.get("h1", KEY, "model-b").vectors.shape == (2, 8)
        assert cache.get("h1", KEY, MODEL).vectors.shape == (2, 4)
        cache.put(make_doc())  # replacing an entry does not duplicate its chunks
        assert cache.stats().chunks == 6


def test_stats(tmp_path):
    with EmbeddingCache(tmp_path) as cache:
        for h in ("h1", "h2", "h3"):
            cache.put_many([make_doc(h), make_doc(h, model="model-b")])
        stats = cache.stats()
        assert (stats.documents, stats.chunks, stats.vectors) == (6, 18, 12)
        assert stats.vector_bytes == 3 * 2 * 4 * 4 * 2
        assert dict(stats.models) == {MODEL: 3, "model-b": 3}
        assert cache.hashes() == {"h1", "h2", "h3"}


def test_rejects_misaligned_vectors_and_uses_wal(tmp_path):
    doc = make_doc()
    bad = CachedDocument(doc.content_hash, KEY, MODEL, doc.chunks, doc.vectors[:1])
    with EmbeddingCache(tmp_path) as cache:
        with pytest.raises(ValueError):
            cache.put(bad)
        assert not cache.has("h1", KEY, MODEL)
    conn = sqlite3.connect(DataLayout(tmp_path).embeddings)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()

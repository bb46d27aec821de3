"""Searchers of a workspace still being built: BM25 over every chunk, dense over those embedded.

A build reads and chunks every admitted file first (seconds), so keyword search covers the whole
workspace at once; vectors arrive as passages are embedded. A partial searcher holds a full-size
matrix whose missing rows are zero (a zero key scores cosine 0 where fusion asks for it: neutral,
so with no vector at all the hybrid ranking is BM25's) and searches only the rows it has.
``dense_coverage`` says how much meaning search covers; ``building`` that it is a snapshot.
"""

from __future__ import annotations

import copy
from typing import Optional

import numpy as np

from spar_desktop.core.embedding.cache import CachedDocument
from spar_desktop.core.retrieval.searcher import HybridSearcher
from spar_desktop.core.retrieval.vector_store import NumpyBackend


class ReadyRowsBackend:
    """Exact dense search over the ready rows only; returns the searcher's positions."""

    def __init__(self, vectors: np.ndarray, ready: np.ndarray) -> None:
        self.rows = np.flatnonzero(ready)
        self.inner = NumpyBackend(vectors[self.rows])

    def search(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        pos, scores = self.inner.search(query, k)
        return self.rows[pos], scores


def unembedded(doc: CachedDocument, dim: int) -> CachedDocument:
    """``doc`` with zero vectors: chunked and in BM25, not embedded yet."""
    return CachedDocument(doc.content_hash, doc.chunker_key, doc.model_id, doc.chunks,
                          np.zeros((len(doc.children), dim), dtype=np.float32), title=doc.title,
                          no_text_reason=doc.no_text_reason, warnings=doc.warnings)


def snapshot(searcher: HybridSearcher, vectors: np.ndarray, ready: np.ndarray) -> HybridSearcher:
    """``searcher`` (same chunks, same BM25) with ``vectors`` as its dense keys, of which only the
    rows in ``ready`` are real, marked as a build's snapshot. The arrays are copied: the build
    goes on writing its own."""
    new = copy.copy(searcher)
    new.original_vectors = np.array(vectors, dtype=np.float32)
    new.vectors = new._evolved_matrix()
    mask = np.array(ready, dtype=bool)
    complete = bool(mask.all())
    new.dense_ready = None if complete else mask
    new.dense = NumpyBackend(new.vectors) if complete else ReadyRowsBackend(new.vectors, mask)  # type: ignore[assignment]
    new.collection = None
    new.building = True
    return new


class LiveVectors:
    """The vectors a build has so far, by chunk position of its partial searcher."""

    def __init__(self, searcher: HybridSearcher, ready: np.ndarray) -> None:
        assert searcher.original_vectors is not None
        self.base = searcher
        self.vectors = np.array(searcher.original_vectors, dtype=np.float32)
        self.ready = np.array(ready, dtype=bool)
        self.docs_of: dict[str, list[str]] = {}  # content hash → doc ids (a file id each)
        for doc_id, (content_hash, _) in searcher.table.doc_refs.items():
            self.docs_of.setdefault(content_hash, []).append(doc_id)

    def add(self, docs: dict[str, CachedDocument]) -> int:
        """Copy the vectors of newly embedded documents in; returns how many rows were filled.
        A document whose chunks differ from the ones searched (cannot happen with a
        deterministic chunker) is left out rather than misaligned."""
        filled = 0
        for h, doc in docs.items():
            children = doc.children
            for doc_id in self.docs_of.get(h, ()):
                rows = [self.base.position(f"{doc_id}#{c.chunk_id}") for c in children]
                if any(r is None for r in rows) or len(rows) != doc.vectors.shape[0]:
                    continue
                self.vectors[rows] = doc.vectors
                self.ready[rows] = True
                filled += len(rows)
        return filled

    def snapshot(self) -> HybridSearcher:
        return snapshot(self.base, self.vectors, self.ready)

    @property
    def coverage(self) -> float:
        return 1.0 if not len(self.ready) else float(np.count_nonzero(self.ready)) / len(self.ready)


def coverage_note(coverage: Optional[float], keyword: float = 1.0) -> str:
    """What a partial answer says about itself (search results, chat, the panel)."""
    if coverage is None:
        return "searching while building"
    if keyword < 1.0:
        return (f"searching while building: keyword search covers the {coverage_percent(keyword)}% of files read "
                f"so far, meaning search {coverage_percent(coverage)}% of passages")
    return f"searching while building: meaning search covers {coverage_percent(coverage)}% of passages"


def coverage_percent(coverage: float) -> int:
    """Whole percent, never rounded up to a 100 that is not complete."""
    pct = int(round(coverage * 100))
    return 99 if pct == 100 and coverage < 1.0 else pct

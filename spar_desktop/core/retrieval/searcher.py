"""HybridSearcher: BM25 + dense over child chunks, TM2C2 or RRF fusion, parents as context.

Each retriever proposes its own top ``candidate_depth`` chunks (100 by default: deeper than the
paper's 10 because documents are ranked by their best chunk and a document-level top-10 needs many
more chunk candidates); the union is fused, chunks are returned with their parent's text, and files
are ranked by their best chunk.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

import numpy as np

from spar_desktop.core.documents.types import Chunk
from spar_desktop.core.embedding.cache import CachedDocument
from spar_desktop.core.progress import CancelToken, Progress, ProgressCallback, check, no_progress
from spar_desktop.core.retrieval import fusion as fz
from spar_desktop.core.retrieval.bm25_index import BM25Index, TokenizerConfig, top_k_positive
from spar_desktop.core.retrieval.vector_store import (
    ChromaBackend,
    ChromaCollection,
    DenseBackend,
    NumpyBackend,
    cosine_scores,
)

METHODS = ("hybrid", "bm25", "dense")
FILLS = ("exact", "zero")
DEFAULT_CANDIDATES = 100
_HAS_WORD = re.compile(r"[^\W_]", re.UNICODE)


@dataclass(frozen=True)
class ChunkHit:
    rank: int
    key: str  # '<doc_id>#<chunk_id>', unique within the searcher
    doc_id: str
    file_id: Optional[int]
    chunk_id: str
    text: str
    page_start: int
    page_end: int
    parent_id: Optional[str]
    parent_text: Optional[str]  # the context to show / give the LLM; None for flat chunks
    score: float  # what the list is ranked by: fused score, raw BM25 or raw cosine
    bm25_score: Optional[float]  # raw; None when BM25 did not propose this chunk
    dense_score: Optional[float]  # raw cosine; None when dense did not propose this chunk


@dataclass(frozen=True)
class FileHit:
    rank: int
    doc_id: str
    file_id: Optional[int]
    title: Optional[str]
    score: float  # the score of its best chunk
    best_chunk: str  # key of that chunk
    matched_chunks: int  # how many of its chunks were among the fused candidates


@dataclass(frozen=True)
class SearchResults:
    query: str
    method: str
    fusion: str
    alpha: Optional[float]
    hits: tuple[ChunkHit, ...]
    files: tuple[FileHit, ...]
    message: Optional[str] = None  # why the list is empty, for the UI / CLI to show

    @property
    def empty(self) -> bool:
        return not self.hits


class HybridSearcher:
    """Immutable after construction, so one instance can serve concurrent queries."""

    def __init__(
        self,
        documents: Mapping[str, CachedDocument],
        encoder: Any = None,
        *,
        collection: Optional[ChromaCollection] = None,
        file_ids: Optional[Mapping[str, int]] = None,
        tokenizer: Optional[TokenizerConfig] = None,
        candidate_depth: int = DEFAULT_CANDIDATES,
        default_alpha: float = fz.DEFAULT_ALPHA,
        fill_missing: str = fz.DEFAULT_FILL,
        progress: ProgressCallback = no_progress,
        cancel: Optional[CancelToken] = None,
    ) -> None:
        """``documents``: doc id → CachedDocument (a workspace passes str(file_id)).
        ``encoder`` may be None for a BM25-only searcher. With ``collection`` the dense side runs
        in Chroma (synchronised to these chunks first); without it, on an exact numpy matrix."""
        self.encoder = encoder
        self.candidate_depth = candidate_depth
        self.default_alpha = fz.check_alpha(default_alpha)
        self.fill_missing = _check_fill(fill_missing)
        self._chunks: list[Chunk] = []
        self.keys: list[str] = []
        self._doc_of: list[str] = []
        self._parents: dict[str, dict[str, str]] = {}
        self._titles: dict[str, Optional[str]] = {}
        self._file_ids = dict(file_ids or {})
        blocks: list[np.ndarray] = []
        for doc_id, doc in documents.items():
            self._titles[doc_id] = doc.title
            self._parents[doc_id] = {pid: p.text for pid, p in doc.parents.items()}
            children = doc.children
            for chunk in children:
                self._chunks.append(chunk)
                self.keys.append(f"{doc_id}#{chunk.chunk_id}")
                self._doc_of.append(doc_id)
            if encoder is not None and children:
                blocks.append(doc.vectors)
        check(cancel)
        progress(Progress(0, 2, "building the keyword index"))
        self.bm25 = BM25Index(tokenizer=tokenizer).build([c.embed_text for c in self._chunks], self.keys, cancel)
        self.vectors: Optional[np.ndarray] = None
        self.dense: Optional[DenseBackend] = None
        if encoder is not None:
            dim = int(getattr(encoder, "dim", 0) or (blocks[0].shape[1] if blocks else 0))
            self.vectors = np.ascontiguousarray(np.vstack(blocks) if blocks else np.empty((0, dim)), dtype=np.float32)
            if collection is not None:
                progress(Progress(1, 2, "loading vectors into the vector store"))
                metas = [{"doc_id": d, "chunk_id": c.chunk_id} for d, c in zip(self._doc_of, self._chunks)]
                collection.sync(self.keys, self.vectors, metas, cancel=cancel)
                self.dense = ChromaBackend(collection, self.keys)
            else:
                self.dense = NumpyBackend(self.vectors)
        progress(Progress(2, 2, f"{len(self.keys)} chunks searchable"))

    def __len__(self) -> int:
        return len(self.keys)

    # -- retrieval ---------------------------------------------------------------------------
    def search(
        self,
        query: str,
        k: int = 10,
        method: str = "hybrid",
        alpha: Optional[float] = None,
        fusion: str = "tm2c2",
        candidates: Optional[int] = None,
        fill_missing: Optional[str] = None,
    ) -> SearchResults:
        """Top ``k`` chunks and top ``k`` files for ``query``.

        ``fill_missing`` (TM2C2 only): a chunk proposed by only one retriever is scored by the
        other with its true score ('exact': BM25 from the full score vector, cosine from the stored
        vector — both are at hand, so eq. 16 runs over the whole candidate union), or gets the
        normalised minimum 0 ('zero', for when the other score is unknowable). See fusion.py for
        the measurements behind the default."""
        fill = _check_fill(fill_missing or self.fill_missing)
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, not '{method}'")
        if fusion not in fz.FUSIONS:
            raise ValueError(f"fusion must be one of {fz.FUSIONS}, not '{fusion}'")
        if method != "bm25" and self.dense is None:
            raise ValueError("this searcher has no encoder; only method='bm25' is available")
        a = fz.check_alpha(self.default_alpha if alpha is None else alpha)
        shown_alpha = a if method == "hybrid" and fusion == "tm2c2" else None

        def empty(message: str) -> SearchResults:
            return SearchResults(query, method, fusion, shown_alpha, (), (), message)

        if not query or not _HAS_WORD.search(query):
            return empty("Type a word or phrase to search for.")
        if not self.keys:
            return empty("There is nothing to search yet: no document has searchable text.")
        depth = max(k, candidates or self.candidate_depth)

        bm25: dict[int, float] = {}
        dense: dict[int, float] = {}
        if method in ("hybrid", "bm25"):
            all_bm25 = self.bm25.scores(query)
            pos, sc = top_k_positive(all_bm25, depth)
            bm25 = dict(zip(pos.tolist(), sc.tolist()))
        if method in ("hybrid", "dense"):
            qvec = self.encoder.encode_query(query)
            pos, sc = self.dense.search(qvec, depth)  # type: ignore[union-attr]
            dense = dict(zip(pos.tolist(), sc.tolist()))
        if method == "hybrid" and fusion == "tm2c2" and fill == "exact":
            for p in sorted(dense.keys() - bm25.keys()):  # sorted: deterministic tie order
                bm25[p] = float(all_bm25[p])
            only_bm25 = sorted(bm25.keys() - dense.keys())
            if only_bm25:
                sims = cosine_scores(self.vectors[only_bm25], qvec)  # type: ignore[index]
                dense.update(zip(only_bm25, sims.tolist()))

        if method == "bm25":
            fused = bm25
        elif method == "dense":
            fused = dense
        elif fusion == "rrf":
            fused = fz.rrf_fuse([list(dense), list(bm25)])
        else:
            fused = fz.tm2c2_fuse(dense, bm25, a)
        if not fused:
            if method == "bm25":
                return empty("No document contains any of the search words.")
            return empty("No results.")
        ranking = fz.ranked(fused)
        hits = tuple(self._hit(rank, p, s, bm25.get(p), dense.get(p)) for rank, (p, s) in enumerate(ranking[:k], 1))
        return SearchResults(query, method, fusion, shown_alpha, hits, self._files(ranking, k))

    def _hit(self, rank: int, pos: int, score: float, bm25: Optional[float], dense: Optional[float]) -> ChunkHit:
        chunk, doc_id = self._chunks[pos], self._doc_of[pos]
        parent = self._parents[doc_id].get(chunk.parent_id) if chunk.parent_id else None
        return ChunkHit(
            rank=rank, key=self.keys[pos], doc_id=doc_id, file_id=self._file_id(doc_id, chunk),
            chunk_id=chunk.chunk_id, text=chunk.text, page_start=chunk.page_start, page_end=chunk.page_end,
            parent_id=chunk.parent_id, parent_text=parent, score=float(score), bm25_score=bm25,
            dense_score=dense,
        )

    def _files(self, ranking: Sequence[tuple[int, float]], k: int) -> tuple[FileHit, ...]:
        """A file scores as its best chunk (ranking is already best first)."""
        best: dict[str, tuple[float, int]] = {}
        counts: dict[str, int] = {}
        for pos, score in ranking:
            doc_id = self._doc_of[pos]
            counts[doc_id] = counts.get(doc_id, 0) + 1
            best.setdefault(doc_id, (score, pos))
        out = []
        for rank, (doc_id, (score, pos)) in enumerate(list(best.items())[:k], 1):
            out.append(FileHit(rank, doc_id, self._file_id(doc_id, self._chunks[pos]), self._titles.get(doc_id),
                               float(score), self.keys[pos], counts[doc_id]))
        return tuple(out)

    def _file_id(self, doc_id: str, chunk: Chunk) -> Optional[int]:
        # An explicit mapping wins: cached chunks carry no file id (the cache is keyed by content).
        if doc_id in self._file_ids:
            return self._file_ids[doc_id]
        return chunk.file_id


def _check_fill(fill: str) -> str:
    if fill not in FILLS:
        raise ValueError(f"fill_missing must be one of {FILLS}, not '{fill}'")
    return fill

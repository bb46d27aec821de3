"""EDR-MQ: document relations by marginalising two-stage conditional retrieval over queries.

For each query x: the first retriever returns the top-k1 documents z_i with p1 = softmax of their
scores (temperature T, renormalised over the k1 retrieved, as RAG marginalises over its top-k);
the second retriever, queried with [z_i; x], returns the top-k2 documents z_j with p2; and
R[i, j] += p1 · p2. R is the average over the query set (uniform p(x)).

Dense retrieval does both stages as matrix products over the document matrix, a batch of
queries at a time: [z_i; x] is the normalised sum of the two unit vectors (the single-vector
analogue of concatenating ColBERT token embeddings: both sides contribute equally to the score).
BM25 conditions by text concatenation instead.

Design choices (why):
- z_i itself is excluded from its own second retrieval: the conditional query contains z_i, so
  z_i would come back first and put most of p2 on the useless diagonal R[i, i].
- The accumulator keeps the *sum* and the number of queries, not the average, so new queries
  (a growing query log) are added without recomputing and the average stays exact.
- Top-k selection (most of the cost after the products) scans each row once for group maxima
  and sorts only a few candidates (see topk.top_k_rows); argpartition is the fallback for short rows.
- For many queries, the second stage scores only candidates from precomputed neighbour lists,
  with an exactness check and full-scan fallback (neighbors.py): the cost per query then no
  longer grows with the corpus.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

import numpy as np
from scipy import sparse

from spar_desktop.core.progress import CancelToken, Progress, ProgressCallback, check, no_progress
from spar_desktop.core.relations.neighbors import doc_neighbors, second_stage
from spar_desktop.core.relations.topk import softmax_rows, top_k_rows  # noqa: F401  (re-exported)

# Imports inside functions defer heavy modules only, each saying which.


@dataclass(frozen=True)
class EdrmqParams:
    k1: int = 5  # first-stage documents per query
    k2: int = 5  # second-stage documents per (z_i, x)
    temperature: float = 0.05  # dense: softmax over raw cosines (their useful spread is ~0.05)
    bm25_temperature: float = 0.1  # BM25: softmax over scores divided by the query's best score
    exclude_self: bool = True
    batch_size: int = 512  # queries per matrix product: 512·k1 rows × n docs of float32 (~50 MB at 5k docs)
    condition_words: int = 64  # BM25: words of z_i's text put in front of x
    alpha: float = 0.3  # hybrid: weight of the dense side (0 = lexical only, no encoder needed); see hybrid.py

    def to_json(self) -> dict:
        return dict(self.__dict__)


class RelationAccumulator:
    """Running sum S of p1·p2 and the number of queries N; R = S / N (eq. 6).

    Triplets are buffered and merged into the CSR sum only when needed, so adding a batch is
    O(batch) and duplicates are summed exactly once per merge."""

    def __init__(self, n_docs: int, total: Optional[sparse.csr_matrix] = None, n_queries: int = 0) -> None:
        self.n_docs = int(n_docs)
        self.n_queries = int(n_queries)
        self._total = total.tocsr().astype(np.float64) if total is not None else sparse.csr_matrix((n_docs, n_docs))
        if self._total.shape != (self.n_docs, self.n_docs):
            raise ValueError(f"sum matrix is {self._total.shape}, expected ({n_docs}, {n_docs})")
        self._pending: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self._pending_size = 0

    def add(self, rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, n_queries: int) -> None:
        if rows.size:
            self._pending.append((rows.astype(np.int64, copy=False), cols.astype(np.int64, copy=False),
                                  vals.astype(np.float64, copy=False)))
            self._pending_size += rows.size
        self.n_queries += int(n_queries)
        if self._pending_size > 2_000_000:  # bound the buffer's memory on very long runs
            self._flush()

    def _flush(self) -> None:
        if not self._pending:
            return
        r = np.concatenate([p[0] for p in self._pending])
        c = np.concatenate([p[1] for p in self._pending])
        v = np.concatenate([p[2] for p in self._pending])
        self._pending, self._pending_size = [], 0
        self._total = (self._total + sparse.coo_matrix((v, (r, c)), shape=self._total.shape).tocsr()).tocsr()

    @property
    def total(self) -> sparse.csr_matrix:
        self._flush()
        return self._total

    def matrix(self) -> sparse.csr_matrix:
        """R = S / N (an empty matrix before any query)."""
        total = self.total
        return (total / self.n_queries).tocsr() if self.n_queries else total.copy()


# -- dense ---------------------------------------------------------------------------------------
def dense_batch(doc_vectors: np.ndarray, query_vectors: np.ndarray, params: EdrmqParams = EdrmqParams(),
                neighbors: Any = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rows, cols, p1·p2) for one batch of queries; rows = z_i, cols = z_j (document rows).
    With ``neighbors`` (neighbors.DocNeighbors) the second stage scores only candidates and falls
    back to the full scan where it cannot prove the result exact (see neighbors.py)."""
    D = doc_vectors
    n = D.shape[0]
    b = query_vectors.shape[0]
    k1 = min(params.k1, n)
    k2 = min(params.k2, n - 1 if params.exclude_self else n)
    if b == 0 or k1 < 1 or k2 < 1:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty, np.empty(0)
    Q = np.ascontiguousarray(query_vectors, dtype=np.float32)
    s1 = Q @ D.T  # (b, n)
    if neighbors is not None and neighbors.m >= k2:
        qtop, qval = top_k_rows(s1, max(k1, neighbors.m))
        z, v1 = qtop[:, :k1], qval[:, :k1]
        zj, v2, _ = second_stage(D, Q, s1, z, qtop, qval, neighbors, k2, params.exclude_self)
    else:
        z, v1 = top_k_rows(s1, k1)  # (b, k1)
        # Second stage: [z_i; x] = (d_z + q) / |d_z + q|. The norm is constant along a row, so
        # rows are ranked unnormalised and only the k2 survivors are divided.
        s2 = (D[z] + Q[:, None, :]).reshape(b * k1, -1) @ D.T
        if params.exclude_self:
            s2[np.arange(b * k1), z.reshape(-1)] = -np.inf
        zj, v2 = top_k_rows(s2, k2)
    p1 = softmax_rows(v1, params.temperature)
    v2 = v2 / np.maximum(np.linalg.norm(D[z] + Q[:, None, :], axis=-1).reshape(-1, 1), 1e-12)
    p2 = softmax_rows(v2, params.temperature)
    vals = (p1.reshape(-1, 1) * p2).reshape(-1)
    return np.repeat(z.reshape(-1), k2), zj.reshape(-1), vals


def auto_neighbors(doc_vectors: np.ndarray, n_queries: int, params: EdrmqParams = EdrmqParams(),
                   cancel: Optional[CancelToken] = None) -> Any:
    """The neighbour index when ``n_queries`` second stages would scan the corpus more than twice
    over (k1·m ≥ 2n), i.e. when its one n × n product pays for itself; else None."""
    n = doc_vectors.shape[0]
    if params.k1 * n_queries >= 2 * n and n > 64:
        return doc_neighbors(doc_vectors, cancel=cancel)
    return None


def accumulate_dense(doc_vectors: np.ndarray, query_vectors: np.ndarray, params: EdrmqParams = EdrmqParams(),
                     acc: Optional[RelationAccumulator] = None, progress: ProgressCallback = no_progress,
                     cancel: Optional[CancelToken] = None, neighbors: Any = "auto") -> RelationAccumulator:
    """Add every query to ``acc`` (a new accumulator when None); checks cancel per batch. A
    cancelled run leaves ``acc`` holding only whole batches, so its average stays valid.
    ``neighbors``: a DocNeighbors, None (always scan the corpus), or 'auto' — precompute them when
    the queries' second stages would scan the corpus more than twice over (k1·m ≥ 2n), i.e.
    when the one n × n product pays for itself."""
    D = np.ascontiguousarray(doc_vectors, dtype=np.float32)
    acc = acc or RelationAccumulator(D.shape[0])
    if acc.n_docs != D.shape[0]:
        raise ValueError(f"accumulator has {acc.n_docs} documents, the matrix {D.shape[0]}")
    m = query_vectors.shape[0]
    if isinstance(neighbors, str):
        if params.k1 * m >= 2 * D.shape[0] and D.shape[0] > 64:
            progress(Progress(0, m, "indexing document neighbours"))
        neighbors = auto_neighbors(D, m, params, cancel)
    for start in range(0, m, params.batch_size):
        check(cancel)
        batch = query_vectors[start:start + params.batch_size]
        rows, cols, vals = dense_batch(D, batch, params, neighbors)
        acc.add(rows, cols, vals, batch.shape[0])
        progress(Progress(min(start + params.batch_size, m), m, "relating documents (EDR-MQ)"))
    return acc


# -- BM25 ----------------------------------------------------------------------------------------
def _bm25_top(index: Any, query: str, k: int, exclude: Optional[int] = None) -> tuple[np.ndarray, np.ndarray]:
    # deferred: retrieval.bm25_index pulls the search stack (retrieval, embedding, chunking: ~0.1 s)
    # into everything that imports this module, persist.py included; a caller holding an index has it
    from spar_desktop.core.retrieval.bm25_index import top_k_positive

    scores = index.scores(query)
    if exclude is not None:
        scores = scores.copy()
        scores[exclude] = 0.0
    return top_k_positive(scores, k)


def accumulate_bm25(index: Any, doc_texts: Sequence[str], queries: Sequence[str], params: EdrmqParams = EdrmqParams(),
                    acc: Optional[RelationAccumulator] = None, progress: ProgressCallback = no_progress,
                    cancel: Optional[CancelToken] = None) -> RelationAccumulator:
    """The same marginalisation with BM25 (``index``: a BM25Index over ``doc_texts``, one text per
    document). [z_i; x] is the first ``condition_words`` words of z_i followed by x: long
    documents as queries are slow and drown x, and the opening of a document names its topic."""
    n = len(doc_texts)
    acc = acc or RelationAccumulator(n)
    heads = [" ".join(t.split()[: params.condition_words]) for t in doc_texts]
    for qi, query in enumerate(queries):
        if qi % 25 == 0:
            check(cancel)
            progress(Progress(qi, len(queries), "relating documents (EDR-MQ, BM25)"))
        z, s1 = _bm25_top(index, query, params.k1)
        if z.size == 0:  # no query word in the corpus: the query still counts in N, adding nothing
            acc.add(np.empty(0), np.empty(0), np.empty(0), 1)
            continue
        p1 = softmax_rows((s1 / s1[0])[None, :], params.bm25_temperature)[0]
        rows, cols, vals = [], [], []
        for zi, pz in zip(z.tolist(), p1.tolist()):
            zj, s2 = _bm25_top(index, f"{heads[zi]} {query}", params.k2, zi if params.exclude_self else None)
            if zj.size == 0:
                continue
            p2 = softmax_rows((s2 / s2[0])[None, :], params.bm25_temperature)[0]
            rows.append(np.full(zj.size, zi))
            cols.append(zj)
            vals.append(pz * p2)
        if rows:
            acc.add(np.concatenate(rows), np.concatenate(cols), np.concatenate(vals), 1)
        else:
            acc.add(np.empty(0), np.empty(0), np.empty(0), 1)
    progress(Progress(len(queries), len(queries), "relating documents (EDR-MQ, BM25)"))
    return acc


"""EDR-MQ with hybrid scoring: both stages rank documents by α·dense + (1 − α)·lexical cosine.

Why: with dense scoring alone EDR-MQ lost to a plain TF-IDF top-25 graph on the newsgroups
replies (precision@E 0.336 vs 0.488, benchmarks/results/relations.md). Replies share rare words
(names, part numbers, quoted phrases) that a 384-dimension sentence embedding blurs; the paper's
retriever is ColBERT, which matches tokens. A lexical side restores that, and the dense side
keeps what words miss (paraphrases, other wording of the same topic).

The lexical side is TF-IDF cosine (the same matrix as the TF-IDF baseline, tfidf.fit_tfidf)
rather than BM25 because the conditional query composes exactly as the dense one does:
[z_i; x] is the normalised sum of two unit vectors t = (T_z + t_x) / |T_z + t_x|, so its score
against every document is (T_z·T_d + t_x·T_d) / sqrt(1 + |t_x|² + 2 t_x·T_z) — the first-stage
row of x plus z's row of the document–document product, no re-tokenising and no per-query
BM25 pass (BM25 has no such sum: a concatenated query must be scored from scratch).

α = 0 is purely lexical EDR-MQ and needs no encoder; 1 is the dense method of edrmq.py. The
default α = 0.3 was chosen on the newsgroups development tree (precision@E with three salient
sentences per post as queries: α 0 → 0.506, 0.3 → 0.507, 0.5 → 0.491; TF-IDF top-25 0.488): the
lexical side carries reply detection, a little dense weight costs nothing there and keeps
paraphrase for collections whose related documents share fewer words (SciFact, relations.md).
The softmax temperature stays the dense method's 0.05: both cosines live on [0, 1].
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np
from scipy import sparse

from spar_desktop.core.progress import CancelToken, Progress, ProgressCallback, check, no_progress
from spar_desktop.core.relations.edrmq import EdrmqParams, RelationAccumulator
from spar_desktop.core.relations.tfidf import fit_tfidf
from spar_desktop.core.relations.topk import softmax_rows, top_k_rows


@dataclass(frozen=True)
class LexicalIndex:
    """Documents' TF-IDF rows (L2-normalised) and the fitted vectorizer that maps queries into
    the same space. Fitted on the scope's own texts, so IDF reflects this collection."""

    matrix: sparse.csr_matrix  # (n, V) float32
    vectorizer: object  # sklearn TfidfVectorizer, or None when no document had a usable term

    @classmethod
    def fit(cls, texts: Sequence[str]) -> "LexicalIndex":
        return cls(*fit_tfidf(texts))  # no term left: all lexical scores are zero

    def transform(self, texts: Sequence[str]) -> sparse.csr_matrix:
        if self.vectorizer is None:
            return sparse.csr_matrix((len(texts), self.matrix.shape[1]), dtype=np.float32)
        return self.vectorizer.transform(list(texts)).tocsr().astype(np.float32)  # type: ignore[attr-defined]


def squared_row_norms(X: sparse.csr_matrix) -> np.ndarray:
    return np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64).reshape(-1)


def hybrid_batch(lex: LexicalIndex, query_terms: sparse.csr_matrix, params: EdrmqParams, alpha: float,
                 doc_vectors: Optional[np.ndarray], query_vectors: Optional[np.ndarray],
                 lex_t: sparse.csr_matrix, row_norms2: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rows, cols, p1·p2) for one batch of queries (see edrmq.dense_batch for the dense-only
    form). ``lex_t`` is lex.matrix.T as CSR (what the sparse product wants) and ``row_norms2``
    the squared length of each document's row (1, or 0 for a document with no term left),
    both computed once per run."""
    T = lex.matrix
    n = T.shape[0]
    b = query_terms.shape[0]
    k1 = min(params.k1, n)
    k2 = min(params.k2, n - 1 if params.exclude_self else n)
    if b == 0 or k1 < 1 or k2 < 1:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty, np.empty(0)
    TT = lex_t
    dense = alpha > 0
    if dense and (doc_vectors is None or query_vectors is None):
        raise ValueError("a dense weight above 0 needs document and query vectors")
    lx = (query_terms @ TT).toarray()  # (b, n) float32 lexical cosines of the queries
    s1 = lx * np.float32(1 - alpha)
    if dense:
        D = doc_vectors
        Q = np.ascontiguousarray(query_vectors, dtype=np.float32)
        s1 += np.float32(alpha) * (Q @ D.T)
    z, v1 = top_k_rows(s1, k1)  # (b, k1)
    zr = z.reshape(-1)
    xr = np.repeat(np.arange(b), k1)
    # Lexical conditional scores, in place on (b·k1, n) float32 (the batch's largest array):
    # each distinct z's row of T·Tᵀ is computed once per batch, x's row is broadcast over its k1.
    uz, inv = np.unique(zr, return_inverse=True)
    s2 = (T[uz] @ TT).toarray()[inv]
    s2.reshape(b, k1, n)[...] += lx[:, None, :]
    qn2 = squared_row_norms(query_terms)  # |t_x|² (1, or 0 if no term)
    norm = np.sqrt(np.maximum(row_norms2[zr] + qn2[xr] + 2.0 * lx[xr, zr], 1e-12))
    s2 *= ((1 - alpha) / norm).astype(np.float32)[:, None]
    if dense:
        C = D[zr] + Q[xr]
        C *= (alpha / np.maximum(np.linalg.norm(C, axis=1, keepdims=True), 1e-12)).astype(np.float32)
        s2 += C @ D.T
    if params.exclude_self:
        s2[np.arange(b * k1), zr] = -np.inf
    zj, v2 = top_k_rows(s2, k2)
    p1 = softmax_rows(v1, params.temperature)
    p2 = softmax_rows(v2, params.temperature)
    vals = (p1.reshape(-1, 1) * p2).reshape(-1)
    return np.repeat(zr, k2), zj.reshape(-1), vals


def accumulate_hybrid(lex: LexicalIndex, queries: Sequence[str], params: EdrmqParams = EdrmqParams(),
                      alpha: Optional[float] = None, doc_vectors: Optional[np.ndarray] = None,
                      query_vectors: Optional[np.ndarray] = None, acc: Optional[RelationAccumulator] = None,
                      progress: ProgressCallback = no_progress,
                      cancel: Optional[CancelToken] = None, batch_size: int = 128) -> RelationAccumulator:
    """Add every query to ``acc``; cancel is checked per batch (whole batches only, as dense).
    Batches are smaller than the dense path's: a batch holds k1 dense rows of T·Tᵀ besides s2.
    ``alpha`` defaults to params.alpha."""
    alpha = params.alpha if alpha is None else alpha
    if not 0.0 <= alpha <= 1.0:
        raise ValueError("alpha must be between 0 and 1")
    n = lex.matrix.shape[0]
    acc = acc or RelationAccumulator(n)
    if acc.n_docs != n:
        raise ValueError(f"accumulator has {acc.n_docs} documents, the index {n}")
    D = np.ascontiguousarray(doc_vectors, dtype=np.float32) if alpha > 0 and doc_vectors is not None else None
    terms = lex.transform(queries)
    TT = lex.matrix.T.tocsr()
    norms2 = squared_row_norms(lex.matrix)
    m = len(queries)
    for start in range(0, m, batch_size):
        check(cancel)
        stop = min(start + batch_size, m)
        qv = query_vectors[start:stop] if D is not None and query_vectors is not None else None
        rows, cols, vals = hybrid_batch(lex, terms[start:stop], params, alpha, D, qv, TT, norms2)
        acc.add(rows, cols, vals, stop - start)
        progress(Progress(stop, m, "relating documents (EDR-MQ, hybrid)"))
    return acc

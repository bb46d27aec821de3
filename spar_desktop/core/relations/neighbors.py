"""Exact second-stage retrieval for EDR-MQ without scanning the whole corpus per (z_i, x).

The conditional score of document j is, up to a per-row constant, (d_z + q)·d_j = d_z·d_j + q·d_j.
With every document's M nearest neighbours precomputed (``doc_neighbors``) and the query's M best
first-stage scores at hand, the candidates are N_M(z) ∪ top_M(q): any other j has
d_z·d_j ≤ (z's M-th neighbour similarity) and q·d_j ≤ (q's M-th score), so once the k-th best
candidate reaches the sum of those two bounds the candidate top-k *is* the exact top-k (Fagin's
threshold argument). Rows where the bound is not reached are recomputed over the whole corpus, so
the result never differs from the full computation (up to float rounding and exact ties).

The per-query cost drops from k1·n·dim to k1·2M·dim; the neighbour lists cost one n × n
product, paid once per corpus and shared with the co-occurrence walks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from spar_desktop.core.progress import CancelToken, check
from spar_desktop.core.relations.topk import top_k_rows

M = 32  # neighbours per document / query candidates


@dataclass(frozen=True)
class DocNeighbors:
    idx: np.ndarray  # (n, m) int64: each document's m most similar *other* documents, best first
    val: np.ndarray  # (n, m) float32: their cosines

    @property
    def m(self) -> int:
        return int(self.idx.shape[1])


def doc_neighbors(vectors: np.ndarray, m: int = M, block: int = 1024,
                  cancel: Optional[CancelToken] = None) -> DocNeighbors:
    D = np.ascontiguousarray(vectors, dtype=np.float32)
    n = D.shape[0]
    m = max(0, min(m, n - 1))
    idx = np.zeros((n, m), dtype=np.int64)
    val = np.zeros((n, m), dtype=np.float32)
    for start in range(0, n, block):
        check(cancel)
        S = D[start:start + block] @ D.T
        S[np.arange(S.shape[0]), np.arange(start, start + S.shape[0])] = -np.inf
        i, v = top_k_rows(S, m)
        idx[start:start + S.shape[0]], val[start:start + S.shape[0]] = i, v
    return DocNeighbors(idx, val)


def second_stage(D: np.ndarray, Q: np.ndarray, s1: np.ndarray, z: np.ndarray, qtop: np.ndarray, qval: np.ndarray,
                 nbrs: DocNeighbors, k2: int, exclude_self: bool) -> tuple[np.ndarray, np.ndarray, int]:
    """(zj, unnormalised scores) of shape (b·k1, k2), best first, and how many rows needed the
    full scan. ``qtop``/``qval``: each query's best first-stage documents/scores (≥ k1 of them)."""
    n = D.shape[0]
    b, k1 = z.shape
    mq = qtop.shape[1]
    a_idx = nbrs.idx[z]  # (b, k1, m)
    a_score = nbrs.val[z] + s1[np.arange(b)[:, None, None], a_idx]
    b_idx = np.broadcast_to(qtop[:, None, :], (b, k1, mq))
    b_score = np.einsum("bkd,bjd->bkj", D[z], D[qtop]) + qval[:, None, :]
    # a document in both lists is scored once; z itself is only a candidate without exclusion
    drop = (b_idx[..., :, None] == a_idx[..., None, :]).any(axis=-1)
    if exclude_self:
        drop |= b_idx == z[..., None]
    b_score = np.where(drop, -np.inf, b_score)
    cand = np.concatenate([a_idx, b_idx], axis=-1).reshape(b * k1, -1)
    score = np.concatenate([a_score, b_score], axis=-1).reshape(b * k1, -1)
    pos, v = top_k_rows(score, k2)
    zj = np.take_along_axis(cand, pos, axis=1)
    # Fagin bound: nothing outside the candidates can score above it
    a_bound = nbrs.val[z][..., -1] if nbrs.m >= 1 and nbrs.m < n - 1 else np.full((b, k1), -np.inf)
    q_bound = qval[:, -1] if mq < n else np.full(b, -np.inf)
    bound = (a_bound + q_bound[:, None]).reshape(-1)
    inexact = np.flatnonzero(~(v[:, -1] >= bound))
    if inexact.size:
        zi = z.reshape(-1)[inexact]
        rows = (D[zi] + Q[inexact // k1]) @ D.T
        if exclude_self:
            rows[np.arange(inexact.size), zi] = -np.inf
        zj[inexact], v[inexact] = top_k_rows(rows, k2)
    return zj, v, int(inexact.size)

"""Row-wise top-k and softmax over score matrices: the selection EDR-MQ, its neighbour lists
(neighbors.py), the co-occurrence walks and dense ranking share. numpy only."""

from __future__ import annotations

import numpy as np


def softmax_rows(scores: np.ndarray, temperature: float) -> np.ndarray:
    """Row-wise softmax of scores / T; -inf entries (missing candidates) get probability 0."""
    if temperature <= 0:
        raise ValueError("temperature must be positive")
    z = scores.astype(np.float64) / temperature
    z = z - np.max(z, axis=1, keepdims=True)
    e = np.exp(z)
    return e / np.sum(e, axis=1, keepdims=True)


GROUP = 32  # columns per group in the grouped top-k (see top_k_rows)


def top_k_rows(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the k best (column, score), best first, equal scores by column.

    Wide rows use a grouped selection: columns are split into G strided groups of 32 (column j
    belongs to group j mod G), one pass takes each group's maximum, and only the k groups with the
    largest maxima can hold the row's top k (any other group's maximum is beaten by k distinct
    elements). Selecting among those k·32 candidates replaces argpartition over the whole row,
    which materialises an int64 index per score and dominated the EDR-MQ build. Narrow rows use
    argpartition directly. Both are deterministic; which of several documents tied exactly at the
    cut-off survives is not specified."""
    m, n = scores.shape
    k = min(k, n)
    g = n // GROUP
    if m and g >= 4 * k and k > 0:
        main = g * GROUP
        head = scores[:, :main].reshape(m, GROUP, g).max(axis=1)  # (m, g): max of each strided group
        groups = np.argpartition(head, g - k, axis=1)[:, g - k:]  # (m, k)
        cand = (groups[:, :, None] + g * np.arange(GROUP)[None, None, :]).reshape(m, -1)
        if main < n:  # the few columns past the last full group are always candidates
            cand = np.concatenate([cand, np.broadcast_to(np.arange(main, n), (m, n - main))], axis=1)
        vals = np.take_along_axis(scores, cand, axis=1)
        part = np.argpartition(vals, vals.shape[1] - k, axis=1)[:, vals.shape[1] - k:]
        part = np.take_along_axis(cand, part, axis=1)
    elif k < n:
        part = np.argpartition(scores, n - k, axis=1)[:, n - k:]
    else:
        part = np.broadcast_to(np.arange(n), scores.shape).copy()
    vals = np.take_along_axis(scores, part, axis=1)
    order = np.lexsort((part, -vals), axis=1) if part.shape[0] else part
    idx = np.take_along_axis(part, order, axis=1)
    return idx, np.take_along_axis(vals, order, axis=1)

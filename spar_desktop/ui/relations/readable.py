"""What makes a relation graph readable by default: few enough edges that a typical document has
at most a handful (the 67-file sample at "all edges" was a hairball), and names only for the most
central documents (the others on hover).

Why the median degree: a hub's many edges are what the user wants to see, but when the typical
document has more than ~5 the edges cover the picture; the threshold keeps the strongest edges up
to that point, so the structure (communities, bridges) is what remains."""

from __future__ import annotations

import numpy as np

MAX_MEDIAN_DEGREE = 5
LABEL_SHARE = 10  # one document in this many is named (the most connected)


def median_degree(edges: np.ndarray, n_nodes: int) -> float:
    if n_nodes == 0:
        return 0.0
    return float(np.median(np.bincount(edges.reshape(-1), minlength=n_nodes))) if len(edges) else 0.0


def readable_keep(edges: np.ndarray, weights: np.ndarray, n_nodes: int,
                  max_median: int = MAX_MEDIAN_DEGREE) -> int:
    """How many of the strongest edges to keep so the median document has ≤ ``max_median`` of
    them (the median grows with each edge added, so a binary search finds the most)."""
    if len(edges) == 0 or median_degree(edges, n_nodes) <= max_median:
        return len(edges)
    order = np.argsort(-weights, kind="stable")
    strongest = edges[order]
    lo, hi = 0, len(edges)  # median(lo) ≤ max_median < median(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if median_degree(strongest[:mid], n_nodes) <= max_median:
            lo = mid
        else:
            hi = mid
    return lo


def slider_value(weights: np.ndarray, keep: int) -> int:
    """The smallest slider position (percentile of the weights, 0 = all) leaving at most ``keep``
    edges, as GraphView reads its slider (np.quantile's linear value, weights ≥ it pass)."""
    if keep >= len(weights):
        return 0
    ascending = np.sort(weights)
    for value in range(1, 101):
        threshold = float(np.quantile(ascending, value / 100.0))
        if int((weights >= threshold).sum()) <= keep:
            return value
    return 100


def labels_wanted(in_view: int, most: int) -> int:
    """How many documents in view get a name: all of a handful, else the most central tenth
    (at least 5, at most ``most``)."""
    if in_view <= 8:
        return in_view
    return min(most, max(5, in_view // LABEL_SHARE))

"""Semantic chunking: cut where consecutive sentences stop being about the same thing.

Sentences are embedded, the cosine similarity of each neighbouring pair is computed, and a chunk
boundary is placed at every pair whose similarity falls in the lowest ``semantic_threshold``
fraction (a percentile, so the cut rate adapts to each document's own similarity scale instead
of needing one absolute cosine that suits every encoder and topic). Chunks are then capped at
``child_tokens`` because semantic segments alone can grow far past the encoder window.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from spar_desktop.core.documents.segment import Segment, Span, Units, pack, sentences, split_oversized
from spar_desktop.core.documents.types import ChunkerConfig

# Sentences per embed_fn call: bounds memory for huge documents; the encoder batches internally.
EMBED_BATCH = 512
_EPS = 1e-6


def semantic_spans(text: str, units: Units, config: ChunkerConfig,
                   embed_fn: Callable[[list[str]], object]) -> list[Span]:
    """Chunk spans for ``text`` using sentence-embedding breakpoints, each ≤ child_tokens."""
    budget = Units.scaled(config.child_tokens)
    segs = [p for s in sentences(text) for p in split_oversized(text, s, units, budget)]
    if len(segs) <= 1:
        return [(s.start, s.end) for s in segs]
    vecs = embed_sentences([text[s.start:s.end] for s in segs], embed_fn)
    cuts = set(int(i) + 1 for i in breakpoints(neighbour_similarities(vecs), config.semantic_threshold))
    spans: list[Span] = []
    group: list[Segment] = []
    for i, seg in enumerate(segs):
        if i in cuts and group:
            spans.extend((g[0].start, g[-1].end) for g in pack(group, units, budget))
            group = []
        group.append(seg)
    spans.extend((g[0].start, g[-1].end) for g in pack(group, units, budget))
    return spans


def embed_sentences(texts: list[str], embed_fn: Callable[[list[str]], object]) -> np.ndarray:
    """Embed in batches and L2-normalise (defensively: callers promise normalised vectors, but a
    non-normalised encoder would silently turn cosine into dot product)."""
    parts = []
    for i in range(0, len(texts), EMBED_BATCH):
        batch = texts[i:i + EMBED_BATCH]
        arr = np.asarray(embed_fn(batch), dtype=np.float32)
        if arr.ndim != 2 or arr.shape[0] != len(batch):
            raise ValueError(
                f"embed_fn returned shape {arr.shape} for {len(batch)} sentences; "
                "expected (n_sentences, dim)"
            )
        parts.append(arr)
    vecs = np.vstack(parts)
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    return vecs / np.maximum(norms, _EPS)


def neighbour_similarities(vecs: np.ndarray) -> np.ndarray:
    """Cosine similarity of each sentence with the next (vectors already normalised)."""
    return np.einsum("ij,ij->i", vecs[:-1], vecs[1:])


def breakpoints(sims: np.ndarray, percentile: float) -> np.ndarray:
    """Indices i where a chunk should end after sentence i.

    A pair breaks when its similarity is below the ``percentile`` quantile, or equal to it while
    the quantile is itself a real drop (below the maximum). The tie rule matters when many pairs
    share the same low value (e.g. half the pairs are topic changes); without it they would
    never break. A document whose neighbours are all equally similar gets no breaks at all.
    """
    if sims.size == 0:
        return np.zeros(0, dtype=int)
    q = min(max(float(percentile), 0.0), 1.0)
    thr = float(np.quantile(sims, q))
    is_drop = thr < float(sims.max()) - _EPS
    mask = (sims < thr - _EPS) | ((sims <= thr + _EPS) & is_drop)
    return np.nonzero(mask)[0]

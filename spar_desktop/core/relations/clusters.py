"""Co-occurrence embeddings (Word2Vec CBOW over document-id sequences) and agglomerative
clusters of them (cosine, average linkage, M = ⌈N/5⌉): the co-occurrence paper's §4.1, Table 12.

Determinism: gensim is run with one worker, a fixed seed and a stable hash, and sequences come in a
seeded order, so the same inputs give the same clusters in any process.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass
from functools import cached_property
from typing import Optional, Sequence

import numpy as np
from scipy import sparse

from spar_desktop.core.progress import CancelToken, Progress, ProgressCallback, check, no_progress

# gensim and scikit-learn take seconds to import: only the functions that train or cluster import them.

# Above this many documents the full pairwise cosine matrix (N² floats) gets too big for a
# desktop; clustering then merges only along a k-nearest-neighbour graph (same linkage).
FULL_LINKAGE_MAX = 15_000


@dataclass(frozen=True)
class Word2VecParams:
    dim: int = 100
    window: int = 2
    negative: int = 10
    epochs: int = 30
    seed: int = 42
    sg: bool = False  # False: CBOW (the paper); True: skip-gram (Item2Vec's choice)
    cluster_size: int = 5  # M = ceil(N / cluster_size): the paper's 20% compression
    # Instead of a fixed M: stop merging at this cosine distance (average linkage), so groups
    # that co-occur stay together and unrelated ones are not merged just to reach N/5 clusters.
    distance_threshold: Optional[float] = None


def _stable_hash(text: str) -> int:
    # gensim's default is Python's hash(), which changes per process (PYTHONHASHSEED).
    return zlib.crc32(text.encode("utf-8"))


def train_embeddings(sequences: Sequence[Sequence[int]], n_docs: int, params: Word2VecParams = Word2VecParams(),
                     cancel: Optional[CancelToken] = None) -> np.ndarray:
    """(n_docs, dim) unit vectors; a document that never occurs in a sequence gets a zero row."""
    from gensim.models import Word2Vec

    check(cancel)
    sentences = [[str(int(d)) for d in seq] for seq in sequences if len(seq) >= 1]
    out = np.zeros((n_docs, params.dim), dtype=np.float32)
    if not sentences:
        return out
    model = Word2Vec(sentences=sentences, vector_size=params.dim, window=params.window, negative=params.negative,
                     epochs=params.epochs, sg=int(params.sg), hs=0, min_count=1, seed=params.seed, workers=1,
                     hashfxn=_stable_hash)
    check(cancel)
    for token, idx in model.wv.key_to_index.items():
        d = int(token)
        if 0 <= d < n_docs:
            out[d] = model.wv.vectors[idx]
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.where(norms > 0, norms, 1.0)


def agglomerative_labels(embeddings: np.ndarray, n_clusters: Optional[int] = None, cluster_size: int = 5,
                         seed: int = 42, distance_threshold: Optional[float] = None) -> np.ndarray:
    """Cluster label per row (0..M-1). Rows without an embedding (zero vectors: cosine is
    undefined for them) become singleton clusters after the others. With ``distance_threshold``
    the number of clusters is whatever average linkage gives when it stops merging at that
    cosine distance (``n_clusters`` and ``cluster_size`` are then ignored)."""
    from sklearn.cluster import AgglomerativeClustering

    n = embeddings.shape[0]
    labels = np.full(n, -1, dtype=np.int64)
    has = np.linalg.norm(embeddings, axis=1) > 0
    rows = np.flatnonzero(has)
    # M from the documents that have a co-occurrence vector: with N (all rows) a build whose
    # sequences cover few documents would ask for more clusters than it has points, and every
    # document would end up alone.
    m = n_clusters if n_clusters is not None else max(1, math.ceil(rows.size / cluster_size))
    m = max(1, min(m, rows.size))
    if rows.size == 1:
        labels[rows] = 0
    elif rows.size > 1:
        X = embeddings[rows]
        connectivity = None
        if rows.size > FULL_LINKAGE_MAX:
            from sklearn.neighbors import kneighbors_graph

            connectivity = kneighbors_graph(X, 30, metric="cosine", include_self=False)
        if distance_threshold is not None:
            model = AgglomerativeClustering(n_clusters=None, distance_threshold=distance_threshold, metric="cosine",
                                            linkage="average", connectivity=connectivity)
        else:
            model = AgglomerativeClustering(n_clusters=m, metric="cosine", linkage="average",
                                            connectivity=connectivity)
        labels[rows] = model.fit_predict(X)
    nxt = int(labels.max()) + 1 if (labels >= 0).any() else 0
    for i in np.flatnonzero(labels < 0):
        labels[i] = nxt
        nxt += 1
    return _canonical(labels)


def _canonical(labels: np.ndarray) -> np.ndarray:
    """Renumber clusters by first appearance so equal partitions compare equal."""
    mapping: dict[int, int] = {}
    return np.array([mapping.setdefault(int(x), len(mapping)) for x in labels], dtype=np.int64)


@dataclass(frozen=True)
class CoocClusters:
    labels: np.ndarray  # (n,) cluster per document row
    embeddings: np.ndarray  # (n, dim) co-occurrence vectors, unit rows (zero when unseen)

    @property
    def n_clusters(self) -> int:
        return int(self.labels.max()) + 1 if self.labels.size else 0

    @cached_property
    def members(self) -> list[np.ndarray]:
        order = np.argsort(self.labels, kind="stable")
        bounds = np.searchsorted(self.labels[order], np.arange(self.n_clusters + 1))
        return [order[bounds[c]:bounds[c + 1]] for c in range(self.n_clusters)]

    def cluster_of(self, row: int) -> np.ndarray:
        return self.members[int(self.labels[row])]

    def sizes(self) -> np.ndarray:
        return np.bincount(self.labels, minlength=self.n_clusters)

    def relation_matrix(self) -> sparse.csr_matrix:
        """Same-cluster pairs weighted by co-occurrence cosine (floored at a small positive
        value so every same-cluster pair stays an edge): the graph and `top` for method cooc."""
        rows, cols, vals = [], [], []
        for mem in self.members:
            if mem.size < 2:
                continue
            E = self.embeddings[mem]
            S = np.maximum(E @ E.T, 1e-3)
            r, c = np.meshgrid(mem, mem, indexing="ij")
            off = r != c
            rows.append(r[off])
            cols.append(c[off])
            vals.append(S[off])
        n = self.labels.size
        if not rows:
            return sparse.csr_matrix((n, n))
        return sparse.coo_matrix((np.concatenate(vals).astype(np.float64), (np.concatenate(rows), np.concatenate(cols))),
                                 shape=(n, n)).tocsr()


def cluster_sequences(sequences: Sequence[Sequence[int]], n_docs: int, params: Word2VecParams = Word2VecParams(),
                      progress: ProgressCallback = no_progress, cancel: Optional[CancelToken] = None) -> CoocClusters:
    progress(Progress(0, 2, "training co-occurrence embeddings"))
    emb = train_embeddings(sequences, n_docs, params, cancel)
    check(cancel)
    progress(Progress(1, 2, "clustering documents"))
    labels = agglomerative_labels(emb, cluster_size=params.cluster_size, seed=params.seed,
                                  distance_threshold=params.distance_threshold)
    progress(Progress(2, 2, f"{int(labels.max()) + 1 if labels.size else 0} clusters"))
    return CoocClusters(labels, emb)

"""Retrieval with co-occurrence clusters (co-occurrence paper §4.2 and Appendix A).

Both functions take what any retriever produces — a ranked list of document rows — plus the
document vectors, the query vector and the clusters, so they sit on top of BM25, dense or
hybrid rankings alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from spar_desktop.core.relations.clusters import CoocClusters
from spar_desktop.core.relations.topk import top_k_rows

K_V = 3  # vanilla slots: the retriever's top documents whose clusters are opened
K = 8  # retrieval budget
ALPHA = 0.2  # boost weight (the paper's best single-query setting)


@dataclass(frozen=True)
class ExpansionParams:
    """How a ranking is expanded: see cluster_expand and cluster_boost."""

    k_v: int = K_V
    rerank: str = "query"
    max_added: Optional[int] = None
    alpha: float = ALPHA


RERANK = ("query", "cooc")


def cluster_expand(ranked: Sequence[int], query_vector: np.ndarray, doc_vectors: np.ndarray,
                   clusters: CoocClusters, k_v: int = K_V, k: int = K, rerank: str = "query",
                   max_added: Optional[int] = None) -> list[int]:
    """Top-k_v of ``ranked``, plus members of their clusters, then the rest of ``ranked``.

    The k_v vanilla documents stay first (first-hit precision is kept even when the input
    ranking is not cosine order). Expansion candidates are ordered by ``rerank``:
    - "query": cosine to the query (the paper's re-ranking of the union);
    - "cooc": co-occurrence cosine to the closest vanilla document. Why: a document the user
      needs *with* the top hits was missed precisely because it does not look like the query,
      so ordering candidates by query cosine puts it behind the cluster's look-alikes.
    At most ``max_added`` candidates are taken (None: as many as fit in k); the rest of
    ``ranked`` fills the remaining slots, so exactly min(k, available) documents come back."""
    if rerank not in RERANK:
        raise ValueError(f"rerank must be one of {RERANK}")
    vanilla = [int(d) for d in ranked[:k_v]]
    seen = set(vanilla)
    expansion: list[int] = []
    for d in vanilla:
        for m in clusters.cluster_of(d).tolist():
            if m not in seen:
                seen.add(m)
                expansion.append(m)
    if expansion:
        if rerank == "query":
            sims = doc_vectors[expansion] @ np.asarray(query_vector, dtype=np.float32)
        else:
            sims = (clusters.embeddings[expansion] @ clusters.embeddings[vanilla].T).max(axis=1)
        order = np.lexsort((np.asarray(expansion), -sims))  # ties: lower row first (deterministic)
        expansion = [expansion[i] for i in order]
    limit = k - len(vanilla) if max_added is None else max(0, min(max_added, k - len(vanilla)))
    out = vanilla + expansion[:limit]
    taken = set(out)
    for d in ranked[k_v:]:
        if len(out) >= k:
            break
        if int(d) not in taken:
            taken.add(int(d))
            out.append(int(d))
    return out


def cluster_boost(ranked: Sequence[int], query_vector: np.ndarray, doc_vectors: np.ndarray, clusters: CoocClusters,
                  alpha: float = ALPHA, k_v: int = K_V, k: int = K) -> list[int]:
    """Boost variant: score(d) = cos(q, d) + α · cos(q, centroid of d's cluster), over the input
    ranking plus the clusters of its top k_v. A document whose cluster as a whole matches the
    query moves up; α = 0.2 keeps direct similarity dominant (higher α hurt in the paper)."""
    q = np.asarray(query_vector, dtype=np.float32)
    candidates = list(dict.fromkeys(int(d) for d in ranked))
    have = set(candidates)
    for d in list(candidates[:k_v]):
        for m in clusters.cluster_of(d).tolist():
            if m not in have:
                have.add(m)
                candidates.append(m)
    if not candidates:
        return []
    cand = np.asarray(candidates)
    direct = doc_vectors[cand] @ q
    labels = clusters.labels[cand]
    cluster_sim: dict[int, float] = {}
    for lab in np.unique(labels).tolist():
        members = clusters.members[lab]
        centroid = doc_vectors[members].mean(axis=0)
        norm = float(np.linalg.norm(centroid))
        cluster_sim[lab] = float(centroid @ q) / norm if norm > 0 else 0.0
    score = direct + alpha * np.array([cluster_sim[int(lab)] for lab in labels], dtype=np.float32)
    order = np.lexsort((cand, -score))
    return [int(cand[i]) for i in order[:k]]


def dense_ranking(query_vector: np.ndarray, doc_vectors: np.ndarray, depth: int = 100) -> list[int]:
    """Vanilla cosine ranking of document rows (the baseline both functions are compared with)."""
    s = (doc_vectors @ np.asarray(query_vector, dtype=np.float32))[None, :]
    return top_k_rows(s, depth)[0][0].tolist()

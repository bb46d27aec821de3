"""Ranking metrics with the definitions BEIR reports (via pytrec_eval / trec_eval).

- nDCG@k: gain = graded relevance (linear, not 2^rel - 1), discount 1/log2(rank + 1); the ideal
  ranking sorts *all* judged documents of the query by relevance.
- Recall@k: relevant (rel > 0) documents in the top k / all relevant documents of the query.
- MRR@k: 1 / rank of the first relevant document within the top k, else 0.
- Hits@k (success@k): 1 if any relevant document is in the top k.

Averages run over every judged query, including those the system returned nothing for (they
score 0); pytrec_eval would silently leave such queries out and flatter the mean.

At the bottom of the core (pure functions over rankings): eval scores with them, and so does
memory's ERM protocol, which sits below eval. ``eval.metrics`` is their public name.
"""

from __future__ import annotations

import math
import random
from typing import Iterable, Mapping, Sequence

Ranking = Sequence[str]  # doc ids, best first, no duplicates
Qrels = Mapping[str, int]  # doc id -> graded relevance for one query


def dcg(gains: Iterable[float]) -> float:
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains))


def ndcg_at_k(ranking: Ranking, qrels: Qrels, k: int) -> float:
    ideal = dcg(sorted((max(r, 0) for r in qrels.values()), reverse=True)[:k])
    if ideal <= 0:
        return 0.0
    return dcg(max(qrels.get(d, 0), 0) for d in ranking[:k]) / ideal


def recall_at_k(ranking: Ranking, qrels: Qrels, k: int) -> float:
    relevant = {d for d, r in qrels.items() if r > 0}
    if not relevant:
        return 0.0
    return len(relevant.intersection(ranking[:k])) / len(relevant)


def mrr_at_k(ranking: Ranking, qrels: Qrels, k: int) -> float:
    for i, d in enumerate(ranking[:k], 1):
        if qrels.get(d, 0) > 0:
            return 1.0 / i
    return 0.0


def hits_at_k(ranking: Ranking, qrels: Qrels, k: int) -> float:
    return 1.0 if any(qrels.get(d, 0) > 0 for d in ranking[:k]) else 0.0


METRICS = {"ndcg": ndcg_at_k, "recall": recall_at_k, "mrr": mrr_at_k, "hits": hits_at_k}


def per_query(run: Mapping[str, Ranking], qrels: Mapping[str, Qrels], ks: Sequence[int] = (10,)) -> dict[str, dict[str, float]]:
    """metric name ('ndcg@10') -> query id -> value, for every query in ``qrels``."""
    out: dict[str, dict[str, float]] = {}
    for name, fn in METRICS.items():
        for k in ks:
            out[f"{name}@{k}"] = {q: fn(run.get(q, ()), rels, k) for q, rels in qrels.items()}
    return out


def evaluate(run: Mapping[str, Ranking], qrels: Mapping[str, Qrels], ks: Sequence[int] = (10,)) -> dict[str, float]:
    """Mean of each metric over the judged queries."""
    return {name: (sum(v.values()) / len(v) if v else 0.0) for name, v in per_query(run, qrels, ks).items()}


def bootstrap_ci(values: Sequence[float], n_resamples: int = 1000, confidence: float = 0.95,
                 seed: int = 13) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean over queries (seeded: reports are reproducible)."""
    if not values:
        return (0.0, 0.0)
    rng = random.Random(seed)
    n = len(values)
    means = sorted(sum(values[rng.randrange(n)] for _ in range(n)) / n for _ in range(n_resamples))
    lo = int(((1 - confidence) / 2) * n_resamples)
    hi = min(n_resamples - 1, int((1 - (1 - confidence) / 2) * n_resamples))
    return means[lo], means[hi]


def paired_bootstrap(a: Sequence[float], b: Sequence[float], n_resamples: int = 1000, confidence: float = 0.95,
                     seed: int = 13) -> tuple[float, float, float]:
    """(mean of a - b, CI low, CI high) over the same queries resampled together: whether one
    system beats another on these queries, which two overlapping per-system CIs cannot say."""
    if len(a) != len(b):
        raise ValueError("paired_bootstrap needs per-query values of the same queries")
    diffs = [x - y for x, y in zip(a, b)]
    lo, hi = bootstrap_ci(diffs, n_resamples, confidence, seed)
    return (sum(diffs) / len(diffs) if diffs else 0.0), lo, hi


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile (q in [0, 100]), as numpy's default."""
    if not values:
        return 0.0
    s = sorted(values)
    pos = (len(s) - 1) * q / 100.0
    lo, hi = math.floor(pos), math.ceil(pos)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)

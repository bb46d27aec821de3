"""Conditional reranking (paper 002 §3.4.2): rerank only when the top fused score s_max is below
tau (eq. 28–29), with tau calibrated on labelled queries by the Wilson lower bound (eq. 30–32).

The reranker is any ``fn(query, passages) -> result`` with ``.order`` (a permutation, best first)
and ``.fell_back`` — LLMHelpers.rerank, the listwise JSON-permutation reranker, is one.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from typing import Any, Callable, Optional, Sequence

from spar_desktop.core.retrieval.conditional_rerank import Reranker, conditional_rerank, should_rerank

Z95 = 1.96
MIN_SKIPPED = 30


def wilson_lower(k: int, n: int, z: float = Z95) -> float:
    """Eq. 31: lower end of the Wilson score interval of k successes in n trials."""
    if n <= 0:
        return 0.0
    p = k / n
    z2 = z * z
    return (p + z2 / (2 * n) - z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))) / (1 + z2 / n)


def calibrate_tau(run: Sequence[tuple[float, bool]], beta: float, z: float = Z95, min_n: int = MIN_SKIPPED,
                  grid: Optional[Sequence[float]] = None) -> Optional[float]:
    """Eq. 32: the smallest tau whose skipped queries (s_max >= tau) number at least ``min_n`` and
    have a Wilson lower bound on precision of at least ``beta``. ``run``: (s_max, success) per
    labelled query, success = a relevant result in the top 5 (or any binary correctness).
    None when no threshold qualifies (then rerank everything)."""
    if not 0.0 <= beta <= 1.0:
        raise ValueError("beta must be within [0, 1]")
    candidates = sorted(set(grid if grid is not None else (s for s, _ in run)))
    for tau in candidates:
        skipped = [ok for s, ok in run if s >= tau]
        if len(skipped) >= min_n and wilson_lower(sum(skipped), len(skipped), z) >= beta:
            return float(tau)
    return None


@dataclass
class RerankStats:
    queries: int = 0
    reranked: int = 0
    fell_back: int = 0  # reranker answered with the fused order (no server, unparsable reply)
    seconds: float = 0.0  # time spent in the reranker

    @property
    def rate(self) -> float:
        return self.reranked / self.queries if self.queries else 0.0

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["rate"] = round(self.rate, 4)
        d["seconds"] = round(self.seconds, 3)
        d["ms_per_reranked_query"] = round(1000 * self.seconds / self.reranked, 1) if self.reranked else 0.0
        return d


class ConditionalReranker:
    def __init__(self, rerank_fn: Callable[[str, Sequence[str]], Any], tau: float, depth: int = 10) -> None:
        self.rerank_fn = rerank_fn
        self.tau = tau
        self.depth = depth
        self.stats = RerankStats()

    def should_rerank(self, s_max: float) -> bool:
        return should_rerank(s_max, self.tau)

    def __call__(self, results: Any) -> Any:
        """SearchResults in, SearchResults out: the top ``depth`` chunks reordered by the
        reranker when s_max < tau, files re-ranked by their best reranked chunk. The decision
        and its application are conditional_rerank's, the code search and chat run."""
        self.stats.queries += 1
        order, outcome = conditional_rerank(results.query, results.hits, Reranker(self.rerank_fn, "reranker"),
                                            self.tau, self.depth, lambda h: h.parent_text or h.text)
        self.stats.seconds += outcome.latency_ms / 1000
        self.stats.reranked += outcome.called
        self.stats.fell_back += outcome.called and not outcome.reranked
        if not outcome.reranked:
            return results
        hits = [replace(results.hits[i], rank=n) for n, i in enumerate(order, 1)]
        first: dict[str, int] = {}
        for i, h in enumerate(hits):
            first.setdefault(h.doc_id, i)
        files = sorted(results.files, key=lambda f: (first.get(f.doc_id, len(hits)), f.rank))
        files = [replace(f, rank=i) for i, f in enumerate(files, 1)]
        return replace(results, hits=tuple(hits), files=tuple(files))

"""`spar eval --rerank ollama` and `--calibrate-rerank`: conditional reranking measured the way
search and chat run it (ConditionalReranker → conditional_rerank, the same decision and
application), and tau calibrated by the Wilson lower bound (paper 002 eq. 30–32) on labelled
queries, written to the data dir where every workspace search reads it.

Success for calibration (eq. 30): a relevant document among the top 5 of the fused ranking.
"""

from __future__ import annotations

import math
import time
from typing import Any, Optional

from spar_desktop.core.eval import metrics as m
from spar_desktop.core.eval.beir import BeirDataset
from spar_desktop.core.progress import CancelToken, Progress, ProgressCallback, check, no_progress
from spar_desktop.core.retrieval.conditional_rerank import Calibration, Reranker, RERANK_ALL
from spar_desktop.core.retrieval.rerank import MIN_SKIPPED, Z95, ConditionalReranker, calibrate_tau, wilson_lower
from spar_desktop.core.retrieval.searcher import HybridSearcher

DEPTH = 100  # document rankings are scored to Recall@100, as evaluate_searcher does
DEFAULT_BETA = 0.9  # skipped queries keep >= 90 % top-5 precision at 95 % confidence
SUCCESS_AT = 5


def fused_run(searcher: HybridSearcher, dataset: BeirDataset, progress: ProgressCallback = no_progress,
              cancel: Optional[CancelToken] = None) -> list[tuple[str, Any]]:
    """(query id, SearchResults) for every judged query, hybrid and unreranked."""
    out = []
    queries = list(dataset.queries.items())
    for i, (qid, text) in enumerate(queries):
        if i % 25 == 0:
            check(cancel)
            progress(Progress(i, len(queries), "hybrid queries"))
        out.append((qid, searcher.search(text, k=DEPTH, method="hybrid")))
    progress(Progress(len(queries), len(queries), "hybrid queries"))
    return out


def success(res: Any, qrels: dict[str, int]) -> bool:
    return bool({f.doc_id for f in res.files[:SUCCESS_AT]} & {d for d, r in qrels.items() if r > 0})


def calibrate(searcher: HybridSearcher, dataset: BeirDataset, beta: float = DEFAULT_BETA, min_n: int = MIN_SKIPPED,
              progress: ProgressCallback = no_progress, cancel: Optional[CancelToken] = None) -> Calibration:
    """Eq. 32 over the dataset's judged queries: the smallest tau whose skipped queries (s_max >= tau)
    number at least ``min_n`` with a Wilson lower bound on top-5 precision of at least ``beta``;
    RERANK_ALL when none qualifies."""
    run = [(res.hits[0].score if res.hits else 0.0, success(res, dataset.qrels[qid]))
           for qid, res in fused_run(searcher, dataset, progress, cancel)]
    tau = calibrate_tau(run, beta, Z95, min_n)
    if tau is None:
        return Calibration(RERANK_ALL, beta, len(run), 0, None, dataset.name)
    skipped = [ok for s, ok in run if s >= tau]
    return Calibration(tau, beta, len(run), len(skipped), round(wilson_lower(sum(skipped), len(skipped)), 4),
                       dataset.name)


def evaluate_rerank(searcher: HybridSearcher, dataset: BeirDataset, reranker: Reranker, tau: float, k: int = 10,
                    progress: ProgressCallback = no_progress, cancel: Optional[CancelToken] = None) -> dict[str, Any]:
    """The fused ranking and the conditionally reranked one over the same queries: metrics of
    both, how often the model was asked, how often its answer was used, and what it cost."""
    rr = ConditionalReranker(reranker.fn, tau)
    ks = tuple(sorted({1, k, 100}))
    base: dict[str, list[str]] = {}
    after: dict[str, list[str]] = {}
    t0 = time.perf_counter()
    for qid, res in fused_run(searcher, dataset, progress, cancel):
        base[qid] = [f.doc_id for f in res.files]
        after[qid] = [f.doc_id for f in rr(res).files]
    seconds = time.perf_counter() - t0
    stats = rr.stats.to_json()
    return {"dataset": dataset.name, "split": dataset.split, "queries": len(base), "k": k, "model": reranker.model,
            "tau": None if math.isinf(tau) else tau, "stats": stats,
            "without": {key: round(v, 4) for key, v in m.evaluate(base, dataset.qrels, ks).items()},
            "with": {key: round(v, 4) for key, v in m.evaluate(after, dataset.qrels, ks).items()},
            "ms_per_query": round(1000 * seconds / len(base), 1) if base else 0.0}

"""Ranking metrics (nDCG, Recall, MRR, Hits, bootstrap CIs): eval's public name for
``core/ranking_metrics.py``, where they live so that memory's ERM protocol (below eval) scores
with the same definitions."""

from spar_desktop.core.ranking_metrics import (
    METRICS,
    Qrels,
    Ranking,
    bootstrap_ci,
    dcg,
    evaluate,
    hits_at_k,
    mrr_at_k,
    ndcg_at_k,
    paired_bootstrap,
    per_query,
    percentile,
    recall_at_k,
)

__all__ = ["METRICS", "Qrels", "Ranking", "bootstrap_ci", "dcg", "evaluate", "hits_at_k", "mrr_at_k", "ndcg_at_k",
           "paired_bootstrap", "per_query", "percentile", "recall_at_k"]

"""Evaluation: BEIR-format collections, ranking metrics and a runner over the real pipeline."""

from spar_desktop.core.eval.beir import BeirDataset, BeirDoc, BeirError, load_beir
from spar_desktop.core.eval.metrics import evaluate, hits_at_k, mrr_at_k, ndcg_at_k, recall_at_k

__all__ = [
    "BeirDataset",
    "BeirDoc",
    "BeirError",
    "evaluate",
    "hits_at_k",
    "load_beir",
    "mrr_at_k",
    "ndcg_at_k",
    "recall_at_k",
]

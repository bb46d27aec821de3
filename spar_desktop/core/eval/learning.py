"""`spar eval` modes that learn from labelled queries: ERM (--erm-train), a learned fusion
weight (--alpha learned) and conditional reranking (--rerank conditional). Each trains on one set
of queries and scores another: a fixed train/test pair of splits, or random shares of one split
over several seeds (paper 001 §5.1). Everything is measured on held-out queries only."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

import numpy as np

from spar_desktop.core.eval import metrics as m
from spar_desktop.core.eval.beir import BeirDataset
from spar_desktop.core.memory import protocol as P
from spar_desktop.core.memory.config import ERMConfig
from spar_desktop.core.progress import CancelToken, ProgressCallback, no_progress
from spar_desktop.core.retrieval.alpha import alpha_targets, fit_alpha
from spar_desktop.core.retrieval.rerank import ConditionalReranker, calibrate_tau
from spar_desktop.core.retrieval.searcher import HybridSearcher


@dataclass(frozen=True)
class LearningOptions:
    method: str = "hybrid"
    erm: bool = False
    alpha: Optional[str] = None  # None | 'learned' | 'learned-gbt'
    rerank: Optional[str] = None  # None | 'conditional'
    tau: Optional[float] = None
    tau_beta: Optional[float] = None  # calibrate tau on the training queries (Wilson, eq. 32)
    save_alpha: Optional[str] = None  # write the first split's ridge model here
    fraction: float = 0.5
    seeds: int = 5
    erm_config: ERMConfig = ERMConfig()


def splits_for(evaluated: BeirDataset, train: Optional[BeirDataset], opts: LearningOptions) -> list[tuple[list[str], list[str]]]:
    if train is None or train.split == evaluated.split:
        return [P.split_queries(list(evaluated.queries), opts.fraction, s) for s in range(opts.seeds)]
    return [(list(train.queries), list(evaluated.queries))]


def run_learning(searcher: HybridSearcher, evaluated: BeirDataset, train: Optional[BeirDataset], opts: LearningOptions,
                 rerank_fn: Optional[Callable[[str, Sequence[str]], Any]] = None,
                 progress: ProgressCallback = no_progress, cancel: Optional[CancelToken] = None) -> dict[str, Any]:
    queries = dict(evaluated.queries)
    qrels = dict(evaluated.qrels)
    if train is not None:
        queries.update(train.queries)
        qrels.update(train.qrels)
    splits = splits_for(evaluated, train, opts)
    prepared = P.prepare(searcher, queries, opts.erm_config, progress, cancel, expand=opts.erm)
    report: dict[str, Any] = {"dataset": evaluated.name, "split": evaluated.split,
                              "train_split": train.split if train is not None else evaluated.split,
                              "splits": len(splits), "fraction": opts.fraction if len(splits) > 1 else None}
    if opts.erm:
        ids = splits
        report["erm"] = P.run(searcher, prepared, qrels, methods=(opts.method,), config=opts.erm_config,
                              seeds=len(ids), fraction=opts.fraction,
                              train_ids=ids[0][0] if len(ids) == 1 else None,
                              test_ids=ids[0][1] if len(ids) == 1 else None, progress=progress, cancel=cancel)
    if opts.alpha:
        report["alpha"] = learned_alpha(searcher, prepared, qrels, splits, "gbt" if opts.alpha == "learned-gbt" else "ridge",
                                        save=opts.save_alpha)
    if opts.rerank == "conditional":
        report["rerank"] = conditional_rerank(searcher, prepared, qrels, splits[0], opts, rerank_fn)
    return report


def learned_alpha(searcher: HybridSearcher, prepared: dict, qrels: dict, splits: list, kind: str,
                  save: Optional[str] = None) -> dict[str, Any]:
    """Fit alpha on each split's training queries, score hybrid on its held-out queries with
    the prediction vs the fixed default."""
    rows = []
    for tr, te in splits:
        targets = alpha_targets(searcher, {q: prepared[q].text for q in tr}, qrels, {q: prepared[q].vector for q in tr})
        model = fit_alpha(targets, kind)
        anchored = copy.copy(model)
        anchored.anchor = searcher.default_alpha
        if save and not rows and kind == "ridge":
            anchored.save(save)
        learned, around = copy.copy(searcher), copy.copy(searcher)
        learned.alpha_model, around.alpha_model = model, anchored
        fixed = P.score(searcher, prepared, qrels, te, "hybrid")
        mine = P.score(learned, prepared, qrels, te, "hybrid")
        near = P.score(around, prepared, qrels, te, "hybrid")
        preds = [model.predict(prepared[q].text, *searcher.candidate_scores(prepared[q].text, query_vector=prepared[q].vector))
                 for q in te[:200]]
        rows.append({"train": len(tr), "test": len(te), "targets": len(targets), "mean_alpha_star": round(model.mean_alpha, 4),
                     "r2_train": round(model.r2, 4), "mean_predicted": round(float(np.mean(preds)), 4),
                     "lambda": model.lam if kind == "ridge" else None,
                     **{f"fixed_{k}": round(P.mean(v), 4) for k, v in fixed.items()},
                     **{f"learned_{k}": round(P.mean(v), 4) for k, v in mine.items()},
                     **{f"anchored_{k}": round(P.mean(v), 4) for k, v in near.items()}})
    keys = [k for k in rows[0] if k.startswith(("fixed_", "learned_", "anchored_"))]
    return {"model": kind, "fixed_alpha": searcher.default_alpha,
            "summary": {k: round(float(np.mean([r[k] for r in rows])), 4) for k in keys}, "runs": rows}


def conditional_rerank(searcher: HybridSearcher, prepared: dict, qrels: dict, split: tuple, opts: LearningOptions,
                       rerank_fn: Optional[Callable[[str, Sequence[str]], Any]]) -> dict[str, Any]:
    """Rerank held-out queries whose top fused score is below tau; tau given or calibrated on
    the training queries (success = a relevant document in the top 5)."""
    tr, te = split
    tau = opts.tau
    if tau is None and opts.tau_beta is not None:
        run = []
        for q in tr:
            res = searcher.search(prepared[q].text, k=100, query_vector=prepared[q].vector)
            top5 = {f.doc_id for f in res.files[:5]}
            rel = {d for d, r in qrels[q].items() if r > 0}
            run.append((res.hits[0].score if res.hits else 0.0, bool(top5 & rel)))
        tau = calibrate_tau(run, opts.tau_beta)
    tau_used = 1.01 if tau is None else tau  # no qualifying threshold: rerank everything
    if rerank_fn is None:
        raise ValueError("conditional reranking needs a reranker")
    rr = ConditionalReranker(rerank_fn, tau_used)
    runs_base, runs_rr = {}, {}
    for q in te:
        res = searcher.search(prepared[q].text, k=100, query_vector=prepared[q].vector)
        runs_base[q] = [f.doc_id for f in res.files]
        runs_rr[q] = [f.doc_id for f in rr(res).files]
    sub = {q: qrels[q] for q in te}
    base = m.evaluate(runs_base, sub, (1, 10))
    after = m.evaluate(runs_rr, sub, (1, 10))
    return {"tau": tau, "tau_beta": opts.tau_beta, "queries": len(te), "stats": rr.stats.to_json(),
            "without": {k: round(v, 4) for k, v in base.items() if k.startswith("ndcg")},
            "with": {k: round(v, 4) for k, v in after.items() if k.startswith("ndcg")}}

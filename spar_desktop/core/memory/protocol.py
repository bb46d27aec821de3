"""ERM's evaluation protocol (paper 001 §5.1) on a labelled collection: keys reset, evolve on a
random share of the queries with the qrels as the correctness gate (a relevant document in the
top-K of the expanded query, eq. 4), then score the held-out queries with no further updates.

Runs on an in-memory searcher (numpy dense side) so a seed costs seconds: expansion units and
query vectors are computed once (``prepare``) and reused by every seed and method; each
evolution rebuilds the BM25 index and swaps rows of the vector matrix (``with_keys``).
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

import numpy as np

from spar_desktop.core import ranking_metrics as m
from spar_desktop.core.memory.config import ERMConfig
from spar_desktop.core.memory.learner import ERMLearner, unit_vector
from spar_desktop.core.memory.units import ExpansionUnit, prf_units
from spar_desktop.core.progress import CancelToken, Progress, ProgressCallback, check, no_progress
from spar_desktop.core.retrieval.bm25_index import english_stopwords
from spar_desktop.core.retrieval.searcher import HybridSearcher, KeyOverride

METRIC_KS = (1, 10)


@dataclass(frozen=True)
class PreparedQuery:
    qid: str
    text: str
    vector: np.ndarray
    units: tuple[ExpansionUnit, ...]
    unit_vectors: np.ndarray

    @property
    def expanded_text(self) -> str:
        return " ".join([self.text, *(u.text for u in self.units)])

    @property
    def expanded_vector(self) -> np.ndarray:
        if not self.units:
            return self.vector
        return unit_vector(self.vector + self.unit_vectors.sum(axis=0))


@dataclass(frozen=True)
class TrainStats:
    queries: int
    gated: int  # passed the correctness gate
    credited: int  # gated queries whose units improved at least one key
    rounds: int
    evolved_keys: int
    seconds: float


def prepare(searcher: HybridSearcher, queries: Mapping[str, str], config: ERMConfig = ERMConfig(),
            progress: ProgressCallback = no_progress, cancel: Optional[CancelToken] = None,
            expand: bool = True) -> dict[str, PreparedQuery]:
    """Query vectors and local-feedback units from the ORIGINAL keys' hybrid results
    (``expand=False``: vectors only)."""
    enc = searcher.encoder
    ids = list(queries)
    qvecs = enc.encode([queries[q] for q in ids]) if ids else np.empty((0, 0))
    stop = english_stopwords()
    units: dict[str, list[ExpansionUnit]] = {}
    for i, qid in enumerate(ids if expand else ()):
        if i % 25 == 0:
            check(cancel)
            progress(Progress(i, len(ids), "expanding training queries"))
        q = qvecs[i]
        res = searcher.search(queries[qid], k=config.prf_passages, query_vector=q)
        # Sentences are scored lexically here: embedding ~20 sentences per query is most of the
        # cost of a thousand-query run on a CPU; the app (one query at a time) embeds them.
        units[qid] = prf_units(queries[qid], [h.text for h in res.hits], idf=searcher.bm25.idf, stopwords=stop,
                               config=config)
    progress(Progress(len(ids), len(ids), "embedding expansion units"))
    flat = [u.text for qid in ids for u in units.get(qid, ())]
    uvecs = enc.encode(flat) if flat else np.empty((0, qvecs.shape[1] if len(ids) else 0), np.float32)
    out, at = {}, 0
    for i, qid in enumerate(ids):
        n = len(units.get(qid, ()))
        out[qid] = PreparedQuery(qid, queries[qid], qvecs[i], tuple(units.get(qid, ())), uvecs[at:at + n])
        at += n
    return out


def overrides_from(learner: ERMLearner, searcher: HybridSearcher) -> dict[str, KeyOverride]:
    assert searcher.original_vectors is not None
    originals = {k: searcher.original_vectors[searcher.position(k)] for k in learner.refs()}
    return {k: KeyOverride(e.vector, e.text, "erm") for k, e in learner.evolved_keys(originals).items()}


def train(searcher: HybridSearcher, prepared: Mapping[str, PreparedQuery], qrels: Mapping[str, Mapping[str, int]],
          train_ids: Sequence[str], method: str = "hybrid", config: ERMConfig = ERMConfig(),
          cancel: Optional[CancelToken] = None) -> tuple[HybridSearcher, TrainStats]:
    """Evolve keys on ``train_ids`` in order; returns the evolved searcher (the input is untouched)."""
    t0 = time.perf_counter()
    learner = ERMLearner(config)
    cur = searcher.with_keys({})
    gated = credited = 0
    for i, qid in enumerate(train_ids):
        if i % 50 == 0:
            check(cancel)
        p = prepared[qid]
        if not p.units:
            continue
        relevant = {d for d, r in qrels.get(qid, {}).items() if r > 0}
        res = cur.search(p.expanded_text, k=config.retrieved_k, method=method, query_vector=p.expanded_vector)
        if not any(f.doc_id in relevant for f in res.files[: config.retrieved_k]):
            continue  # eq. 4: the expanded query failed; its units teach nothing
        gated += 1
        grades = qrels.get(qid, {})
        best = {d for d in relevant if grades[d] == max(grades[x] for x in relevant)}
        confirmed = best if config.target_grade == "top" else relevant
        hits = [h for h in res.hits if config.attribute_to == "retrieved" or h.doc_id in confirmed]
        targets = [(h.key, cur.vectors[cur.position(h.key)]) for h in hits]
        if learner.observe(p.vector, p.units, p.unit_vectors, targets) > 0:
            credited += 1
        if learner.end_query():
            cur = cur.with_keys(overrides_from(learner, cur))
    learner.close_round()  # the protocol's last (partial) batch evolves too
    overrides = overrides_from(learner, cur)
    cur = cur.with_keys(overrides)
    return cur, TrainStats(len(train_ids), gated, credited, learner.progress.rounds, len(overrides),
                           round(time.perf_counter() - t0, 2))


def score(searcher: HybridSearcher, prepared: Mapping[str, PreparedQuery], qrels: Mapping[str, Mapping[str, int]],
          ids: Sequence[str], method: str, alpha: Optional[float] = None) -> dict[str, dict[str, float]]:
    """Per-query nDCG@1 and nDCG@10 (metric → qid → value), query vectors precomputed."""
    run = {q: [f.doc_id for f in searcher.search(prepared[q].text, k=100, method=method, alpha=alpha,
                                                 query_vector=prepared[q].vector).files] for q in ids}
    per_q = m.per_query(run, {q: qrels[q] for q in ids}, METRIC_KS)
    return {f"ndcg@{k}": per_q[f"ndcg@{k}"] for k in METRIC_KS}


def latency_ms(searchers: Sequence[HybridSearcher], texts: Sequence[str], method: str = "hybrid",
               repeats: int = 1) -> list[dict[str, float]]:
    """Per-query latency (query encoding included) of several searchers, interleaved query by
    query so machine load hits them alike."""
    times: list[list[float]] = [[] for _ in searchers]
    for s in searchers:  # warm-up
        s.search(texts[0], k=100, method=method)
    for _ in range(repeats):
        for t in texts:
            for i, s in enumerate(searchers):
                t0 = time.perf_counter()
                s.search(t, k=100, method=method)
                times[i].append((time.perf_counter() - t0) * 1000)
    return [{"p50": round(m.percentile(ts, 50), 2), "p95": round(m.percentile(ts, 95), 2),
             "mean": round(sum(ts) / len(ts), 2)} for ts in times]


def split_queries(ids: Sequence[str], fraction: float, seed: int) -> tuple[list[str], list[str]]:
    """Random ``fraction`` of the queries to evolve on, the rest held out (sorted first, so a
    seed means the same split on every machine)."""
    order = sorted(ids)
    random.Random(seed).shuffle(order)
    n = max(1, min(len(order) - 1, round(fraction * len(order))))
    return order[:n], order[n:]


def mean(values: Mapping[str, float] | Sequence[float]) -> float:
    vals = list(values.values()) if isinstance(values, Mapping) else list(values)
    return float(sum(vals) / len(vals)) if vals else 0.0


def run(searcher: HybridSearcher, prepared: Mapping[str, PreparedQuery], qrels: Mapping[str, Mapping[str, int]],
        methods: Sequence[str] = ("bm25", "dense", "hybrid"), seeds: int = 5, fraction: float = 0.5,
        config: ERMConfig = ERMConfig(), train_ids: Optional[Sequence[str]] = None,
        test_ids: Optional[Sequence[str]] = None, progress: ProgressCallback = no_progress,
        cancel: Optional[CancelToken] = None) -> dict[str, Any]:
    """The protocol over ``seeds`` random splits (or one fixed train/test split), per method:
    held-out nDCG@1/@10 without and with ERM. Returns a JSON-able report."""
    fixed = train_ids is not None and test_ids is not None
    splits = [(list(train_ids), list(test_ids))] if fixed else \
        [split_queries(list(prepared), fraction, seed) for seed in range(seeds)]
    everything = sorted({q for tr, te in splits for q in te})
    base = {meth: score(searcher, prepared, qrels, everything, meth) for meth in methods}
    out: dict[str, Any] = {"methods": {}, "splits": len(splits), "fraction": None if fixed else fraction,
                           "config": config.__dict__}
    for meth in methods:
        rows = []
        for i, (tr, te) in enumerate(splits):
            progress(Progress(i, len(splits), f"ERM {meth}: split {i + 1}/{len(splits)}"))
            evolved, stats = train(searcher, prepared, qrels, tr, meth, config, cancel)
            after = score(evolved, prepared, qrels, te, meth)
            rows.append({"seed": None if fixed else i, "train": len(tr), "test": len(te), "train_stats": stats.__dict__,
                         **{f"base_{k}": round(mean({q: base[meth][k][q] for q in te}), 4) for k in after},
                         **{f"erm_{k}": round(mean(v), 4) for k, v in after.items()}})
        summary = {}
        for k in (f"ndcg@{x}" for x in METRIC_KS):
            b = [r[f"base_{k}"] for r in rows]
            e = [r[f"erm_{k}"] for r in rows]
            summary[k] = {"base": round(float(np.mean(b)), 4), "erm": round(float(np.mean(e)), 4),
                          "erm_std": round(float(np.std(e)), 4),
                          "delta_pct": round(100 * (np.mean(e) - np.mean(b)) / np.mean(b), 2) if np.mean(b) else 0.0}
        out["methods"][meth] = {"summary": summary, "runs": rows}
    return out

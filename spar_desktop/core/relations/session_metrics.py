"""Session-level retrieval metrics (co-occurrence paper §3.1) with bootstrap confidence intervals.

- session coverage@k: the fraction of a session's documents found by ONE retrieval call;
- calls-to-τ: how many calls until the union of their results covers a fraction τ of the session.

Pure functions over rankings and document sets, so core/eval (or anything else) can call them
with any retriever; ``evaluate_sessions`` runs named systems over the same sessions and reports
paired differences (resampling sessions jointly, which is what makes small gains significant).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Callable, Collection, Hashable, Mapping, Optional, Sequence

import numpy as np

from spar_desktop.core.progress import CancelToken, Progress, ProgressCallback, check, no_progress

RankFn = Callable[[str], Sequence[Hashable]]  # query text -> document ids, best first
BOOTSTRAP_SAMPLES = 1000
SEED = 42


def session_coverage(retrieved: Sequence[Hashable], session: Collection[Hashable], k: Optional[int] = None) -> float:
    """|top-k ∩ S| / |S| (0 for an empty session). Recall@k is the |S| = 1 special case."""
    docs = set(session)
    if not docs:
        return 0.0
    top = retrieved if k is None else retrieved[:k]
    return len(docs.intersection(top)) / len(docs)


@dataclass(frozen=True)
class EvalSession:
    """A session to evaluate: its documents (in the order a user would look for them), the entry
    query, and one follow-up query per document (asked when that document is still missing)."""

    key: str
    documents: tuple[Hashable, ...]
    query: str
    follow_ups: Mapping[Hashable, str] = field(default_factory=dict)


def simulate_calls(session: EvalSession, rank: RankFn, tau: float, k: int, max_calls: int = 10) -> Optional[int]:
    """Calls-to-τ for a simulated user: the entry query first, then a follow-up about the first
    session document not covered yet (no follow-up known: the entry query again, which cannot
    add anything, so the session ends uncovered)."""
    docs = set(session.documents)
    covered: set[Hashable] = set()
    query = session.query
    for m in range(1, max_calls + 1):
        covered.update(docs.intersection(list(rank(query))[:k]))
        if docs and len(covered) / len(docs) >= tau - 1e-12:
            return m
        missing = [d for d in session.documents if d not in covered]
        nxt = session.follow_ups.get(missing[0]) if missing else None
        if nxt is None:
            return None
        query = nxt
    return None


def censored(calls: Sequence[Optional[int]], max_calls: int) -> np.ndarray:
    """Unreached sessions count as max_calls + 1, a lower bound on what they would have needed."""
    return np.array([max_calls + 1 if c is None else c for c in calls], dtype=np.float64)


def bootstrap_ci(values: Sequence[float], n_resamples: int = BOOTSTRAP_SAMPLES, confidence: float = 0.95,
                 seed: int = SEED) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean (seeded, vectorised)."""
    v = np.asarray(values, dtype=np.float64)
    if v.size == 0:
        return (0.0, 0.0)
    idx = np.random.default_rng(seed).integers(0, v.size, size=(n_resamples, v.size))
    means = v[idx].mean(axis=1)
    alpha = (1 - confidence) / 2
    return float(np.quantile(means, alpha)), float(np.quantile(means, 1 - alpha))


def paired_bootstrap_ci(base: Sequence[float], other: Sequence[float], n_resamples: int = BOOTSTRAP_SAMPLES,
                        confidence: float = 0.95, seed: int = SEED) -> tuple[float, float]:
    """CI of mean(other − base) resampling sessions jointly."""
    a, b = np.asarray(base, dtype=np.float64), np.asarray(other, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError("paired samples must have the same length")
    return bootstrap_ci(b - a, n_resamples, confidence, seed)


@dataclass
class SystemSessionStats:
    name: str
    coverage: float
    coverage_ci95: tuple[float, float]
    calls: dict[str, dict[str, float]]  # 'tau=0.7' -> mean (censored), ci lo/hi, reached fraction
    coverage_delta: Optional[float] = None  # vs the baseline system
    coverage_delta_ci95: Optional[tuple[float, float]] = None


@dataclass
class SessionEvalReport:
    k: int
    sessions: int
    mean_session_size: float
    baseline: str
    systems: dict[str, SystemSessionStats]
    max_calls: int
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return asdict(self)


def evaluate_sessions(sessions: Sequence[EvalSession], systems: Mapping[str, RankFn], *, k: int = 8,
                      taus: Sequence[float] = (0.5, 0.7, 0.9), max_calls: int = 10, seed: int = SEED,
                      n_resamples: int = BOOTSTRAP_SAMPLES, progress: ProgressCallback = no_progress,
                      cancel: Optional[CancelToken] = None) -> SessionEvalReport:
    """Coverage@k and calls-to-τ of every system on every session; the first system is the
    baseline the others' deltas (with paired CIs) are measured against."""
    if not systems:
        raise ValueError("no system to evaluate")
    names = list(systems)
    cov: dict[str, list[float]] = {n: [] for n in names}
    calls: dict[str, dict[float, list[Optional[int]]]] = {n: {t: [] for t in taus} for n in names}
    for i, s in enumerate(sessions):
        if i % 10 == 0:
            check(cancel)
            progress(Progress(i, len(sessions), "session metrics"))
        for name in names:
            rank = systems[name]
            cov[name].append(session_coverage(list(rank(s.query)), s.documents, k))
            for t in taus:
                calls[name][t].append(simulate_calls(s, rank, t, k, max_calls))
    progress(Progress(len(sessions), len(sessions), "session metrics"))
    out: dict[str, SystemSessionStats] = {}
    base = names[0]
    for name in names:
        c = np.asarray(cov[name])
        per_tau = {}
        for t in taus:
            v = censored(calls[name][t], max_calls)
            lo, hi = bootstrap_ci(v, n_resamples, seed=seed)
            reached = float(np.mean([x is not None for x in calls[name][t]])) if sessions else 0.0
            per_tau[f"tau={t:g}"] = {"mean": round(float(v.mean()) if v.size else 0.0, 4), "ci_lo": round(lo, 4),
                                     "ci_hi": round(hi, 4), "reached": round(reached, 4)}
        lo, hi = bootstrap_ci(c, n_resamples, seed=seed)
        stats = SystemSessionStats(name, round(float(c.mean()) if c.size else 0.0, 4), (round(lo, 4), round(hi, 4)),
                                   per_tau)
        if name != base and c.size:
            d = c - np.asarray(cov[base])
            dlo, dhi = paired_bootstrap_ci(cov[base], cov[name], n_resamples, seed=seed)
            stats.coverage_delta, stats.coverage_delta_ci95 = round(float(d.mean()), 4), (round(dlo, 4), round(dhi, 4))
        out[name] = stats
    sizes = [len(set(s.documents)) for s in sessions]
    return SessionEvalReport(k, len(sessions), round(float(np.mean(sizes)), 3) if sizes else 0.0, base, out, max_calls)

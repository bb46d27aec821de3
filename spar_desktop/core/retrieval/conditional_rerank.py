"""Conditional reranking as search and chat apply it (paper 002 §3.4.2): the decision of eq. 28
(rerank only when the top fused score s_max is below tau), the listwise reranker's order applied
to the top ``depth`` hits (eq. 29), and what happened — reranked or not, why, how long the model
took and which model it was — so every caller (CLI, chat, the app, ``spar eval``) reports the
same thing from the same code.

tau comes from ``spar eval --calibrate-rerank`` (Wilson lower bound, eq. 30–32; rerank.py),
stored in the data dir as a small versioned JSON; without it the shipped ``DEFAULT_TAU`` applies.
"""

from __future__ import annotations

import json
import logging
import math
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Optional, Sequence, TypeVar

from spar_desktop.core.file_format import write_text_atomically

log = logging.getLogger(__name__)

H = TypeVar("H")
FORMAT = "spar-rerank-tau"
VERSION = 1
# TM2C2 gives the chunk both retrievers rank first a fused score of exactly 1; below 0.95 they
# disagree about the top passage by more than a small margin — the uncertain queries.
DEFAULT_TAU = 0.95
DEFAULT_DEPTH = 10  # listwise prompts hold every candidate: the top 10 (rerank.py's depth)
RERANK_ALL = math.inf  # a calibration where no threshold qualified: every query is reranked


def should_rerank(s_max: float, tau: float) -> bool:
    """Eq. 28: the retriever is unsure when its top fused score is below tau."""
    return s_max < tau


@dataclass(frozen=True)
class Reranker:
    """A listwise reranker: ``fn(query, passages) -> result`` with ``.order`` (a permutation, best
    first), ``.fell_back`` and ``.reason`` (LLMHelpers.rerank), and the model's name to show."""

    fn: Callable[[str, Sequence[str]], Any]
    model: str
    # A cheap check that the model can be asked at all (e.g. Ollama's port accepts connections):
    # False means no model, so no rerank and no wait for a client's error.
    available: Optional[Callable[[], bool]] = None


@dataclass(frozen=True)
class RerankOutcome:
    reranked: bool  # True: the model's order was applied
    reason: str  # why it was or was not, for the user
    s_max: Optional[float]
    tau: float
    model: Optional[str] = None  # set when the model was asked
    latency_ms: float = 0.0  # time in the reranker (0 when it was not asked)
    called: bool = False  # the model was asked (reranked or fell back)

    @property
    def reranked_by(self) -> Optional[str]:
        return self.model if self.reranked else None

    def to_json(self) -> dict[str, Any]:
        return {"reranked": self.reranked, "reranked_by": self.reranked_by, "reason": self.reason,
                "s_max": None if self.s_max is None else round(self.s_max, 4),
                "tau": None if math.isinf(self.tau) else round(self.tau, 4), "model": self.model,
                "called": self.called, "latency_ms": round(self.latency_ms, 1)}


def default_passage(hit: Any) -> str:
    """The text the model judges: the parent section when there is one (what an answer is grounded on)."""
    for name in ("context", "parent_text", "text"):
        value = getattr(hit, name, None)
        if value:
            return str(value)
    return str(hit)


def conditional_rerank(query: str, hits: Sequence[H], reranker: Optional[Reranker], tau: float,
                       depth: int = DEFAULT_DEPTH, passage: Callable[[H], str] = default_passage,
                       ) -> tuple[tuple[int, ...], RerankOutcome]:
    """(order over all ``hits``, outcome). ``hits`` are best first with ``.score`` the fused score.
    The order is the identity unless the model was asked (s_max < tau) and answered usably; a
    reranker that fails, stalls or answers nonsense leaves the fused order, with its reason."""
    identity = tuple(range(len(hits)))
    s_max = float(hits[0].score) if hits else None  # type: ignore[attr-defined]
    if s_max is None:
        return identity, RerankOutcome(False, "no results", None, tau)
    if not should_rerank(s_max, tau):
        return identity, RerankOutcome(False, f"confident: top score {s_max:.3f} ≥ τ {tau:.3f}", s_max, tau)
    if reranker is None:
        return identity, RerankOutcome(False, "no reranking model (reranking is off or Ollama is not set up)",
                                       s_max, tau)
    head = min(depth, len(hits))
    if head < 2:
        return identity, RerankOutcome(False, "a single result: nothing to reorder", s_max, tau)
    if reranker.available is not None and not reranker.available():
        return identity, RerankOutcome(False, f"no reranking model: {reranker.model} cannot be reached", s_max, tau,
                                       reranker.model)
    t0 = time.perf_counter()
    try:
        out = reranker.fn(query, [passage(h) for h in hits[:head]])
    except Exception as exc:  # noqa: BLE001 - a reranker never costs the user the results
        log.warning("reranker failed: %s", exc)
        out = None
        failure = f"the reranker failed: {exc}"
    ms = (time.perf_counter() - t0) * 1000
    if out is not None:
        order = tuple(getattr(out, "order", ()))
        if getattr(out, "fell_back", False):
            failure = getattr(out, "reason", None) or "the model's answer was not usable"
        elif sorted(order) != list(range(head)):
            failure = "the model's ranking was not a permutation of the passages"
        else:
            why = f"uncertain: top score {s_max:.3f} < τ {tau:.3f}"
            return order + identity[head:], RerankOutcome(True, why, s_max, tau, reranker.model, ms, True)
    return identity, RerankOutcome(False, f"kept the fused order: {failure}", s_max, tau, reranker.model, ms, True)


# -- the calibrated threshold ---------------------------------------------------------------------
@dataclass(frozen=True)
class Calibration:
    tau: float  # RERANK_ALL when no threshold qualified
    beta: Optional[float] = None
    queries: int = 0
    skipped: int = 0  # calibration queries with s_max >= tau (the ones that would not be reranked)
    precision_lower: Optional[float] = None  # Wilson lower bound on their top-5 precision
    dataset: Optional[str] = None
    created_at: Optional[str] = None
    source: str = "calibrated"  # 'calibrated' | 'default'

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "version": VERSION, "tau": None if math.isinf(self.tau) else self.tau,
                "beta": self.beta, "queries": self.queries, "skipped": self.skipped,
                "precision_lower": self.precision_lower, "dataset": self.dataset, "created_at": self.created_at}


SHIPPED = Calibration(DEFAULT_TAU, source="default")


def save_calibration(cal: Calibration, path: Path) -> Path:
    data = cal.to_json()
    data["created_at"] = data["created_at"] or datetime.now(timezone.utc).isoformat(timespec="seconds")
    return write_text_atomically(path, json.dumps(data, indent=2))  # readers never see half a file


def load_calibration(path: Path) -> Calibration:
    """The stored calibration, or the shipped default when there is none or it is unreadable
    (a newer format, a damaged file: logged, never an error in a search)."""
    path = Path(path)
    if not path.exists():
        return SHIPPED
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != FORMAT or int(data.get("version", 0)) > VERSION:
            raise ValueError(f"not a {FORMAT} v{VERSION} file")
        tau = RERANK_ALL if data.get("tau") is None else float(data["tau"])
        if not math.isinf(tau) and not 0.0 <= tau <= 1.01:
            raise ValueError(f"tau {tau} is outside [0, 1]")
        return Calibration(tau, data.get("beta"), int(data.get("queries", 0)), int(data.get("skipped", 0)),
                           data.get("precision_lower"), data.get("dataset"), data.get("created_at"))
    except (OSError, ValueError, TypeError, AttributeError) as exc:
        log.warning("ignoring the rerank calibration %s (%s); using the default tau %.2f", path, exc, DEFAULT_TAU)
        return SHIPPED

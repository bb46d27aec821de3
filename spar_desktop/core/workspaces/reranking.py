"""Conditional reranking of workspace results (``spar ws search``, chat, the app's search): the
decision and its application are core/retrieval/conditional_rerank.py's; this module builds the
reranker from the settings (Ollama's listwise reranker, LLMHelpers.rerank), reads tau from the
data dir and marks the reordered hits ("reranked by <model>", the latency).

Only hybrid results are considered: tau is a threshold on the fused score.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import Any, Optional, Sequence

from spar_desktop.core.config import Settings
from spar_desktop.core.llm.connection import listening
from spar_desktop.core.retrieval.conditional_rerank import (
    Calibration, Reranker, RerankOutcome, conditional_rerank, load_calibration,
)
from spar_desktop.core.workspaces.search import WorkspaceResults

# A reranking that takes longer is abandoned (the fused order stays, with the reason): the CLI and
# chat wait for it; the app shows the fused order first and swaps in the reranked one when it comes.
RERANK_TIMEOUT_S = 30.0


def reranker_from_settings(settings: Settings, model: Optional[str] = None, host: Optional[str] = None,
                           timeout: float = RERANK_TIMEOUT_S) -> Optional[Reranker]:
    """Ollama's listwise reranker with the configured host and model (or chat's ``host`` and
    ``model``); None when the setting is off."""
    if not settings.rerank_results:
        return None
    host = host or settings.ollama_host
    model = model or settings.ollama_model

    def rerank(query: str, passages: Sequence[str]) -> Any:
        # Deferred: the client loads ollama, httpx and pydantic (~0.4 s), which a confident search,
        # or one with no Ollama listening, never needs.
        from spar_desktop.core.llm.client import Ollama
        from spar_desktop.core.llm.helpers import LLMHelpers

        return LLMHelpers(Ollama(host, model, request_timeout=timeout)).rerank(query, passages)

    return Reranker(rerank, model, partial(listening, host))


def calibration_of(settings: Settings) -> Calibration:
    return load_calibration(settings.layout.rerank_calibration)


def rerank_results(results: WorkspaceResults, reranker: Optional[Reranker], tau: float) -> WorkspaceResults:
    """The results with their top hits in the model's order when the search was unsure; the
    outcome (reranked or not, why, latency, model) in ``results.rerank``."""
    order, outcome = conditional_rerank(results.query, results.hits, reranker, tau)
    if not outcome.reranked:
        return replace(results, rerank=outcome)
    hits = tuple(replace(results.hits[i], rank=n, reranked_by=outcome.model, rerank_ms=round(outcome.latency_ms, 1))
                 for n, i in enumerate(order, 1))
    return replace(results, hits=hits, rerank=outcome)


def rerank_with_settings(results: WorkspaceResults, settings: Settings, model: Optional[str] = None,
                         host: Optional[str] = None) -> WorkspaceResults:
    """``rerank_results`` with the configured reranker and the stored tau."""
    reranker = reranker_from_settings(settings, model, host)
    return rerank_results(results, reranker, calibration_of(settings).tau)


def rerank_note(outcome: Optional[RerankOutcome]) -> Optional[str]:
    """One line for the user: 'reranked by llama3.2 in 840 ms', or why the fused order stayed
    when the model was asked; None when nothing worth saying happened."""
    if outcome is None:
        return None
    if outcome.reranked:
        return f"reranked by {outcome.model} in {outcome.latency_ms:.0f} ms"
    if outcome.called:
        return f"{outcome.reason} ({outcome.latency_ms:.0f} ms)"
    return None

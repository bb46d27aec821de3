"""The background tagging job: summarise what changed, then suggest tags for it.

Runs after a scan, never inside one (a scan only reads metadata and must stay fast). Resumable:
both steps commit per batch and skip what is current, so a killed or cancelled run goes on where
it stopped and gives the same result as one uninterrupted run. Low priority: the work runs in a
thread of its own whose Linux nice value is raised to 10, so the UI and a scan get the CPU first
(niceness is per thread on Linux and cannot be lowered back without privileges, hence a thread of
our own rather than the caller's pool thread).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Iterable, Optional, TypeVar

from spar_desktop.core.library.database import Library
from spar_desktop.core.in_thread import in_low_priority_thread
from spar_desktop.core.progress import CancelToken, Progress, ProgressCallback, no_progress
from spar_desktop.core.tagging.llm import Classify
from spar_desktop.core.tagging.scoring import SuggestConfig
from spar_desktop.core.tagging.suggest import SuggestReport, suggest_files
from spar_desktop.core.tagging.summaries import SummaryReport, summarize_files

log = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(frozen=True)
class TaggingReport:
    summaries: SummaryReport
    suggestions: SuggestReport

    def message(self) -> str:
        return f"{self.summaries.message()}; {self.suggestions.message()}"


def _phase(progress: ProgressCallback, label: str) -> ProgressCallback:
    def report(p: Progress) -> None:
        progress(Progress(p.done, p.total, f"{label}: {p.message}" if p.message else label))

    return report


def run_tagging(library: Library, settings: Any, encoder: Any, classify: Optional[Classify] = None,
                file_ids: Optional[Iterable[int]] = None, config: SuggestConfig = SuggestConfig(),
                progress: ProgressCallback = no_progress, cancel: Optional[CancelToken] = None,
                limit: Optional[int] = None, redo: bool = False) -> TaggingReport:
    """Summaries, then suggestions (``classify``: the optional LLM step). Raises Cancelled."""
    ids = list(file_ids) if file_ids is not None else None

    def work() -> TaggingReport:
        summaries = summarize_files(library, settings, encoder, ids, _phase(progress, "Summaries"), cancel,
                                    limit=limit)
        suggestions = suggest_files(library, encoder, ids, config, classify, _phase(progress, "Tag suggestions"),
                                    cancel, redo=redo, limit=limit)
        return TaggingReport(summaries, suggestions)

    return in_low_priority_thread(work, "spar-tagging")

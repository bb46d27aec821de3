"""Conditional reranking in the app's workspace search, never on the UI thread and never in the
way: the fused results are shown as soon as the search ends; when the search was unsure (top
fused score below tau) a background task asks Ollama to rerank them, and its order replaces the
list in place when it comes — each hit then says "reranked by <model>", the label the latency.
A newer search drops a pending rerank (latest wins); Settings ▸ rerank_results off: nothing runs.
"""

from __future__ import annotations

import logging
from functools import partial
from typing import Any, Callable, Optional

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QLabel

from spar_desktop.core.progress import CancelToken, ProgressCallback
from spar_desktop.ui.base.tasks import TaskError, TaskHandle

log = logging.getLogger(__name__)

RERANK_KEY = "search-rerank"


def rerank_op(results: Any, settings: Any, progress: ProgressCallback, cancel: CancelToken) -> Any:
    from spar_desktop.core.workspaces.reranking import rerank_with_settings

    return rerank_with_settings(results, settings)


class RerankFollowUp(QObject):
    """Follows the controller's searches; ``show`` is the panel's ``show_results``."""

    replaced = Signal(object)  # WorkspaceResults in the model's order (or the fused one with the reason)

    def __init__(self, controller: Any, show: Callable[[Any], None], label: Optional[QLabel] = None,
                 parent: Optional[QObject] = None) -> None:
        super().__init__(parent or controller)
        self.controller = controller
        self.show = show
        self.label = label
        self._pending: Any = None  # the shown results a rerank is running for
        self._handle: Optional[TaskHandle] = None
        controller.search_started.connect(self._drop)
        controller.search_finished.connect(self._follow)

    @property
    def running(self) -> bool:
        return self._handle is not None and not self._handle.done

    def _drop(self, *_args: Any) -> None:
        self._pending = None
        if self.running:
            self.controller.runner.cancel(RERANK_KEY)

    def _follow(self, results: Any) -> None:
        settings = self.controller.library.settings
        if (settings is None or not getattr(settings, "rerank_results", True) or not results.hits
                or hasattr(results, "from_cluster") or getattr(results, "rerank", None) is not None):
            return  # off, nothing to order, a session search (its own order), or already decided
        self._pending = results
        self._handle = self.controller.runner.run(
            partial(rerank_op, results, settings), title="Reranking the results", key=RERANK_KEY, visible=False,
            on_success=partial(self._done, results), on_failure=self._failed)

    def _done(self, shown: Any, new: Any) -> None:
        if self._pending is not shown:  # a newer search replaced the list meanwhile
            return
        self._pending = None
        outcome = new.rerank
        if outcome is None or not outcome.called:
            return  # confident, or no model: the fused order stays and there is nothing to say
        if self.controller.last_results is shown:
            self.controller.last_results = new  # feedback and opened hits refer to what is shown
        self.show(new)
        if self.label is not None:
            from spar_desktop.core.workspaces.reranking import rerank_note

            self.label.setText(f"{self.label.text()} — {rerank_note(outcome)}")
        self.replaced.emit(new)

    def _failed(self, err: TaskError) -> None:
        log.info("reranking failed: %s", err.message)
        self._pending = None

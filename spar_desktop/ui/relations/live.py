"""A live relation graph: when a scan (or a watched folder's rescan, or a workspace update) changes
files, the Relations tab's graph is brought up to date in the background.

- Scans and workspace builds announce what they wrote on the task runner's ``changed``
  (``Changes.files`` / ``.workspaces``; relations/features.py listens). Once a graph has been loaded, a quick check (stored
  fingerprints against the index, no matrix read) counts what changed in the scope and method the
  tab shows; when something did, a badge says "Out of date — N files changed", and an update starts.
- The update is relations.ops.update_graph: incremental for EDR-MQ (core/relations/update_stored.py),
  at low priority, cancellable in the task list, and latest-wins on the graph's own task key, so a
  newer scan, a method switch or Rebuild replaces it. The old graph stays on screen meanwhile; the
  new one replaces it and the badge goes. A "Show related files" in flight is not replaced: the
  update waits and starts when the neighbourhood is shown (``resume``); an update another task
  replaced goes back to "Out of date" until a load (which updates first) or ``resume``.
- A graph never loaded is left alone: its first load brings the stored relations up to date.
"""

from __future__ import annotations

import logging
from functools import partial
from typing import Any, Optional

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QLabel

from spar_desktop.core.progress import Progress
from spar_desktop.ui.base.progress_view import shown
from spar_desktop.ui.base.tasks import TaskError, TaskHandle, TaskState
from spar_desktop.ui.relations import ops
from spar_desktop.ui.relations.ops import METHODS

log = logging.getLogger(__name__)
CHECK_KEY = "relations-check"
STALE_STYLE = "background:#fff3cd; color:#6b4e00; border:1px solid #e6cf8a; border-radius:3px; padding:3px 6px;"
BUSY_STYLE = "background:#e3ecfb; color:#1f3f7a; border:1px solid #b7c9ee; border-radius:3px; padding:3px 6px;"


def files_changed_text(n: int) -> str:
    return f"{n:,} file{'s' if n != 1 else ''} changed"


class LiveRelations(QObject):
    badge_changed = Signal(str)  # the badge's text, '' when it is hidden

    def __init__(self, features: Any) -> None:
        super().__init__(features)
        self.features = features  # relations.features.RelationsFeatures
        self.badge = QLabel()
        self.badge.setObjectName("relationsBadge")
        self.badge.setWordWrap(True)
        self.badge.hide()
        # The update not done yet: ((workspace, method), files changed), until a load or update ends it.
        self.pending: Optional[tuple[tuple[Optional[str], str], int]] = None

    # ------------------------------------------------------------------ badge
    def _show(self, text: str, busy: bool) -> None:
        self.badge.setStyleSheet(BUSY_STYLE if busy else STALE_STYLE)
        self.badge.setText(text)
        self.badge.show()
        self.badge_changed.emit(text)

    def clear(self) -> None:
        """The graph on screen is up to date (a load or an update brought it there)."""
        self.pending = None
        if self.badge.isVisible() or self.badge.text():
            self.badge.hide()
            self.badge.setText("")
            self.badge_changed.emit("")

    # ------------------------------------------------------------------ checking and updating
    def selected(self) -> tuple[Optional[str], str]:
        """(workspace, method) the tab shows or is loading: the user's current choice."""
        f = self.features
        return f.scope_workspace(), f.view.method.currentData() or METHODS[0][0]

    def files_changed(self) -> None:
        f = self.features
        if f.loaded_for is None:
            return  # no graph loaded yet: its first load updates the stored relations
        workspace, method = target = self.selected()
        f.window.runner.run(partial(ops.count_changes, f.window.library, workspace, method),
                            title="Checking the relations", key=CHECK_KEY, visible=False,
                            on_success=lambda n: self._counted(target, n),
                            on_failure=lambda err: log.info("relations check failed: %s", err.message))

    def _counted(self, target: tuple[Optional[str], str], n: Optional[int]) -> None:
        if not n or self.selected() != target:
            return  # nothing stored, nothing changed, or the user chose another graph meanwhile
        self.pending = (target, n)
        self._show(f"Out of date — {files_changed_text(n)}", busy=False)
        if self.features.neighbourhood_running():
            return  # "Show related files" is not replaced: it calls resume when it is done
        # On the graph's own task key: it replaces a load of the same graph that may have
        # started before the scan committed (and a later load or Rebuild replaces it).
        self.start_update(*target, n)

    def resume(self) -> None:
        """Start the update still pending, if it is for the graph the user has chosen."""
        if self.pending is not None and self.pending[0] == self.selected():
            (workspace, method), n = self.pending
            self.start_update(workspace, method, n)

    def start_update(self, workspace: Optional[str], method: str, n: int) -> TaskHandle:
        from spar_desktop.ui.relations.features import TASK_KEY, gui_hint

        f = self.features
        label = dict(METHODS).get(method, method)
        where = f"“{workspace}”" if workspace else "the whole index"
        changed = files_changed_text(n)
        self._show(f"Updating relations… {changed}", busy=True)

        def progressed(p: Progress) -> None:
            view = shown(p)
            self._show(f"Updating relations… {changed} — {view.with_percent() or 'working'}", busy=True)

        def done(payload) -> None:
            if self.selected() == (workspace, method):
                around = f.view.around
                f.loaded_for, f.stale = (workspace, method), False
                f.view.set_payload(payload)
                if around is not None:  # the user looks at a neighbourhood: show it from the new graph
                    centre = around.payload.file_ids[around.center]
                    if centre in payload.file_ids:
                        f.show_around(centre, around.hops)
            self.clear()

        def failed(err: TaskError) -> None:
            log.info("relations update failed: %s", err.message)
            self.pending = None
            self._show(f"Out of date — {changed}; the update failed: {gui_hint(err.message)}", busy=False)
            f.stale = True  # the next load tries again

        def cancelled() -> None:
            self.pending = None
            self._show(f"Out of date — {changed} (update cancelled: Rebuild, or reopen the tab, to update)",
                       busy=False)
            f.stale = True

        def ended() -> None:
            if handle.state is TaskState.SUPERSEDED and self.pending is not None:
                self._show(f"Out of date — {changed}", busy=False)  # until the replacing task says otherwise

        handle = f.window.runner.run(
            partial(ops.update_graph, f.window.library, workspace, method),
            title=f"Updating relations ({label}, {where})", key=TASK_KEY, on_success=done, on_failure=failed,
            on_progress=progressed, on_cancelled=cancelled, background=True)
        handle.finished.connect(ended)
        return handle

"""The relation graph in the main window: a "Relations" tab holding the GraphView, fed by
relations_ops on the TaskRunner. Kept out of main_window.py so each stays small.

- The graph loads when the tab is first shown, and again when the method, the scope or (with the
  workspace scope) the current workspace changes while it is shown; otherwise it is only marked
  stale, so nothing is computed for a tab nobody looks at.
- Loads are latest-wins (one task key): flipping methods quickly never shows an older graph.
- Clicking a node selects its file in the file table (details follow); Open shows it in the viewer.
- The GraphView (and pyqtgraph, ~0.5 s to import) is created when the tab is first shown, so the
  window opens as fast without it.
"""

from __future__ import annotations

import logging
import re
from functools import partial
from typing import Optional

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QVBoxLayout, QWidget

from spar_desktop.core.progress import Progress
from spar_desktop.ui import relations_ops as ops
from spar_desktop.ui.progress_view import shown
from spar_desktop.ui.tasks import TaskError, TaskHandle

log = logging.getLogger(__name__)
TASK_KEY = "relations-graph"
# The core's messages tell a CLI user what to run; in the window, say what to click.
GUI_HINTS = (
    (re.compile(r"build it first: spar ws build [^)\s]+"), "build it first: select it in the Workspace panel and click Build"),
    (re.compile(r"add a folder first: spar index [^)\s]+"), "add a folder first: File ▸ Add folder…, or drop one on the window"),
    (re.compile(r"run `spar relations build[^`]*`(?: first)?"), "click Rebuild"),
)


def gui_hint(message: str) -> str:
    for pattern, text in GUI_HINTS:
        message = pattern.sub(text, message)
    return message[:1].upper() + message[1:]


class RelationsFeatures(QObject):
    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window
        self.page = QWidget()  # the tab; holds the GraphView once created
        self._layout = QVBoxLayout(self.page)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._view = None
        self.stale = True
        self.handle: Optional[TaskHandle] = None
        self.loaded_for: Optional[tuple[Optional[str], str]] = None  # (workspace, method) on screen

    @property
    def view(self):
        """The GraphView, created (with its signal connections) on first use."""
        if self._view is None:
            from spar_desktop.ui.graph_view import GraphView

            self._view = GraphView()
            self._layout.addWidget(self._view)
            self._connect_view(self._view)
        return self._view

    def connect(self) -> None:
        w = self.window
        w.tabs.currentChanged.connect(lambda _i: self._maybe_load())
        w.workspaces.current_changed.connect(self._workspace_changed)

    def _connect_view(self, v) -> None:
        w = self.window
        v.methodChanged.connect(lambda _m: self.invalidate())
        v.scopeChanged.connect(lambda _s: self.invalidate())
        v.rebuildRequested.connect(lambda: self.reload(rebuild=True))
        v.fileActivated.connect(self._file_activated)
        v.openRequested.connect(self._open)
        v.nodeHovered.connect(lambda title: w.statusBar().showMessage(title, 5000) if title else None)

    def build_action(self):
        self.show_action = self.window._action("Relations graph", self.show, None, "Ctrl+Shift+G",
                                               "How the documents relate: EDR-MQ, co-occurrence clusters, TF-IDF")
        return self.show_action

    # ------------------------------------------------------------------ loading
    def show(self) -> None:
        self.window.tabs.setCurrentWidget(self.page)
        self._maybe_load()

    def visible(self) -> bool:
        return self.window.tabs.currentWidget() is self.page

    def scope_workspace(self) -> Optional[str]:
        """The workspace the graph covers, None for the whole index. The workspace scope falls
        back to the index when no workspace is current (the combo says so)."""
        if self.view.scope.currentData() != "workspace":
            return None
        current = self.window.workspaces.current
        if current is None:
            self.view.set_scope("index")
            return None
        return current.name

    def _maybe_load(self) -> None:
        if self.visible() and self.stale:
            self.reload()

    def invalidate(self) -> None:
        """What the graph should show changed: reload now if it is on screen, else when shown."""
        self.stale = True
        self._maybe_load()

    def _workspace_changed(self, _row) -> None:
        if self._view is None or self._view.scope.currentData() == "workspace":
            self.invalidate()

    def reload(self, rebuild: bool = False) -> TaskHandle:
        from spar_desktop.ui.graph_view import METHODS

        workspace = self.scope_workspace()
        method = self.view.method.currentData() or METHODS[0][0]
        label = dict(METHODS).get(method, method)
        where = f"“{workspace}”" if workspace else "the whole index"
        self.stale = False
        self.view.set_busy(f"{'Rebuilding' if rebuild else 'Loading'} {label} relations of {where}…")

        def progressed(p: Progress) -> None:
            view = shown(p)  # the percentage of the count the message shows, as in the task list
            self.view.set_busy(view.with_percent() or "Working…")

        def done(payload) -> None:
            self.loaded_for = (workspace, method)
            self.view.set_payload(payload)

        def failed(err: TaskError) -> None:
            log.info("relation graph failed: %s", err.message)
            self.view.set_payload(None)
            self.view.set_busy(gui_hint(err.message))  # RelationsError messages say what to do
            self.stale = True

        self.handle = self.window.runner.run(
            partial(ops.load_graph, self.window.library, workspace, method, rebuild=rebuild),
            title=f"Relation graph ({label}, {where})", key=TASK_KEY, on_success=done, on_failure=failed,
            on_progress=progressed, on_cancelled=lambda: self.view.set_busy("Cancelled"))
        return self.handle

    # ------------------------------------------------------------------ node actions
    def _file_activated(self, file_id: int) -> None:
        w = self.window
        if not w.file_panel.select_file(file_id):  # filtered out of the table: details only
            w._show_file_by_id(file_id)

    def _open(self, file_id: int) -> None:
        p = self.view.payload
        if p is None or file_id not in p.file_ids:
            return
        path = p.paths[p.file_ids.index(file_id)]
        if path:
            self.window.open_document(path)

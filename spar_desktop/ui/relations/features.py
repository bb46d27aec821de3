"""The relation graph in the main window: a "Relations" tab holding the GraphView, fed by
relations/ops.py on the TaskRunner. Kept out of main_window.py so each stays small.

- The graph loads when the tab is first shown, and again when the method, the scope or (with the
  workspace scope) the current workspace changes while it is shown; otherwise it is only marked
  stale, so nothing is computed for a tab nobody looks at.
- Loads are latest-wins (one task key): flipping methods quickly never shows an older graph.
- Relations another task stores (its report's ``Changes(relations=True)`` on the runner's
  ``changed``) mark the graph stale the same way.
- Clicking a node selects its file in the file table (details follow); Open shows it in the viewer.
- A file's neighbourhood (the file table's "Show related files in graph", the view's Neighbourhood
  button and hops choice) is ``show_around``: ops.load_neighbourhood on the runner, on
  the graph's task key. It never builds relations from scratch: with none stored it says to click
  Rebuild and opens the neighbourhood once that load is done.
- The whole index is never built silently: when its graph would need a build (none stored, or
  Rebuild), the load returns the build's estimate (core/relations/estimate.py) instead of a graph
  and the view offers "Build relations for the whole index (about N min)"; the build starts on
  that click (ops.show_graph with confirmed=True). A workspace's graph builds when first shown,
  as it relates only the workspace's files. A build's progress says how long it has left
  (core/relations/eta.py puts it in the progress message), and a cancelled build resumes.
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

from spar_desktop.core.changes import Changes
from spar_desktop.core.progress import Progress
from spar_desktop.ui.base.progress_view import shown
from spar_desktop.ui.base.tasks import TaskError, TaskHandle
from spar_desktop.ui.relations import ops
from spar_desktop.ui.relations.ops import METHODS
from spar_desktop.ui.relations.live import LiveRelations

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
        self.live = LiveRelations(self)  # a loaded graph follows file changes (live.py)
        self._layout.addWidget(self.live.badge)
        self._view = None
        self.stale = True
        self.handle: Optional[TaskHandle] = None
        self.loaded_for: Optional[tuple[Optional[str], str]] = None  # (workspace, method) on screen
        # (file id, hops) asked for before any relations were built: shown once a load succeeds
        self.pending_around: Optional[tuple[int, int]] = None
        self._around: Optional[TaskHandle] = None  # the "Show related files" task in flight
        self._workspace_name: Optional[str] = None  # the current workspace the graph follows
        self.offered: Optional[tuple[Optional[str], str, bool]] = None  # (workspace, method, rebuild) on offer

    @property
    def view(self):
        """The GraphView, created (with its signal connections) on first use."""
        if self._view is None:
            from spar_desktop.ui.relations.graph_view import GraphView

            self._view = GraphView()
            self._layout.addWidget(self._view)
            self._connect_view(self._view)
        return self._view

    def connect(self) -> None:
        w = self.window
        w.tabs.currentChanged.connect(lambda _i: self._maybe_load())
        w.workspaces.current_changed.connect(self._workspace_changed)
        w.runner.changed.connect(self._changed)

    def _connect_view(self, v) -> None:
        w = self.window
        v.methodChanged.connect(lambda _m: self.invalidate())
        v.scopeChanged.connect(lambda _s: self.invalidate())
        v.rebuildRequested.connect(lambda: self.reload(rebuild=True))
        v.buildConfirmed.connect(self.build_confirmed)
        v.fileActivated.connect(self._file_activated)
        v.openRequested.connect(self._open)
        v.neighbourhoodRequested.connect(self.show_around)
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

    def _changed(self, changes: Changes) -> None:
        """Relations stored by another task (e.g. Cover my session building a workspace's
        clusters): the graph reloads them. The tab's own loads return a graph, not a report, so
        they announce nothing and cannot loop."""
        if changes.relations:
            self.invalidate()
        elif changes.files or changes.workspaces:  # a scan or a build: a loaded graph may be out of date
            self.live.files_changed()

    def _workspace_changed(self, row) -> None:
        # Another workspace, not the same one's status or counts (a build changes those twice;
        # what the build changed reaches the graph through _changed).
        name = row.name if row is not None else None
        if name == self._workspace_name:
            return
        self._workspace_name = name
        if self._view is None or self._view.scope.currentData() == "workspace":
            self.invalidate()

    def build_confirmed(self) -> TaskHandle:
        """The offer's button: the whole-index build it described, if the user still looks at that
        graph (else a plain load of what is chosen now, which offers again if it must)."""
        offered, self.offered = self.offered, None
        chosen = (self.scope_workspace(), self.view.method.currentData() or METHODS[0][0])
        if offered is None or offered[:2] != chosen:
            return self.reload()
        return self.reload(rebuild=offered[2], confirmed=True)

    def reload(self, rebuild: bool = False, confirmed: bool = False) -> TaskHandle:
        workspace = self.scope_workspace()
        method = self.view.method.currentData() or METHODS[0][0]
        label = dict(METHODS).get(method, method)
        where = f"“{workspace}”" if workspace else "the whole index"
        self.stale = False
        self.offered = None
        self.view.hide_offer()
        self.view.set_busy(f"{'Rebuilding' if rebuild else 'Loading'} {label} relations of {where}…")

        def progressed(p: Progress) -> None:
            view = shown(p)  # the percentage of the count the message shows, as in the task list
            self.view.set_busy(view.with_percent() or "Working…")

        def done(payload) -> None:
            if isinstance(payload, ops.WholeIndexOffer):  # the whole index: ask first
                self.offer(workspace, method, payload)
                return
            self.loaded_for = (workspace, method)
            self.view.set_payload(payload)
            self.live.clear()  # a load brings the stored relations up to date first
            if self.pending_around is not None:  # "Show related files" waited for this build
                file_id, hops = self.pending_around
                self.pending_around = None
                self.show_around(file_id, hops)

        def failed(err: TaskError) -> None:
            log.info("relation graph failed: %s", err.message)
            self.view.set_payload(None)
            self.view.set_busy(gui_hint(err.message))  # RelationsError messages say what to do
            self.stale = True

        self.handle = self.window.runner.run(
            partial(ops.show_graph, self.window.library, workspace, method, rebuild=rebuild, confirmed=confirmed),
            title=f"Relation graph ({label}, {where})", key=TASK_KEY, on_success=done, on_failure=failed,
            on_progress=progressed, on_cancelled=lambda: self.view.set_busy("Cancelled"))
        return self.handle

    def offer(self, workspace: Optional[str], method: str, asked: ops.WholeIndexOffer) -> None:
        """Show what building the whole index would cost and the button that starts it (a
        Rebuild keeps the stored graph on screen meanwhile)."""
        estimate = asked.estimate
        if not asked.rebuild:
            self.view.set_payload(None)
            self.loaded_for = None
        self.offered = (workspace, method, asked.rebuild)
        self.stale = True  # showing the tab again estimates again (files may have come and gone)
        verb = "Rebuild" if asked.rebuild else "Build"
        text = estimate.summary()
        self.view.show_offer(f"{text[:1].upper()}{text[1:]}. Scope ▸ Current workspace relates only the files "
                             "of a workspace.",
                             f"{verb} relations for the whole index ({estimate.short_duration()})")

    def show_around(self, file_id: int, hops: Optional[int] = None) -> TaskHandle:
        """The Relations tab showing only ``file_id`` and the files within ``hops`` relations of it
        (the file table's "Show related files in graph", the view's Neighbourhood button and hops
        choice). Extraction and layout run on the runner, on the graph's task key (latest wins);
        the stored graph is loaded first when the tab does not show it yet (another method's when
        the chosen one was never built). With no relations built at all nothing is computed: the
        view and the status bar say to click Rebuild, and the neighbourhood opens after it."""
        view = self.view
        hops = hops or int(view.hops.currentData())
        self.pending_around = None
        workspace = self.scope_workspace()
        method = view.method.currentData() or METHODS[0][0]
        base = view.whole if self.loaded_for == (workspace, method) and not self.stale else None
        self.stale = False  # this task loads the graph when needed: showing the tab must not start another load
        self.window.tabs.setCurrentWidget(self.page)
        view.set_busy(f"Finding the files related to this one within {hops} hop{'s' if hops > 1 else ''}…")

        def done(result) -> None:
            whole, around, found_in = result
            if whole is not base:
                if found_in != workspace:
                    view.set_scope("index")  # the file is not in the current workspace
                self.loaded_for = (found_in, whole.method or method)  # set_payload shows its method
                view.set_payload(whole)
                self.live.clear()
            view.set_neighbourhood(around)
            if whole is base:
                self.live.resume()  # an update that waited for this (or that this replaced)

        def failed(err: TaskError) -> None:
            log.info("neighbourhood failed: %s", err.message)
            message = gui_hint(err.message)
            if isinstance(err.exception, ops.RelationsNotBuilt):
                view.set_payload(None)
                self.loaded_for = None
                self.pending_around = (file_id, hops)  # Rebuild (or the next load) shows it
                self.window.statusBar().showMessage(message, 15000)
            view.set_busy(message)
            if base is None:
                self.stale = True  # the whole graph did not load: the next showing of the tab tries again
            else:
                self.live.resume()

        self.handle = self._around = self.window.runner.run(
            partial(ops.load_neighbourhood, self.window.library, workspace, method, file_id, hops, base=base),
            title="Related files", key=TASK_KEY, on_success=done, on_failure=failed,
            on_progress=lambda p: view.set_busy(shown(p).with_percent() or "Working…"),
            on_cancelled=lambda: view.set_busy("Cancelled"))
        return self.handle

    def neighbourhood_running(self) -> bool:
        """Whether a "Show related files" task is in flight (a live update waits for it)."""
        return self._around is not None and not self._around.done

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

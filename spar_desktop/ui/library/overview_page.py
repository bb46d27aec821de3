"""The Overview page of the window's centre (View ▸ Overview, Ctrl+3). Its charts (pyqtgraph,
~0.5 s to import) are built the first time the page is shown, so the window still opens at once;
until then the page keeps the latest counts it was handed.

A bar click lists its files in the library view: a year or folder bar selects its tag in the tag
tree, a kind bar narrows the table to its format (LibraryController.set_narrow). On the active
workspace's charts the table is also narrowed to the files the workspace admits."""

from __future__ import annotations

from functools import partial
from PySide6.QtWidgets import QVBoxLayout, QWidget

from spar_desktop.ui.library.ops import load_format_counts, load_workspace_counts


class OverviewPage(QWidget):
    def __init__(self, window) -> None:
        super().__init__()
        self.window = window
        self.panel = None  # OverviewPanel, once shown
        self._snapshot = None
        self.workspace_counts = None  # the active workspace's WorkspaceCounts (core/workspaces/admitted_counts.py)
        QVBoxLayout(self).setContentsMargins(0, 0, 0, 0)
        window.controller.tags_loaded.connect(self._tags_loaded)
        window.issues.count_changed.connect(lambda _n: self._problems())
        window.tabs.currentChanged.connect(lambda _i: self._maybe_build())
        window.workspaces.current_changed.connect(lambda _row: self._count_workspace())

    def _maybe_build(self) -> None:
        if self.panel is not None or self.window.tabs.currentWidget() is not self:
            return
        from spar_desktop.ui.library.overview_charts import OverviewPanel  # pyqtgraph: only when asked

        self.panel = OverviewPanel()
        self.layout().addWidget(self.panel)
        self.panel.tag_clicked.connect(self._tag_clicked)
        self.panel.kind_clicked.connect(self._kind_clicked)
        self.panel.problems_clicked.connect(lambda: (self.window.issues_dock.show(), self.window.issues_dock.raise_()))
        if self._snapshot is not None:
            self._tags_loaded(self._snapshot)
        else:
            self._count_workspace()
        self._problems()

    def _tags_loaded(self, snapshot) -> None:
        self._snapshot = snapshot
        if self.panel is None:
            return
        self.panel.set_tags(snapshot)
        w = self.window
        w.runner.run(partial(load_format_counts, w.library), title="Counting files by kind", key="overview-formats",
                     visible=False, on_success=self._formats)
        self._count_workspace()  # the index changed: so may the workspace's files

    def _formats(self, counts) -> None:
        if self.panel is not None:
            self.panel.set_formats(counts)

    def _count_workspace(self) -> None:
        ws = self.window.workspaces
        name = ws.current.name if ws.current is not None else None
        if self.workspace_counts is not None and self.workspace_counts.name != name:
            self.workspace_counts = None  # another workspace's files must not narrow the table
        if self.panel is None:
            return
        self.panel.set_workspace(name)
        if name is None or ws.service is None:
            return
        self.window.runner.run(partial(load_workspace_counts, ws.service, name), title="Counting the workspace's files",
                               key="overview-workspace", visible=False, on_success=self._workspace_counted)

    def _workspace_counted(self, counts) -> None:
        current = self.window.workspaces.current
        if self.panel is None or current is None or current.name != counts.name:
            return  # counted for a workspace no longer active
        self.workspace_counts = counts
        self.panel.set_workspace(counts.name, counts)

    def _problems(self) -> None:
        if self.panel is not None:
            self.panel.set_problems(self.window.issues.counts)

    def _scope(self) -> tuple[object, str]:
        """(file ids, description) the table is narrowed to on the workspace's charts; else (None, '')."""
        from spar_desktop.ui.library.overview_charts import WORKSPACE

        c = self.workspace_counts
        if self.panel is None or self.panel.scope != WORKSPACE or c is None:
            return None, ""
        return c.file_ids, f"Workspace: {c.name}"

    def _tag_clicked(self, tag_id: int) -> None:
        ids, description = self._scope()
        self.window.controller.set_narrow(file_ids=ids, description=description)
        self.window.views.show_library()
        self.window.tag_panel.select_tag(tag_id)

    def _kind_clicked(self, fmt: str) -> None:
        ids, description = self._scope()
        self.window.views.show_library()
        self.window.tag_panel.clear_selection()  # the kind alone (in the library or the workspace)
        self.window.controller.set_narrow(formats=(fmt,), file_ids=ids,
                                          description="; ".join(d for d in (description, f"Kind: {fmt}") if d))


def attach(window) -> OverviewPage:
    page = OverviewPage(window)
    window.tabs.addTab(page, "Overview")
    window.overview_action = window._action("Overview", lambda: window.tabs.setCurrentWidget(page), None, "Ctrl+3",
                                            "The share at a glance: files by year, kind and folder, problems")
    return page

"""The Overview page of the window's centre (View ▸ Overview, Ctrl+3). Its charts (pyqtgraph,
~0.5 s to import) are built the first time the page is shown, so the window still opens at once;
until then the page keeps the latest counts it was handed."""

from __future__ import annotations

from functools import partial
from PySide6.QtWidgets import QVBoxLayout, QWidget

from spar_desktop.ui.library.ops import load_format_counts


class OverviewPage(QWidget):
    def __init__(self, window) -> None:
        super().__init__()
        self.window = window
        self.panel = None  # OverviewPanel, once shown
        self._snapshot = None
        QVBoxLayout(self).setContentsMargins(0, 0, 0, 0)
        window.controller.tags_loaded.connect(self._tags_loaded)
        window.issues.count_changed.connect(lambda _n: self._problems())
        window.tabs.currentChanged.connect(lambda _i: self._maybe_build())

    def _maybe_build(self) -> None:
        if self.panel is not None or self.window.tabs.currentWidget() is not self:
            return
        from spar_desktop.ui.library.overview_charts import OverviewPanel  # pyqtgraph: only when asked

        self.panel = OverviewPanel()
        self.layout().addWidget(self.panel)
        self.panel.tag_clicked.connect(self._tag_clicked)
        self.panel.problems_clicked.connect(lambda: (self.window.issues_dock.show(), self.window.issues_dock.raise_()))
        if self._snapshot is not None:
            self._tags_loaded(self._snapshot)
        self._problems()

    def _tags_loaded(self, snapshot) -> None:
        self._snapshot = snapshot
        if self.panel is None:
            return
        self.panel.set_tags(snapshot)
        w = self.window
        w.runner.run(partial(load_format_counts, w.library), title="Counting files by kind", key="overview-formats",
                     visible=False, on_success=self._formats)

    def _formats(self, counts) -> None:
        if self.panel is not None:
            self.panel.set_formats(counts)

    def _problems(self) -> None:
        if self.panel is not None:
            self.panel.set_problems(self.window.issues.counts)

    def _tag_clicked(self, tag_id: int) -> None:
        self.window.views.show_library()
        self.window.tag_panel.select_tag(tag_id)


def attach(window) -> OverviewPage:
    page = OverviewPage(window)
    window.tabs.addTab(page, "Overview")
    window.overview_action = window._action("Overview", lambda: window.tabs.setCurrentWidget(page), None, "Ctrl+3",
                                            "The share at a glance: files by year, kind and folder, problems")
    return page


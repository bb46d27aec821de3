""""Cover my session" beside the workspace search box: cluster-expanded search
(core/relations/expanded_search.session_search) shown in the same result list, with the files
expansion added marked "+ from cluster".

It needs the workspace's co-occurrence clusters. Whether they exist is checked (a file read) when a
workspace becomes current, and the button's tooltip says what is needed; a click without them
builds them in the background (cancellable in the task list), then searches. Results travel
through the controller's own search signals, so the panel shows them, and opening one counts as
feedback, exactly as for plain search.
"""

from __future__ import annotations

import logging
from functools import partial
from typing import Any, Optional

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QToolButton

from spar_desktop.core.progress import Progress
from spar_desktop.core.relations.expanded_search import EXPANSION_LABEL, EXPANSION_NOTE, FROM_CLUSTER, ClustersNotBuilt
from spar_desktop.ui.base.progress_view import shown
from spar_desktop.ui.base.tasks import TaskError
from spar_desktop.ui.workspaces import session_ops as ops

log = logging.getLogger(__name__)
NEEDS_CLUSTERS = ("It needs this workspace's co-occurrence clusters (files used together, learned from its files "
                  "and your searches); the first click builds them in the background, then searches.")


def cluster_key(name: str) -> str:
    return f"relations-cooc:{name.casefold()}"


def session_summary(results: Any) -> str:
    """'Cover my session: 8 files for “q” — 3 added from clusters, marked “+ from cluster” · 120 ms'."""
    n = len(results.hits)
    if not n:
        return f"Nothing in {results.workspace} matches “{results.query}”"
    added = f"{results.added} added from clusters, marked “{FROM_CLUSTER}”" if results.added else \
        "no file added from clusters"
    return f"{EXPANSION_LABEL}: {n} file{'s' if n != 1 else ''} for “{results.query}” — {added} · {results.latency_ms:.0f} ms"


class SessionSearch(QObject):
    def __init__(self, panel: Any) -> None:
        super().__init__(panel)
        self.panel = panel  # workspaces.panel.WorkspacePanel
        self.controller = panel.controller
        self.clusters: dict[str, bool] = {}  # workspace (casefolded) -> has a co-occurrence build
        self.button = QToolButton(text=EXPANSION_LABEL)
        self.button.setObjectName("sessionSearchButton")
        self.button.setToolTip(EXPANSION_NOTE)
        self.button.clicked.connect(self.run)
        self.controller.current_changed.connect(self._current_changed)

    def set_enabled(self, enabled: bool) -> None:
        self.button.setEnabled(enabled)

    def _tooltip(self, name: Optional[str]) -> None:
        missing = name is not None and self.clusters.get(name.casefold()) is False
        self.button.setToolTip(EXPANSION_NOTE + ("\n\n" + NEEDS_CLUSTERS if missing else ""))

    def _current_changed(self, row: Any) -> None:
        self._tooltip(row.name if row is not None else None)
        if row is None or not row.searchable or self.controller.service is None:
            return
        name = row.name

        def known(have: bool) -> None:
            self.clusters[name.casefold()] = have
            current = self.controller.current
            if current is not None and current.name == name:
                self._tooltip(name)

        self.controller.runner.run(partial(ops.has_clusters, self.controller.library, name),
                                   title="Checking co-occurrence clusters", key="ws-clusters", visible=False,
                                   on_success=known, on_failure=lambda err: log.info("cluster check: %s", err.message))

    # ------------------------------------------------------------------ searching
    def run(self) -> None:
        c, row = self.controller, self.controller.current
        query = self.panel.search_box.text().strip()
        if c.service is None or row is None:
            return
        if not query:
            self.panel.results_label.setText(f"Type what the task is about, then click {EXPANSION_LABEL}")
            return
        if self.clusters.get(row.name.casefold()) is False:
            self.build_then_search(row.name, query)
        else:
            self.search(row.name, query)

    def search(self, name: str, query: str) -> None:
        c = self.controller
        c.search_started.emit(query)

        def done(results: Any) -> None:
            c.last_results = results  # opening a result marks it in the query log, as for plain search
            c.search_finished.emit(results)

        def failed(err: TaskError) -> None:
            if isinstance(err.exception, ClustersNotBuilt):
                self.clusters[name.casefold()] = False  # none (or an unreadable one): build, then search
                self.build_then_search(name, query)
                return
            log.info("session search failed: %s", err.message)
            c.search_failed.emit(err.message)

        c.runner.run(partial(ops.session_search, c.service, name, query), title=f"{EXPANSION_LABEL} in {name}",
                     key="search", on_success=done, on_failure=failed)

    def build_then_search(self, name: str, query: str) -> None:
        c, label = self.controller, self.panel.results_label
        self.panel.results.clear()
        intro = f"{EXPANSION_LABEL} needs the co-occurrence clusters of {name}: building them in the background"
        label.setText(intro + " (once; cancel it in the task list)…")

        def progressed(p: Progress) -> None:
            label.setText(f"{intro}: {shown(p).with_percent() or 'working'}…")

        def done(_report: Any) -> None:
            self.clusters[name.casefold()] = True
            self._tooltip(name)
            current = c.current
            if current is not None and current.name == name:
                self.search(name, query)

        def failed(err: TaskError) -> None:
            log.info("co-occurrence build failed: %s", err.message)
            c.search_failed.emit(f"Could not build the co-occurrence clusters of {name}: {err.message}")

        c.runner.run(partial(ops.build_clusters, c.library, name), title=f"Building co-occurrence clusters of {name}",
                     key=cluster_key(name), on_success=done, on_failure=failed, on_progress=progressed,
                     on_cancelled=lambda: label.setText(f"Building the clusters was cancelled; {EXPANSION_LABEL} "
                                                        "builds them on its next click"))

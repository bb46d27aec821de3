"""The workspace panel's two status lines, a mixin of WorkspacePanel (panel.py): the freshness bar
('Out of date (…)' with Update, 'Updating…', 'Archived after N days unused') and the Learning
line (what search learned from feedback, with Reset learning). Their texts are panel_text.py's."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QToolButton, QWidget

from spar_desktop.ui.workspaces.panel_text import (
    archived_for_idleness,
    describe_learning,
    freshness_line,
    freshness_tooltip,
    learning_tooltip,
)

if TYPE_CHECKING:  # types only: the workspace modules load on a worker (workspaces/ops.py)
    from spar_desktop.core.workspaces.manager import WorkspaceInfo


class PanelStatusLines:
    """Builds and fills the freshness bar and the Learning line; the panel provides ``controller``,
    ``_learning`` (the current workspace's MemoryStats, once read), ``_build_clicked`` and
    ``_emit_for_current``."""

    def _freshness_bar(self) -> QFrame:
        """'Out of date (…)' with Update, 'Updating…', or 'Archived after N days unused'."""
        self.freshness_bar = QFrame()
        self.freshness_bar.setObjectName("freshnessBar")
        fl = QHBoxLayout(self.freshness_bar)
        fl.setContentsMargins(8, 4, 4, 4)
        fl.setSpacing(6)
        self.freshness_label = QLabel()
        self.freshness_label.setObjectName("freshnessText")
        self.freshness_label.setWordWrap(True)
        self.update_button = QPushButton("Update")
        self.update_button.setToolTip("Read the changed and new files and drop the removed ones; search and chat "
                                      "keep answering from the current build meanwhile")
        self.update_button.clicked.connect(self._build_clicked)
        fl.addWidget(self.freshness_label, 1)
        fl.addWidget(self.update_button, 0, Qt.AlignmentFlag.AlignVCenter)
        self.freshness_bar.hide()
        return self.freshness_bar

    def _build_learning_section(self) -> QWidget:
        """What search learned from feedback, with Reset learning (hidden until there is some)."""
        self.learning_box = QWidget()
        ll = QHBoxLayout(self.learning_box)
        ll.setContentsMargins(0, 0, 0, 0)
        ll.setSpacing(4)
        self.learning_label = QLabel()
        self.learning_label.setObjectName("muted")
        self.learning_label.setWordWrap(True)
        self.reset_learning_button = QToolButton(text="Reset learning")
        self.reset_learning_button.setToolTip("Forget what search learned from feedback: the original results, exactly")
        self.reset_learning_button.clicked.connect(lambda: self._emit_for_current(self.reset_learning_requested))
        ll.addWidget(self.learning_label, 1)
        ll.addWidget(self.reset_learning_button, 0, Qt.AlignmentFlag.AlignTop)
        self.learning_box.hide()
        return self.learning_box

    # ------------------------------------------------------------------ freshness
    def _show_freshness(self, row: Optional[WorkspaceInfo], building: bool) -> None:
        c = self.controller
        days = c.settings_value("workspace_idle_archive_days", 30)
        fresh = c.freshness(row.name) if row is not None else None
        idle = row is not None and archived_for_idleness(row, days, row.name.casefold() in c.archived_idle)
        line = freshness_line(row, fresh, building, idle, days)
        self.freshness_bar.setVisible(line is not None)
        if line is None:
            return
        text, tone, update = line
        self.freshness_label.setText(text)
        if update and fresh is not None:
            tip = freshness_tooltip(fresh)
        elif tone == "info" and building:
            tip = "Search and chat answer from the previous build until the update finishes; the next search " \
                  "after it uses the new one."
        else:
            tip = (f"Unused for {days} days, so its vectors were dropped to free space (Settings ▸ Workspaces). "
                   "Its filter, files, threads and history are kept.")
        self.freshness_label.setToolTip(tip)
        self.update_button.setVisible(update)
        self.update_button.setEnabled(update and c.service is not None and not building)
        if self.freshness_bar.property("tone") != tone:  # the style sheet colours the bar by tone
            self.freshness_bar.setProperty("tone", tone)
            self.freshness_bar.style().unpolish(self.freshness_bar)
            self.freshness_bar.style().polish(self.freshness_bar)

    # ------------------------------------------------------------------ learning
    def _learning_loaded(self, name: str, stats) -> None:
        row = self.controller.current
        if row is not None and row.name.casefold() == name.casefold():
            self._learning = stats
            self._show_learning(row, self.controller.is_building(row.name))

    def _show_learning(self, row: Optional[WorkspaceInfo], building: bool) -> None:
        stats = self._learning
        shown = row is not None and stats is not None and row.status in ("active", "archived")
        self.learning_box.setVisible(shown)
        if not shown:
            return
        self.learning_label.setText(describe_learning(stats, self.controller.erm_config))
        self.learning_label.setToolTip(learning_tooltip(stats))
        learned = bool(stats.evolved_keys or stats.chunks_with_memory or stats.pending or stats.accepted)
        self.reset_learning_button.setVisible(learned)
        self.reset_learning_button.setEnabled(learned and not building)

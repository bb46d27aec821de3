"""Bottom dock: problem files and folder-level scan issues, in one list (never pop-ups per file)."""

from __future__ import annotations

from typing import Optional

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QStyle,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from spar_desktop.core.library.models import FileStatus
from spar_desktop.ui.library_ops import Issues

KIND_LABELS = {
    "scan": "Folder", FileStatus.ERROR: "Unreadable", FileStatus.ENCRYPTED: "Encrypted",
    FileStatus.UNSUPPORTED: "Unsupported", FileStatus.EMPTY: "Empty", FileStatus.MISSING: "Missing",
}


class IssuesPanel(QWidget):
    file_activated = Signal(int)  # file id
    count_changed = Signal(int)

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.tree = QTreeWidget()
        self.tree.setColumnCount(3)
        self.tree.setHeaderLabels(["Problem", "Path", "Details"])
        self.tree.setRootIsDecorated(False)
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        self.tree.setSortingEnabled(True)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.tree.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        header = self.tree.header()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.resizeSection(0, 120)
        header.resizeSection(1, 460)
        header.setStretchLastSection(True)
        self.tree.itemDoubleClicked.connect(self._activated)
        self.empty = QLabel("No problems found. Files that cannot be read are listed here with the reason.")
        self.empty.setObjectName("placeholder")
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.note = QLabel()
        self.note.setObjectName("muted")
        self.note.setVisible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.empty)
        layout.addWidget(self.tree)
        layout.addWidget(self.note)
        style = self.style()
        sp = QStyle.StandardPixmap
        self._icons = {"scan": style.standardIcon(sp.SP_DirClosedIcon),
                       FileStatus.ERROR: style.standardIcon(sp.SP_MessageBoxCritical),
                       FileStatus.ENCRYPTED: style.standardIcon(sp.SP_MessageBoxWarning),
                       FileStatus.MISSING: style.standardIcon(sp.SP_MessageBoxWarning)}
        self._info = style.standardIcon(sp.SP_MessageBoxInformation)
        self.total = 0
        self.set_issues(Issues((), 0))

    def set_issues(self, issues: Issues) -> None:
        self.tree.setSortingEnabled(False)  # one sort after filling, not one per insert
        self.tree.clear()
        items = []
        for row in issues.rows:
            item = QTreeWidgetItem([KIND_LABELS.get(row.kind, row.kind), row.path, row.message])
            item.setIcon(0, self._icons.get(row.kind, self._info))
            item.setToolTip(1, row.path)
            item.setToolTip(2, row.message)
            item.setData(0, Qt.ItemDataRole.UserRole, row.file_id)
            items.append(item)
        self.tree.addTopLevelItems(items)
        self.tree.setSortingEnabled(True)
        self.tree.sortByColumn(1, Qt.SortOrder.AscendingOrder)
        self.total = issues.total
        self.empty.setVisible(not items)
        self.tree.setVisible(bool(items))
        self.note.setVisible(issues.total > len(items))
        self.note.setText(f"Showing {len(items):,} of {issues.total:,} problems")
        self.count_changed.emit(issues.total)

    def _activated(self, item: QTreeWidgetItem, _column: int) -> None:
        file_id = item.data(0, Qt.ItemDataRole.UserRole)
        if file_id is not None:
            self.file_activated.emit(int(file_id))

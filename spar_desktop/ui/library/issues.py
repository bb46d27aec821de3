"""Bottom dock: problem files and folder-level scan issues, in one list (never pop-ups per file).

Grouped by kind with counts, real errors first (unreadable, folders that could not be scanned,
encrypted, missing), then the informational kinds (empty files, formats we read no text from)
as collapsed summary lines. On a real share 2,053 of 2,138 entries were archives "with no text
extraction yet": listed one per row they buried the dozens of files that really failed. A
collapsed group's rows are only created when it is expanded.
"""

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
from spar_desktop.ui.library.ops import IssueRow, Issues

KIND_LABELS = {
    "scan": "Folder", FileStatus.ERROR: "Unreadable", FileStatus.ENCRYPTED: "Encrypted",
    FileStatus.UNSUPPORTED: "Unsupported", FileStatus.EMPTY: "Empty", FileStatus.MISSING: "Missing",
}
# (kind, group title, what it means, expanded at first): real errors first.
GROUPS = (
    (FileStatus.ERROR, "Unreadable", "damaged or unreadable files", True),
    ("scan", "Folders not scanned", "folders that could not be listed", True),
    (FileStatus.ENCRYPTED, "Encrypted", "password-protected files; their text cannot be read", True),
    (FileStatus.MISSING, "Missing", "moved or deleted since they were indexed", True),
    (FileStatus.EMPTY, "Empty", "files with no content", False),
    (FileStatus.UNSUPPORTED, "Formats without text", "indexed by name, date and folder; no text is read from "
                                                     "them yet, so they are not searched", False),
)
REAL_ERRORS = frozenset(kind for kind, _t, _d, expanded in GROUPS if expanded)
# Errors the user caused and can fix (a folder they added that cannot be listed): the only ones
# that open the Issues dock by itself. "Formats without text" never does.
USER_ERRORS = frozenset({"scan"})
ROWS_ROLE = Qt.ItemDataRole.UserRole + 1  # on a collapsed group: its rows, created on expand


def _files(n: int, kind: str) -> str:
    noun = "folder" if kind == "scan" else "file"
    return f"{n:,} {noun}{'s' if n != 1 else ''}"


class IssuesPanel(QWidget):
    file_activated = Signal(int)  # file id
    count_changed = Signal(int)

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.tree = QTreeWidget()
        self.tree.setColumnCount(3)
        self.tree.setHeaderLabels(["Problem", "Path", "Details"])
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.tree.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        header = self.tree.header()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.resizeSection(0, 200)  # a file row's kind, indented under its group (and reason)
        header.resizeSection(1, 460)
        header.setStretchLastSection(True)
        self.tree.itemDoubleClicked.connect(self._activated)
        self.tree.itemExpanded.connect(self._fill)
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
        self.serious = 0  # listed rows of the real-error kinds (the status-bar badge counts these)
        self.user_errors = 0  # listed rows the user caused (folders that could not be read)
        self.counts: dict[str, int] = {}  # rows per kind, as listed
        self.set_issues(Issues((), 0))

    def set_issues(self, issues: Issues) -> None:
        self.tree.clear()
        by_kind: dict[str, list[IssueRow]] = {}
        for row in issues.rows:
            by_kind.setdefault(row.kind, []).append(row)
        known = [g[0] for g in GROUPS]
        groups = list(GROUPS) + [(k, KIND_LABELS.get(k, k), "", True) for k in by_kind if k not in known]
        for kind, title, meaning, expanded in groups:
            rows = sorted(by_kind.get(kind, ()), key=lambda r: r.path)
            if rows:
                self._add_group(kind, title, meaning, rows, expanded)
        self.counts = {k: len(v) for k, v in by_kind.items()}
        self.total = issues.total
        self.serious = sum(n for k, n in self.counts.items() if k in REAL_ERRORS or k not in known)
        self.user_errors = sum(n for k, n in self.counts.items() if k in USER_ERRORS)
        listed = len(issues.rows)
        self.empty.setVisible(not listed)
        self.tree.setVisible(bool(listed))
        self.note.setVisible(issues.total > listed)
        self.note.setText(f"Showing {listed:,} of {issues.total:,} problems")
        self.count_changed.emit(issues.total)

    def _add_group(self, kind: str, title: str, meaning: str, rows: list[IssueRow], expanded: bool) -> None:
        top = QTreeWidgetItem([f"{title} — {_files(len(rows), kind)}" + (f": {meaning}" if meaning else "")])
        top.setIcon(0, self._icons.get(kind, self._info))
        font = top.font(0)
        font.setBold(kind in REAL_ERRORS)
        top.setFont(0, font)
        top.setData(0, Qt.ItemDataRole.UserRole + 2, kind)
        self.tree.addTopLevelItem(top)
        top.setFirstColumnSpanned(True)
        if kind == FileStatus.UNSUPPORTED:
            # One line per reason ('.gz: no text extraction for archive files yet'), each expandable.
            reasons: dict[str, list[IssueRow]] = {}
            for r in rows:
                reasons.setdefault(r.message, []).append(r)
            for message, group in sorted(reasons.items(), key=lambda kv: (-len(kv[1]), kv[0])):
                sub = QTreeWidgetItem([f"{message} — {_files(len(group), kind)}"])
                top.addChild(sub)
                sub.setFirstColumnSpanned(True)
                self._defer(sub, group)
        elif expanded:
            top.addChildren([self._row_item(r) for r in rows])
        else:
            self._defer(top, rows)
        top.setExpanded(expanded)

    def _defer(self, item: QTreeWidgetItem, rows: list[IssueRow]) -> None:
        item.setData(0, ROWS_ROLE, rows)
        item.setChildIndicatorPolicy(QTreeWidgetItem.ChildIndicatorPolicy.ShowIndicator)

    def _fill(self, item: QTreeWidgetItem) -> None:
        rows = item.data(0, ROWS_ROLE)
        if rows:
            item.setData(0, ROWS_ROLE, None)
            item.addChildren([self._row_item(r) for r in rows])

    def _row_item(self, row: IssueRow) -> QTreeWidgetItem:
        item = QTreeWidgetItem([KIND_LABELS.get(row.kind, row.kind), row.path, row.message])
        item.setIcon(0, self._icons.get(row.kind, self._info))
        item.setToolTip(1, row.path)
        item.setToolTip(2, row.message)
        item.setData(0, Qt.ItemDataRole.UserRole, row.file_id)
        return item

    def group_item(self, kind: str) -> Optional[QTreeWidgetItem]:
        for i in range(self.tree.topLevelItemCount()):
            item = self.tree.topLevelItem(i)
            if item.data(0, Qt.ItemDataRole.UserRole + 2) == kind:
                return item
        return None

    def _activated(self, item: QTreeWidgetItem, _column: int) -> None:
        file_id = item.data(0, Qt.ItemDataRole.UserRole)
        if file_id is not None:
            self.file_activated.emit(int(file_id))

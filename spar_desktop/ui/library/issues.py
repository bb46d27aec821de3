"""Bottom dock: problem files and folder-level scan issues, in one list (never pop-ups per file).

Grouped by kind with counts, real errors first (unreadable, folders that could not be scanned,
encrypted, missing), then the informational kinds (empty files, formats we read no text from)
as collapsed summary lines. On a real share 2,053 of 2,138 entries were archives "with no text
extraction yet": listed one per row they buried the dozens of files that really failed. Counts
come whole; rows come a page at a time (ISSUE_PAGE): a collapsed group's first page when it is
expanded, the next ones from its "Show more" line (at 100k files the dock had opened on 50,049 rows).
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
from spar_desktop.ui.library.ops import ISSUE_PAGE, IssueRow, Issues

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
ROWS_ROLE = Qt.ItemDataRole.UserRole + 1  # on a group: (kind, reason, entries); rows come a page at a time
MORE_ROLE = Qt.ItemDataRole.UserRole + 3  # the "Show more" line of a group


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
        self.counts: dict[str, int] = {}  # entries per kind, all of them
        self._source = self._from_rows({})
        self.set_issues(Issues((), 0))

    def set_issues(self, issues: Issues) -> None:
        self.tree.clear()
        by_kind: dict[str, list[IssueRow]] = {}
        for row in issues.rows:
            by_kind.setdefault(row.kind, []).append(row)
        for rows in by_kind.values():
            rows.sort(key=lambda r: r.path)
        self._source = issues.more or self._from_rows(by_kind)
        counts = dict(issues.counts) if issues.counts is not None else {k: len(v) for k, v in by_kind.items()}
        reasons = issues.reasons if issues.counts is not None else self._reasons(by_kind.get(FileStatus.UNSUPPORTED, []))
        known = [g[0] for g in GROUPS]
        groups = list(GROUPS) + [(k, KIND_LABELS.get(k, k), "", True) for k in counts if k not in known]
        for kind, title, meaning, expanded in groups:
            if counts.get(kind):
                self._add_group(kind, title, meaning, counts[kind], by_kind.get(kind, []), reasons, expanded)
        self.counts = counts
        self.total = issues.total
        self.serious = sum(n for k, n in counts.items() if k in REAL_ERRORS or k not in known)
        self.user_errors = sum(n for k, n in counts.items() if k in USER_ERRORS)
        listed = sum(counts.values())
        self.empty.setVisible(not listed)
        self.tree.setVisible(bool(listed))
        self.note.setVisible(issues.total > listed)
        self.note.setText(f"Showing {listed:,} of {issues.total:,} problems")
        self.count_changed.emit(issues.total)

    @staticmethod
    def _from_rows(by_kind: dict[str, list[IssueRow]]):
        """Pages of a list made by hand (all rows at hand), as Issues.more reads them from the index."""
        def more(kind: str, reason: Optional[str], offset: int, n: int) -> tuple[IssueRow, ...]:
            rows = [r for r in by_kind.get(kind, ()) if reason is None or r.message == reason]
            return tuple(rows[offset:offset + n])
        return more

    @staticmethod
    def _reasons(rows: list[IssueRow]) -> tuple[tuple[str, int], ...]:
        counts: dict[str, int] = {}
        for r in rows:
            counts[r.message] = counts.get(r.message, 0) + 1
        return tuple(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))

    def _add_group(self, kind: str, title: str, meaning: str, count: int, first: list[IssueRow],
                   reasons: tuple[tuple[str, int], ...], expanded: bool) -> None:
        top = QTreeWidgetItem([f"{title} — {_files(count, kind)}" + (f": {meaning}" if meaning else "")])
        top.setIcon(0, self._icons.get(kind, self._info))
        font = top.font(0)
        font.setBold(kind in REAL_ERRORS)
        top.setFont(0, font)
        top.setData(0, Qt.ItemDataRole.UserRole + 2, kind)
        self.tree.addTopLevelItem(top)
        top.setFirstColumnSpanned(True)
        if kind == FileStatus.UNSUPPORTED:
            # One line per reason ('.gz: no text extraction for archive files yet'), each expandable.
            for message, n in reasons:
                sub = QTreeWidgetItem([f"{message} — {_files(n, kind)}"])
                top.addChild(sub)
                sub.setFirstColumnSpanned(True)
                self._defer(sub, (kind, message, n))
        elif expanded and first:
            self._add_page(top, (kind, None, count), first[:ISSUE_PAGE])
        else:
            self._defer(top, (kind, None, count))
        top.setExpanded(expanded)

    def _defer(self, item: QTreeWidgetItem, group: tuple[str, Optional[str], int]) -> None:
        item.setData(0, ROWS_ROLE, group)
        item.setChildIndicatorPolicy(QTreeWidgetItem.ChildIndicatorPolicy.ShowIndicator)

    def _fill(self, item: QTreeWidgetItem) -> None:
        group = item.data(0, ROWS_ROLE)
        if group and not item.childCount():
            kind, reason, _n = group
            self._add_page(item, group, list(self._source(kind, reason, 0, ISSUE_PAGE)))

    def _add_page(self, parent: QTreeWidgetItem, group: tuple[str, Optional[str], int], rows: list[IssueRow]) -> None:
        """A page of rows under ``parent``, and a "Show more" line while the group has more."""
        parent.setData(0, ROWS_ROLE, group)
        last = parent.child(parent.childCount() - 1) if parent.childCount() else None
        if last is not None and last.data(0, MORE_ROLE):
            parent.removeChild(last)
        parent.addChildren([self._row_item(r) for r in rows])
        left = group[2] - parent.childCount()
        if left > 0 and rows:
            more = QTreeWidgetItem([f"Show {min(left, ISSUE_PAGE):,} more of {left:,}…"])
            more.setData(0, MORE_ROLE, True)
            more.setToolTip(0, "Double-click to list the next files")
            parent.addChild(more)
            more.setFirstColumnSpanned(True)

    def show_more(self, parent: QTreeWidgetItem) -> None:
        """The next page of a group (what double-clicking its "Show more" line does)."""
        group = parent.data(0, ROWS_ROLE)
        if group:
            kind, reason, _n = group
            shown = sum(1 for i in range(parent.childCount()) if not parent.child(i).data(0, MORE_ROLE))
            self._add_page(parent, group, list(self._source(kind, reason, shown, ISSUE_PAGE)))

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
        if item.data(0, MORE_ROLE) and item.parent() is not None:
            self.show_more(item.parent())
            return
        file_id = item.data(0, Qt.ItemDataRole.UserRole)
        if file_id is not None:
            self.file_activated.emit(int(file_id))

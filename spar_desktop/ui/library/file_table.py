"""The file table: a model over immutable FileRecords, exposed to the view in chunks.

Rows are loaded by a background task (library.ops.load_files) and handed over as one tuple;
the model reveals them CHUNK rows at a time through canFetchMore/fetchMore as the user scrolls.

Sorting happens in the model over precomputed keys rather than in a QSortFilterProxyModel:
a proxy sorts by calling the Python ``data()`` O(n log n) times on the UI thread, which
stalls for seconds at 100k rows, while ``list.sort`` with a key is a few milliseconds.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Callable, Optional

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QApplication, QStyle

from spar_desktop.core.documents.virtual import is_virtual
from spar_desktop.core.library.models import FileStatus
from spar_desktop.ui.base.child_docs import document_title
from spar_desktop.ui.library.ops import SORT_KEYS, FileRecord

CHUNK = 1000
Index = QModelIndex | QPersistentModelIndex
FileIdRole = int(Qt.ItemDataRole.UserRole) + 1
DISPLAY, DECORATION, TOOLTIP = int(Qt.ItemDataRole.DisplayRole), int(Qt.ItemDataRole.DecorationRole), int(Qt.ItemDataRole.ToolTipRole)
ALIGN, FOREGROUND = int(Qt.ItemDataRole.TextAlignmentRole), int(Qt.ItemDataRole.ForegroundRole)
RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)


def human_size(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{int(size)} {unit}" if unit == "B" else f"{size:,.1f} {unit}"
        size /= 1024
    return f"{n} B"


# Formats named by a word (probe.py): a readable word, not "ARCHIVE" squeezed to "AR…VE".
FORMAT_WORDS = {"archive": "Archive", "image": "Image", "email": "Email", "other": "Other", "jsonl": "JSONL",
                "eml": "Email", "msg": "Outlook", "mbox": "Mailbox"}
KNOWN_FORMATS = ("pdf", "docx", "doc", "odt", "rtf", "xlsx", "xls", "ods", "pptx", "ppt", "odp", "md", "txt", "html",
                 "csv", "tsv", "json", "jsonl", "eml", "msg", "mbox", "zip", "image", "archive", "other")  # probe.py's; the Format column fits them all


def format_label(fmt: Optional[str]) -> str:
    """'PDF', 'DOCX', 'MD' for file types; 'Archive', 'Image' for the kinds named by a word."""
    if not fmt:
        return ""
    return FORMAT_WORDS.get(fmt, fmt.upper() if len(fmt) <= 5 else fmt.capitalize())


def _date(d: Optional[datetime]) -> str:
    return d.strftime("%Y-%m-%d %H:%M") if d else ""


# (header, display, right aligned, default width); sort keys: library.ops.SORT_KEYS
Column = tuple[str, Callable[[FileRecord], str], bool, int]
COLUMNS: tuple[Column, ...] = (
    ("Name", lambda r: r.name, False, 320),
    ("Folder", lambda r: r.folder, False, 190),  # a member of an archive: the archive's folder
    ("Format", lambda r: format_label(r.format), False, 84),
    ("Size", lambda r: human_size(r.size), True, 80),
    ("Modified", lambda r: _date(r.modified_at), False, 160),
    ("Title", lambda r: r.title or "", False, 240),
    ("Author", lambda r: r.author or "", False, 140),
    ("Pages", lambda r: str(r.page_count) if r.page_count else "", True, 56),
    ("Status", lambda r: r.status, False, 100),
    ("Error", lambda r: r.error or "", False, 260),
)
STATUS_COLUMN = 8
PROBLEM_COLOURS = {
    FileStatus.ERROR: QColor(192, 57, 43),
    FileStatus.ENCRYPTED: QColor(175, 96, 26),
    FileStatus.UNSUPPORTED: QColor(120, 120, 128),
    FileStatus.EMPTY: QColor(120, 120, 128),
    FileStatus.MISSING: QColor(175, 96, 26),
}


class FileTableModel(QAbstractTableModel):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._all: list[FileRecord] = []
        self._display: dict[int, tuple[str, ...]] = {}  # row → formatted cells, filled on demand
        self._shown = 0
        self._sort_column = 0
        self._sort_order = Qt.SortOrder.AscendingOrder
        self.total = 0
        style = QApplication.style()
        sp = QStyle.StandardPixmap
        self._status_icons = {
            FileStatus.ERROR: style.standardIcon(sp.SP_MessageBoxCritical),
            FileStatus.ENCRYPTED: style.standardIcon(sp.SP_MessageBoxWarning),
            FileStatus.MISSING: style.standardIcon(sp.SP_MessageBoxWarning),
            FileStatus.UNSUPPORTED: style.standardIcon(sp.SP_MessageBoxInformation),
            FileStatus.EMPTY: style.standardIcon(sp.SP_MessageBoxInformation),
        }
        self._file_icon = style.standardIcon(sp.SP_FileIcon)

    # ------------------------------------------------------------------ loading
    @property
    def sort_spec(self) -> tuple[int, bool]:
        return self._sort_column, self._sort_order == Qt.SortOrder.DescendingOrder

    def set_records(self, records: tuple[FileRecord, ...], total: Optional[int] = None,
                    sorted_by: Optional[tuple[int, bool]] = None) -> None:
        self.beginResetModel()
        self._display: dict[int, tuple[str, ...]] = {}
        self._all = list(records)
        if sorted_by != self.sort_spec:  # the loading task usually sorted them already
            self._sort_in_place()
        self._shown = min(CHUNK, len(self._all))
        self.total = len(self._all) if total is None else total
        self.endResetModel()

    def record(self, row: int) -> Optional[FileRecord]:
        return self._all[row] if 0 <= row < self._shown else None

    def row_of(self, file_id: int) -> int:
        """Row of a file id (revealing more chunks if it is further down), or -1."""
        for i, r in enumerate(self._all):
            if r.id == file_id:
                while self._shown <= i:
                    self.fetchMore(QModelIndex())
                return i
        return -1

    def canFetchMore(self, parent: Index = QModelIndex()) -> bool:
        return not parent.isValid() and self._shown < len(self._all)

    def fetchMore(self, parent: Index = QModelIndex()) -> None:
        if parent.isValid():
            return
        more = min(CHUNK, len(self._all) - self._shown)
        if more > 0:
            self.beginInsertRows(QModelIndex(), self._shown, self._shown + more - 1)
            self._shown += more
            self.endInsertRows()

    # ------------------------------------------------------------------ sorting
    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        self._sort_column, self._sort_order = column, order
        self.layoutAboutToBeChanged.emit()
        persistent = self.persistentIndexList()
        ids = [self._all[i.row()].id if i.row() < len(self._all) else None for i in persistent]
        self._sort_in_place()
        self._display = {}
        position = {r.id: n for n, r in enumerate(self._all)}
        self.changePersistentIndexList(
            persistent,
            [self.index(position[fid], i.column()) if fid in position and position[fid] < self._shown else QModelIndex()
             for fid, i in zip(ids, persistent, strict=True)])
        self.layoutChanged.emit()

    def _sort_in_place(self) -> None:
        key = SORT_KEYS[self._sort_column]
        self._all.sort(key=key, reverse=self._sort_order == Qt.SortOrder.DescendingOrder)

    # ------------------------------------------------------------------ model API
    def rowCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else self._shown

    def columnCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section][0]
        if role == Qt.ItemDataRole.TextAlignmentRole:
            right = COLUMNS[section][2]
            return int((Qt.AlignmentFlag.AlignRight if right else Qt.AlignmentFlag.AlignLeft) | Qt.AlignmentFlag.AlignVCenter)
        return None

    def data(self, index: Index, role: int = DISPLAY) -> Any:
        # Called for every visible cell and role on each repaint: plain int compares first,
        # and the row's display strings are formatted once, not per call.
        row = index.row()
        if row >= self._shown or row < 0:
            return None
        col = index.column()
        if role == DISPLAY:
            cached = self._display.get(row)
            if cached is None:
                r = self._all[row]
                cached = self._display[row] = tuple(c[1](r) for c in COLUMNS)
            return cached[col]
        if role == ALIGN:
            return RIGHT if COLUMNS[col][2] else None
        r = self._all[row]
        if role == DECORATION:
            if col == STATUS_COLUMN:
                return self._status_icons.get(r.status)
            if col == 0:
                return self._status_icons.get(r.status) or self._file_icon
            return None
        if role == FOREGROUND:
            return PROBLEM_COLOURS.get(r.status) if col in (0, STATUS_COLUMN, STATUS_COLUMN + 1) else None
        if role == TOOLTIP:
            if col == 0 or col == 1:
                return f"{document_title(r.path)}\n{r.path}" if is_virtual(r.path) else r.path
            if r.status != FileStatus.OK and col in (STATUS_COLUMN, STATUS_COLUMN + 1):
                return f"{r.status}: {r.error or ''}"
            return COLUMNS[col][1](r) or None
        if role == FileIdRole:
            return r.id
        return None

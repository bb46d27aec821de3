"""The file table: a lazy model over a FileListing (core/library/file_pages.py).

The listing holds the matching files' ids in the table's order, from SQL (a background task,
library.ops.load_files); rows are read by id a page at a time when the view first paints them,
and only the last few pages are kept. At 1,000,000 files the table costs 8 MB of ids, not every
FileRecord in Python. Sorting a small listing re-orders it here (a few ms in SQL); a large one
is re-ordered by the controller's reload, which follows the header's sort indicator.
"""

from __future__ import annotations

from array import array
from collections import OrderedDict
from dataclasses import replace
from datetime import datetime
from typing import Any, Callable, Optional

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QApplication, QStyle

from spar_desktop.core.documents.virtual import is_virtual
from spar_desktop.core.library.models import FileStatus
from spar_desktop.ui.base.child_docs import document_title
from spar_desktop.ui.library.ops import FileListing, FileOrder, FileRecord

PAGE = 100  # rows read at once: ~2.5 ms of CPU at 1M (200: ~3.5 ms)
KEPT_PAGES = 128  # pages kept in memory (12,800 rows)
LISTING = "Listing files…"  # a row whose place in the order has not arrived yet
SYNC_SORT_ROWS = 5000  # at most this many rows are re-sorted on the spot (SQL, a few ms)
Index = QModelIndex | QPersistentModelIndex
FileIdRole = int(Qt.ItemDataRole.UserRole) + 1
DISPLAY, DECORATION, TOOLTIP = int(Qt.ItemDataRole.DisplayRole), int(Qt.ItemDataRole.DecorationRole), int(Qt.ItemDataRole.ToolTipRole)
ALIGN, FOREGROUND = int(Qt.ItemDataRole.TextAlignmentRole), int(Qt.ItemDataRole.ForegroundRole)
RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
RECORD_ROLES = frozenset({DECORATION, FOREGROUND, TOOLTIP, FileIdRole})


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


# (header, display, right aligned, default width); sort keys: core/library/file_pages.sort_keys
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
        self.listing: Optional[FileListing] = None
        self._ids: array = array("q")
        self._ids_sort: tuple[int, bool] = (0, False)  # the order _ids are in
        self._pages: OrderedDict[int, list[Optional[FileRecord]]] = OrderedDict()
        self._display: dict[int, tuple[str, ...]] = {}  # row → formatted cells, for the kept pages
        self._rows: dict[int, FileRecord] = {}  # row → record of the kept pages (data()'s fast path)
        self._sort_column = 0
        self._sort_order = Qt.SortOrder.AscendingOrder
        self.total = 0
        self.page_reads = 0  # pages of this listing read from the index (how lazy it is, for tests and benchmarks)
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

    def set_listing(self, listing: FileListing) -> None:
        self.beginResetModel()
        self.listing = listing
        self._ids, self._ids_sort = listing.order.ids, listing.sort
        self.total = listing.total
        if listing.sort != self.sort_spec and self.total <= SYNC_SORT_ROWS:
            self._ids, self._ids_sort = listing.reorder(self.sort_spec).ids, self.sort_spec  # the header changed while it loaded
            self.total = len(self._ids)
        self._pages.clear()
        self._display, self._rows = {}, {}
        self.page_reads = 0
        self.endResetModel()

    def complete(self, listing: FileListing, order: FileOrder) -> None:
        """The whole order of a listing shown with its first ids only (``listing.order.complete``
        false): the rows shown stay as they are, the blank ones past the first ids fill in."""
        if listing is not self.listing or order.sort != self._ids_sort:
            return  # a newer listing or order replaced it
        if len(order.ids) != self.total:  # files came or went meanwhile: show the new order
            self.set_listing(replace(listing, order=order))
            return
        self._ids = order.ids
        if self.total:
            self.dataChanged.emit(self.index(0, 0), self.index(self.total - 1, len(COLUMNS) - 1))  # blank rows fill in

    def _page(self, page: int) -> list[Optional[FileRecord]]:
        rows = self._pages.get(page)
        if rows is not None:
            self._pages.move_to_end(page)
            return rows
        ids = self._ids[page * PAGE:(page + 1) * PAGE]
        if len(ids) < PAGE and len(self._ids) < self.total:
            # Past the first ids of a listing whose rest is on its way (about a second at 1M files):
            # 'Listing files…' until it arrives. An SQL offset here took 0.3 s at row 900,000, on the UI thread.
            return [None] * PAGE
        found = {r.id: r for r in self.listing.read(ids)} if self.listing is not None and len(ids) else {}
        self.page_reads += 1
        rows = self._pages[page] = [found.get(i) for i in ids]  # None: deleted since the listing
        self._rows.update((page * PAGE + k, r) for k, r in enumerate(rows) if r is not None)
        if len(self._pages) > KEPT_PAGES:
            old, _ = self._pages.popitem(last=False)
            for row in range(old * PAGE, (old + 1) * PAGE):
                self._display.pop(row, None)
                self._rows.pop(row, None)
        return rows

    def record(self, row: int) -> Optional[FileRecord]:
        if not 0 <= row < self.total:
            return None
        return self._page(row // PAGE)[row % PAGE]

    def row_of(self, file_id: int) -> int:
        """Row of a file id, or -1 (a scan of the id array in C: a few ms at 1M)."""
        try:
            return self._ids.index(file_id)
        except ValueError:
            return -1

    # ------------------------------------------------------------------ sorting
    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        self._sort_column, self._sort_order = column, order
        if self.listing is None or self._ids_sort == self.sort_spec or self.total > SYNC_SORT_ROWS:
            return  # a large listing: the controller reloads it in this order
        self.layoutAboutToBeChanged.emit()
        persistent = self.persistentIndexList()
        ids = [self._ids[i.row()] if 0 <= i.row() < len(self._ids) else None for i in persistent]
        self._ids, self._ids_sort = self.listing.reorder(self.sort_spec).ids, self.sort_spec
        self._pages.clear()
        self._display, self._rows = {}, {}
        self.changePersistentIndexList(
            persistent, [self.index(self.row_of(fid), i.column()) if fid is not None and self.row_of(fid) >= 0
                         else QModelIndex() for fid, i in zip(ids, persistent, strict=True)])
        self.layoutChanged.emit()

    # ------------------------------------------------------------------ model API
    def rowCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else self.total

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
        col = index.column()
        if role == DISPLAY:
            cached = self._display.get(row)
            if cached is None:
                r = self.record(row)
                if r is None:  # past the first ids while the rest is listed: say so, not a blank row
                    return LISTING if col == 0 and len(self._ids) <= row < self.total else None
                cached = self._display[row] = tuple(c[1](r) for c in COLUMNS)
            return cached[col]
        if role == ALIGN:
            return RIGHT if COLUMNS[col][2] else None
        if role not in RECORD_ROLES:
            return None  # the font, background, size... roles Qt asks of every cell
        r = self._rows.get(row) or self.record(row)
        if r is None:
            return None
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

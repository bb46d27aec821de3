"""Centre view: a header (count + active filter), the file table, and the empty state."""

from __future__ import annotations

from typing import Optional

from PySide6.QtCore import QItemSelectionModel, QModelIndex, QSize, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSizePolicy,
    QStackedWidget,
    QStyle,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from spar_desktop.ui.library.file_table import COLUMNS, KNOWN_FORMATS, FileTableModel, format_label
from spar_desktop.ui.library.ops import FileListing, FileRecord

FORMAT_COLUMN = next(i for i, c in enumerate(COLUMNS) if c[0] == "Format")


class EmptyState(QWidget):
    """What a new user sees: where to drop, and the sample corpus offer (first run)."""

    add_folder_clicked = Signal()
    sample_clicked = Signal()

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.setObjectName("emptyState")
        icon = QLabel()
        icon.setPixmap(self.style().standardIcon(QStyle.StandardPixmap.SP_DirOpenIcon).pixmap(QSize(72, 72)))
        icon.setAlignment(Qt.AlignmentFlag.AlignCenter)
        title = QLabel("Drop a folder here to index it")
        title.setObjectName("emptyTitle")
        title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        # Explicit line breaks: a word-wrapped label in a stretching layout gets clipped.
        text = QLabel("SPAR Desktop builds a metadata index of your files in seconds:\n"
                      "names, dates, authors, folders and your taxonomy become tags to filter by.\n"
                      "Nothing is embedded yet, and your folders are only ever read.")
        text.setObjectName("emptyText")
        text.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.add_button = QPushButton("Add folder…")
        self.add_button.setObjectName("primaryButton")
        self.add_button.setIcon(self.style().standardIcon(QStyle.StandardPixmap.SP_DirIcon))
        self.add_button.clicked.connect(self.add_folder_clicked)
        self.sample_button = QPushButton("Try the sample corpus")
        self.sample_button.setToolTip("Copies a small fictional company share into your data folder and indexes it")
        self.sample_button.clicked.connect(self.sample_clicked)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.sample_button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addStretch(2)
        layout.addWidget(icon)
        layout.addSpacing(8)
        layout.addWidget(title)
        layout.addWidget(text)
        layout.addSpacing(12)
        layout.addLayout(buttons)
        layout.addStretch(3)

    def set_sample_available(self, available: bool) -> None:
        self.sample_button.setVisible(available)


class FilePanel(QWidget):
    selection_changed = Signal(object)  # FileRecord or None
    activated = Signal(object)  # FileRecord (double-click / Enter)
    clear_filter_clicked = Signal()

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.model = FileTableModel(self)
        self.count_label = QLabel("")
        self.count_label.setObjectName("countLabel")
        self.filter_label = QLabel("")
        self.filter_label.setObjectName("filterLabel")
        self.filter_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.filter_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.clear_button = QPushButton("Clear filter")
        self.clear_button.setFlat(True)
        self.clear_button.setVisible(False)
        self.clear_button.clicked.connect(self.clear_filter_clicked)
        header = QHBoxLayout()
        header.setContentsMargins(8, 6, 8, 2)
        header.addWidget(self.count_label)
        header.addWidget(self.filter_label, 1)
        header.addWidget(self.clear_button)

        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setAlternatingRowColors(True)
        self.table.setShowGrid(False)
        self.table.setWordWrap(False)
        self.table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(26)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        hh = self.table.horizontalHeader()
        hh.setHighlightSections(False)
        hh.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)  # never ResizeToContents: it reads every row
        for i, col in enumerate(COLUMNS):
            hh.resizeSection(i, col[3])
        # The Format column fits every format's label in this font (it showed "AR…VE").
        fm = self.table.fontMetrics()
        widest = max(fm.horizontalAdvance(format_label(f)) for f in KNOWN_FORMATS + ("Format",))
        hh.resizeSection(FORMAT_COLUMN, max(hh.sectionSize(FORMAT_COLUMN), widest + 24))
        hh.setStretchLastSection(True)
        self.table.selectionModel().selectionChanged.connect(self._selection_changed)
        self.table.doubleClicked.connect(self._double_clicked)

        self.empty = EmptyState()
        self.stack = QStackedWidget()
        self.stack.addWidget(self.empty)
        self.stack.addWidget(self.table)
        self.stack.setCurrentWidget(self.table)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(header)
        layout.addWidget(self.stack)

    # ------------------------------------------------------------------ state
    def set_rows(self, rows: FileListing, description: str = "") -> None:
        selected = {r.id for r in self.selected_records()}
        self.model.set_listing(rows)
        self.count_label.setText(f"{rows.total:,} file{'s' if rows.total != 1 else ''}")
        self.filter_label.setText(f"  ·  {description}" if description else "")
        self.filter_label.setToolTip(description)
        self.clear_button.setVisible(bool(description))
        sel = self.table.selectionModel()
        for fid in selected:  # keep the selection across reloads (e.g. after tagging)
            row = self.model.row_of(fid)
            if row >= 0:
                sel.select(self.model.index(row, 0),
                           QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows)
        if not self.selected_records():
            self.selection_changed.emit(None)

    def set_library_empty(self, empty: bool) -> None:
        self.stack.setCurrentWidget(self.empty if empty else self.table)
        self.count_label.setVisible(not empty)
        self.filter_label.setVisible(not empty)

    @property
    def library_empty(self) -> bool:
        return self.stack.currentWidget() is self.empty

    def selected_records(self) -> list[FileRecord]:
        rows = sorted({i.row() for i in self.table.selectionModel().selectedRows()})
        return [r for r in (self.model.record(row) for row in rows) if r is not None]

    def current_record(self) -> Optional[FileRecord]:
        index = self.table.currentIndex()
        record = self.model.record(index.row()) if index.isValid() else None
        selected = self.selected_records()
        if record is not None and record in selected:
            return record
        return selected[0] if selected else None

    def select_file(self, file_id: int) -> bool:
        row = self.model.row_of(file_id)
        if row < 0:
            return False
        index = self.model.index(row, 0)
        self.table.selectionModel().setCurrentIndex(
            index, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows)
        self.table.scrollTo(index)
        return True

    # ------------------------------------------------------------------ signals
    def _selection_changed(self, *_args) -> None:
        self.selection_changed.emit(self.current_record())

    def _double_clicked(self, index: QModelIndex) -> None:
        record = self.model.record(index.row())
        if record is not None:
            self.activated.emit(record)

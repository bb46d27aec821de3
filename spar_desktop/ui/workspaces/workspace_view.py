"""The workspace view: the centre of the window while the user works on a task.

One line for the request and its funnel ("“incident reports from 2023” · 12 files, 8% of the
index · 340 passages · built 14:02") with Edit, then the search (results with room to be read)
beside the chat, or above it when the centre is narrow. The library view (tags, files, details)
is one click or Ctrl+1 away (main_window.py); this view is Ctrl+2.

The search section and the chat pane are owned by the workspace panel and the chat feature; this
view only lays them out, so their controllers and tests do not care where they are shown.
"""

from __future__ import annotations

from typing import Callable, Optional

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QStackedLayout,
    QVBoxLayout,
    QWidget,
)

from spar_desktop.ui.base.elided_label import ElidedLabel
from spar_desktop.ui.workspaces.panel_text import build_time

SIDE_BY_SIDE_MIN = 1000  # px of centre below which the chat goes under the results


def funnel_line(row, index_files: Optional[int]) -> str:
    """The request and how many files it admitted, in one line (plain text: it is elided)."""
    if row is None:
        return ""
    parts = [f"“{row.request}”"] if row.request else []
    files = f"{row.file_count:,} file{'s' if row.file_count != 1 else ''}"
    if index_files:
        share = 100 * row.file_count / index_files
        files += f", {share:.0f}% of the index" if share >= 1 else ", under 1% of the index"
    parts.append(files)
    if row.chunk_count and row.built_at:
        parts.append(f"{row.chunk_count:,} passages")
    if row.built_at and row.status != "archived":
        parts.append(f"built {build_time(row.built_at)}")
    elif row.status == "archived":
        parts.append("archived")
    else:
        parts.append("not built yet")
    return " · ".join(parts)


class WorkspaceView(QWidget):
    edit_requested = Signal(str)  # workspace name
    new_requested = Signal()

    def __init__(self, search_section: QWidget, chat: QWidget,
                 index_files: Callable[[], Optional[int]] = lambda: None, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.setObjectName("workspaceView")
        self.index_files = index_files
        self.row = None
        self.stack = QStackedLayout(self)
        self.stack.addWidget(self._empty_page())
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(12, 8, 12, 8)
        layout.setSpacing(8)
        layout.addWidget(self._header())
        # Vertical until the view is wide enough: side by side, the two minimum widths add up.
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(search_section)
        self.splitter.addWidget(chat)
        self.splitter.setStretchFactor(0, 5)
        self.splitter.setStretchFactor(1, 6)
        layout.addWidget(self.splitter, 1)
        self.stack.addWidget(page)
        self.set_workspace(None)

    def _empty_page(self) -> QWidget:
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.addStretch(1)
        title = QLabel("No workspace open")
        title.setObjectName("emptyTitle")
        title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        text = QLabel("A workspace turns a request such as “incident reports from 2023” into filters you can check, "
                      "then lets you search and ask questions about just those files. Choose one in the Workspace "
                      "panel, or create one.")
        text.setObjectName("emptyText")
        text.setWordWrap(True)
        text.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_new_button = QPushButton("New workspace…  (Ctrl+N)")
        self.empty_new_button.setObjectName("primaryButton")
        self.empty_new_button.clicked.connect(self.new_requested)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.empty_new_button)
        row.addStretch(1)
        layout.addWidget(title)
        layout.addWidget(text)
        layout.addLayout(row)
        layout.addStretch(2)
        return page

    def _header(self) -> QFrame:
        head = QFrame()
        head.setObjectName("workspaceHeader")
        hl = QHBoxLayout(head)
        hl.setContentsMargins(0, 0, 0, 0)
        hl.setSpacing(10)
        self.title = ElidedLabel(full_tip=True)
        self.title.setObjectName("workspaceTitle")
        # Its width is set from its text (_fit_title): an Ignored policy would let the line overlap it.
        self.title.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Preferred)
        # The request can be long: elided, the whole of it on hover.
        self.funnel = ElidedLabel(full_tip=True)
        self.funnel.setObjectName("muted")
        self.edit_button = QPushButton("Edit…")
        self.edit_button.setToolTip("See and edit how the files were chosen (the request, tags, dates, budget)")
        self.edit_button.clicked.connect(lambda: self.row is not None and self.edit_requested.emit(self.row.name))
        hl.addWidget(self.title)
        hl.addWidget(self.funnel, 1)
        hl.addWidget(self.edit_button)
        return head

    def set_workspace(self, row) -> None:
        """Show ``row`` (a WorkspaceInfo), or the empty state for None."""
        self.row = row
        self.stack.setCurrentIndex(0 if row is None else 1)
        if row is None:
            return
        self.title.setText(row.name)
        self.funnel.setText(funnel_line(row, self.index_files()))
        self._fit_title()

    def _fit_title(self) -> None:
        """The name whole when it fits in 40% of the line; the request line takes the rest."""
        natural = self.title.fontMetrics().horizontalAdvance(self.title.text()) + 8
        self.title.setFixedWidth(max(40, min(natural, int(self.width() * 0.4))))

    def refresh(self) -> None:
        self.set_workspace(self.row)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit_title()
        wide = self.width() >= SIDE_BY_SIDE_MIN
        orientation = Qt.Orientation.Horizontal if wide else Qt.Orientation.Vertical
        if self.splitter.orientation() != orientation:
            self.splitter.setOrientation(orientation)
            # Share the room anew: the sizes kept from the other orientation squeezed the results.
            total = self.splitter.width() if wide else self.splitter.height()
            first = int(total * (0.45 if wide else 0.5))
            self.splitter.setSizes([first, max(1, total - first)])

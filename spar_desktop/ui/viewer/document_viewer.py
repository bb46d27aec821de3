"""Document viewer: PDFs page by page (pymupdf renders in a background task, latest-wins) with
passage highlights; every other format as extracted text with the passage highlighted.

A child document (``Reports.zip!/2019/audit.pdf``) is shown too: a PDF is copied out of its
container into the viewer's private temp folder, kept while it is shown and deleted when another
document opens or the viewer closes; any other format is read as text straight from the
container. Sheets and slides are the "pages" of workbooks and decks, and the controls say so.

``open_document(path, page=None, highlight=None)`` is the one entry point other views (and,
later, chat citations) use.
"""

from __future__ import annotations

import weakref
from functools import partial
from typing import Callable, Optional

from PySide6.QtCore import QSize, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QImage, QPainter, QPen, QPixmap, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QScrollArea,
    QSpinBox,
    QStackedWidget,
    QStyle,
    QTextEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from spar_desktop.core.documents.budget import ExtractionBudget
from spar_desktop.core.documents.pages import page_unit
from spar_desktop.core.documents.virtual import is_virtual
from spar_desktop.ui.base.child_docs import document_title
from spar_desktop.ui.base.tasks import TaskError, TaskRunner
from spar_desktop.ui.viewer.ops import (
    MemberCopy,
    RenderedPage,
    TextDocument,
    copy_member,
    load_text,
    new_scratch_root,
    remove_member_copy,
    remove_scratch_root,
    render_pdf_page,
)

HIGHLIGHT_FILL = QColor(255, 214, 0, 96)
HIGHLIGHT_EDGE = QColor(230, 126, 34)
ZOOM_STEPS = (0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0)


class DocumentViewer(QWidget):
    page_shown = Signal(int)  # a PDF page was rendered, or a text doc scrolled to a page
    load_failed = Signal(str)

    def __init__(self, runner: TaskRunner, parent: Optional[QWidget] = None,
                 budget: Callable[[], Optional[ExtractionBudget]] = lambda: None) -> None:
        super().__init__(parent)
        self.runner = runner
        self.budget = budget  # the per-file reading limits (Settings ▸ Reading files), read at each open
        self.member: Optional[MemberCopy] = None  # the shown child PDF's private copy
        self._scratch_root: Optional[str] = None
        self._remove_scratch: Optional[weakref.finalize] = None
        self.path: Optional[str] = None
        self.kind: Optional[str] = None  # "pdf" | "text"
        self.current_page = 0
        self.page_count = 0
        self.highlight: Optional[str] = None
        self.highlight_count = 0
        self.zoom: Optional[float] = None  # None: fit to width
        self.rendered: Optional[RenderedPage] = None
        self.text_doc: Optional[TextDocument] = None
        self._build()

    # ------------------------------------------------------------------ layout
    def _build(self) -> None:
        sp = QStyle.StandardPixmap
        style = self.style()

        def tool(icon, tip: str, slot) -> QToolButton:
            b = QToolButton()
            b.setIcon(style.standardIcon(icon))
            b.setToolTip(tip)
            b.setAutoRaise(True)
            b.clicked.connect(slot)
            return b

        self.title = QLabel("No document")
        self.title.setObjectName("viewerTitle")
        self.prev_button = tool(sp.SP_ArrowBack, "Previous page (PgUp)", lambda: self.go_to_page(self.current_page - 1))
        self.next_button = tool(sp.SP_ArrowForward, "Next page (PgDown)", lambda: self.go_to_page(self.current_page + 1))
        self.page_spin = QSpinBox()
        self.page_spin.setRange(1, 1)
        self.page_spin.setKeyboardTracking(False)
        self.page_word = QLabel("Page")
        self.page_spin.valueChanged.connect(lambda v: self.go_to_page(v) if v != self.current_page else None)
        self.page_total = QLabel("of 1")
        self.zoom_out = QToolButton(text="−", autoRaise=True, toolTip="Zoom out")
        self.zoom_in = QToolButton(text="+", autoRaise=True, toolTip="Zoom in")
        self.fit_button = QToolButton(text="Fit", autoRaise=True, toolTip="Fit page width", checkable=True)
        self.zoom_out.clicked.connect(lambda: self._step_zoom(-1))
        self.zoom_in.clicked.connect(lambda: self._step_zoom(1))
        self.fit_button.clicked.connect(self._fit)
        self.find = QLineEdit()
        self.find.setPlaceholderText("Highlight text…")
        self.find.setClearButtonEnabled(True)
        self.find.setMaximumWidth(260)
        self.find.returnPressed.connect(lambda: self.set_highlight(self.find.text() or None))
        bar = QHBoxLayout()
        bar.setContentsMargins(8, 4, 8, 4)
        bar.setSpacing(4)
        bar.addWidget(self.title, 1)
        for w in (self.prev_button, self.page_word, self.page_spin, self.page_total, self.next_button):
            bar.addWidget(w)
        bar.addSpacing(12)
        for w in (self.zoom_out, self.fit_button, self.zoom_in):
            bar.addWidget(w)
        bar.addSpacing(12)
        bar.addWidget(self.find)

        self.page_label = QLabel()
        self.page_label.setAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
        self.page_label.setObjectName("pdfPage")
        self.scroll = QScrollArea()
        self.scroll.setObjectName("pdfScroll")
        self.scroll.setWidget(self.page_label)
        self.scroll.setWidgetResizable(True)
        self.scroll.setAlignment(Qt.AlignmentFlag.AlignHCenter)
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setObjectName("textView")
        self.message = QLabel("Select a file and choose View, or double-click it in the table.")
        self.message.setObjectName("placeholder")
        self.message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.message.setWordWrap(True)
        self.stack = QStackedWidget()
        for w in (self.message, self.scroll, self.text):
            self.stack.addWidget(w)
        line = QFrame()
        line.setFrameShape(QFrame.Shape.HLine)
        line.setObjectName("separator")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(bar)
        layout.addWidget(line)
        layout.addWidget(self.stack)
        self._resize_timer = QTimer(self, singleShot=True, interval=150)
        self._resize_timer.timeout.connect(lambda: self._render() if self.kind == "pdf" and self.zoom is None else None)
        self._update_controls()

    # ------------------------------------------------------------------ API
    def open_document(self, path: str, page: Optional[int] = None, highlight: Optional[str] = None) -> None:
        """Show ``path`` at ``page`` (1-based) with ``highlight`` (a passage) marked."""
        self.path = path
        self.highlight = highlight or None
        self.find.setText(highlight or "")
        self.find.setCursorPosition(0)  # show the start of a long passage
        self.highlight_count = 0
        self.current_page = max(1, page or 1)
        self.title.setText(document_title(path))
        self.title.setToolTip(path)
        self.rendered, self.text_doc = None, None
        if self.member is not None and self.member.virtual_path != path:
            self._drop_member()
        if path.lower().endswith(".pdf"):
            self.kind = "pdf"
            self.page_count = self.current_page  # until the render reports the real count
            if is_virtual(path) and self.member is None:
                self._copy_member(path)
            else:
                self._render()
        else:
            self.kind = "text"
            self.runner.run(partial(load_text, path, self.highlight, budget=self.budget()),
                            title=f"Opening {document_title(path)}", key="viewer",
                            on_success=self._text_loaded, on_failure=self._failed)
        self._update_controls()

    def go_to_page(self, page: int) -> None:
        if self.kind is None or not 1 <= page <= max(1, self.page_count):
            return
        self.current_page = page
        if self.kind == "pdf":
            self._render()
        else:
            self._scroll_text_to_page()
        self._update_controls()

    def set_highlight(self, text: Optional[str]) -> None:
        if self.path is not None:
            self.open_document(self.path, self.current_page, text)

    # ------------------------------------------------------------------ PDF
    def _render(self) -> None:
        real = self.member.real_path if self.member is not None else self.path
        if real is None or (is_virtual(real) and self.member is None):
            return  # a child PDF renders once its copy is ready
        width = None
        if self.zoom is None:
            width = int((self.scroll.viewport().width() - 32) * self.devicePixelRatioF())
            width = max(width, 400)
        zoom = (self.zoom or 1.0) * self.devicePixelRatioF()
        self.runner.run(partial(render_pdf_page, real, self.current_page, width, zoom, self.highlight),
                        title=f"Rendering page {self.current_page}", key="viewer",
                        on_success=self._page_rendered, on_failure=self._failed)

    def _page_rendered(self, page: RenderedPage) -> None:
        self.rendered = page
        self.page_count, self.current_page = page.page_count, page.page
        image = QImage(page.samples, page.width, page.height, page.stride, QImage.Format.Format_RGB888).copy()
        if page.highlights:
            painter = QPainter(image)
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            painter.setPen(QPen(HIGHLIGHT_EDGE, max(1.0, page.zoom)))
            painter.setBrush(HIGHLIGHT_FILL)
            for x0, y0, x1, y1 in page.highlights:
                painter.drawRect(int(x0), int(y0), int(x1 - x0), int(y1 - y0))
            painter.end()
        image.setDevicePixelRatio(self.devicePixelRatioF())
        self.page_label.setPixmap(QPixmap.fromImage(image))
        self.highlight_count = len(page.highlights)
        self.stack.setCurrentWidget(self.scroll)
        if page.highlights:
            dpr = self.devicePixelRatioF()
            x0, y0, _x1, _y1 = page.highlights[0]
            QTimer.singleShot(0, self, lambda: self.scroll.ensureVisible(int(x0 / dpr), int(y0 / dpr), 40, 120))
        else:
            self.scroll.verticalScrollBar().setValue(0)
        self._update_controls()
        self.page_shown.emit(page.page)

    def _step_zoom(self, direction: int) -> None:
        if self.kind != "pdf":
            font = self.text.font()
            font.setPointSizeF(max(6.0, font.pointSizeF() + direction))
            self.text.setFont(font)
            return
        current = self.zoom or (self.rendered.zoom / self.devicePixelRatioF() if self.rendered else 1.0)
        steps = [z for z in ZOOM_STEPS if (z > current + 0.01 if direction > 0 else z < current - 0.01)]
        if steps:
            self.zoom = steps[0] if direction > 0 else steps[-1]
            self._render()
        self._update_controls()

    def _fit(self) -> None:
        self.zoom = None
        self._render()
        self._update_controls()

    # ------------------------------------------------------------------ text
    def _text_loaded(self, doc: TextDocument) -> None:
        self.text_doc = doc
        self.page_count = max(1, len(doc.page_offsets))
        self.current_page = min(self.current_page, self.page_count)
        if doc.message and not doc.text:
            self._show_message(f"No text to show: {doc.message}")
            return
        text = doc.text + ("\n\n[… the rest of this large document is not shown]" if doc.truncated else "")
        self.text.setPlainText(text)
        selections = []
        fmt = QTextCharFormat()
        fmt.setBackground(QColor(255, 214, 0, 140))
        for start, end in doc.hits:
            sel = QTextEdit.ExtraSelection()
            cursor = QTextCursor(self.text.document())
            cursor.setPosition(start)
            cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
            sel.cursor, sel.format = cursor, fmt
            selections.append(sel)
        self.text.setExtraSelections(selections)
        self.highlight_count = len(doc.hits)
        self.stack.setCurrentWidget(self.text)
        if doc.hits:
            # The first match on or after the requested page (a citation names both).
            offsets = doc.page_offsets or (0,)
            start = offsets[min(self.current_page, len(offsets)) - 1]
            hit = next((h for h in doc.hits if h[0] >= start), doc.hits[0])
            cursor = QTextCursor(self.text.document())
            cursor.setPosition(hit[0])
            self.text.setTextCursor(cursor)
            self.text.centerCursor()
            self._update_controls()
            self.page_shown.emit(self.current_page)
        else:
            self._scroll_text_to_page()
        self._update_controls()

    def _scroll_text_to_page(self) -> None:
        if self.text_doc is None:
            return
        offsets = self.text_doc.page_offsets or (0,)
        pos = offsets[min(self.current_page, len(offsets)) - 1]
        cursor = QTextCursor(self.text.document())
        cursor.setPosition(min(pos, len(self.text_doc.text)))
        self.text.setTextCursor(cursor)
        bar = self.text.verticalScrollBar()
        bar.setValue(bar.maximum())  # then back: puts the page start at the top, not the bottom
        self.text.ensureCursorVisible()
        self.page_shown.emit(self.current_page)

    # ------------------------------------------------------------------ common
    def _failed(self, error: TaskError) -> None:
        self._show_message(f"Cannot show {document_title(self.path or '')}: {error.message}")
        self.load_failed.emit(error.message)

    def _show_message(self, text: str) -> None:
        self.message.setText(text)
        self.stack.setCurrentWidget(self.message)
        self.highlight_count = 0
        self._update_controls()

    def _update_controls(self) -> None:
        has_doc = self.kind is not None
        self.page_spin.blockSignals(True)
        self.page_spin.setRange(1, max(1, self.page_count))
        self.page_spin.setValue(max(1, self.current_page))
        self.page_spin.blockSignals(False)
        self.page_total.setText(f"of {max(1, self.page_count)}")
        unit = page_unit(self.path) if self.path else "page"
        self.page_word.setText(unit.capitalize())
        self.page_spin.setToolTip(f"Jump to {unit}")
        self.prev_button.setToolTip(f"Previous {unit} (PgUp)")
        self.next_button.setToolTip(f"Next {unit} (PgDown)")
        self.prev_button.setEnabled(has_doc and self.current_page > 1)
        self.next_button.setEnabled(has_doc and self.current_page < self.page_count)
        self.page_spin.setEnabled(has_doc)
        for w in (self.zoom_in, self.zoom_out, self.fit_button, self.find):
            w.setEnabled(has_doc)
        self.fit_button.setChecked(self.kind == "pdf" and self.zoom is None)

    @property
    def position_text(self) -> str:
        """'Sheet 2 of 3', 'Slide 4 of 6', 'Page 1 of 9': what the page controls say."""
        return f"{self.page_word.text()} {self.current_page} of {max(1, self.page_count)}"

    # ------------------------------------------------------------------ child documents
    def _copy_member(self, path: str) -> None:
        if self._scratch_root is None:  # one mkdir on first use; the copying runs in the task
            self._scratch_root = new_scratch_root()
            self._remove_scratch = weakref.finalize(self, remove_scratch_root, self._scratch_root)
        self.runner.run(partial(copy_member, path, self._scratch_root, self.budget()),
                        title=f"Opening {document_title(path)}", key="viewer",
                        on_success=self._member_copied, on_failure=self._failed)

    def _member_copied(self, copy: MemberCopy) -> None:
        if copy.virtual_path != self.path:  # another document opened meanwhile
            self.runner.run(partial(remove_member_copy, copy.folder), title="Closing a document", visible=False)
            return
        self.member = copy
        self._render()

    def _drop_member(self) -> None:
        folder, self.member = self.member.folder, None
        self.runner.run(partial(remove_member_copy, folder), title="Closing a document", visible=False)

    def release(self) -> None:
        """Delete every copy the viewer made (the window calls this when it closes)."""
        self.member = None
        if self._remove_scratch is not None:
            self._remove_scratch()  # runs once; also at exit if the viewer is never released
            self._scratch_root, self._remove_scratch = None, None

    def closeEvent(self, event) -> None:
        self.release()
        super().closeEvent(event)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._resize_timer.start()

    def keyPressEvent(self, event) -> None:
        if event.key() == Qt.Key.Key_PageDown and self.kind == "pdf":
            self.go_to_page(self.current_page + 1)
        elif event.key() == Qt.Key.Key_PageUp and self.kind == "pdf":
            self.go_to_page(self.current_page - 1)
        else:
            super().keyPressEvent(event)

    def sizeHint(self) -> QSize:
        return QSize(800, 900)

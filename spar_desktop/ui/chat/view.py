"""The chat message list: Markdown-rendered bubbles that grow while an answer streams, citation
chips (and clickable [n] marks in the text) that open the cited page, thumbs up/down and copy.

Streaming re-renders at most every ``RENDER_MS`` (tokens are coalesced), so a fast model cannot
flood the event loop with Markdown layouts.
"""

from __future__ import annotations

import os
import re
from typing import Any, Optional

from PySide6.QtCore import QSize, Qt, QTimer, Signal
from PySide6.QtGui import QGuiApplication, QIcon
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from spar_desktop.core.documents.pages import page_span_label
from spar_desktop.ui.base.flow_layout import FlowLayout
from spar_desktop.ui.base.icons import thumb_icon
from spar_desktop.ui.base.style import colours

RENDER_MS = 40
NAME_CHARS = 28
# '[1]', '[1, 3]', '[2-4]'; not '[2023]' (four digits) and not an existing link '[x](...)'.
_CITE = re.compile(r"\[(\d{1,3}(?:\s*[,;–-]\s*\d{1,3})*)\](?!\()")


def citation_links(text: str) -> str:
    """Markdown with every [n] turned into a link the label reports as 'cite:n'."""
    def link(m: re.Match) -> str:
        nums = []
        for part in re.split(r"[,;]", m.group(1)):
            bounds = [int(x) for x in re.split(r"[–-]", part) if x.strip()]
            if len(bounds) == 2 and 0 <= bounds[1] - bounds[0] <= 20:
                nums += range(bounds[0], bounds[1] + 1)
            else:
                nums += bounds
        return "".join(f"[\\[{n}\\]](cite:{n})" for n in nums)
    return _CITE.sub(link, text or "")


def short_name(path: str) -> str:
    """The file name, cut in the middle when long so its end (a date, a version, the extension)
    stays readable; the chip's tooltip carries the full path."""
    name = os.path.basename(path.replace("\\", "/")) or path
    if len(name) <= NAME_CHARS:
        return name
    tail = NAME_CHARS // 3
    return name[:NAME_CHARS - tail - 1] + "…" + name[-tail:]


class MessageBubble(QFrame):
    passage_clicked = Signal(object)  # Passage
    feedback_changed = Signal(object)  # Optional[bool]

    def __init__(self, role: str, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.role = role
        self.setObjectName("userBubble" if role == "user" else "answerBubble")
        self.message_id: Optional[int] = None
        self.raw_text = ""
        self.passages: tuple = ()
        self.citations: tuple = ()
        self.streaming = False
        self.dirty = False
        self.feedback: Optional[bool] = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 8, 12, 8)
        layout.setSpacing(6)
        self.body = QLabel()
        self.body.setObjectName("messageBody")
        self.body.setWordWrap(True)
        self.body.setTextFormat(Qt.TextFormat.MarkdownText)
        self.body.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        self.body.setOpenExternalLinks(False)
        self.body.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        self.body.linkActivated.connect(self._link)
        layout.addWidget(self.body)
        self.note = QLabel()
        self.note.setObjectName("messageNote")
        self.note.setWordWrap(True)
        self.note.hide()
        layout.addWidget(self.note)
        self.chips = QWidget()
        self.chips_layout = FlowLayout(self.chips)
        self.chips.hide()
        layout.addWidget(self.chips)
        self.footer = QWidget()
        fl = QHBoxLayout(self.footer)
        fl.setContentsMargins(0, 0, 0, 0)
        fl.setSpacing(2)
        self.meta = QLabel()
        self.meta.setObjectName("muted")
        fl.addWidget(self.meta, 1)
        self.up_button = self._tool(thumb_icon(True), "Good answer")
        self.down_button = self._tool(thumb_icon(False), "Bad answer")
        self.up_button.clicked.connect(lambda on: self._feedback(True if on else None))
        self.down_button.clicked.connect(lambda on: self._feedback(False if on else None))
        self.copy_button = QToolButton(text="Copy", autoRaise=True, toolTip="Copy the answer as Markdown")
        self.copy_button.clicked.connect(self.copy)
        for w in (self.up_button, self.down_button, self.copy_button):
            fl.addWidget(w)
        layout.addWidget(self.footer)
        self.footer.setVisible(role != "user")
        for w in (self.up_button, self.down_button):
            w.setEnabled(False)

    def _tool(self, icon: QIcon, tip: str) -> QToolButton:
        b = QToolButton(autoRaise=True, checkable=True, toolTip=tip)
        b.setIcon(icon)
        b.setIconSize(QSize(16, 16))
        return b

    # ------------------------------------------------------------------ text
    def set_text(self, text: str) -> None:
        self.raw_text = text
        self.render()

    def append(self, delta: str) -> None:
        self.raw_text += delta
        self.dirty = True

    def render(self) -> None:
        self.dirty = False
        shown = self.raw_text if self.role == "user" else citation_links(self.raw_text)
        if self.streaming:
            shown += " ▍"
        self.body.setText(shown)

    def set_note(self, text: str, error: bool = False) -> None:
        self.note.setText(text)
        self.note.setProperty("error", error)
        self.note.setStyleSheet(f"color: {colours()['error' if error else 'muted']};")
        self.note.setVisible(bool(text))

    # ------------------------------------------------------------------ finished answers
    def finish(self, *, message_id: Optional[int], text: str, status: str, mode: Optional[str], model: Optional[str],
               error: Optional[str], passages: tuple, citations: tuple, feedback: Optional[bool] = None,
               timings: Optional[dict] = None) -> None:
        self.streaming = False
        self.message_id = message_id
        self.passages, self.citations = tuple(passages), tuple(citations)
        self.set_text(text)
        if status == "stopped":
            self.set_note("Stopped — the answer above is partial.")
        elif status == "error":
            self.set_note(error or "The answer failed.", error=True)
        elif not text:
            self.set_note("")
        self._fill_chips()
        bits = ["retrieval only" if mode == "retrieval-only" else (model or "model")]
        total = (timings or {}).get("total_ms")
        if total:
            bits.append(f"{total / 1000:.1f} s")
        building = (timings or {}).get("building_coverage_pct")
        if building is not None:  # retrieved from a workspace still being built (core/chat/session.py)
            read = (timings or {}).get("building_keyword_pct")
            bits.append(f"searching while building: keyword search covers the {read}% of files read so far, "
                        f"meaning search {building}% of passages" if read is not None else
                        f"searching while building: meaning search covers {building}% of passages")
        self.meta.setText(" · ".join(bits))
        self.feedback = feedback
        for b, v in ((self.up_button, True), (self.down_button, False)):
            b.setEnabled(message_id is not None)
            b.setChecked(feedback is v)

    def chip_buttons(self) -> list[QPushButton]:
        return [self.chips_layout.itemAt(i).widget() for i in range(self.chips_layout.count())]

    def _fill_chips(self) -> None:
        while self.chips_layout.count():
            item = self.chips_layout.takeAt(0)
            if item.widget() is not None:
                item.widget().deleteLater()
        by_n = {p.n: p for p in self.passages}
        shown: list[int] = []
        for c in self.citations:
            if c.n in shown:
                continue
            shown.append(c.n)
            p = by_n.get(c.n) if c.valid else None
            if p is None:
                chip = QPushButton(f"[{c.n}] no such source")
                chip.setObjectName("invalidChip")
                chip.setEnabled(False)
                chip.setToolTip(f"The answer cites [{c.n}], but no passage has that number")
            else:
                where = page_span_label(p.path, p.page_start, p.page_end)  # 'sheet 2', 'slides 3-4'
                chip = QPushButton(f"[{p.n}] {short_name(p.path)} · {where}")
                chip.setObjectName("citationChip")
                chip.setToolTip(f"{p.path}\n{where}\n\n{p.excerpt}")
                chip.setCursor(Qt.CursorShape.PointingHandCursor)
                chip.clicked.connect(lambda _c=False, p=p: self.passage_clicked.emit(p))
            self.chips_layout.addWidget(chip)
        self.chips.setVisible(bool(shown))

    def _link(self, href: str) -> None:
        if href.startswith("cite:"):
            n = int(href[5:])
            p = next((p for p in self.passages if p.n == n), None)
            if p is not None:
                self.passage_clicked.emit(p)

    def _feedback(self, value: Optional[bool]) -> None:
        self.feedback = value
        self.up_button.setChecked(value is True)
        self.down_button.setChecked(value is False)
        self.feedback_changed.emit(value)

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.raw_text)


class MessageList(QScrollArea):
    """Bubbles top to bottom; follows the bottom while an answer streams (unless scrolled up)."""

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.setObjectName("messageList")
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.container = QWidget()
        self.container.setObjectName("messageContainer")
        self.column = QVBoxLayout(self.container)
        self.column.setContentsMargins(16, 12, 16, 12)
        self.column.setSpacing(10)
        self.placeholder = QLabel()
        self.placeholder.setObjectName("placeholder")
        self.placeholder.setWordWrap(True)
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.column.addWidget(self.placeholder)
        self.column.addStretch(1)
        self.setWidget(self.container)
        self.bubbles: list[MessageBubble] = []
        self._rows: list[QWidget] = []
        self._timer = QTimer(self, interval=RENDER_MS)
        self._timer.timeout.connect(self._render_dirty)
        self.verticalScrollBar().rangeChanged.connect(self._range_changed)
        self._follow = True

    def set_placeholder(self, text: str) -> None:
        self.placeholder.setText(text)
        self.placeholder.setVisible(bool(text) and not self.bubbles)

    def clear(self) -> None:
        for row in self._rows:
            self.column.removeWidget(row)
            row.deleteLater()
        self.bubbles, self._rows = [], []
        self._timer.stop()
        self.placeholder.setVisible(bool(self.placeholder.text()))

    def add(self, role: str, text: str = "", streaming: bool = False) -> MessageBubble:
        row = QWidget(self.container)
        line = QHBoxLayout(row)
        line.setContentsMargins(80 if role == "user" else 0, 0, 0 if role == "user" else 40, 0)
        bubble = MessageBubble(role, row)
        bubble.streaming = streaming
        bubble.set_text(text)
        line.addWidget(bubble)
        self.column.insertWidget(self.column.count() - 1, row)
        self.bubbles.append(bubble)
        self._rows.append(row)
        self.placeholder.hide()
        self._follow = True
        if streaming:
            self._timer.start()
        return bubble

    def add_message(self, m: Any) -> MessageBubble:
        """A stored MessageInfo."""
        if m.role == "user":
            return self.add("user", m.content)
        bubble = self.add("assistant")
        bubble.finish(message_id=m.id, text=m.content, status=m.status, mode=m.mode, model=m.model, error=m.error,
                      passages=m.passages, citations=m.citations, feedback=m.feedback, timings=m.timings)
        return bubble

    def show_exchange(self, answer: MessageBubble) -> None:
        """Scroll so the question before ``answer`` is at the top (an answer that arrived at once
        and is taller than the view should be read from its start, not its end)."""
        i = self.bubbles.index(answer) if answer in self.bubbles else -1
        if i > 0:
            self._follow = False
            row = self._rows[i - 1]
            # After the layout has taken the finished answer in (its height changes on finish).
            QTimer.singleShot(30, self, lambda: self.verticalScrollBar().setValue(row.y() - 8))

    def stop_rendering(self) -> None:
        self._render_dirty()
        self._timer.stop()

    def _render_dirty(self) -> None:
        for b in self.bubbles:
            if b.dirty:
                b.render()

    def _range_changed(self, _lo: int, hi: int) -> None:
        if self._follow:
            self.verticalScrollBar().setValue(hi)

    def scrollContentsBy(self, dx: int, dy: int) -> None:
        super().scrollContentsBy(dx, dy)
        bar = self.verticalScrollBar()
        self._follow = bar.value() >= bar.maximum() - 4

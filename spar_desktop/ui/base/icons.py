"""Small drawn pieces shared by the chat views: icons that need no emoji font, a one-line
label that elides instead of widening its window, and a wrapping flow layout for chips."""

from __future__ import annotations

from typing import Optional

from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPainterPath, QPixmap, QTransform
from PySide6.QtWidgets import QLabel, QLayout, QSizePolicy, QWidget


def thumb_icon(up: bool, colour: str = "#545b68") -> QIcon:
    """A drawn thumb (no emoji font is needed)."""
    size = 32
    pix = QPixmap(size, size)
    pix.fill(Qt.GlobalColor.transparent)
    p = QPainter(pix)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(QColor(colour))
    p.drawRoundedRect(3, 14, 6, 15, 1.5, 1.5)  # the cuff
    hand = QPainterPath()
    hand.addRoundedRect(11, 14, 17, 15, 3, 3)  # the fist
    thumb = QPainterPath()
    thumb.addRoundedRect(12, 3, 7, 15, 3.5, 3.5)  # the raised thumb
    p.drawPath(hand.united(thumb))
    p.end()
    if not up:
        pix = pix.transformed(QTransform().rotate(180))
    return QIcon(pix)


def chat_icon(colour: str = "#2f6fde") -> QIcon:
    """A speech bubble for the Chat action."""
    pix = QPixmap(32, 32)
    pix.fill(Qt.GlobalColor.transparent)
    p = QPainter(pix)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(QColor(colour))
    bubble = QPainterPath()
    bubble.addRoundedRect(2, 4, 28, 19, 6, 6)
    tail = QPainterPath()
    tail.moveTo(8, 20)
    tail.lineTo(7, 29)
    tail.lineTo(16, 21)
    tail.closeSubpath()
    p.drawPath(bubble.united(tail))
    p.setBrush(QColor("white"))
    for x in (10, 16, 22):
        p.drawEllipse(x - 2, 12, 4, 4)
    p.end()
    return QIcon(pix)


class ElidedLabel(QLabel):
    """One line that ends in '…' when narrow, instead of widening its window: its size policy lets
    the layout give it any width, so a long text (a full path) can never push the window wider.
    ``mode`` ElideMiddle keeps both ends of a path; ``full_tip`` shows the whole text as tooltip."""

    def __init__(self, text: str = "", parent: Optional[QWidget] = None,
                 mode: Qt.TextElideMode = Qt.TextElideMode.ElideRight, full_tip: bool = False) -> None:
        super().__init__(text, parent)
        self.mode = mode
        self.full_tip = full_tip
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.setMinimumWidth(0)
        if full_tip:
            self.setToolTip(text)

    def setText(self, text: str) -> None:
        super().setText(text)
        if self.full_tip:
            self.setToolTip(text)

    def minimumSizeHint(self) -> QSize:
        return QSize(0, super().minimumSizeHint().height())

    def sizeHint(self) -> QSize:
        return QSize(min(super().sizeHint().width(), 200), super().sizeHint().height())

    def shown_text(self) -> str:
        """What is painted at the current width."""
        return self.fontMetrics().elidedText(self.text(), self.mode, self.contentsRect().width())

    def paintEvent(self, event) -> None:
        p = QPainter(self)
        p.setPen(self.palette().windowText().color())
        p.drawText(self.contentsRect(), int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter),
                   self.shown_text())


class FlowLayout(QLayout):
    """Left-to-right items that wrap (Qt's flow layout example, trimmed)."""

    def __init__(self, parent: Optional[QWidget] = None, spacing: int = 4) -> None:
        super().__init__(parent)
        self._items: list = []
        self._spacing = spacing
        self.setContentsMargins(0, 0, 0, 0)

    def addItem(self, item) -> None:
        self._items.append(item)

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, i: int):
        return self._items[i] if 0 <= i < len(self._items) else None

    def takeAt(self, i: int):
        return self._items.pop(i) if 0 <= i < len(self._items) else None

    def expandingDirections(self):
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return self._layout(QRect(0, 0, width, 0), True)

    def setGeometry(self, rect: QRect) -> None:
        super().setGeometry(rect)
        self._layout(rect, False)

    def sizeHint(self) -> QSize:
        return self.minimumSize()

    def minimumSize(self) -> QSize:
        size = QSize()
        for item in self._items:
            size = size.expandedTo(item.minimumSize())
        return size

    def _layout(self, rect: QRect, test: bool) -> int:
        x, y, line = rect.x(), rect.y(), 0
        for item in self._items:
            hint = item.sizeHint()
            if x + hint.width() > rect.right() and line > 0:
                x, y, line = rect.x(), y + line + self._spacing, 0
            if not test:
                item.setGeometry(QRect(QPoint(x, y), hint))
            x += hint.width() + self._spacing
            line = max(line, hint.height())
        return y + line - rect.y()

"""A one-line label that elides ('…') instead of widening its window (chat, Relations, status bar)."""

from __future__ import annotations

from typing import Optional

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget


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

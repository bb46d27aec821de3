"""The main window's status bar: a message that does not fit beside the running tasks and the
library summary ends at a whole word with "…" (QStatusBar clipped it mid-word), with the full text
as tooltip; the summary label on the right elides the same way instead of being cut."""

from __future__ import annotations

from typing import Optional

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import QFontMetrics, QPainter
from PySide6.QtWidgets import QSizePolicy, QStatusBar, QStyle, QStyleOption, QWidget

from spar_desktop.ui.base.elided_label import ElidedLabel


def elide_words(fm: QFontMetrics, text: str, width: int) -> str:
    """``text`` if it fits in ``width`` px, else its longest run of whole words that fits with "…"
    (a single long word, such as a path, is elided in the middle)."""
    text = " ".join(text.split())
    if fm.horizontalAdvance(text) <= width:
        return text
    words = text.split(" ")
    lo, hi = 0, len(words)  # binary search on how many words fit
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fm.horizontalAdvance(" ".join(words[:mid]).rstrip(",;:—-") + "…") <= width:
            lo = mid
        else:
            hi = mid - 1
    if lo == 0:
        return fm.elidedText(text, Qt.TextElideMode.ElideMiddle, width)
    return " ".join(words[:lo]).rstrip(",;:—- ") + "…"


class WordElidedLabel(ElidedLabel):
    """An ElidedLabel that asks for its full width when there is room (a status bar gives an
    Ignored-width widget none at all), and ends at a word."""

    def __init__(self, text: str = "", parent: Optional[QWidget] = None, full_tip: bool = False) -> None:
        super().__init__(text, parent, full_tip=full_tip)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)

    def minimumSizeHint(self) -> QSize:
        return QSize(min(60, self.sizeHint().width()), super().minimumSizeHint().height())

    def sizeHint(self) -> QSize:
        return QSize(self.fontMetrics().horizontalAdvance(self.text()) + 8, super().sizeHint().height())

    def shown_text(self) -> str:
        return elide_words(self.fontMetrics(), self.text(), self.contentsRect().width())


class ElidingStatusBar(QStatusBar):
    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self._permanent: list[QWidget] = []
        self.messageChanged.connect(lambda text: self.setToolTip(text if text else ""))

    def message_rect(self) -> QRect:
        """Where QStatusBar draws its message: left of the first visible permanent widget."""
        left, right = 6, self.width() - 12
        for widget in self._permanent:
            if widget.isVisible():
                right = min(right, widget.x() - 2)
        return QRect(left, 0, max(0, right - left), self.height())

    def shown_message(self) -> str:
        return elide_words(self.fontMetrics(), self.currentMessage(), self.message_rect().width())

    def addPermanentWidget(self, widget: QWidget, stretch: int = 0) -> None:
        self._permanent.append(widget)
        super().addPermanentWidget(widget, stretch)

    def paintEvent(self, event) -> None:
        if not self.currentMessage():
            super().paintEvent(event)
            return
        # QStatusBar paints the message unelided; draw the panel and our elided text instead.
        p = QPainter(self)
        opt = QStyleOption()
        opt.initFrom(self)
        self.style().drawPrimitive(QStyle.PrimitiveElement.PE_PanelStatusBar, opt, p, self)
        p.setPen(self.palette().windowText().color())
        p.drawText(self.message_rect(), int(Qt.AlignmentFlag.AlignLeading | Qt.AlignmentFlag.AlignVCenter
                                            | Qt.TextFlag.TextSingleLine), self.shown_message())

"""Drag-and-drop helpers: which local paths a drag carries, and the "drop to index" overlay."""

from __future__ import annotations

from PySide6.QtCore import QMimeData, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QPainter, QPen
from PySide6.QtWidgets import QWidget

from spar_desktop.ui.base.style import ACCENT


def local_paths(mime: QMimeData) -> list[str]:
    """Local file/folder paths of a drag (remote URLs are not indexable)."""
    if mime is None or not mime.hasUrls():
        return []
    return [u.toLocalFile() for u in mime.urls() if u.isLocalFile() and u.toLocalFile()]


class DropOverlay(QWidget):
    """A translucent frame over the window while folders are dragged over it."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName("dropOverlay")
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.hide()

    def show_over(self, window: QWidget) -> None:
        self.setGeometry(window.rect())
        self.raise_()
        self.show()

    def paintEvent(self, _event) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        accent = QColor(ACCENT)
        fill = QColor(accent)
        fill.setAlpha(28)
        rect = QRectF(self.rect()).adjusted(12, 12, -12, -12)
        p.setBrush(fill)
        pen = QPen(accent, 3, Qt.PenStyle.DashLine)
        p.setPen(pen)
        p.drawRoundedRect(rect, 14, 14)
        font = QFont(self.font())
        font.setPointSizeF(font.pointSizeF() * 1.8)
        font.setBold(True)
        p.setFont(font)
        p.setPen(accent)
        p.drawText(rect, Qt.AlignmentFlag.AlignCenter, "Drop to index")
        p.end()

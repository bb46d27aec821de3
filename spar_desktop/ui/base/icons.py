"""Drawn icons that need no emoji font: the thumbs of chat feedback and the Chat action's bubble."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPainterPath, QPixmap, QTransform


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

"""Pieces of the workspace dialog: how a tag matched, tag labels, and the funnel of file counts."""

from __future__ import annotations

from typing import Optional

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QColor, QFont, QPainter
from PySide6.QtWidgets import QWidget

HOW_TEXT = {"exact": "exact name", "lexical": "words match", "semantic": "similar meaning", "user": "added by you",
            "folder": "folder"}


def tag_label(t) -> str:
    """'Incident-Reports (in Operations)' for the folder tag 'Operations/Incident-Reports'."""
    if t.key == t.value:
        return t.value
    parent, _, last = t.key.rpartition("/")
    if parent and last == t.value:
        return f"{t.value}  (in {parent})"
    return f"{t.value}  ({t.key})"


class FunnelWidget(QWidget):
    """Files admitted after each step, as proportional bars."""

    ROW = 24

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.steps: tuple = ()
        self.emptied_by: Optional[str] = None

    def set_explanation(self, explanation) -> None:
        self.steps = tuple(explanation.funnel) if explanation is not None else ()
        self.emptied_by = explanation.emptied_by if explanation is not None else None
        self.updateGeometry()
        self.update()

    def sizeHint(self) -> QSize:
        return QSize(300, max(1, len(self.steps)) * self.ROW + 4)

    def minimumSizeHint(self) -> QSize:
        return self.sizeHint()

    def paintEvent(self, event) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        if not self.steps:
            p.setPen(QColor("#8a909b"))
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, "Preview a request to see the files it admits")
            return
        top = max(1, self.steps[0].admitted)
        w = self.width()
        count_w = 56
        for i, step in enumerate(self.steps):
            y = i * self.ROW + 2
            bar_w = int((w - count_w - 8) * step.admitted / top) if step.admitted else 0
            emptied = step.label == self.emptied_by
            colour = QColor("#f6d4d1") if emptied else QColor("#dbe7fb")
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(colour)
            p.drawRoundedRect(0, y, max(bar_w, 3), self.ROW - 4, 3, 3)
            p.setPen(QColor("#b3261e") if emptied else QColor("#1f2328"))
            p.drawText(6, y, w - count_w - 14, self.ROW - 4, Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft,
                       step.label)
            font = QFont(self.font())
            font.setBold(i == len(self.steps) - 1)
            p.setFont(font)
            p.drawText(w - count_w, y, count_w, self.ROW - 4, Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight,
                       f"{step.admitted:,}")
            p.setFont(self.font())

"""Pieces of the workspace dialog: how a tag matched, tag labels, and the funnel of file counts."""

from __future__ import annotations

from typing import Optional

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import QColor, QFont, QPainter
from PySide6.QtWidgets import QSizePolicy, QWidget

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
    """Files admitted after each step, as proportional bars. A step's label wraps onto more lines
    when it is longer than its bar's width ("or lacking at most 1 of the 2 groups not marked
    required" was cut off); the widget grows to fit (height for width)."""

    ROW = 24
    COUNT_W = 56
    PAD = 6

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.steps: tuple = ()
        self.emptied_by: Optional[str] = None
        policy = QSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)

    def set_explanation(self, explanation) -> None:
        self.steps = tuple(explanation.funnel) if explanation is not None else ()
        self.emptied_by = explanation.emptied_by if explanation is not None else None
        self.updateGeometry()
        self.update()

    def _text_width(self, width: int) -> int:
        return max(40, width - self.COUNT_W - 2 * self.PAD - 8)

    def row_heights(self, width: int) -> list[int]:
        """Each step's row height at ``width``: one line, or as many as its wrapped label needs."""
        fm = self.fontMetrics()
        flags = int(Qt.TextFlag.TextWordWrap)
        tw = self._text_width(width)
        return [max(self.ROW, fm.boundingRect(QRect(0, 0, tw, 10_000), flags, s.label).height() + 8) for s in self.steps]

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return max(self.ROW, sum(self.row_heights(width))) + 4

    def sizeHint(self) -> QSize:
        return QSize(300, self.heightForWidth(max(300, self.width())))

    def minimumSizeHint(self) -> QSize:
        return QSize(200, self.heightForWidth(max(300, self.width())))

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if self.height() < self.heightForWidth(self.width()):
            self.updateGeometry()  # narrower: labels wrap onto more lines

    def paintEvent(self, event) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        if not self.steps:
            p.setPen(QColor("#8a909b"))
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, "Preview a request to see the files it admits")
            return
        top = max(1, self.steps[0].admitted)
        w = self.width()
        count_w = self.COUNT_W
        y = 2
        for i, (step, h) in enumerate(zip(self.steps, self.row_heights(w), strict=True)):
            bar_w = int((w - count_w - 8) * step.admitted / top) if step.admitted else 0
            emptied = step.label == self.emptied_by
            colour = QColor("#f6d4d1") if emptied else QColor("#dbe7fb")
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(colour)
            p.drawRoundedRect(0, y, max(bar_w, 3), h - 4, 3, 3)
            p.setPen(QColor("#b3261e") if emptied else QColor("#1f2328"))
            p.drawText(QRect(self.PAD, y, self._text_width(w), h - 4),
                       int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft | Qt.TextFlag.TextWordWrap),
                       step.label)
            font = QFont(self.font())
            font.setBold(i == len(self.steps) - 1)
            p.setFont(font)
            p.drawText(w - count_w, y, count_w, h - 4, Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight,
                       f"{step.admitted:,}")
            p.setFont(self.font())
            y += h

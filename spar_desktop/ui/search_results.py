"""How a search hit is drawn in the workspace panel: file and page in bold, then the passage."""

from __future__ import annotations

import html
import os

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QTextDocument
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QWidget

HIT_ROLE = Qt.ItemDataRole.UserRole + 1
SNIPPET_CHARS = 220


class HitDelegate(QStyledItemDelegate):
    """Two-part rows: file and page in bold, then the matched passage (a few lines)."""

    PAD = 6

    def _doc(self, option, hit, width: int) -> QTextDocument:
        doc = QTextDocument()
        doc.setDefaultFont(option.font)
        doc.setDocumentMargin(0)
        snippet = " ".join(hit.text.split())
        if len(snippet) > SNIPPET_CHARS:
            snippet = snippet[:SNIPPET_CHARS].rsplit(" ", 1)[0] + " …"
        pages = f"p. {hit.page_start}" if hit.page_end == hit.page_start else f"pp. {hit.page_start}–{hit.page_end}"
        missing = " <span style='color:#b3261e'>(missing)</span>" if hit.file_missing else ""
        doc.setHtml(f"<b>{html.escape(os.path.basename(hit.path))}</b>{missing}"
                    f" <span style='color:#6a7180'>· {pages}</span>"
                    f"<br><span style='color:#3b4150'>{html.escape(snippet)}</span>")
        doc.setTextWidth(max(60, width - 2 * self.PAD))
        return doc

    def paint(self, painter, option, index) -> None:
        hit = index.data(HIT_ROLE)
        if hit is None:
            return super().paint(painter, option, index)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        painter.save()
        painter.setClipRect(option.rect)
        if selected:
            painter.fillRect(option.rect, QColor("#dbe7fb"))
        painter.setPen(QColor("#e3e5e9"))
        painter.drawLine(option.rect.bottomLeft(), option.rect.bottomRight())
        doc = self._doc(option, hit, option.rect.width())
        painter.translate(option.rect.left() + self.PAD, option.rect.top() + self.PAD)
        doc.drawContents(painter, QRectF(0, 0, doc.textWidth(), doc.size().height()))
        painter.restore()

    def sizeHint(self, option, index) -> QSize:
        hit = index.data(HIT_ROLE)
        if hit is None:
            return super().sizeHint(option, index)
        view = self.parent()
        width = view.viewport().width() if isinstance(view, QWidget) else 300
        doc = self._doc(option, hit, width)
        return QSize(width, int(doc.size().height()) + 2 * self.PAD)

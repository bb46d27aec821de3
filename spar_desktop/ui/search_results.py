"""How a search hit is drawn in the workspace panel: file and page in bold, then the passage,
then where else the same content lies ("also at: …") when copies collapsed into the hit."""

from __future__ import annotations

import html

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QTextDocument
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QWidget

from spar_desktop.core.documents.pages import page_span_label
from spar_desktop.ui.child_docs import also_at_text, container_name, member_name

HIT_ROLE = Qt.ItemDataRole.UserRole + 1
SNIPPET_CHARS = 220


def hit_html(hit, snippet: str) -> str:
    """'<b>audit.pdf</b> in Reports.zip · p. 3', the passage, and 'also at: …' for copies."""
    pages = page_span_label(hit.path, hit.page_start, hit.page_end)
    missing = " <span style='color:#b3261e'>(missing)</span>" if hit.file_missing else ""
    container = container_name(hit.path)
    inside = f" <span style='color:#6a7180'>in {html.escape(container)}</span>" if container else ""
    text = (f"<b>{html.escape(member_name(hit.path))}</b>{inside}{missing}"
            f" <span style='color:#6a7180'>· {html.escape(pages)}</span>"
            f"<br><span style='color:#3b4150'>{html.escape(snippet)}</span>")
    also_at = getattr(hit, "also_at", ())
    if also_at:
        text += f"<br><span style='color:#6a7180'>{html.escape(also_at_text(also_at))}</span>"
    return text


def hit_tooltip(hit, listed: int = 20) -> str:
    text = f"{hit.path}\nscore {hit.score:.2f}\n\n{' '.join(hit.text.split())[:600]}"
    also_at = getattr(hit, "also_at", ())
    if also_at:
        more = f"\n… and {len(also_at) - listed:,} more" if len(also_at) > listed else ""
        text += "\n\nThe same content is also at:\n" + "\n".join(also_at[:listed]) + more
    return text


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
        doc.setHtml(hit_html(hit, snippet))
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

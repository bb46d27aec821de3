"""How a search hit is drawn in the workspace panel: file and page in bold, then the passage with
the query's words highlighted, a "why" line (keyword and meaning shares of the score, learned keys
that moved it), then where else the same content lies ("also at: …") when copies collapsed.
Results that Cover my session added from a co-occurrence cluster carry a "+ from cluster" mark
(CLUSTER_ROLE); a file the search never reached shows its opening instead of a passage. A hit whose
file was edited since the build ("changed since the build") or is gone ("no longer on disk") says
so: its passage is the text the build read."""

from __future__ import annotations

import html

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QTextDocument
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QWidget

from spar_desktop.core.documents.pages import page_span_label
from spar_desktop.core.relations.expanded_search import EXPANSION_LABEL, FROM_CLUSTER
from spar_desktop.ui.base.child_docs import also_at_text, container_name, member_name

HIT_ROLE = Qt.ItemDataRole.UserRole + 1
CLUSTER_ROLE = Qt.ItemDataRole.UserRole + 2  # True: Cover my session added this file from a cluster
CLUSTER_MARK = (f"<span style='background:#e4f1dc; color:#2e6b1f'>&nbsp;{html.escape(FROM_CLUSTER)}&nbsp;</span>")
SNIPPET_CHARS = 220
MARK = "<span style='background:#fff3b0'><b>"
UNMARK = "</b></span>"
_OPEN, _CLOSE = "\x02", "\x03"  # span markers that survive whitespace folding and truncation
MISSING_MARK = "no longer on disk"
CHANGED_MARK = "changed since the build"


def file_mark(hit) -> str:
    """The mark after the file name of a hit whose passage may not be the file's text today."""
    if hit.file_missing:
        return f" <span style='color:#b3261e'>({MISSING_MARK})</span>"
    if getattr(hit, "file_changed", False):
        return f" <span style='background:#fff4d6; color:#8a5a00'>&nbsp;{CHANGED_MARK}&nbsp;</span>"
    return ""


def file_note(hit) -> str:
    """Why the mark is there, for the tooltip ('' without a mark)."""
    if hit.file_missing:
        return "This file is no longer on disk: the passage is the text the workspace was built from."
    if getattr(hit, "file_changed", False):
        return ("This file was edited since the workspace was built: the passage is the older version. "
                "Update the workspace to search the current text.")
    return ""


def highlighted_snippet(text: str, spans, limit: int = SNIPPET_CHARS) -> str:
    """HTML of ``text`` folded to single spaces, cut at ``limit`` visible characters on a word,
    with the (start, end) ``spans`` marked."""
    marked, last = [], 0
    for a, b in sorted(spans or ()):
        if a < last:
            continue
        marked += [text[last:a], _OPEN, text[a:b], _CLOSE]
        last = b
    marked.append(text[last:])
    folded = " ".join("".join(marked).split())
    visible = folded.replace(_OPEN, "").replace(_CLOSE, "")
    if len(visible) > limit:
        count, cut = 0, len(folded)
        for i, ch in enumerate(folded):
            if ch not in (_OPEN, _CLOSE):
                count += 1
                if count > limit:
                    cut = i
                    break
        head = folded[:cut]
        head = head.rsplit(" ", 1)[0] if " " in head else head
        if head.count(_OPEN) > head.count(_CLOSE):
            head += _CLOSE
        folded = head + " …"
    return html.escape(folded).replace(_OPEN, MARK).replace(_CLOSE, UNMARK)


def hit_explanation(hit):
    """The hit's Explanation (core/retrieval/explain.py), its matched words taken from its spans."""
    from spar_desktop.core.retrieval.explain import Explanation

    text = getattr(hit, "text", "")
    words: dict[str, str] = {}
    for a, b in getattr(hit, "matched", ()) or ():
        words.setdefault(text[a:b].lower(), text[a:b])
    return Explanation(float(hit.score), getattr(hit, "keyword_part", None), getattr(hit, "meaning_part", None),
                       getattr(hit, "alpha", None), getattr(hit, "keyword_unit", "parent"), tuple(words.values()),
                       bool(getattr(hit, "evolved", False)), int(hit.rank), getattr(hit, "rank_without_evolution", None))


def why_html(hit) -> str:
    """One grey line: 'keywords 0.31 · meaning 0.52 · learned keys: ↑3'; empty without parts."""
    e = hit_explanation(hit)
    parts = []
    if e.keyword_part is not None and e.meaning_part is not None:
        parts += [f"keywords {e.keyword_part:.2f}", f"meaning {e.meaning_part:.2f}"]
    moved = e.moved_by_evolution()
    if moved:
        parts.append(f"learned keys: {'↑' if moved > 0 else '↓'}{abs(moved)}")
    elif e.evolved:
        parts.append("learned keys")
    return f"<span style='color:#6a7180'>{' · '.join(parts)}</span>" if parts else ""


def hit_html(hit, snippet: str, from_cluster: bool = False) -> str:
    """'<b>audit.pdf</b> in Reports.zip · p. 3', the passage (``snippet``: HTML, see
    highlighted_snippet), the why line, and 'also at: …' for copies; ``from_cluster`` puts the
    "+ from cluster" mark first."""
    # a file-level result (no chunk) shows the file's opening
    pages = page_span_label(hit.path, hit.page_start, hit.page_end) if hit.chunk_id else "start of the file"
    missing = file_mark(hit)
    container = container_name(hit.path)
    inside = f" <span style='color:#6a7180'>in {html.escape(container)}</span>" if container else ""
    text = (f"{CLUSTER_MARK + ' ' if from_cluster else ''}<b>{html.escape(member_name(hit.path))}</b>{inside}{missing}"
            f" <span style='color:#6a7180'>· {html.escape(pages)}</span>"
            f"<br><span style='color:#3b4150'>{snippet}</span>")
    why = why_html(hit)
    if why:
        text += f"<br>{why}"
    also_at = getattr(hit, "also_at", ())
    if also_at:
        text += f"<br><span style='color:#6a7180'>{html.escape(also_at_text(also_at))}</span>"
    return text


def hit_tooltip(hit, listed: int = 20, from_cluster: bool = False) -> str:
    why = "\n".join(hit_explanation(hit).lines()) if hit.chunk_id else "The opening of the file (no passage matched)"
    text = f"{hit.path}\n{why}\n\n{' '.join(hit.text.split())[:600]}"
    note = file_note(hit)
    if note:
        text = f"{note}\n{text}"
    if from_cluster:
        text = (f"{FROM_CLUSTER}: {EXPANSION_LABEL} added this file — it is usually used together with the top "
                f"results.\n{text}")
    also_at = getattr(hit, "also_at", ())
    if also_at:
        more = f"\n… and {len(also_at) - listed:,} more" if len(also_at) > listed else ""
        text += "\n\nThe same content is also at:\n" + "\n".join(also_at[:listed]) + more
    return text


class HitDelegate(QStyledItemDelegate):
    """Two-part rows: file and page in bold, then the matched passage (a few lines)."""

    PAD = 6

    def _doc(self, option, hit, width: int, from_cluster: bool = False) -> QTextDocument:
        doc = QTextDocument()
        doc.setDefaultFont(option.font)
        doc.setDocumentMargin(0)
        doc.setHtml(hit_html(hit, highlighted_snippet(hit.text, getattr(hit, "matched", ())), from_cluster))
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
        doc = self._doc(option, hit, option.rect.width(), bool(index.data(CLUSTER_ROLE)))
        painter.translate(option.rect.left() + self.PAD, option.rect.top() + self.PAD)
        doc.drawContents(painter, QRectF(0, 0, doc.textWidth(), doc.size().height()))
        painter.restore()

    def sizeHint(self, option, index) -> QSize:
        hit = index.data(HIT_ROLE)
        if hit is None:
            return super().sizeHint(option, index)
        view = self.parent()
        width = view.viewport().width() if isinstance(view, QWidget) else 300
        doc = self._doc(option, hit, width, bool(index.data(CLUSTER_ROLE)))
        return QSize(width, int(doc.size().height()) + 2 * self.PAD)

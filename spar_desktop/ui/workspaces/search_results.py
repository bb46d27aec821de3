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
from PySide6.QtGui import QColor, QFont, QFontMetrics, QTextDocument
from PySide6.QtWidgets import QAbstractItemView, QStyle, QStyledItemDelegate, QWidget

from spar_desktop.core.documents.pages import page_span_label
from spar_desktop.core.relations.expanded_search import EXPANSION_LABEL, FROM_CLUSTER
from spar_desktop.ui.base.child_docs import also_at_text, container_name, member_name
from spar_desktop.ui.base.style import colours

HIT_ROLE = Qt.ItemDataRole.UserRole + 1
CLUSTER_ROLE = Qt.ItemDataRole.UserRole + 2  # True: Cover my session added this file from a cluster
SNIPPET_CHARS = 220
MARK = "<span style='background:#fff3b0'><b>"  # in the light theme; _mark() follows the theme
UNMARK = "</b></span>"
_OPEN, _CLOSE = "\x02", "\x03"  # span markers that survive whitespace folding and truncation
MISSING_MARK = "no longer on disk"
CHANGED_MARK = "changed since the build"


def _mark() -> str:
    return f"<span style='background:{colours()['mark']}'><b>"


def _muted(text: str) -> str:
    return f"<span style='color:{colours()['muted']}'>{text}</span>"


def _cluster_mark() -> str:
    c = colours()
    return f"<span style='background:{c['cluster_bg']}; color:{c['cluster_text']}'>&nbsp;{html.escape(FROM_CLUSTER)}&nbsp;</span>"


def file_mark(hit) -> str:
    """The mark after the file name of a hit whose passage may not be the file's text today."""
    if hit.file_missing:
        return f" <span style='color:{colours()['error']}'>({MISSING_MARK})</span>"
    if getattr(hit, "file_changed", False):
        c = colours()
        return f" <span style='background:{c['warn_bg']}; color:{c['warn_text']}'>&nbsp;{CHANGED_MARK}&nbsp;</span>"
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
    return html.escape(folded).replace(_OPEN, _mark()).replace(_CLOSE, UNMARK)


def hit_explanation(hit):
    """The hit's ScoreExplanation (core/retrieval/explain.py), its matched words taken from its spans."""
    from spar_desktop.core.retrieval.explain import ScoreExplanation

    text = getattr(hit, "text", "")
    words: dict[str, str] = {}
    for a, b in getattr(hit, "matched", ()) or ():
        words.setdefault(text[a:b].lower(), text[a:b])
    return ScoreExplanation(float(hit.score), getattr(hit, "keyword_part", None), getattr(hit, "meaning_part", None),
                            getattr(hit, "alpha", None), getattr(hit, "keyword_unit", "parent"), tuple(words.values()),
                            bool(getattr(hit, "evolved", False)), int(hit.rank),
                            getattr(hit, "rank_without_evolution", None))


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
    return _muted(' · '.join(parts)) if parts else ""


def hit_html(hit, snippet: str, from_cluster: bool = False, why: bool = True, name: str = "") -> str:
    """'<b>audit.pdf</b> in Reports.zip · p. 3', the passage (``snippet``: HTML, see
    highlighted_snippet), the why line (``why``: the list shows it for the selected hit only, on
    demand), and 'also at: …' for copies; ``from_cluster`` puts the "+ from cluster" mark first.
    ``name`` replaces the file name (the delegate passes it elided in the middle to the row's
    width; the row's tooltip has the full path)."""
    # a file-level result (no chunk) shows the file's opening
    pages = page_span_label(hit.path, hit.page_start, hit.page_end) if hit.chunk_id else "start of the file"
    missing = file_mark(hit)
    container = container_name(hit.path)
    inside = " " + _muted(f"in {html.escape(container)}") if container else ""
    title = name or member_name(hit.path)
    doc_title = " ".join((getattr(hit, "title", None) or "").split())
    if doc_title and doc_title.casefold() not in title.casefold():  # the document's own title, when it says more
        title_html = f"<b>{html.escape(doc_title)}</b> {_muted(html.escape(title))}"
    else:
        title_html = f"<b>{html.escape(title)}</b>"
    reranked = getattr(hit, "reranked_by", None)  # conditional reranking (ui/workspaces/rerank_follow.py)
    by = f" {_muted('· reranked by ' + html.escape(reranked))}" if reranked else ""
    text = (f"{_cluster_mark() + ' ' if from_cluster else ''}{title_html}{inside}{missing}"
            f" {_muted('· ' + html.escape(pages))}{by}<br>{snippet}")
    explained = why_html(hit) if why else ""
    if explained:
        text += f"<br>{explained}"
    also_at = getattr(hit, "also_at", ())
    if also_at:
        text += f"<br>{_muted(html.escape(also_at_text(also_at)))}"
    return text


def hit_tooltip(hit, listed: int = 20, from_cluster: bool = False) -> str:
    why = "\n".join(hit_explanation(hit).lines()) if hit.chunk_id else "The opening of the file (no passage matched)"
    text = f"{hit.path}\n{why}\n\n{' '.join(hit.text.split())[:600]}"
    note = file_note(hit)
    if note:
        text = f"{note}\n{text}"
    if getattr(hit, "reranked_by", None):
        text = f"Reranked by {hit.reranked_by} ({hit.rerank_ms:.0f} ms): the search was unsure of its order\n{text}"
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

    def __init__(self, parent=None, snippet_chars: int = SNIPPET_CHARS) -> None:
        super().__init__(parent)
        self.snippet_chars = snippet_chars

    def _doc(self, option, hit, width: int, from_cluster: bool = False, why: bool = False) -> QTextDocument:
        doc = QTextDocument()
        doc.setDefaultFont(option.font)
        doc.setDefaultStyleSheet(f"body {{ color: {colours()['text']}; }}")  # the theme's text colour
        doc.setDocumentMargin(0)
        text_width = max(60, width - 2 * self.PAD)
        bold = QFont(option.font)
        bold.setBold(True)
        # A long name is cut in the middle (its end tells versions and dates apart), never wrapped.
        name = QFontMetrics(bold).elidedText(member_name(hit.path), Qt.TextElideMode.ElideMiddle, int(text_width * 0.7))
        snippet = highlighted_snippet(hit.text, getattr(hit, "matched", ()), self.snippet_chars)
        doc.setHtml(hit_html(hit, snippet, from_cluster, why=why, name=name))
        doc.setTextWidth(text_width)
        return doc

    def _why(self, index) -> bool:
        """The why line is shown on demand: for the selected hit."""
        view = self.parent()
        return isinstance(view, QAbstractItemView) and view.currentIndex() == index

    def paint(self, painter, option, index) -> None:
        hit = index.data(HIT_ROLE)
        if hit is None:
            return super().paint(painter, option, index)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        painter.save()
        painter.setClipRect(option.rect)
        if selected:
            painter.fillRect(option.rect, QColor(colours()["selected_row"]))
        painter.setPen(QColor(colours()["separator"]))
        painter.drawLine(option.rect.bottomLeft(), option.rect.bottomRight())
        doc = self._doc(option, hit, option.rect.width(), bool(index.data(CLUSTER_ROLE)), self._why(index))
        painter.translate(option.rect.left() + self.PAD, option.rect.top() + self.PAD)
        doc.drawContents(painter, QRectF(0, 0, doc.textWidth(), doc.size().height()))
        painter.restore()

    def sizeHint(self, option, index) -> QSize:
        hit = index.data(HIT_ROLE)
        if hit is None:
            return super().sizeHint(option, index)
        view = self.parent()
        width = view.viewport().width() if isinstance(view, QWidget) else 300
        doc = self._doc(option, hit, width, bool(index.data(CLUSTER_ROLE)), self._why(index))
        return QSize(width, int(doc.size().height()) + 2 * self.PAD)

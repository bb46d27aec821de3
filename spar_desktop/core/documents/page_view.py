"""What the document viewer shows of a file, computed off the UI thread: a PDF page rendered to RGB
bytes with the pixel rectangles of a passage on it, or a file's extracted text with the spans
where the passage occurs.

Results are frozen values; a rendered page travels as raw RGB bytes and the UI thread wraps
them in a QImage (QImage/QPixmap objects are not handed across threads). The signatures take
(progress, cancel) last, as the UI's TaskRunner calls them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from spar_desktop.core.documents.budget import ExtractionBudget
from spar_desktop.core.documents.extract import extract
from spar_desktop.core.pdf_lock import PYMUPDF_LOCK
from spar_desktop.core.progress import CancelToken, ProgressCallback, check

MAX_TEXT_CHARS = 2_000_000  # a QPlainTextEdit with more is sluggish; the rest is summarised
MAX_HITS = 500
FRAGMENT_CHARS = 60


@dataclass(frozen=True)
class RenderedPage:
    path: str
    page: int  # 1-based
    page_count: int
    width: int
    height: int
    stride: int
    samples: bytes  # RGB888
    zoom: float
    highlights: tuple[tuple[float, float, float, float], ...]  # pixel rects x0, y0, x1, y1
    title: Optional[str]


@dataclass(frozen=True)
class TextDocument:
    path: str
    text: str
    page_offsets: tuple[int, ...]  # char offset where each page starts
    hits: tuple[tuple[int, int], ...]  # (start, end) of highlight matches
    truncated: bool
    message: Optional[str]  # why there is no text (image, unsupported...), else None
    format: str


def fragments(passage: str) -> list[str]:
    """Pieces of a passage to search for: PDF text rarely matches a long passage verbatim
    (line breaks, hyphenation), so sentences/word runs are searched separately."""
    text = " ".join(passage.split())
    if len(text) <= FRAGMENT_CHARS * 2:
        return [text] if text else []
    out: list[str] = []
    for sentence in re.split(r"(?<=[.!?;:])\s+", text):
        words = sentence.split()
        while words:
            piece: list[str] = []
            while words and len(" ".join(piece + [words[0]])) <= FRAGMENT_CHARS:
                piece.append(words.pop(0))
            if not piece:
                piece.append(words.pop(0))
            if len(" ".join(piece)) >= 12 or not out:
                out.append(" ".join(piece))
    return out


def render_pdf_page(path: str, page: int, target_width: Optional[int], zoom: float, highlight: Optional[str],
                    progress: ProgressCallback, cancel: CancelToken) -> RenderedPage:
    """Render 1-based ``page`` at ``zoom`` (or fitted to ``target_width`` pixels)."""
    import pymupdf  # heavy: loaded with the first page shown

    with PYMUPDF_LOCK:  # PyMuPDF is not thread-safe: extraction and scans use it too
        check(cancel)
        with pymupdf.open(path) as doc:
            count = doc.page_count
            if count == 0:
                raise ValueError("the PDF has no pages")
            page = max(1, min(page, count))
            pg = doc[page - 1]
            if target_width:
                zoom = max(0.2, min(6.0, target_width / max(1.0, pg.rect.width)))
            rects = []
            if highlight and highlight.strip():
                for fragment in fragments(highlight):
                    rects.extend(pg.search_for(fragment))
                    if len(rects) >= MAX_HITS:
                        break
            check(cancel)
            pix = pg.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), alpha=False)
            title = (doc.metadata or {}).get("title") or None
            return RenderedPage(path, page, count, pix.width, pix.height, pix.stride, bytes(pix.samples), zoom,
                                tuple((r.x0 * zoom, r.y0 * zoom, r.x1 * zoom, r.y1 * zoom) for r in rects[:MAX_HITS]),
                                title)


def load_text(path: str, highlight: Optional[str], progress: ProgressCallback, cancel: CancelToken,
              budget: Optional[ExtractionBudget] = None) -> TextDocument:
    """Extracted text of any supported file (a child document's virtual path too), plus where
    ``highlight`` occurs in it."""
    doc = extract(path, budget=budget)  # ExtractionError propagates: the viewer shows its message
    text, offsets, fmt, message = doc.text, doc.page_offsets, doc.format, doc.no_text_reason
    check(cancel)
    truncated = len(text) > MAX_TEXT_CHARS
    text = text[:MAX_TEXT_CHARS]
    hits: list[tuple[int, int]] = []
    if highlight and highlight.strip() and text:
        hits = find_spans(text, highlight)
    return TextDocument(path, text, tuple(offsets), tuple(hits), truncated, message, fmt)


def find_spans(text: str, passage: str) -> list[tuple[int, int]]:
    """Whitespace-insensitive, case-insensitive matches of the passage (or its fragments)."""
    spans: list[tuple[int, int]] = []
    for fragment in fragments(passage):
        words = [re.escape(w) for w in fragment.split()]
        if not words:
            continue
        pattern = re.compile(r"\s+".join(words), re.IGNORECASE)
        for m in pattern.finditer(text):
            spans.append((m.start(), m.end()))
            if len(spans) >= MAX_HITS:
                return sorted(spans)
    return sorted(set(spans))

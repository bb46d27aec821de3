"""Background ops for the document viewer (no Qt): PDF page rendering and text loading.

Results are frozen values; a rendered page travels as raw RGB bytes and the UI thread wraps
them in a QImage (QImage/QPixmap objects are not handed across threads).
"""

from __future__ import annotations

import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from spar_desktop.core.documents.budget import ExtractionBudget
from spar_desktop.core.pdf_lock import PYMUPDF_LOCK
from spar_desktop.core.progress import CancelToken, ProgressCallback, check

# pymupdf is not thread-safe: the viewer's renders are serialised. (The core scanner's PDF
# probe does not take this lock yet; see the UI report for the core change that would.)
PDF_LOCK = PYMUPDF_LOCK  # the core's lock: extraction and scans use PyMuPDF from other threads
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


def _fragments(passage: str) -> list[str]:
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
    import pymupdf

    with PDF_LOCK:
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
                for fragment in _fragments(highlight):
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
    try:
        from spar_desktop.core.documents.extract import extract
    except ImportError:  # the extraction layer is optional for the viewer: fall back to raw text
        extract = None
    if extract is not None:
        doc = extract(path, budget=budget)  # ExtractionError propagates: the viewer shows its message
        text, offsets, fmt = doc.text, doc.page_offsets, doc.format
        message = doc.no_text_reason
    else:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
        offsets, fmt, message = (0,), Path(path).suffix.lstrip(".") or "txt", None
    check(cancel)
    truncated = len(text) > MAX_TEXT_CHARS
    text = text[:MAX_TEXT_CHARS]
    hits: list[tuple[int, int]] = []
    if highlight and highlight.strip() and text:
        hits = _find_spans(text, highlight)
    return TextDocument(path, text, tuple(offsets), tuple(hits), truncated, message, fmt)


def _find_spans(text: str, passage: str) -> list[tuple[int, int]]:
    """Whitespace-insensitive, case-insensitive matches of the passage (or its fragments)."""
    spans: list[tuple[int, int]] = []
    for fragment in _fragments(passage):
        words = [re.escape(w) for w in fragment.split()]
        if not words:
            continue
        pattern = re.compile(r"\s+".join(words), re.IGNORECASE)
        for m in pattern.finditer(text):
            spans.append((m.start(), m.end()))
            if len(spans) >= MAX_HITS:
                return sorted(spans)
    return sorted(set(spans))


# ---------------------------------------------------------------------------- child documents
@dataclass(frozen=True)
class MemberCopy:
    """A child document's bytes in a private folder the viewer owns while it shows it."""

    virtual_path: str
    real_path: str
    folder: str  # removed (with the file) by remove_member_copy


def new_scratch_root() -> str:
    """The viewer's private temp folder (mode 0700 in the system temp dir, never the user's)."""
    return tempfile.mkdtemp(prefix="spar-viewer-")


def copy_member(path: str, root: str, budget: Optional[ExtractionBudget],
                progress: ProgressCallback, cancel: CancelToken) -> MemberCopy:
    """Copy the child document ``path`` out of its container(s) into a new folder under ``root``."""
    from spar_desktop.core.documents.materialize import materialize_into
    from spar_desktop.core.documents.virtual import is_virtual

    if not is_virtual(path):
        raise ValueError(f"{path} is not inside an archive or a mail")
    folder = tempfile.mkdtemp(prefix="doc-", dir=root)
    try:
        target = str(materialize_into(path, Path(folder), budget))
        check(cancel)  # superseded by another document: nobody will show this copy
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return MemberCopy(path, target, folder)


def remove_member_copy(folder: str, progress: ProgressCallback, cancel: CancelToken) -> None:
    """Delete a copy no longer shown; under the PDF lock so no render still reads it (Windows
    cannot delete an open file)."""
    with PDF_LOCK:
        shutil.rmtree(folder, ignore_errors=True)


def remove_scratch_root(root: str) -> None:
    shutil.rmtree(root, ignore_errors=True)

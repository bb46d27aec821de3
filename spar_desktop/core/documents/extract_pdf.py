"""PDF text extraction with pymupdf, one PageText per page so every chunk keeps its page span."""

from __future__ import annotations

import re
from pathlib import Path

from spar_desktop.core.documents.errors import ExtractionError
from spar_desktop.core.documents.types import ExtractedDocument, PageText
from spar_desktop.core.pdf_lock import PYMUPDF_LOCK

NO_TEXT_LAYER = "no text layer (scanned?)"
_SPACES_RE = re.compile(r"[ \t\u00a0]+")


def pdf_problem(exc: BaseException) -> str:
    """MuPDF's complaint about a broken PDF in words for people ('code=7: Invalid number of pages')."""
    detail = re.sub(r"^code=\d+:\s*", "", str(exc)).strip()
    if "number of pages" in detail.lower():
        return "its page list is damaged (it claims an impossible number of pages)"
    if not detail or len(detail) > 200:
        return "its structure is damaged and cannot be read"
    return detail[0].lower() + detail[1:]


def extract_pdf(path: Path, max_chars: int) -> ExtractedDocument:
    with PYMUPDF_LOCK:
        return _extract_pdf(path, max_chars)


def _extract_pdf(path: Path, max_chars: int) -> ExtractedDocument:
    import pymupdf  # heavy native module: only loaded when a PDF is actually read

    try:
        doc = pymupdf.open(path, filetype="pdf")
    except Exception as exc:  # pymupdf raises FileDataError, RuntimeError, ValueError...
        raise ExtractionError(f"corrupt PDF: {exc}") from exc
    with doc:
        if doc.needs_pass:
            # Opening with an empty user password failed: a real password is required. PDFs
            # encrypted with only an owner password (print/copy restrictions) open fine.
            raise ExtractionError("PDF is password-protected")
        try:
            # MuPDF counts pages lazily: a page tree claiming 99,999,999 pages raises only here.
            page_count = doc.page_count
            title = ((doc.metadata or {}).get("title") or "").strip() or None
        except Exception as exc:  # noqa: BLE001 - RuntimeError('code=7: Invalid number of pages')...
            raise ExtractionError(f"corrupt PDF: {pdf_problem(exc)}") from exc
        warnings: list[str] = []
        if getattr(doc, "is_repaired", False) and page_count:
            warnings.append("PDF was damaged and has been repaired; text may be incomplete")
        if page_count == 0:
            return ExtractedDocument((), "pdf", title, tuple(warnings), "PDF has no pages")
        pages, empty = _read_pages(doc, page_count, max_chars, warnings)
    if not pages:
        return ExtractedDocument((), "pdf", title, tuple(warnings), NO_TEXT_LAYER)
    if empty:
        shown = ", ".join(str(n) for n in empty[:20]) + (", ..." if len(empty) > 20 else "")
        warnings.append(f"{len(empty)} page(s) have no text layer (scanned?): {shown}")
    return ExtractedDocument(tuple(pages), "pdf", title, tuple(warnings))


def _read_pages(doc, page_count: int, max_chars: int, warnings: list[str]) -> tuple[list[PageText], list[int]]:
    """Non-empty pages (1-based numbers kept) and the numbers of pages without text."""
    import pymupdf  # heavy native module: see extract_pdf

    # Ligatures expanded ("ﬁ" -> "fi") so words match queries; hyphenated line ends rejoined.
    flags = (pymupdf.TEXTFLAGS_BLOCKS & ~pymupdf.TEXT_PRESERVE_LIGATURES) | pymupdf.TEXT_DEHYPHENATE
    pages: list[PageText] = []
    empty: list[int] = []
    total = 0
    for i in range(page_count):
        number = i + 1
        try:
            blocks = doc.load_page(i).get_text("blocks", flags=flags)
        except Exception as exc:  # one broken page must not lose the whole document
            warnings.append(f"page {number}: text could not be read ({exc})")
            continue
        text = _page_text(blocks)
        if not text:
            empty.append(number)
            continue
        if total + len(text) > max_chars:
            text = text[: max(0, max_chars - total)].rstrip()
            warnings.append(
                f"text truncated at {max_chars:,} characters (page {number} of {page_count})"
            )
            if text:
                pages.append(PageText(number, text))
            break
        pages.append(PageText(number, text))
        total += len(text) + 2
    return pages, empty


def _page_text(blocks: list) -> str:
    """Text blocks (roughly paragraphs) separated by blank lines; image blocks dropped.

    Blank lines between blocks give the chunker paragraph boundaries; lines inside a block stay
    single newlines because they are mostly soft wraps, not sentence ends.
    """
    paras = []
    for block in blocks:
        if len(block) > 6 and block[6] != 0:
            continue  # image block
        lines = (_SPACES_RE.sub(" ", ln).strip() for ln in block[4].replace("\x00", "").splitlines())
        para = "\n".join(ln for ln in lines if ln)
        if para:
            paras.append(para)
    return "\n\n".join(paras)

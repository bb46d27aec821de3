"""``extract(path)``: any supported file to an ExtractedDocument (format detection: formats.py).

Callers need to handle exactly two outcomes: an ExtractedDocument (possibly with
``no_text_reason`` for images, scans, unsupported or empty files) or an ExtractionError with a
message fit to show a person. Per-format readers live in ``extract_*`` modules and import their
heavy libraries lazily, so importing this module is cheap.
"""

from __future__ import annotations

import importlib
import logging
from dataclasses import replace
from pathlib import Path
from typing import Callable, Optional, Union

from spar_desktop.core.documents import extract_structured as st
from spar_desktop.core.documents.budget import ExtractionBudget
from spar_desktop.core.documents.errors import ExtractionError
from spar_desktop.core.documents.extract_office import extract_docx
from spar_desktop.core.documents.extract_pdf import extract_pdf
from spar_desktop.core.documents.extract_text import extract_html, extract_md, extract_txt
from spar_desktop.core.documents.formats import FORMATS, detect_format, normalise_format
from spar_desktop.core.documents.materialize import materialized
from spar_desktop.core.documents.types import ExtractedDocument, PageText, storable_text
from spar_desktop.core.documents.virtual import is_virtual

log = logging.getLogger(__name__)

__all__ = ["extract", "extract_text_string", "detect_format", "ExtractionError", "FORMATS"]

# Formats read by ``reader(path, budget)``; the older readers take ``(path, max_chars)``.
# "module:function" names, imported on first use: each reader pulls in its own library.
_BUDGETED_READERS = {
    "xlsx": "extract_sheets:extract_xlsx", "xls": "extract_sheets:extract_xls", "ods": "extract_sheets:extract_ods",
    "pptx": "extract_legacy:extract_pptx_file", "odp": "extract_slides:extract_odp",
    "odt": "extract_wordproc:extract_odt", "rtf": "extract_wordproc:extract_rtf",
    "doc": "extract_legacy:extract_doc", "ppt": "extract_legacy:extract_ppt",
    "eml": "extract_mail:extract_eml", "mbox": "extract_mail:extract_mbox", "msg": "extract_mail:extract_msg",
    "zip": "containers:extract_zip_listing",
    "docx": "extract_office:extract_docx", "html": "extract_text:extract_html",
    "csv": "extract_structured:extract_csv_file", "tsv": "extract_structured:extract_tsv_file",
}



def extract(path: Union[str, Path], format: Optional[str] = None,
            max_chars: Optional[int] = None, budget: Optional[ExtractionBudget] = None) -> ExtractedDocument:
    """Extract the text of ``path``; ``format`` overrides detection (see FORMATS).

    Raises ExtractionError for files that exist but can't be read as their format (corrupt,
    password-protected, unreadable, over the ``budget``). At most ``max_chars`` characters (else
    the budget's) are kept, with a warning. A member of an archive or a mail attachment is named
    by its virtual path (``Reports.zip!/2019/audit.pdf``): it is read from its container into a
    private temporary file, never into the user's folders.
    """
    budget = budget or ExtractionBudget()
    if max_chars is not None:
        budget = replace(budget, max_chars=max_chars)
    if is_virtual(str(path)) and not Path(path).exists():
        with materialized(str(path), budget) as real:
            fmt = normalise_format(format) or detect_format(real, name=str(path))
            return extract(real, fmt, budget=budget)
    path = Path(path)
    try:
        if not path.is_file():
            raise ExtractionError(f"not a readable file: {path}")
        fmt = normalise_format(format) or detect_format(path)
        if fmt in _BUDGETED_READERS:
            return _storable(_budgeted_reader(fmt)(path, budget))
        reader = _READERS.get(fmt)
        if reader is None:
            return _no_text(fmt, path)
        return _storable(reader(path, budget.max_chars))
    except ExtractionError:
        raise
    except PermissionError as exc:
        raise ExtractionError(f"permission denied: {path.name}") from exc
    except OSError as exc:
        raise ExtractionError(f"cannot read file: {exc.strerror or exc}") from exc
    except MemoryError as exc:
        raise ExtractionError("file too large to extract in memory") from exc
    except Exception as exc:  # library bugs on odd files must not stop a whole folder's scan
        log.warning("extraction failed for %s", path, exc_info=True)
        raise ExtractionError(f"could not extract text: {type(exc).__name__}: {exc}") from exc


def _storable(doc: ExtractedDocument) -> ExtractedDocument:
    """A lone surrogate in extracted text failed the cache, the vector store and the tokenizer,
    and with them a whole build: see storable_text."""
    pages = tuple(PageText(p.page, storable_text(p.text)) for p in doc.pages)
    title = storable_text(doc.title) if doc.title else doc.title
    if pages == doc.pages and title == doc.title:
        return doc
    return replace(doc, pages=pages, title=title)


def extract_text_string(text: str, title: Optional[str] = None,
                        format: str = "txt") -> ExtractedDocument:
    """An in-memory document (e.g. a BEIR corpus entry): the title, a blank line, the text.

    The title is part of the text so it is chunked and searched like the body, as BEIR
    evaluations expect.
    """
    title = (title or "").strip() or None
    body = "\n\n".join(p for p in (title, (text or "").strip()) if p)
    if not body:
        return ExtractedDocument((), format, title, (), "empty document")
    return ExtractedDocument((PageText(1, body),), format, title)


def _budgeted_reader(fmt: str) -> Callable[[Path, ExtractionBudget], ExtractedDocument]:
    module, _, function = _BUDGETED_READERS[fmt].partition(":")
    return getattr(importlib.import_module(f"spar_desktop.core.documents.{module}"), function)


def _no_text(fmt: str, path: Path) -> ExtractedDocument:
    if fmt == "image":
        reason = "image file: its text is read by OCR when a workspace needs it"
    elif fmt == "binary":
        reason = f"unsupported binary file ({path.suffix or 'no extension'})"
    else:
        reason = f"unsupported format: {fmt}"
    return ExtractedDocument((), fmt if fmt in FORMATS else "binary", None, (), reason)


# Formats read by ``reader(path, max_chars)``: small readers whose libraries load on first use.
_READERS: dict[str, Callable[[Path, int], ExtractedDocument]] = {
    "pdf": extract_pdf, "docx": extract_docx, "md": extract_md, "txt": extract_txt,
    "html": extract_html, "json": st.extract_json, "jsonl": st.extract_jsonl,
    "csv": lambda p, m: st.extract_csv(p, "csv", m),
    "tsv": lambda p, m: st.extract_csv(p, "tsv", m),
}

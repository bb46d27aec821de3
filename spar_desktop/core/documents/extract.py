"""``extract(path)``: any supported file to an ExtractedDocument; format detection lives here.

Callers need to handle exactly two outcomes: an ExtractedDocument (possibly with
``no_text_reason`` for images, scans, unsupported or empty files) or an ExtractionError with a
message fit to show a person. Per-format readers live in ``extract_*`` modules and import their
heavy libraries lazily, so importing this module is cheap.
"""

from __future__ import annotations

import logging
import zipfile
from dataclasses import replace
from pathlib import Path
from typing import Callable, Optional, Union

from spar_desktop.core.documents.budget import DEFAULT_MAX_CHARS, ExtractionBudget  # noqa: F401 - its old home
from spar_desktop.core.documents.errors import ExtractionError
from spar_desktop.core.documents.types import ExtractedDocument, PageText, storable_text

log = logging.getLogger(__name__)

__all__ = ["extract", "extract_text_string", "detect_format", "ExtractionError", "FORMATS"]

FORMATS = ("pdf", "docx", "md", "txt", "html", "csv", "tsv", "json", "jsonl", "xlsx", "xls", "ods",
           "pptx", "odp", "odt", "rtf", "doc", "ppt", "eml", "mbox", "msg", "zip", "image", "binary")

_EXTENSIONS = {
    ".pdf": "pdf", ".docx": "docx", ".docm": "docx", ".md": "md", ".markdown": "md",
    ".txt": "txt", ".text": "txt", ".log": "txt", ".rst": "txt", ".xml": "txt",
    ".html": "html", ".htm": "html", ".xhtml": "html", ".csv": "csv", ".tsv": "tsv",
    ".tab": "tsv", ".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl",
    ".xlsx": "xlsx", ".xlsm": "xlsx", ".xls": "xls", ".ods": "ods", ".pptx": "pptx", ".pptm": "pptx",
    ".odp": "odp", ".odt": "odt", ".rtf": "rtf", ".doc": "doc", ".ppt": "ppt",
    ".eml": "eml", ".mbox": "mbox", ".mbx": "mbox", ".msg": "msg", ".zip": "zip",
    ".png": "image", ".jpg": "image", ".jpeg": "image", ".gif": "image", ".bmp": "image",
    ".tif": "image", ".tiff": "image", ".webp": "image", ".heic": "image", ".svg": "image",
}
# Names other parts of the app use for formats (library probe, user input) -> ours.
_ALIASES = {"markdown": "md", "text": "txt", "htm": "html", "ndjson": "jsonl", "xml": "txt",
            "email": "eml", "archive": "zip", "xlsm": "xlsx", "jpg": "image", "png": "image", "other": ""}
# Formats read by ``reader(path, budget)``; the older readers take ``(path, max_chars)``.
# "module:function" names, imported on first use: each reader pulls in its own library.
_BUDGETED_READERS = {
    "xlsx": "extract_sheets:extract_xlsx", "xls": "extract_sheets:extract_xls", "ods": "extract_sheets:extract_ods",
    "pptx": "extract_slides:extract_pptx", "odp": "extract_slides:extract_odp",
    "odt": "extract_wordproc:extract_odt", "rtf": "extract_wordproc:extract_rtf",
    "doc": "extract_legacy:extract_doc", "ppt": "extract_legacy:extract_ppt",
    "eml": "extract_mail:extract_eml", "mbox": "extract_mail:extract_mbox", "msg": "extract_mail:extract_msg",
    "zip": "containers:extract_zip_listing",
    "docx": "extract_office:extract_docx", "html": "extract_text:extract_html",
    "csv": "extract_structured:extract_csv_file", "tsv": "extract_structured:extract_tsv_file",
}
_IMAGE_MAGIC = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a", b"II*\x00",
                b"MM\x00*")
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_HEAD_BYTES = 8192


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
    from spar_desktop.core.documents.virtual import is_virtual, materialized

    if is_virtual(str(path)) and not Path(path).exists():
        with materialized(str(path), budget) as real:
            fmt = _normalise(format) or detect_format(real, name=str(path))
            return extract(real, fmt, budget=budget)
    path = Path(path)
    try:
        if not path.is_file():
            raise ExtractionError(f"not a readable file: {path}")
        fmt = _normalise(format) or detect_format(path)
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


def detect_format(path: Path, name: Optional[str] = None) -> str:
    """Format from strong magic bytes first (a '.txt' that is really a PDF), then the
    extension (of ``name`` when given: a temporary copy of an archive member), then a look at
    the content."""
    suffix = Path(name or path).suffix.lower()
    with open(path, "rb") as f:
        head = f.read(_HEAD_BYTES)
    if head.startswith(b"%PDF") or b"%PDF-" in head[:1024]:
        return "pdf"
    if head.startswith(_IMAGE_MAGIC) or (head[:4] == b"RIFF" and head[8:12] == b"WEBP"):
        return "image"
    if head.startswith(b"PK\x03\x04"):
        return _zip_kind(path, _EXTENSIONS.get(suffix))
    if head.startswith(_OLE_MAGIC):
        return _EXTENSIONS.get(suffix, "binary")  # .docx here = encrypted DOCX
    by_ext = _EXTENSIONS.get(suffix)
    if by_ext:
        return by_ext
    return _sniff_content(head)


def _sniff_content(head: bytes) -> str:
    if not head:
        return "txt"
    if _looks_binary(head):
        return "binary"
    lead = head.lstrip(b"\xef\xbb\xbf \t\r\n")[:512].lower()
    if lead.startswith((b"<!doctype html", b"<html")) or b"<html" in lead:
        return "html"
    if lead.startswith((b"{", b"[")):
        return "json"
    return "txt"


def _looks_binary(head: bytes) -> bool:
    if head.startswith((b"\xff\xfe", b"\xfe\xff", b"\xef\xbb\xbf")):
        return False  # BOM: text even with NUL bytes (UTF-16)
    if b"\x00" in head:
        return True
    control = sum(1 for b in head if b < 9 or 13 < b < 32)
    return control / len(head) > 0.10


_OOXML_PARTS = (("word/document.xml", "docx"), ("xl/workbook.xml", "xlsx"), ("ppt/presentation.xml", "pptx"))
_ODF_KINDS = {"application/vnd.oasis.opendocument.text": "odt",
              "application/vnd.oasis.opendocument.spreadsheet": "ods",
              "application/vnd.oasis.opendocument.presentation": "odp"}


def _zip_kind(path: Path, by_ext: Optional[str]) -> str:
    """Which zip-based format a zip is (its parts say so, whatever its name); a plain zip is an
    archive of documents."""
    try:
        with zipfile.ZipFile(path) as zf:
            names = set(zf.namelist())
            for part, kind in _OOXML_PARTS:
                if part in names:
                    return kind
            if "mimetype" in names:
                info = zf.getinfo("mimetype")
                if info.file_size < 200:
                    kind = _ODF_KINDS.get(zf.read(info).decode("ascii", "replace").strip())
                    if kind:
                        return kind
    except (zipfile.BadZipFile, OSError, RuntimeError, ValueError):
        return by_ext or "binary"
    return by_ext if by_ext in ("docx", "xlsx", "pptx", "odt", "ods", "odp") else "zip"


def _normalise(fmt: Optional[str]) -> str:
    if not fmt:
        return ""
    fmt = fmt.strip().lower().lstrip(".")
    return _ALIASES.get(fmt, fmt)


def _budgeted_reader(fmt: str) -> Callable[[Path, ExtractionBudget], ExtractedDocument]:
    import importlib

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


def _reader_table() -> dict[str, Callable[[Path, int], ExtractedDocument]]:
    # Imported here, not at module top, only to keep the table next to the names it maps;
    # these modules themselves import their heavy libraries lazily.
    from spar_desktop.core.documents import extract_structured as st
    from spar_desktop.core.documents.extract_office import extract_docx
    from spar_desktop.core.documents.extract_pdf import extract_pdf
    from spar_desktop.core.documents.extract_text import extract_html, extract_md, extract_txt

    return {
        "pdf": extract_pdf, "docx": extract_docx, "md": extract_md, "txt": extract_txt,
        "html": extract_html, "json": st.extract_json, "jsonl": st.extract_jsonl,
        "csv": lambda p, m: st.extract_csv(p, "csv", m),
        "tsv": lambda p, m: st.extract_csv(p, "tsv", m),
    }


_READERS = _reader_table()

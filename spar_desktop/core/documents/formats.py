"""Which format a file is: strong magic bytes first (a '.txt' that is really a PDF), then the
extension, then a look at the content. Below ``extract`` (which reads by format) and
``containers`` (which must tell a nested archive from a document), so neither imports the other.
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Optional

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
_IMAGE_MAGIC = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a", b"II*\x00",
                b"MM\x00*")
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_HEAD_BYTES = 8192


def normalise_format(fmt: Optional[str]) -> str:
    """A format name as other parts of the app and users write it → ours ('' for none)."""
    if not fmt:
        return ""
    fmt = fmt.strip().lower().lstrip(".")
    return _ALIASES.get(fmt, fmt)


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

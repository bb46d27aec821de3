"""Cheap per-file facts for the scan: format (extension + magic bytes), content hash, and the
document metadata that is cheap to read (PDF/DOCX title, author, pages, creation date).

Everything here reads through one open file descriptor and reports the size/mtime of *that*
descriptor, so a file replaced between listing and reading is described consistently.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat as stat_mod
from datetime import datetime
from typing import Optional

from spar_desktop.core.documents.extract_pdf import pdf_problem
from spar_desktop.core.library.doc_metadata import KIND_NAMES, mail_metadata, office_metadata
from spar_desktop.core.library.models import FileStatus
from spar_desktop.core.library.probe_result import ProbeResult
from spar_desktop.core.pdf_lock import PYMUPDF_LOCK

# The content hash is a document's identity in the embedding cache, so every file we extract
# text from is hashed whole (BLAKE2b streamed in 1 MiB blocks: ~1 GB/s, bounded memory); two
# different files must never become one document. Files we never read as text (video, disk
# images, binaries) above 32 MB get a sampled fingerprint (size + three 1 MiB samples, prefix
# "b2s:") so that a share of large media still scans in seconds; such a fingerprint only ever
# tells the scanner "changed" (after size or mtime already did), never which document a file is.
# A row whose format became readable while it still has a sampled hash is re-probed by the
# scanner, and the builder refuses to embed under a sampled hash.
SAMPLE_ABOVE = 32 * 1024 * 1024
SAMPLE_BYTES = 1024 * 1024
HASH_BLOCK = 1024 * 1024
SAMPLED_HASH_PREFIX = "b2s:"
SNIFF_BYTES = 8192
READ_ONCE = 64 * 1024  # first read of a file: sniffs the format and, up to this size, is all we hash

EXTENSION_FORMATS = {
    ".pdf": "pdf", ".docx": "docx", ".docm": "docx", ".md": "md", ".markdown": "md", ".txt": "txt",
    ".text": "txt", ".log": "txt", ".rst": "txt", ".html": "html", ".htm": "html", ".csv": "csv", ".tsv": "tsv",
    ".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl", ".xml": "txt", ".eml": "eml", ".mbox": "mbox",
    ".mbx": "mbox", ".msg": "msg", ".xlsx": "xlsx", ".xlsm": "xlsx", ".xls": "xls", ".ods": "ods",
    ".pptx": "pptx", ".pptm": "pptx", ".odp": "odp", ".odt": "odt", ".rtf": "rtf", ".ppt": "ppt", ".doc": "doc",
    ".png": "image", ".jpg": "image", ".jpeg": "image", ".gif": "image", ".tif": "image",
    ".tiff": "image", ".bmp": "image", ".webp": "image", ".zip": "zip", ".gz": "archive", ".7z": "archive",
    ".rar": "archive", ".tar": "archive",
}
TEXT_FORMATS = {"txt", "md", "html", "csv", "tsv", "json", "jsonl", "eml", "mbox"}
ZIP_FORMATS = {"docx", "xlsx", "pptx", "odt", "ods", "odp", "zip"}  # zip containers by their name
OLE_FORMATS = {"doc", "xls", "ppt", "msg"}  # legacy Office and Outlook files are OLE containers
# Formats we read text from; an image is read by OCR when a workspace build needs it.
READABLE_FORMATS = TEXT_FORMATS | ZIP_FORMATS | OLE_FORMATS | {"pdf", "rtf", "image"}
# Files whose members/attachments are child documents of their own (core/documents/containers.py).
CONTAINER_FORMATS = {"zip", "eml", "msg", "mbox"}

MAGIC = [
    (b"%PDF-", "pdf"),
    (b"\x89PNG\r\n\x1a\n", "image"),
    (b"\xff\xd8\xff", "image"),
    (b"GIF87a", "image"),
    (b"GIF89a", "image"),
    (b"II*\x00", "image"),
    (b"MM\x00*", "image"),
    (b"\x1f\x8b", "archive"),
    (b"7z\xbc\xaf\x27\x1c", "archive"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "ole"),  # legacy .doc/.xls/.msg
]
OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"


_MAGIC_BY_FIRST_BYTE: dict[bytes, list[tuple[bytes, str]]] = {}
for _magic, _fmt in MAGIC:
    _MAGIC_BY_FIRST_BYTE.setdefault(_magic[:1], []).append((_magic, _fmt))


# SQLite INTEGER and PostgreSQL BIGINT hold 64 bits; a clock set to the year 2400 gives an mtime
# in nanoseconds beyond that, which the database refuses (the whole batch with it).
_INT64_MAX = 2**63 - 1


def storable_mtime_ns(ns: int) -> int:
    """An mtime as the index stores it: clamped to 64 bits. Compare a stat's ``st_mtime_ns`` with a
    stored ``mtime_ns`` through this, or a file dated after 2262 looks changed on every scan."""
    return ns if -_INT64_MAX <= ns <= _INT64_MAX else max(-_INT64_MAX, min(ns, _INT64_MAX))


def mtime_datetime(ns: int) -> Optional[datetime]:
    """The local modification time of an mtime, or None when the platform cannot represent it
    (before 1970 on Windows, after the year 9999 anywhere): a date we cannot show is no date."""
    if ns <= 0:
        return None
    try:
        return datetime.fromtimestamp(ns / 1e9)
    except (OverflowError, OSError, ValueError):
        return None


_SPECIAL_KINDS = ((stat_mod.S_ISFIFO, "a named pipe"), (stat_mod.S_ISSOCK, "a socket"),
                  (stat_mod.S_ISCHR, "a character device"), (stat_mod.S_ISBLK, "a block device"))


def special_kind(mode: int) -> str:
    """'a named pipe', 'a socket', ... for the st_mode of something that is not a file or folder."""
    return next((name for test, name in _SPECIAL_KINDS if test(mode)), "a special file")


def special_file_message(mode: int) -> str:
    """What the user reads about a FIFO, socket or device found in an indexed folder."""
    return f"not a regular file ({special_kind(mode)}): skipped"


class NotRegularFile(OSError):
    """The path turned out to be a named pipe, socket or device: not a document (str: the message)."""


def format_from_name(name: str) -> str:
    """Format by extension (as os.path.splitext sees it: '.pdf' alone is a hidden name, not a PDF)."""
    i = name.rfind(".")
    if i <= 0:
        return "other"
    fmt = EXTENSION_FORMATS.get(name[i:].lower())
    if fmt is None:
        return "other"
    start = max(name.rfind("/"), name.rfind(os.sep)) + 1
    return fmt if name[start:i].strip(".") else "other"


_TEXT_BYTES = bytes([9, 10, 11, 12, 13, 27]) + bytes(range(32, 256))


def _looks_binary(head: bytes) -> bool:
    if not head:
        return False
    if head.startswith((b"\xff\xfe", b"\xfe\xff", b"\xef\xbb\xbf")):
        return False  # UTF-16/UTF-8 BOM: text even with NUL bytes
    if b"\x00" in head:
        return True
    control = len(head.translate(None, _TEXT_BYTES))  # C-speed count of control bytes
    return control / len(head) > 0.10


FORMAT_NAMES = {"pdf": "a PDF document", "image": "an image", "archive": "a compressed archive",
                "ole": "a legacy Office file", "binary": "binary data"}


def sniff_format(name: str, head: bytes) -> tuple[str, Optional[str]]:
    """Return (format, problem) from the name and the first bytes; problem explains a mismatch."""
    by_name = format_from_name(name)
    for magic, fmt in _MAGIC_BY_FIRST_BYTE.get(head[:1], ()):
        if head.startswith(magic):
            if fmt == "ole":
                # An OOXML name on an OLE container: Office stores password-protected files so.
                return (by_name if by_name in OLE_FORMATS or by_name in ("docx", "xlsx", "pptx") else "ole"), None
            if by_name in TEXT_FORMATS or by_name in ZIP_FORMATS:
                return fmt, f"named .{name.rsplit('.', 1)[-1]} but the content is {FORMAT_NAMES.get(fmt, fmt)}"
            return fmt, None
    if head.startswith(b"PK\x03\x04"):
        if by_name in ZIP_FORMATS:
            return by_name, None
        return "zip", None if by_name not in TEXT_FORMATS else "named as text but the content is a zip archive"
    if by_name in TEXT_FORMATS or by_name == "other":
        if _looks_binary(head):
            if by_name == "other":
                return "binary", None
            return "binary", f"named .{name.rsplit('.', 1)[-1]} but the content is binary, not text"
        if by_name == "other":
            low = head[:512].lstrip().lower()
            if low.startswith((b"<!doctype html", b"<html")):
                return "html", None
            return ("txt", None) if head else ("other", None)
    if by_name == "pdf" and head:
        return "pdf", "named .pdf but does not start with a PDF header (corrupt or not a PDF)"
    return by_name, None


def hashed_in_full(fmt: str, size: int) -> bool:
    return size <= SAMPLE_ABOVE or fmt in READABLE_FORMATS


def _hash_rest(fd: int, head: bytes) -> str:
    """Full-content BLAKE2b of a file whose first bytes ``head`` were just read from ``fd``."""
    h = hashlib.blake2b(head, digest_size=20)
    while block := os.read(fd, HASH_BLOCK):
        h.update(block)
    return "b2:" + h.hexdigest()


def _sampled_hash_fd(fd: int, size: int) -> str:
    h = hashlib.blake2b(digest_size=20)
    h.update(str(size).encode())
    for offset in (0, size // 2, max(0, size - SAMPLE_BYTES)):
        h.update(os.pread(fd, SAMPLE_BYTES, offset))
    return SAMPLED_HASH_PREFIX + h.hexdigest()


_PDF_DATE = re.compile(r"D?:?(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?")


def parse_pdf_date(value: str | None) -> Optional[datetime]:
    if not value:
        return None
    m = _PDF_DATE.match(value.strip())
    if not m:
        return None
    parts = [int(p) if p else d for p, d in zip(m.groups(), (0, 1, 1, 0, 0, 0))]
    try:
        return datetime(*parts)
    except ValueError:
        return None


def _pdf_metadata(path: str, result: ProbeResult) -> None:
    import pymupdf  # deferred: PyMuPDF loads in ~0.2 s; a scan of a share without PDFs never needs it

    pymupdf.TOOLS.mupdf_display_errors(False)  # problems are reported per file, not on stderr
    try:
        doc = pymupdf.open(path)
    except Exception as exc:  # pymupdf raises its own FileDataError and friends
        # MuPDF names the whole path ("Failed to open file '/…/x.pdf' as type pdf."): the row
        # already shows it, so say what matters.
        detail = str(exc).replace(f"'{path}'", "").replace(path, "").replace("  ", " ").strip()
        if detail.startswith("Failed to open file") or not detail:
            detail = "not a readable PDF (MuPDF cannot open it)"
        result.status, result.error = FileStatus.ERROR, f"corrupt PDF: {detail}"
        return
    try:
        _read_pdf_facts(doc, path, result)
    except Exception as exc:  # noqa: BLE001 - a page tree claiming 99,999,999 pages raises here
        result.status, result.error = FileStatus.ERROR, f"corrupt PDF: {pdf_problem(exc)}"
    finally:
        doc.close()


def _read_pdf_facts(doc, path: str, result: ProbeResult) -> None:
    """Page count, title, author, date and the repaired/encrypted/empty states of an open PDF."""
    if doc.is_repaired:
        # MuPDF silently repairs broken cross-reference tables; most such files read fine,
        # but a file cut short (interrupted copy/download) has lost content.
        if not _has_pdf_eof(path):
            result.status, result.error = FileStatus.ERROR, "corrupt PDF: the file is truncated (no end-of-file marker)"
            return
        result.extra["warning"] = "damaged PDF structure, repaired on open"
    if doc.needs_pass:
        result.status, result.error = FileStatus.ENCRYPTED, "PDF is password-protected"
        return
    result.page_count = doc.page_count
    meta = doc.metadata or {}
    result.title = (meta.get("title") or "").strip() or None
    result.author = (meta.get("author") or "").strip() or None
    result.created_at = parse_pdf_date(meta.get("creationDate"))
    if doc.page_count == 0:
        result.status, result.error = FileStatus.EMPTY, "PDF has no pages"


def _has_pdf_eof(path: str) -> bool:
    with open(path, "rb") as fh:
        fh.seek(0, os.SEEK_END)
        fh.seek(max(0, fh.tell() - 2048))
        return b"%%EOF" in fh.read()


def probe_file(path: str, name: str, follow_links: bool = False) -> ProbeResult:
    """Describe one regular file cheaply. OSErrors propagate (the scanner turns them into statuses),
    NotRegularFile among them.

    Without ``follow_links`` the file is opened with O_NOFOLLOW: a file swapped for a symbolic
    link after the scanner checked where links point is refused, not read. O_NONBLOCK: a file
    swapped for a FIFO after the listing must not block the scan (no effect on regular files).
    One read of up to READ_ONCE bytes serves both the format sniff and, for a small file (most of
    a share), the whole content hash: open, fstat, read, close.
    """
    flags = (os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
             | (0 if follow_links else getattr(os, "O_NOFOLLOW", 0)))
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not stat_mod.S_ISREG(st.st_mode):  # swapped for a FIFO/device after the listing
            raise NotRegularFile(special_file_message(st.st_mode))
        size = st.st_size
        if size == 0:
            result = ProbeResult(0, st.st_mtime_ns, sniff_format(name, b"")[0], "b2:empty",
                                 FileStatus.EMPTY, "empty file (0 bytes)")
            return result
        head = os.read(fd, READ_ONCE if size <= SAMPLE_ABOVE else SNIFF_BYTES)
        fmt, problem = sniff_format(name, head if len(head) <= SNIFF_BYTES else head[:SNIFF_BYTES])
        result = ProbeResult(size, st.st_mtime_ns, fmt, None)
        if not hashed_in_full(fmt, size):
            result.content_hash = _sampled_hash_fd(fd, size)
        elif len(head) == size:  # the whole file (as fstat described it) is in hand
            result.content_hash = "b2:" + hashlib.blake2b(head, digest_size=20).hexdigest()
        else:
            result.content_hash = _hash_rest(fd, head)
    finally:
        os.close(fd)
    if problem:
        result.status = FileStatus.ERROR if fmt == "pdf" else FileStatus.UNSUPPORTED
        result.error = problem
        if fmt != "pdf":
            return result
    if fmt == "pdf" and result.status == FileStatus.OK:
        with PYMUPDF_LOCK:
            _pdf_metadata(path, result)
    elif result.status == FileStatus.OK and fmt in ("docx", "xlsx", "pptx") and head.startswith(OLE_MAGIC):
        result.status, result.error = FileStatus.ENCRYPTED, f"{KIND_NAMES[fmt]} is password-protected"
    elif result.status == FileStatus.OK and fmt in ZIP_FORMATS - {"zip"}:
        office_metadata(path, fmt, result)
    elif result.status == FileStatus.OK and fmt in ("eml", "msg"):
        mail_metadata(path, fmt, result)
    elif fmt == "archive" and result.status == FileStatus.OK:
        result.status = FileStatus.UNSUPPORTED
        result.error = "compressed archive of a kind SPAR does not open (only .zip archives are read)"
    elif fmt not in READABLE_FORMATS and result.status == FileStatus.OK:
        result.status = FileStatus.UNSUPPORTED
        result.error = f"no text extraction for {fmt} files yet"
    return result

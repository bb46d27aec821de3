"""OpenDocument text (.odt) and RTF, plus the OpenDocument helpers the sheet and slide readers share.

ODF files are zips whose ``content.xml`` can be hundreds of MB for a long report, so it is streamed
with ``iterparse`` and every paragraph or table row is dropped from the tree once its text is kept:
memory follows the largest paragraph, not the document. RTF has no pages and no streaming parser,
so embedded pictures (hex dumps, often 95% of the file) are dropped while reading and the rest is
refused when it would exceed the text budget anyway.
"""

from __future__ import annotations

import re
import zipfile
import zlib
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Optional, Sequence
from xml.etree import ElementTree as ET

from spar_desktop.core.documents.budget import ExtractionBudget, human_bytes, too_large
from spar_desktop.core.documents.errors import ExtractionError
from spar_desktop.core.documents.types import ExtractedDocument, PageText

_NS = {
    "office": "urn:oasis:names:tc:opendocument:xmlns:office:1.0",
    "text": "urn:oasis:names:tc:opendocument:xmlns:text:1.0",
    "table": "urn:oasis:names:tc:opendocument:xmlns:table:1.0",
    "draw": "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0",
    "presentation": "urn:oasis:names:tc:opendocument:xmlns:presentation:1.0",
    "svg": "urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0",
    "dc": "http://purl.org/dc/elements/1.1/",
}


def q(name: str) -> str:
    """'text:p' -> '{urn:...text:1.0}p', the form ElementTree uses for tags and attributes."""
    prefix, _, local = name.partition(":")
    return f"{{{_NS[prefix]}}}{local}"


P, H, SPAN_S, TAB, LINE_BREAK = q("text:p"), q("text:h"), q("text:s"), q("text:tab"), q("text:line-break")
TABLE, ROW, CELL, COVERED = q("table:table"), q("table:table-row"), q("table:table-cell"), q("table:covered-table-cell")
COLS_REPEATED, ROWS_REPEATED = q("table:number-columns-repeated"), q("table:number-rows-repeated")
# Not body text: comments, footnote numbers, deleted text kept for change tracking, slide notes
# (read separately), form controls.
_SKIP = {q("office:annotation"), q("text:note-citation"), q("text:tracked-changes"),
         q("presentation:notes"), q("office:forms"), q("text:sequence-decls"),
         q("svg:title"), q("svg:desc")}  # shape names and alt text: not what a slide says
_BLOCKS = {P, H, q("text:list-item"), ROW}
MAX_META_BYTES = 4 * 1024 * 1024
MAX_REPEAT = 100  # a repeated non-empty table cell in a text document: enough to read it, no more


# ------------------------------------------------------------------------------- ODF helpers


@contextmanager
def odf_package(path: Path, budget: ExtractionBudget, what: str) -> Iterator[zipfile.ZipFile]:
    """The zip of an OpenDocument file, checked: a clear message for a corrupt or encrypted file
    and for a content.xml that would inflate beyond the budget. ``what``: 'document', ..."""
    try:
        zf = zipfile.ZipFile(path)
    except zipfile.BadZipFile as exc:
        with open(path, "rb") as f:
            head = f.read(8)
        if head.startswith(b"\xd0\xcf\x11\xe0"):
            raise ExtractionError(f"{what} is password-protected or in an old binary format") from exc
        raise ExtractionError(f"corrupt {what}: not a valid OpenDocument file") from exc
    with zf:
        try:
            info = zf.getinfo("content.xml")
        except KeyError:
            raise ExtractionError(f"corrupt {what}: the file holds no content") from None
        try:
            encrypted = _is_encrypted(zf)
        except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
            raise ExtractionError(f"corrupt {what}: the file is damaged or incomplete") from exc
        if encrypted:
            raise ExtractionError(f"{what} is password-protected")
        if info.file_size > budget.max_inflated_bytes:
            raise too_large("unpacked content", human_bytes(info.file_size), human_bytes(budget.max_inflated_bytes))
        try:
            yield zf
        except (zipfile.BadZipFile, zlib.error, EOFError) as exc:  # a damaged member, found while reading it
            raise ExtractionError(f"corrupt {what}: the file is damaged or incomplete") from exc


def _is_encrypted(zf: zipfile.ZipFile) -> bool:
    try:
        info = zf.getinfo("META-INF/manifest.xml")
    except KeyError:
        return False
    if info.file_size > MAX_META_BYTES:
        return False
    return b"encryption-data" in zf.read(info)


def odf_title(zf: zipfile.ZipFile) -> Optional[str]:
    """dc:title from meta.xml, when there is one."""
    try:
        info = zf.getinfo("meta.xml")
        if info.file_size > MAX_META_BYTES:
            return None
        root = ET.fromstring(zf.read(info))
    except (KeyError, ET.ParseError, zipfile.BadZipFile, OSError):
        return None
    node = root.find(f".//{q('dc:title')}")
    title = " ".join((node.text or "").split()) if node is not None else ""
    return title or None


def parse_error(what: str, exc: Exception) -> ExtractionError:
    """A corrupt content.xml, in words: the XML error position means nothing to a person."""
    return ExtractionError(f"corrupt {what}: its content is damaged or incomplete")


def odf_text(elem: ET.Element) -> str:
    """Visible text of an ODF element: spans and links inline, text:s/tab/line-break honoured,
    nested paragraphs (text boxes, list items, cells) on their own lines."""
    out: list[str] = []
    _walk(elem, out)
    lines = ("".join(out)).split("\n")
    return "\n".join(t for t in (" ".join(line.split()) for line in lines) if t)


def _walk(elem: ET.Element, out: list[str]) -> None:
    if elem.text:
        out.append(elem.text)
    for child in elem:
        tag = child.tag
        if tag == SPAN_S:
            out.append(" " * min(int(child.get(q("text:c"), "1") or 1), MAX_REPEAT))
        elif tag == TAB:
            out.append(" ")
        elif tag == LINE_BREAK:
            out.append("\n")
        elif tag not in _SKIP:
            block = tag in _BLOCKS
            if block:
                out.append("\n")
            _walk(child, out)
            if block:
                out.append("\n")
            elif tag == CELL:
                out.append(" ")
        if child.tail:
            out.append(child.tail)


def one_line(text: str) -> str:
    return " ".join(text.split())


def row_cells(row: ET.Element) -> list[str]:
    """Cell texts of a table row (text documents and slides: small tables, repeats capped)."""
    cells: list[str] = []
    for cell in row:
        if cell.tag not in (CELL, COVERED):
            continue
        text = one_line(odf_text(cell))
        repeat = min(int(cell.get(COLS_REPEATED, "1") or 1), MAX_REPEAT)
        cells.extend([text] * (repeat if text else 1))
    while cells and not cells[-1]:
        cells.pop()
    return cells


def table_text(rows: Sequence[Sequence[str]]) -> str:
    """A table as 'Header: value; ...' lines: the first row names the columns, so each later row
    still says what its values are when the chunker cuts the table apart."""
    rows = [r for r in rows if any(c.strip() for c in r)]
    if not rows:
        return ""
    header = [one_line(h) for h in rows[0]]
    if len(rows) == 1:
        return "; ".join(h for h in header if h)
    lines = []
    for row in rows[1:]:
        parts = []
        for i, value in enumerate(row):
            value = one_line(value)
            if not value:
                continue
            name = header[i] if i < len(header) and header[i] else ""
            parts.append(f"{name}: {value}" if name and name != value else value)
        if parts:
            lines.append("; ".join(parts))
    return "\n".join(lines)


class CharBudget:
    """Characters a document may still add across all its pages (budget.max_chars)."""

    def __init__(self, max_chars: int) -> None:
        self.max_chars = max_chars
        self.left = max_chars
        self.cut = False

    def take(self, text: str) -> str:
        """``text``, or the part of it that still fits (then ``cut`` is set)."""
        if len(text) > self.left:
            text = text[: max(0, self.left)]
            self.cut = True
        self.left -= len(text) + 2
        return text

    @property
    def full(self) -> bool:
        return self.cut or self.left <= 0

    def warning(self) -> list[str]:
        return [f"text truncated at {self.max_chars:,} characters"] if self.cut else []


# --------------------------------------------------------------------------------------- ODT


def extract_odt(path: Path, budget: ExtractionBudget) -> ExtractedDocument:
    clock = budget.clock()
    chars = CharBudget(budget.max_chars)
    blocks: list[str] = []
    with odf_package(path, budget, "document") as zf:
        title = odf_title(zf)
        with zf.open("content.xml") as stream:
            try:
                for n, block in enumerate(_odt_blocks(stream)):
                    if n % 256 == 0:
                        clock.check()
                    if block:
                        blocks.append(chars.take(block))
                    if chars.full:
                        break
            except ET.ParseError as exc:
                raise parse_error("document", exc) from exc
    text = "\n\n".join(b for b in blocks if b).strip()
    if not text:
        return ExtractedDocument((), "odt", title, tuple(chars.warning()), "document has no text")
    return ExtractedDocument((PageText(1, text),), "odt", title, tuple(chars.warning()))


def _odt_blocks(stream) -> Iterator[str]:
    """Headings, paragraphs and tables of content.xml in document order, each dropped from the
    tree once read. Paragraphs inside table cells or text boxes belong to their container."""
    stack: list[ET.Element] = []
    in_para = in_cell = 0
    rows: list[list[str]] = []
    for event, elem in ET.iterparse(stream, events=("start", "end")):
        tag = elem.tag
        if event == "start":
            stack.append(elem)
            in_para += tag in (P, H)
            in_cell += tag in (CELL, COVERED)
            continue
        stack.pop()
        parent = stack[-1] if stack else None
        if tag in (P, H):
            in_para -= 1
            if in_para or in_cell:
                continue
            yield odf_text(elem)
        elif tag in (CELL, COVERED):
            in_cell -= 1
            continue
        elif tag == ROW and not in_cell and not in_para:
            rows.append(row_cells(elem))
        elif tag == TABLE and not in_cell and not in_para:
            yield table_text(rows)
            rows = []
        elif tag != q("office:automatic-styles"):
            continue
        if parent is not None:
            parent.remove(elem)


# --------------------------------------------------------------------------------------- RTF

RTF_BYTES_PER_CHAR = 4  # RTF markup around text: beyond this many bytes per allowed char, refuse
_HEX_RUN = re.compile(rb"[0-9a-fA-F\r\n]{128,}")  # a picture's hex dump, never prose
_HEX_CHARS = b"0123456789abcdefABCDEF\r\n"
_TITLE = re.compile(rb"\{\\info\b.*?\{\\title\b ?([^{}]*)\}", re.S)
_READ_BLOCK = 1 << 20


def extract_rtf(path: Path, budget: ExtractionBudget) -> ExtractedDocument:
    clock = budget.clock()
    limit = max(budget.max_chars * RTF_BYTES_PER_CHAR, 1 << 20)
    raw = _rtf_without_pictures(path, limit, clock)
    if not raw.lstrip().startswith(b"{\\rtf"):
        raise ExtractionError("corrupt RTF: the file does not start like an RTF document")
    from striprtf.striprtf import rtf_to_text  # lazy: only RTF needs it

    title = _rtf_title(raw[:65536], rtf_to_text)
    text = rtf_to_text(raw.decode("cp1252", "replace"), errors="ignore")
    del raw
    clock.check()
    text = "\n".join(line.strip() for line in text.replace("\x00", "").splitlines())
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    chars = CharBudget(budget.max_chars)
    text = chars.take(text)
    if not text:
        return ExtractedDocument((), "rtf", title, (), "document has no text")
    return ExtractedDocument((PageText(1, text),), "rtf", title, tuple(chars.warning()))


def _rtf_without_pictures(path: Path, limit: int, clock) -> bytes:
    """The RTF bytes minus embedded pictures' hex data, streamed so a 500 MB file of pictures
    never sits in memory; too_large() when what is left still exceeds ``limit``."""
    out = bytearray()
    carry = b""
    with open(path, "rb") as f:
        while True:
            block = f.read(_READ_BLOCK)
            data = carry + block
            # A hex run may continue in the next block: hold back the trailing hex-looking bytes.
            cut = len(data.rstrip(_HEX_CHARS)) if block else len(data)
            if block and len(data) - cut > 4 * _READ_BLOCK:
                cut = len(data) - 256  # megabytes of hex: a picture; hold back only a short tail
            out += _HEX_RUN.sub(b"", data[:cut])
            carry = data[cut:]
            if len(out) > limit:
                raise too_large("RTF text and formatting", f"over {human_bytes(limit)}", human_bytes(limit))
            clock.check()
            if not block:
                return bytes(out)


def _rtf_title(head: bytes, rtf_to_text) -> Optional[str]:
    m = _TITLE.search(head)
    if not m:
        return None
    title = one_line(rtf_to_text("{\\rtf1 " + m.group(1).decode("cp1252", "replace") + "}", errors="ignore"))
    return title or None

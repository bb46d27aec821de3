"""DOCX extraction: body paragraphs and tables in document order, one page.

DOCX has no fixed pages (layout happens in Word), so the whole body is page 1. Small bodies are
read with python-docx; its tree costs tens of times the XML, so a large body (a few KB zipped can
inflate to hundreds of MB) is streamed instead, and one over the budget is refused unread.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
import zipfile
import zlib
from pathlib import Path
from typing import Optional, Union
from xml.parsers import expat

from spar_desktop.core.documents.budget import ExtractionBudget, human_bytes, too_large
from spar_desktop.core.documents.errors import ExtractionError
from spar_desktop.core.documents.types import ExtractedDocument, PageText

OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
BODY = "word/document.xml"
# Bodies up to this (unzipped) go through python-docx; larger ones are streamed.
STREAM_ABOVE_BYTES = 4 * 1024 * 1024
STREAM_ALL_ABOVE_BYTES = 64 * 1024 * 1024
MAX_CORE_XML_BYTES = 1024 * 1024  # document properties (title) are tiny in any real file

_NAMESPACES = ("http://schemas.openxmlformats.org/wordprocessingml/2006/main",
               "http://purl.oclc.org/ooxml/wordprocessingml/main")  # transitional, strict


def as_budget(limits: Union[ExtractionBudget, int]) -> ExtractionBudget:
    """Readers are still called with a bare ``max_chars`` by older callers."""
    return limits if isinstance(limits, ExtractionBudget) else ExtractionBudget(max_chars=limits)


def _check_container(path: Path) -> tuple[int, int]:
    """Give a precise reason before python-docx fails with a generic one.

    Returns the unzipped sizes of the body and of all parts, as the zip directory states them
    (zipfile never inflates a member past its stated size).
    """
    with open(path, "rb") as f:
        head = f.read(8)
    if head.startswith(OLE_MAGIC):
        # Word stores password-protected .docx files inside an OLE container, like old .doc.
        raise ExtractionError("DOCX is password-protected or is a legacy Word .doc file")
    try:
        with zipfile.ZipFile(path) as zf:
            info = {i.filename: i for i in zf.infolist()}
    except zipfile.BadZipFile as exc:
        raise ExtractionError("not a valid DOCX (not a zip file)") from exc
    if BODY not in info:
        raise ExtractionError("not a valid DOCX (zip without word/document.xml)")
    return info[BODY].file_size, sum(i.file_size for i in info.values())


def extract_docx(path: Path, limits: Union[ExtractionBudget, int]) -> ExtractedDocument:
    budget = as_budget(limits)
    body_bytes, all_bytes = _check_container(path)
    # The zip directory states the unzipped size: refuse a bomb before inflating a byte of it.
    if body_bytes > budget.max_inflated_bytes:
        raise too_large("unpacked document text", human_bytes(body_bytes),
                        f"{human_bytes(budget.max_inflated_bytes)} per unpacked part")
    # python-docx also loads every other part (styles, headers, images) whole: a bloated one
    # sends the file to the streamed reader too, which reads the body and title only.
    if body_bytes > STREAM_ABOVE_BYTES or all_bytes > STREAM_ALL_ABOVE_BYTES:
        return _extract_streamed(path, budget)
    import docx  # python-docx pulls in lxml: load only when a DOCX is read
    from docx.table import Table

    try:
        document = docx.Document(str(path))
    except Exception as exc:
        raise ExtractionError(f"corrupt DOCX: {exc}") from exc
    title = (document.core_properties.title or "").strip() or None
    blocks = _Blocks(budget.max_chars)
    for item in document.iter_inner_content():
        if not blocks.add(_table_text(item) if isinstance(item, Table) else item.text.strip()):
            break
    return blocks.document(title)


class _Blocks:
    """Body blocks (paragraphs, tables) kept until ``max_chars``."""

    def __init__(self, max_chars: int) -> None:
        self.parts: list[str] = []
        self.total = 0
        self.max_chars = max_chars
        self.truncated = False

    def add(self, block: str) -> bool:
        """Keep ``block``; False once the limit is reached (callers stop reading)."""
        if not block:
            return True
        if self.total + len(block) > self.max_chars:
            self.parts.append(block[: max(0, self.max_chars - self.total)])
            self.truncated = True
            return False
        self.parts.append(block)
        self.total += len(block) + 2
        return True

    def cut(self, block: str) -> None:
        """Keep the start of an unfinished block that alone passes the limit."""
        self.parts.append(block[: max(0, self.max_chars - self.total)])
        self.truncated = True

    def document(self, title: Optional[str]) -> ExtractedDocument:
        warnings = (f"text truncated at {self.max_chars:,} characters",) if self.truncated else ()
        text = "\n\n".join(b for b in self.parts if b)
        if not text:
            return ExtractedDocument((), "docx", title, warnings, "document has no text")
        return ExtractedDocument((PageText(1, text),), "docx", title, warnings)


def _table_text(table) -> str:
    """One line per row, cells joined by ' | '.

    Merged cells appear once per grid column in python-docx; consecutive repeats of the same
    underlying cell are collapsed so a merged header is not indexed three times.
    """
    lines = []
    for row in table.rows:
        cells, last = [], None
        for cell in row.cells:
            if cell._tc is last:
                continue
            last = cell._tc
            parts = [cell.text] + [_table_text(t) for t in cell.tables]
            value = " ".join(" ".join(p.split()) for p in parts if p.strip())
            if value:
                cells.append(value)
        if cells:
            lines.append(" | ".join(cells))
    return "\n".join(lines)


# ------------------------------------------------------------------------------ streamed body

_READ_BYTES = 1 << 20  # body bytes parsed between clock checks
_NAMES = ("p", "t", "tab", "br", "cr", "tc", "tr", "tbl", "vMerge")
# expat reports a namespaced name as "uri local"; anything else (DrawingML, markup compatibility,
# properties) is skipped with one dict lookup.
_KINDS = {f"{ns} {name}": name for ns in _NAMESPACES for name in _NAMES}
_VAL = tuple(f"{ns} val" for ns in _NAMESPACES)


class _Stop(Exception):
    """Raised from a parser callback once the text limit is reached."""


class _Cell:
    def __init__(self) -> None:
        self.parts: list[str] = []
        self.continued = False  # lower part of a vertically merged cell: its text is above


class _BodyReader:
    """The same blocks as python-docx, from expat callbacks in one pass.

    No tree is built: memory is the open paragraph or table, not the document. Text runs (w:t),
    tabs and breaks make a paragraph; a table is one line per row with cells joined by ' | ';
    a nested table joins its cell's text; a text box's paragraphs join the paragraph holding it.
    """

    def __init__(self, max_chars: int) -> None:
        self.blocks = _Blocks(max_chars)
        self.paras: list[list[str]] = []
        self.tables: list[list[str]] = []  # open tables: their finished row lines
        self.rows: list[list[str]] = []  # open rows: their finished cell values
        self.cells: list[_Cell] = []
        self.in_text = 0
        self.pending = 0  # characters in open blocks, so one giant paragraph also stops

    def start(self, tag: str, attrs: dict[str, str]) -> None:
        kind = _KINDS.get(tag)
        if kind is None:
            return
        if kind == "t":
            self.in_text += 1
        elif kind == "p":
            self.paras.append([])
        elif kind == "tab" and self.paras:
            self.paras[-1].append("\t")
        elif kind in ("br", "cr") and self.paras:
            self.paras[-1].append("\n")
        elif kind == "tc":
            self.cells.append(_Cell())
        elif kind == "tr":
            self.rows.append([])
        elif kind == "tbl":
            self.tables.append([])
        elif kind == "vMerge" and self.cells:
            val = attrs.get(_VAL[0]) or attrs.get(_VAL[1])
            self.cells[-1].continued = val != "restart"

    def text(self, data: str) -> None:
        if self.in_text and self.paras:
            self.paras[-1].append(data)
            self.pending += len(data)
            if self.blocks.total + self.pending > self.blocks.max_chars + 1:
                # One block (a giant paragraph or table) over the limit: keep its start.
                lines = [line for table in self.tables for line in table]
                lines += ["".join(p) for p in self.paras]
                self.blocks.cut("\n".join(lines).strip())
                raise _Stop

    def end(self, tag: str) -> None:
        kind = _KINDS.get(tag)
        if kind is None:
            return
        if kind == "t":
            self.in_text -= 1
        elif kind == "p" and self.paras:
            text = "".join(self.paras.pop())
            if self.paras:
                self.paras[-1].append(" " + text)
            elif self.cells:
                self.cells[-1].parts.append(text)
            else:
                self._done(text.strip())
        elif kind == "tc" and self.cells:
            cell = self.cells.pop()
            value = " ".join(" ".join(p.split()) for p in cell.parts if p.strip())
            if value and not cell.continued and self.rows:
                self.rows[-1].append(value)
        elif kind == "tr" and self.rows:
            values = self.rows.pop()
            if values and self.tables:
                self.tables[-1].append(" | ".join(values))
        elif kind == "tbl" and self.tables:
            text = "\n".join(self.tables.pop())
            if self.cells:
                self.cells[-1].parts.append(text)
            else:
                self._done(text)

    def _done(self, block: str) -> None:
        self.pending = 0
        if not self.blocks.add(block):
            raise _Stop


def _refuse_dtd(*_args: object) -> None:
    # Word never writes one; a DTD can only serve entity tricks.
    raise ExtractionError("corrupt DOCX: the document body declares a DTD")


def _extract_streamed(path: Path, budget: ExtractionBudget) -> ExtractedDocument:
    clock = budget.clock()
    reader = _BodyReader(budget.max_chars)
    parser = expat.ParserCreate(namespace_separator=" ")
    parser.buffer_text = True
    parser.buffer_size = 1 << 16
    parser.StartElementHandler = reader.start
    parser.EndElementHandler = reader.end
    parser.CharacterDataHandler = reader.text
    parser.StartDoctypeDeclHandler = _refuse_dtd
    with zipfile.ZipFile(path) as zf:
        try:
            with zf.open(BODY) as body:
                while True:
                    clock.check()
                    data = body.read(_READ_BYTES)
                    parser.Parse(data, not data)
                    if not data:
                        break
        except _Stop:
            pass
        except expat.ExpatError as exc:
            raise ExtractionError(
                f"corrupt DOCX: the document body is damaged ({expat.ErrorString(exc.code)}, "
                f"line {exc.lineno})") from exc
        except (zipfile.BadZipFile, EOFError, zlib.error) as exc:
            raise ExtractionError(f"corrupt DOCX: the document body cannot be unzipped ({exc})") from exc
        title = _core_title(zf)
    return reader.blocks.document(title)


def _core_title(zf: zipfile.ZipFile) -> Optional[str]:
    """dc:title from docProps/core.xml (what python-docx reports as core_properties.title)."""
    try:
        info = zf.getinfo("docProps/core.xml")
    except KeyError:
        return None
    if info.file_size > MAX_CORE_XML_BYTES:
        return None
    try:
        root = ET.fromstring(zf.read(info))
    except ET.ParseError:
        return None
    node = root.find("{http://purl.org/dc/elements/1.1/}title")
    return ((node.text or "").strip() or None) if node is not None else None

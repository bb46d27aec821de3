"""Spreadsheet rows as searchable text, shared by every sheet reader (XLSX, XLS, ODS, '.xls' exports).

One sheet is one page. Its first row with more than one value names the columns (a one-cell row
above it is a caption), and each later row becomes a paragraph of its own, "Row 12 — Sample:
BR-T12; Erosion category: 3", so a value keeps its column name wherever the chunker cuts. The
readers only produce numbered rows of values; this module owns the formatting and the per-file
row, column, sheet and character limits they share.
"""

from __future__ import annotations

import datetime as dt
import zipfile
import zlib
from typing import Any, Iterable, Optional, Sequence
from xml.etree import ElementTree as ET
from xml.parsers import expat

from spar_desktop.core.documents.budget import BudgetExceeded, ExtractionBudget
from spar_desktop.core.documents.errors import ExtractionError
from spar_desktop.core.documents.extract_wordproc import CharBudget, one_line
from spar_desktop.core.documents.types import ExtractedDocument, PageText

_TICK_ROWS = 256  # clock.check() every this many rows
_NO_VALUES = "spreadsheet has no cells with values"


def column_letter(index: int) -> str:
    """0 -> 'A', 26 -> 'AA': what a person sees above an unnamed column."""
    letters = ""
    index += 1
    while index:
        index, rem = divmod(index - 1, 26)
        letters = chr(65 + rem) + letters
    return letters


def cell_text(value: Any) -> str:
    """A cell value as a person reads it: dates ISO, 3.0 as 3, text on one line."""
    if value is None:
        return ""
    if isinstance(value, str):
        return one_line(value)
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return format(value, ".15g")
    if isinstance(value, dt.datetime):
        if value.time() == dt.time(0):
            return value.date().isoformat()
        return value.isoformat(sep=" ", timespec="seconds" if value.second else "minutes")
    if isinstance(value, dt.time):
        return value.isoformat(timespec="seconds" if value.second else "minutes")
    if isinstance(value, dt.date):
        return value.isoformat()
    return one_line(str(value))


def iso_text(value: str) -> str:
    """'2019-03-04T00:00:00.000' -> '2019-03-04'; a time of day is kept to the minute."""
    try:
        return cell_text(dt.datetime.fromisoformat(value.rstrip("Z")))
    except ValueError:
        return value


class SheetBook:
    """Collects sheets as pages, sharing the per-file limits between them."""

    def __init__(self, fmt: str, budget: ExtractionBudget) -> None:
        self.fmt, self.budget, self.clock = fmt, budget, budget.clock()
        self.chars = CharBudget(budget.max_chars)
        self.pages: list[PageText] = []
        self.warnings: list[str] = []
        self.rows = self.sheets = self.seen = 0
        self.stopped = False  # a per-file limit was reached: read nothing more

    def sheet(self, index: int, name: str) -> Optional["Sheet"]:
        if self.stopped:
            return None
        if self.sheets >= self.budget.max_pages:
            self.warnings.append(f"only the first {self.budget.max_pages:,} sheets were read (the per-file limit)")
            self.stopped = True
            return None
        self.sheets += 1
        return Sheet(self, index, name)

    def tick(self, rows: int = 1) -> None:
        before, self.seen = self.seen, self.seen + rows
        if before // _TICK_ROWS != self.seen // _TICK_ROWS:
            self.clock.check()

    def document(self, title: Optional[str], warnings: Iterable[str] = ()) -> ExtractedDocument:
        notes = tuple(warnings) + tuple(self.warnings) + tuple(self.chars.warning())
        title = (title or "").strip() or None
        if not self.pages:
            return ExtractedDocument((), self.fmt, title, notes, _NO_VALUES)
        return ExtractedDocument(tuple(self.pages), self.fmt, title, notes)


class Sheet:
    """One sheet's text: 'Sheet: name', its column names, then one paragraph per row."""

    def __init__(self, book: SheetBook, index: int, name: str) -> None:
        self.book, self.index, self.name = book, index, one_line(name) or f"Sheet{index}"
        self.paragraphs: list[str] = []
        self.header: Optional[list[str]] = None
        self.pending: Optional[tuple[int, list[str]]] = None  # a one-cell first row: caption or header?
        self.wide_warned = False

    def add(self, row_no: int, values: Sequence[Any]) -> bool:
        """Add spreadsheet row ``row_no``; False once a per-file limit says stop reading."""
        book = self.book
        book.tick()
        if len(values) > book.budget.max_columns:
            values = values[: book.budget.max_columns]
            self.warn_wide()
        cells = [cell_text(v) for v in values]
        if not any(cells):
            return True
        book.rows += 1
        if book.rows > book.budget.max_rows:
            book.warnings.append(f"sheet '{self.name}' cut at {book.budget.max_rows:,} rows (the per-file limit)")
            book.stopped = True
            return False
        return self._place(row_no, cells)

    def _place(self, row_no: int, cells: list[str]) -> bool:
        filled = sum(1 for c in cells if c)
        if self.header is None and self.pending is None and filled == 1:
            self.pending = (row_no, cells)  # a title line above the table, or a one-column header
            return True
        if self.header is None:
            if self.pending and filled > 1:  # it was a caption: this row names the columns
                if not self._emit(next(c for c in self.pending[1] if c)):
                    return False
                self.pending = None
            if self.pending:
                self._set_header(self.pending[1])
                self.pending = None
                return self._emit(self._row(row_no, cells))
            self._set_header(cells)
            return True
        return self._emit(self._row(row_no, cells))

    def _set_header(self, cells: list[str]) -> None:
        self.header = [c or column_letter(i) for i, c in enumerate(cells)]
        while len(self.header) > 1 and not cells[len(self.header) - 1]:
            self.header.pop()  # trailing unnamed columns: their letters are added when used
        self._emit("Columns: " + "; ".join(self.header))

    def _row(self, row_no: int, cells: list[str]) -> str:
        header = self.header or []
        parts = [f"{header[i] if i < len(header) else column_letter(i)}: {value}"
                 for i, value in enumerate(cells) if value]
        return f"Row {row_no} — " + "; ".join(parts)

    def _emit(self, text: str) -> bool:
        if not self.paragraphs:
            text = f"Sheet: {self.name}\n{text}"  # counted against max_chars like the rows
        text = self.book.chars.take(text)
        if text:
            self.paragraphs.append(text)
        if self.book.chars.full:
            self.book.stopped = True
            return False
        return True

    def warn_wide(self) -> None:
        """Warn (once per sheet) that columns past max_columns were left out."""
        if not self.wide_warned:
            self.wide_warned = True
            limit = self.book.budget.max_columns
            self.book.warnings.append(f"sheet '{self.name}': only the first {limit:,} columns were read (the per-file limit)")

    def close(self) -> None:
        if self.pending:
            self._set_header(self.pending[1])
        if self.paragraphs:
            self.book.pages.append(PageText(self.index, "\n\n".join(self.paragraphs)))


def read_rows(book: SheetBook, sheet: Optional[Sheet], rows: Iterable[tuple[int, Sequence[Any]]]) -> None:
    """Feed numbered ``rows`` to ``sheet``; a sheet damaged half-way keeps the rows read before
    the damage, with a warning."""
    if sheet is None:
        return
    try:
        for row_no, values in rows:
            if not sheet.add(row_no, values):
                break
    except (BudgetExceeded, MemoryError):
        raise
    except Exception as exc:
        if not sheet.paragraphs:
            raise corrupt_error(exc) from exc
        book.warnings.append(f"sheet '{sheet.name}' is damaged: only its first rows were read")
    sheet.close()


def corrupt_error(exc: BaseException) -> ExtractionError:
    """A library's error about a broken file, in words a person can act on."""
    if isinstance(exc, ExtractionError):
        return exc
    if isinstance(exc, (zipfile.BadZipFile, zlib.error, EOFError)):
        return ExtractionError("corrupt spreadsheet: the file is damaged or incomplete")
    if isinstance(exc, KeyError):
        return ExtractionError("corrupt spreadsheet: parts of the workbook are missing")
    if isinstance(exc, (expat.ExpatError, ET.ParseError)):
        return ExtractionError("corrupt spreadsheet: its content is damaged or incomplete")
    return ExtractionError("corrupt spreadsheet: the workbook could not be opened (damaged or not an Excel file)")


def with_note(doc: ExtractedDocument, note: str, fmt: Optional[str] = None) -> ExtractedDocument:
    """``doc`` with ``note`` as its first warning (and optionally another format name)."""
    return ExtractedDocument(doc.pages, fmt or doc.format, doc.title, (note,) + doc.warnings, doc.no_text_reason)

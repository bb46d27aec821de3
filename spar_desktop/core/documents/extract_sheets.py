"""Spreadsheets (.xlsx/.xlsm, .xls, .ods) as searchable rows that carry their column names.

One sheet is one page (page number = the sheet's position in the workbook). Each data row is a
paragraph of its own, "Row 12 — Sample: BR-T12; Erosion category: 3", so a question about one
value finds the row with the names of its columns wherever the chunker cuts. Workbooks are
streamed row by row (openpyxl read-only, ODS content.xml through iterparse) and stop at the
budget's row, column, sheet, character and time limits with a warning.

Old exporters often wrote HTML tables, delimited text or "XML Spreadsheet 2003" under an .xls
name; those are read as what they are.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import os
import zipfile
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence
from xml.etree import ElementTree as ET

from spar_desktop.core.documents.budget import BudgetExceeded, ExtractionBudget, human_bytes, too_large
from spar_desktop.core.documents.errors import ExtractionError
from spar_desktop.core.documents.extract_wordproc import (
    CELL, COLS_REPEATED, COVERED, ROW, ROWS_REPEATED, TABLE, CharBudget, odf_package, odf_text, odf_title,
    one_line, parse_error, q)
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
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    return one_line(str(value))


# ------------------------------------------------------------------------- rows -> page text


class _Book:
    """Collects sheets as pages, sharing the per-file limits between them."""

    def __init__(self, fmt: str, budget: ExtractionBudget) -> None:
        self.fmt, self.budget, self.clock = fmt, budget, budget.clock()
        self.chars = CharBudget(budget.max_chars)
        self.pages: list[PageText] = []
        self.warnings: list[str] = []
        self.rows = self.sheets = self.seen = 0
        self.stopped = False  # a per-file limit was reached: read nothing more

    def sheet(self, index: int, name: str) -> Optional["_Sheet"]:
        if self.stopped:
            return None
        if self.sheets >= self.budget.max_pages:
            self.warnings.append(f"only the first {self.budget.max_pages:,} sheets were read (the per-file limit)")
            self.stopped = True
            return None
        self.sheets += 1
        return _Sheet(self, index, name)

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


class _Sheet:
    """One sheet's text: 'Sheet: name', its column names, then one paragraph per row."""

    def __init__(self, book: _Book, index: int, name: str) -> None:
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
            self._warn_wide()
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
        text = self.book.chars.take(text)
        if text:
            self.paragraphs.append(text)
        if self.book.chars.full:
            self.book.stopped = True
            return False
        return True

    def _warn_wide(self) -> None:
        if not self.wide_warned:
            self.wide_warned = True
            limit = self.book.budget.max_columns
            self.book.warnings.append(f"sheet '{self.name}': only the first {limit:,} columns were read (the per-file limit)")

    def close(self) -> None:
        if self.pending:
            self._set_header(self.pending[1])
        if self.paragraphs:
            self.book.pages.append(PageText(self.index, f"Sheet: {self.name}\n" + "\n\n".join(self.paragraphs)))


def _read_rows(book: _Book, sheet: Optional[_Sheet], rows: Iterable[Sequence[Any]], first: int = 1) -> None:
    """Feed ``rows`` (numbered from ``first``) to ``sheet``; a sheet damaged half-way keeps the
    rows read before the damage, with a warning."""
    if sheet is None:
        return
    try:
        for row_no, values in enumerate(rows, first):
            if not sheet.add(row_no, values):
                break
    except (BudgetExceeded, MemoryError):
        raise
    except Exception as exc:
        if not sheet.paragraphs:
            raise _corrupt(exc) from exc
        book.warnings.append(f"sheet '{sheet.name}' is damaged: only its first rows were read")
    sheet.close()


def _corrupt(exc: BaseException) -> ExtractionError:
    """A library's error about a broken file, in words a person can act on."""
    if isinstance(exc, ExtractionError):
        return exc
    if isinstance(exc, zipfile.BadZipFile):
        return ExtractionError("corrupt spreadsheet: the file is damaged or incomplete")
    if isinstance(exc, KeyError):
        return ExtractionError("corrupt spreadsheet: parts of the workbook are missing")
    return ExtractionError("corrupt spreadsheet: the workbook could not be opened (damaged or not an Excel file)")


# -------------------------------------------------------------------------------------- XLSX


def extract_xlsx(path: Path, budget: ExtractionBudget) -> ExtractedDocument:
    from spar_desktop.core.documents.extract_legacy import ole_kind

    kind = ole_kind(path)
    if kind == "encrypted":
        raise ExtractionError("spreadsheet is password-protected")
    if kind == "xls":
        doc = extract_xls(path, budget)
        return _with_note(doc, "an old-format .xls workbook saved with an .xlsx name")
    if kind:
        raise ExtractionError("corrupt spreadsheet: not an Excel workbook")
    _check_xlsx_zip(path, budget)
    import openpyxl  # lazy: only spreadsheets need it

    try:
        wb = openpyxl.load_workbook(path, read_only=True, data_only=True, keep_links=False)
    except Exception as exc:
        raise _corrupt(exc) from exc
    try:
        book = _Book("xlsx", budget)
        for index, name in enumerate(wb.sheetnames, 1):
            ws = wb[name]
            if not hasattr(ws, "reset_dimensions"):
                continue  # a chart sheet: no cells
            # The stated size is often wrong (some writers always say A1): read each row as wide
            # as its own last cell instead of padding or cutting to it.
            ws.reset_dimensions()
            sheet = book.sheet(index, name)
            if sheet is None:
                break
            _read_rows(book, sheet, ws.iter_rows(min_row=1, min_col=1, values_only=True))
        return book.document(wb.properties.title if wb.properties else None)
    finally:
        wb.close()


def _check_xlsx_zip(path: Path, budget: ExtractionBudget) -> None:
    try:
        with zipfile.ZipFile(path) as zf:
            names = {i.filename: i for i in zf.infolist()}
    except zipfile.BadZipFile as exc:
        raise ExtractionError("corrupt spreadsheet: not a valid Excel file") from exc
    if "xl/workbook.xml" not in names:
        raise ExtractionError("corrupt spreadsheet: the file holds no workbook")
    strings = names.get("xl/sharedStrings.xml")  # loaded whole by openpyxl: bound it
    if strings and strings.file_size > budget.max_inflated_bytes:
        raise too_large("unpacked cell text", human_bytes(strings.file_size), human_bytes(budget.max_inflated_bytes))


def _with_note(doc: ExtractedDocument, note: str, fmt: Optional[str] = None) -> ExtractedDocument:
    return ExtractedDocument(doc.pages, fmt or doc.format, doc.title, (note,) + doc.warnings, doc.no_text_reason)


# --------------------------------------------------------------------------------------- XLS


def extract_xls(path: Path, budget: ExtractionBudget) -> ExtractedDocument:
    with open(path, "rb") as f:
        head = f.read(8192)
    if head.startswith(b"PK\x03\x04"):
        return _with_note(extract_xlsx(path, budget), "an .xlsx workbook saved with an .xls name", "xls")
    if not head.startswith(b"\xd0\xcf\x11\xe0") and _is_text(head):
        return _xls_text(path, budget, head)
    return _xls_biff(path, budget)


def _is_text(head: bytes) -> bool:
    if head.startswith((b"\xff\xfe", b"\xfe\xff", b"\xef\xbb\xbf")):
        return True
    return bool(head) and b"\x00" not in head and sum(b < 9 or 13 < b < 32 for b in head) < len(head) // 20


def _xls_biff(path: Path, budget: ExtractionBudget) -> ExtractedDocument:
    import xlrd  # lazy: only .xls needs it

    try:
        with open(os.devnull, "w") as quiet:  # xlrd prints format warnings to stdout
            wb = xlrd.open_workbook(str(path), on_demand=True, logfile=quiet)
    except xlrd.XLRDError as exc:
        if "encrypted" in str(exc).lower():
            raise ExtractionError("spreadsheet is password-protected") from exc
        raise ExtractionError("corrupt spreadsheet: not a valid Excel file") from exc
    except Exception as exc:
        raise _corrupt(exc) from exc
    try:
        book = _Book("xls", budget)
        for index in range(wb.nsheets):
            sheet = book.sheet(index + 1, wb.sheet_names()[index])
            if sheet is None:
                break
            try:
                sh = wb.sheet_by_index(index)  # on_demand: one sheet in memory at a time
            except Exception as exc:
                raise _corrupt(exc) from exc
            width = min(sh.ncols, budget.max_columns)
            if sh.ncols > width:
                sheet._warn_wide()
            rows = (_xls_row(wb, sh, r, width) for r in range(sh.nrows))
            _read_rows(book, sheet, rows)
            wb.unload_sheet(index)
        return book.document(None)
    finally:
        wb.release_resources()


def _xls_row(wb, sh, r: int, width: int) -> list[Any]:
    import xlrd

    values: list[Any] = []
    for ctype, value in zip(sh.row_types(r, 0, width), sh.row_values(r, 0, width)):
        if ctype == xlrd.XL_CELL_DATE:
            try:
                value = xlrd.xldate.xldate_as_datetime(value, wb.datemode)
            except (ValueError, OverflowError, xlrd.xldate.XLDateError):
                pass
        elif ctype == xlrd.XL_CELL_BOOLEAN:
            value = bool(value)
        elif ctype == xlrd.XL_CELL_ERROR:
            value = xlrd.error_text_from_code.get(value, "#ERR")
        elif ctype in (xlrd.XL_CELL_EMPTY, xlrd.XL_CELL_BLANK):
            value = None
        values.append(value)
    return values


def _xls_text(path: Path, budget: ExtractionBudget, head: bytes) -> ExtractedDocument:
    """An '.xls' that is HTML, XML Spreadsheet 2003 or delimited text."""
    lead = head.lstrip(b"\xef\xbb\xbf \t\r\n")[:2048].lower()
    book = _Book("xls", budget)
    if lead.startswith(b"<?xml") and b"urn:schemas-microsoft-com:office:spreadsheet" in head:
        _spreadsheet_2003(path, book)
        return book.document(None, ["an XML Spreadsheet 2003 saved with an .xls name"])
    if b"<html" in lead or b"<table" in lead or lead.startswith(b"<!doctype"):
        return _html_tables(path, book)
    from spar_desktop.core.documents.extract_structured import _delimiter
    from spar_desktop.core.documents.textio import open_text, sniff_file_encoding

    encoding, warning = sniff_file_encoding(path)
    with open_text(path, encoding, newline="") as f:
        delimiter = _delimiter(f.read(64 * 1024), "tsv")  # Excel's text export is tab-separated
        f.seek(0)
        _read_rows(book, book.sheet(1, path.stem), csv.reader(f, delimiter=delimiter))
    notes = ["a delimited text file saved with an .xls name"] + ([warning] if warning else [])
    return book.document(None, notes)


def _html_tables(path: Path, book: _Book) -> ExtractedDocument:
    from bs4 import BeautifulSoup  # lazy, as in extract_text

    from spar_desktop.core.documents.extract_text import MAX_MARKUP_BYTES, extract_html

    note = "an HTML table saved with an .xls name"
    with open(path, "rb") as f:
        data = f.read(MAX_MARKUP_BYTES)
    soup = BeautifulSoup(data, "lxml")
    del data
    tables = [t for t in soup.find_all("table") if t.find_parent("table") is None]
    if not tables:
        return _with_note(extract_html(path, book.budget.max_chars), note.replace("an HTML table", "a web page"), "xls")
    title = soup.title.get_text(" ", strip=True) if soup.title else None
    for index, table in enumerate(tables, 1):
        caption = table.find("caption")
        name = caption.get_text(" ", strip=True) if caption else (title if len(tables) == 1 and title else f"Table {index}")
        rows = ([cell.get_text(" ", strip=True) for cell in tr.find_all(("td", "th"))
                 for _ in range(_span(cell))]
                for tr in table.find_all("tr") if tr.find_parent("table") is table)
        _read_rows(book, book.sheet(index, name), rows)
    return book.document(title, [note])


def _span(cell) -> int:
    try:
        return max(1, min(int(cell.get("colspan", 1)), 100))
    except (TypeError, ValueError):
        return 1


_SS = "{urn:schemas-microsoft-com:office:spreadsheet}"


def _spreadsheet_2003(path: Path, book: _Book) -> None:
    """Excel's 2003 XML format: Worksheet > Table > Row > Cell > Data, with 1-based ss:Index
    attributes skipping empty rows and cells."""
    index, sheet, row_no = 0, None, 0
    try:
        for event, elem in ET.iterparse(str(path), events=("start", "end")):
            if event == "start":
                if elem.tag == f"{_SS}Worksheet":
                    index += 1
                    sheet, row_no = book.sheet(index, elem.get(f"{_SS}Name") or f"Sheet{index}"), 0
                    if sheet is None:
                        return
                continue
            if elem.tag == f"{_SS}Row" and sheet is not None:
                row_no = int(elem.get(f"{_SS}Index") or row_no + 1)
                if not sheet.add(row_no, _ss_cells(elem)):
                    sheet.close()
                    return
                elem.clear()
            elif elem.tag == f"{_SS}Worksheet" and sheet is not None:
                sheet.close()
                sheet = None
                elem.clear()
    except ET.ParseError as exc:
        if sheet is not None and sheet.paragraphs:
            sheet.close()
            book.warnings.append("the file is damaged: only its first rows were read")
        elif not book.pages:
            raise ExtractionError("corrupt spreadsheet: its content is damaged or incomplete") from exc


def _ss_cells(row: ET.Element) -> list[Any]:
    values: list[Any] = []
    for cell in row.iter(f"{_SS}Cell"):
        at = int(cell.get(f"{_SS}Index") or len(values) + 1) - 1
        values.extend([None] * (at - len(values)))
        data = cell.find(f"{_SS}Data")
        text = "".join(data.itertext()) if data is not None else ""
        kind = data.get(f"{_SS}Type") if data is not None else None
        if kind == "Number":
            try:
                text = cell_text(float(text))
            except ValueError:
                pass
        elif kind == "DateTime":
            text = _iso_text(text)
        values.append(text)
    return values


def _iso_text(value: str) -> str:
    """'2019-03-04T00:00:00.000' -> '2019-03-04'; a time of day is kept to the minute."""
    try:
        return cell_text(dt.datetime.fromisoformat(value.rstrip("Z")))
    except ValueError:
        return value


# --------------------------------------------------------------------------------------- ODS


def extract_ods(path: Path, budget: ExtractionBudget) -> ExtractedDocument:
    book = _Book("ods", budget)
    with odf_package(path, budget, "spreadsheet") as zf:
        title = odf_title(zf)
        with zf.open("content.xml") as stream:
            try:
                _ods_sheets(stream, book)
            except ET.ParseError as exc:
                if not book.pages:
                    raise parse_error("spreadsheet", exc) from exc
                book.warnings.append("the file is damaged: only its first sheets were read")
    return book.document(title)


def _ods_sheets(stream, book: _Book) -> None:
    """Stream content.xml: rows are read when they end and then dropped from the tree.

    Repeated rows (``number-rows-repeated``, e.g. a million empty rows styled to the sheet's end)
    are counted, never looped over, unless they hold values."""
    stack: list[ET.Element] = []
    sheet: Optional[_Sheet] = None
    index = row_no = depth = 0
    for event, elem in ET.iterparse(stream, events=("start", "end")):
        if event == "start":
            stack.append(elem)
            if elem.tag == TABLE:
                depth += 1
                if depth == 1:
                    index += 1
                    sheet, row_no = book.sheet(index, elem.get(q("table:name")) or f"Sheet{index}"), 0
                    if sheet is None:
                        return
            continue
        stack.pop()
        if elem.tag == ROW and depth == 1 and sheet is not None:
            repeat = max(1, int(elem.get(ROWS_REPEATED) or 1))
            values = _ods_row(elem, sheet)
            book.tick()
            if any(values):
                for k in range(min(repeat, book.budget.max_rows + 1)):
                    if not sheet.add(row_no + 1 + k, values):
                        sheet.close()
                        return
            row_no += repeat
            stack[-1].remove(elem)
        elif elem.tag == TABLE:
            depth -= 1
            if depth == 0 and sheet is not None:
                sheet.close()
                sheet = None
                if stack:
                    stack[-1].remove(elem)


def _ods_row(row: ET.Element, sheet: _Sheet) -> list[str]:
    """Values of a row up to max_columns; empty repeated cells only move the column on."""
    limit = sheet.book.budget.max_columns
    values: list[str] = []
    col = 0
    for cell in row:
        if cell.tag not in (CELL, COVERED):
            continue
        repeat = max(1, int(cell.get(COLS_REPEATED) or 1))
        value = _ods_value(cell) if cell.tag == CELL else ""
        if value:
            if col >= limit:
                sheet._warn_wide()
                break
            values.extend([""] * (col - len(values)))
            values.extend([value] * min(repeat, limit - col))
            if col + repeat > limit:
                sheet._warn_wide()
        col += repeat
    return values


def _ods_value(cell: ET.Element) -> str:
    kind = cell.get(q("office:value-type"))
    if kind == "float":
        try:
            return cell_text(float(cell.get(q("office:value")) or ""))
        except ValueError:
            pass
    elif kind == "date":
        return _iso_text(cell.get(q("office:date-value")) or "")
    elif kind == "boolean":
        return "TRUE" if cell.get(q("office:boolean-value")) == "true" else "FALSE"
    return one_line(odf_text(cell))

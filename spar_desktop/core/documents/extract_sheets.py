"""Spreadsheets (.xlsx/.xlsm, .xls, .ods) as searchable rows that carry their column names.

One sheet is one page (page number = the sheet's position in the workbook). Each data row is a
paragraph of its own, "Row 12 — Sample: BR-T12; Erosion category: 3", so a question about one
value finds the row with the names of its columns wherever the chunker cuts. Workbooks are
streamed row by row (XLSX sheet XML through expat, ODS content.xml through iterparse) and stop at the
budget's row, column, sheet, character and time limits with a warning.

Old exporters often wrote HTML tables, delimited text or "XML Spreadsheet 2003" under an .xls
name; extract_legacy reads those as what they are.
"""

from __future__ import annotations

import datetime as dt
import os
import posixpath
import re
import zipfile
import zlib
from pathlib import Path
from typing import Any, Iterable, Iterator, Optional, Sequence
from xml.etree import ElementTree as ET
from xml.parsers import expat

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
    if isinstance(value, dt.time):
        return value.isoformat(timespec="seconds" if value.second else "minutes")
    if isinstance(value, dt.date):
        return value.isoformat()
    return one_line(str(value))


# ------------------------------------------------------------------------- rows -> page text


class SheetBook:
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
        if not self.paragraphs:
            text = f"Sheet: {self.name}\n{text}"  # counted against max_chars like the rows
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
            self.book.pages.append(PageText(self.index, "\n\n".join(self.paragraphs)))


def read_rows(book: SheetBook, sheet: Optional[_Sheet], rows: Iterable[tuple[int, Sequence[Any]]]) -> None:
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
            raise _corrupt(exc) from exc
        book.warnings.append(f"sheet '{sheet.name}' is damaged: only its first rows were read")
    sheet.close()


def _corrupt(exc: BaseException) -> ExtractionError:
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


# -------------------------------------------------------------------------------------- XLSX
# Read with expat straight from the zip, not with openpyxl: its read-only loader parses every
# sheet that lacks a <dimension> (files from openpyxl and many exporters) to its end before the
# first row is returned, beyond the reach of the time limit, and builds objects per cell.

_BUILTIN_DATES = {*range(14, 23), *range(27, 37), *range(45, 48), *range(50, 59)}
_FORMAT_NOISE = re.compile(r'"[^"]*"|\[[^\]]*\]|\\.|_.|\*.')  # quoted text, [Red]/[$-409], escapes
_READ_BLOCK = 1 << 16


def extract_xlsx(path: Path, budget: ExtractionBudget) -> ExtractedDocument:
    from spar_desktop.core.documents.extract_legacy import ole_kind

    kind = ole_kind(path)
    if kind == "encrypted":
        raise ExtractionError("spreadsheet is password-protected")
    if kind == "xls":
        doc = extract_xls(path, budget)
        return with_note(doc, "an old-format .xls workbook saved with an .xlsx name")
    if kind:
        raise ExtractionError("corrupt spreadsheet: not an Excel workbook")
    book = SheetBook("xlsx", budget)
    try:
        with zipfile.ZipFile(path) as zf:
            infos = {i.filename: i for i in zf.infolist()}
            if "xl/workbook.xml" not in infos:
                raise ExtractionError("corrupt spreadsheet: the file holds no workbook")
            sheets, date1904 = _xlsx_workbook(zf)
            strings = _xlsx_strings(zf, infos.get("xl/sharedStrings.xml"), book)
            dates = _xlsx_date_styles(zf, infos.get("xl/styles.xml"))
            for index, (name, part) in enumerate(sheets, 1):
                if part not in infos:
                    continue  # a chart sheet, or a sheet the file lost
                sheet = book.sheet(index, name)
                if sheet is None:
                    break
                with zf.open(part) as stream:
                    parser = _SheetParser(strings, dates, date1904, budget.max_columns)
                    read_rows(book, sheet, parser.rows(stream))
                    if parser.wide:
                        sheet._warn_wide()
            title = _xlsx_title(zf, infos.get("docProps/core.xml"))
    except zipfile.BadZipFile as exc:
        raise ExtractionError("corrupt spreadsheet: not a valid Excel file") from exc
    except (KeyError, zlib.error, EOFError, expat.ExpatError, ET.ParseError) as exc:
        raise _corrupt(exc) from exc
    return book.document(title)


def _xlsx_workbook(zf: zipfile.ZipFile) -> tuple[list[tuple[str, str]], bool]:
    """[(sheet name, zip part)] in tab order, and whether dates count from 1904 (old Mac Excel)."""
    root = ET.fromstring(zf.read("xl/workbook.xml"))
    targets: dict[str, str] = {}
    if "xl/_rels/workbook.xml.rels" in zf.namelist():
        for rel in ET.fromstring(zf.read("xl/_rels/workbook.xml.rels")):
            if rel.get("Type", "").endswith("/worksheet"):
                target = rel.get("Target", "")
                part = target.lstrip("/") if target.startswith("/") else posixpath.normpath(f"xl/{target}")
                targets[rel.get("Id", "")] = part
    sheets, date1904 = [], False
    for el in root.iter():
        tag = _local(el.tag)
        if tag == "workbookPr":
            date1904 = el.get("date1904", "").lower() in ("1", "true")
        elif tag == "sheet":
            rid = next((v for k, v in el.attrib.items() if k.endswith("}id")), "")
            sheets.append((el.get("name") or f"Sheet{len(sheets) + 1}", targets.get(rid, "")))
    return sheets, date1904


def _xlsx_strings(zf: zipfile.ZipFile, info: Optional[zipfile.ZipInfo], book: SheetBook) -> list[str]:
    """The shared string table (held whole: cells point into it), bounded by the unpack limit."""
    budget = book.budget
    if info is None:
        return []
    if info.file_size > budget.max_inflated_bytes:
        raise too_large("unpacked cell text", human_bytes(info.file_size), human_bytes(budget.max_inflated_bytes))
    strings: list[str] = []
    parts: list[str] = []
    state = {"collect": False, "phonetic": 0}
    names = _Names()

    def start(name: str, attrs: dict) -> None:
        tag = names[name]
        if tag == "si":
            parts.clear()
        elif tag == "rPh":
            state["phonetic"] += 1  # Japanese reading hints: not part of the text
        elif tag == "t" and not state["phonetic"]:
            state["collect"] = True

    def end(name: str) -> None:
        tag = names[name]
        if tag == "si":
            strings.append("".join(parts))
        elif tag == "rPh":
            state["phonetic"] -= 1
        elif tag == "t":
            state["collect"] = False

    def text(data: str) -> None:
        if state["collect"]:
            parts.append(data)

    parser = _expat(start, end, text)
    with zf.open(info) as stream:
        while block := stream.read(_READ_BLOCK):
            parser.Parse(block, False)
            book.clock.check()
    parser.Parse(b"", True)
    return strings


def _xlsx_date_styles(zf: zipfile.ZipFile, info: Optional[zipfile.ZipInfo]) -> frozenset[int]:
    """Indexes of cell styles that show numbers as dates or times."""
    if info is None or info.file_size > 64 * 1024 * 1024:
        return frozenset()
    root = ET.fromstring(zf.read(info))
    custom = {el.get("numFmtId"): el.get("formatCode", "") for el in root.iter() if _local(el.tag) == "numFmt"}
    xfs = next((el for el in root if _local(el.tag) == "cellXfs"), None)
    dates = set()
    for index, xf in enumerate(xfs if xfs is not None else ()):
        fmt = xf.get("numFmtId", "0")
        if (fmt.isdigit() and int(fmt) in _BUILTIN_DATES) or (fmt in custom and _is_date_format(custom[fmt])):
            dates.add(index)
    return frozenset(dates)


def _is_date_format(code: str) -> bool:
    if re.search(r"\[(h+|m+|s+)\]", code, re.I):
        return False  # elapsed time ([h]:mm): a duration, left as a number
    return bool(re.search(r"[dmyhs]", _FORMAT_NOISE.sub("", code), re.I))


def _xlsx_title(zf: zipfile.ZipFile, info: Optional[zipfile.ZipInfo]) -> Optional[str]:
    if info is None or info.file_size > 4 * 1024 * 1024:
        return None
    root = ET.fromstring(zf.read(info))
    return next((one_line(el.text or "") for el in root if _local(el.tag) == "title"), None)


def _local(tag: str) -> str:
    """'{ns}c' (ElementTree) or 'x:c' (expat without namespaces: prefixes vary by writer) -> 'c'."""
    return tag.rpartition("}")[2].rpartition(":")[2]


class _Names(dict):
    """Local names of the element names met so far: a dict lookup per element, not a split."""

    def __missing__(self, name: str) -> str:
        self[name] = _local(name)
        return self[name]


def _expat(start, end, text) -> "expat.XMLParserType":
    parser = expat.ParserCreate()
    parser.buffer_text = True
    parser.StartElementHandler, parser.EndElementHandler, parser.CharacterDataHandler = start, end, text
    return parser


class _SheetParser:
    """One worksheet's rows, streamed with expat: no element tree, memory of one row at a time."""

    def __init__(self, strings: list[str], dates: frozenset[int], date1904: bool, max_columns: int) -> None:
        self.strings, self.dates, self.date1904, self.max_columns = strings, dates, date1904, max_columns
        self.done: list[tuple[int, list[Any]]] = []
        self.row_no, self.values, self.next_col, self.wide = 0, [], 0, False
        self.col, self.kind, self.style, self.text, self.collect = 0, None, 0, [], False
        self.names = _Names()

    def rows(self, stream) -> Iterator[tuple[int, list[Any]]]:
        parser = _expat(self._start, self._end, self._chars)
        while block := stream.read(_READ_BLOCK):
            parser.Parse(block, False)
            yield from self.done
            self.done.clear()
        parser.Parse(b"", True)
        yield from self.done

    def _start(self, name: str, attrs: dict) -> None:
        tag = self.names[name]
        if tag == "c":
            ref = attrs.get("r")
            self.col = _column_index(ref) if ref else self.next_col
            self.kind, self.style, self.text = attrs.get("t"), int(attrs.get("s") or 0), []
        elif tag == "v" or (tag == "t" and self.kind == "inlineStr"):
            self.collect = True
        elif tag == "row":
            ref = attrs.get("r")
            self.row_no = int(ref) if ref and ref.isdigit() else self.row_no + 1
            self.values, self.next_col = [], 0
        elif tag == "rPh":
            self.kind = "phonetic"  # an inline string's reading hints: stop collecting

    def _end(self, name: str) -> None:
        tag = self.names[name]
        if tag in ("v", "t"):
            self.collect = False
        elif tag == "c":
            self.next_col = self.col + 1
            if not self.text:
                return
            if self.col >= self.max_columns:
                self.wide = True
                return
            self.values.extend([None] * (self.col - len(self.values)))
            self.values.append(self._value("".join(self.text)))
        elif tag == "row":
            self.done.append((self.row_no, self.values))

    def _chars(self, data: str) -> None:
        if self.collect:
            self.text.append(data)

    def _value(self, raw: str) -> Any:
        kind = self.kind
        if kind == "s":
            return self.strings[int(raw)] if raw.isdigit() and int(raw) < len(self.strings) else None
        if kind in ("inlineStr", "str", "phonetic", "e"):
            return raw
        if kind == "b":
            return raw.strip() in ("1", "true")
        if kind == "d":
            return iso_text(raw)
        try:
            number = float(raw)
        except ValueError:
            return raw
        if self.style in self.dates:
            return _excel_date(number, self.date1904)
        return number


def _column_index(ref: str) -> int:
    """'B12' -> 1."""
    if len(ref) > 1 and ref[1].isdigit() and "A" <= ref[0] <= "Z":
        return ord(ref[0]) - 65  # the usual one-letter column, quickly
    n = 0
    for ch in ref:
        if "A" <= ch <= "Z":
            n = n * 26 + ord(ch) - 64
        elif "a" <= ch <= "z":
            n = n * 26 + ord(ch) - 96
        else:
            break
    return max(n - 1, 0)


def _excel_date(serial: float, date1904: bool) -> Any:
    """An Excel day number as a date, datetime or time of day."""
    if not 0 <= serial < 2_958_466:  # past 9999-12-31: not a date after all
        return serial
    if serial < 1:  # a time of day
        return (dt.datetime(2000, 1, 1) + dt.timedelta(seconds=round(serial * 86400))).time()
    if date1904:
        base = dt.datetime(1904, 1, 1)
    else:
        base = dt.datetime(1899, 12, 30)
        if serial < 60:
            serial += 1  # Excel counts a 29 February 1900 that never was
    return base + dt.timedelta(seconds=round(serial * 86400))


def with_note(doc: ExtractedDocument, note: str, fmt: Optional[str] = None) -> ExtractedDocument:
    return ExtractedDocument(doc.pages, fmt or doc.format, doc.title, (note,) + doc.warnings, doc.no_text_reason)


# --------------------------------------------------------------------------------------- XLS


def extract_xls(path: Path, budget: ExtractionBudget) -> ExtractedDocument:
    with open(path, "rb") as f:
        head = f.read(8192)
    if head.startswith(b"PK\x03\x04"):
        return with_note(extract_xlsx(path, budget), "an .xlsx workbook saved with an .xls name", "xls")
    if not head.startswith(b"\xd0\xcf\x11\xe0") and _is_text(head):
        from spar_desktop.core.documents.extract_legacy import read_xls_export

        return read_xls_export(path, budget, head)
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
        book = SheetBook("xls", budget)
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
            rows = ((r + 1, _xls_row(wb, sh, r, width)) for r in range(sh.nrows))
            read_rows(book, sheet, rows)
            wb.unload_sheet(index)
        return book.document(None)
    finally:
        wb.release_resources()


def _xls_row(wb, sh, r: int, width: int) -> list[Any]:
    import xlrd

    values: list[Any] = []
    for ctype, value in zip(sh.row_types(r, 0, width), sh.row_values(r, 0, width)):
        if ctype == xlrd.XL_CELL_DATE:
            value = _excel_date(value, wb.datemode == 1)
        elif ctype == xlrd.XL_CELL_BOOLEAN:
            value = bool(value)
        elif ctype == xlrd.XL_CELL_ERROR:
            value = xlrd.error_text_from_code.get(value, "#ERR")
        elif ctype in (xlrd.XL_CELL_EMPTY, xlrd.XL_CELL_BLANK):
            value = None
        values.append(value)
    return values


def iso_text(value: str) -> str:
    """'2019-03-04T00:00:00.000' -> '2019-03-04'; a time of day is kept to the minute."""
    try:
        return cell_text(dt.datetime.fromisoformat(value.rstrip("Z")))
    except ValueError:
        return value


# --------------------------------------------------------------------------------------- ODS


def extract_ods(path: Path, budget: ExtractionBudget) -> ExtractedDocument:
    book = SheetBook("ods", budget)
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


def _ods_sheets(stream, book: SheetBook) -> None:
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
    """The text the cell shows (a number as formatted, TRUE for Calc's 1-as-boolean), but dates
    in ISO form: '04/03/19' means different days in different countries."""
    kind = cell.get(q("office:value-type"))
    shown = one_line(odf_text(cell))
    if kind == "float" and (not shown or shown.startswith("#")):  # '###': too narrow a column
        try:
            return cell_text(float(cell.get(q("office:value")) or ""))
        except ValueError:
            pass
    elif kind == "date":
        return iso_text(cell.get(q("office:date-value")) or "")
    elif kind == "boolean":
        return "TRUE" if cell.get(q("office:boolean-value")) == "true" else "FALSE"
    return shown

"""Spreadsheets (.xlsx/.xlsm, .xls, .ods) as searchable rows that carry their column names.

The entry points extract.py dispatches to. Each reader turns a workbook into numbered rows for
sheet_text, which writes one page per sheet (page number = the sheet's position in the workbook)
and one paragraph per row, "Row 12 — Sample: BR-T12; Erosion category: 3". Workbooks are streamed
row by row (XLSX sheet XML through expat in xlsx_stream, ODS content.xml through iterparse here)
and stop at the budget's row, column, sheet, character and time limits with a warning.

Old exporters often wrote HTML tables, delimited text or "XML Spreadsheet 2003" under an .xls
name; extract_legacy reads those as what they are.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Optional
from xml.etree import ElementTree as ET

from spar_desktop.core.documents.budget import ExtractionBudget
from spar_desktop.core.documents.errors import ExtractionError
from spar_desktop.core.documents.extract_wordproc import (
    CELL, COLS_REPEATED, COVERED, ROW, ROWS_REPEATED, TABLE, odf_package, odf_text, odf_title, one_line,
    parse_error, q)
from spar_desktop.core.documents.ole_kinds import ole_kind
from spar_desktop.core.documents.sheet_text import (
    Sheet, SheetBook, cell_text, corrupt_error, iso_text, read_rows, with_note)
from spar_desktop.core.documents.types import ExtractedDocument
from spar_desktop.core.documents.xls_exports import read_xls_export
from spar_desktop.core.documents.xlsx_stream import excel_date, read_xlsx

# -------------------------------------------------------------------------------------- XLSX


def extract_xlsx(path: Path, budget: ExtractionBudget) -> ExtractedDocument:
    kind = ole_kind(path)
    if kind == "encrypted":
        raise ExtractionError("spreadsheet is password-protected")
    if kind == "xls":
        doc = extract_xls(path, budget)
        return with_note(doc, "an old-format .xls workbook saved with an .xlsx name")
    if kind:
        raise ExtractionError("corrupt spreadsheet: not an Excel workbook")
    book = SheetBook("xlsx", budget)
    title = read_xlsx(path, book)
    return book.document(title)


# --------------------------------------------------------------------------------------- XLS


def extract_xls(path: Path, budget: ExtractionBudget) -> ExtractedDocument:
    with open(path, "rb") as f:
        head = f.read(8192)
    if head.startswith(b"PK\x03\x04"):
        return with_note(extract_xlsx(path, budget), "an .xlsx workbook saved with an .xls name", "xls")
    if not head.startswith(b"\xd0\xcf\x11\xe0") and _is_text(head):
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
        raise corrupt_error(exc) from exc
    try:
        book = SheetBook("xls", budget)
        for index in range(wb.nsheets):
            sheet = book.sheet(index + 1, wb.sheet_names()[index])
            if sheet is None:
                break
            try:
                sh = wb.sheet_by_index(index)  # on_demand: one sheet in memory at a time
            except Exception as exc:
                raise corrupt_error(exc) from exc
            width = min(sh.ncols, budget.max_columns)
            if sh.ncols > width:
                sheet.warn_wide()
            rows = ((r + 1, _xls_row(wb, sh, r, width)) for r in range(sh.nrows))
            read_rows(book, sheet, rows)
            wb.unload_sheet(index)
        return book.document(None)
    finally:
        wb.release_resources()


def _xls_row(wb, sh, r: int, width: int) -> list[Any]:
    import xlrd  # lazy: only .xls needs it

    values: list[Any] = []
    for ctype, value in zip(sh.row_types(r, 0, width), sh.row_values(r, 0, width)):
        if ctype == xlrd.XL_CELL_DATE:
            value = excel_date(value, wb.datemode == 1)
        elif ctype == xlrd.XL_CELL_BOOLEAN:
            value = bool(value)
        elif ctype == xlrd.XL_CELL_ERROR:
            value = xlrd.error_text_from_code.get(value, "#ERR")
        elif ctype in (xlrd.XL_CELL_EMPTY, xlrd.XL_CELL_BLANK):
            value = None
        values.append(value)
    return values


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
    sheet: Optional[Sheet] = None
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


def _ods_row(row: ET.Element, sheet: Sheet) -> list[str]:
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
                sheet.warn_wide()
                break
            values.extend([""] * (col - len(values)))
            values.extend([value] * min(repeat, limit - col))
            if col + repeat > limit:
                sheet.warn_wide()
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

"""'.xls' files that are not workbooks: old exporters wrote HTML tables, delimited text or XML
Spreadsheet 2003 under that name. Each is read into the same rows as a workbook (extract_sheets.py
hands them here).
"""

from __future__ import annotations

import codecs
import csv
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

from spar_desktop.core.documents.budget import ExtractionBudget
from spar_desktop.core.documents.errors import ExtractionError
from spar_desktop.core.documents.extract_structured import sniff_delimiter
from spar_desktop.core.documents.extract_text import MAX_MARKUP_BYTES, extract_html, html_encoding
from spar_desktop.core.documents.html_tables import read_html_tables
from spar_desktop.core.documents.sheet_text import SheetBook, cell_text, iso_text, read_rows, with_note
from spar_desktop.core.documents.textio import open_text, sniff_file_encoding
from spar_desktop.core.documents.types import ExtractedDocument


def read_xls_export(path: Path, budget: ExtractionBudget, head: bytes) -> ExtractedDocument:
    """An '.xls' that is HTML, XML Spreadsheet 2003 or delimited text (``head``: its first bytes),
    read into the same rows as a workbook."""
    lead = head.lstrip(b"\xef\xbb\xbf \t\r\n")[:2048].lower()
    book = SheetBook("xls", budget)
    if lead.startswith(b"<?xml") and b"urn:schemas-microsoft-com:office:spreadsheet" in head:
        _spreadsheet_2003(path, book)
        return book.document(None, ["an XML Spreadsheet 2003 saved with an .xls name"])
    if b"<html" in lead or b"<table" in lead or lead.startswith(b"<!doctype"):
        return _html_tables(path, book)
    encoding, warning = sniff_file_encoding(path)
    with open_text(path, encoding, newline="") as f:
        delimiter = sniff_delimiter(f.read(64 * 1024), "tsv")  # Excel's text export is tab-separated
        f.seek(0)
        read_rows(book, book.sheet(1, path.stem), enumerate(csv.reader(f, delimiter=delimiter), 1))
    notes = ["a delimited text file saved with an .xls name"] + ([warning] if warning else [])
    return book.document(None, notes)


def _html_tables(path: Path, book: SheetBook) -> ExtractedDocument:
    note = "an HTML table saved with an .xls name"
    with open(path, "rb") as f:
        encoding = html_encoding(f.read(64 * 1024))
        f.seek(0)
        decoder = codecs.getincrementaldecoder(encoding)(errors="replace")

        def pieces():
            left = MAX_MARKUP_BYTES
            while left > 0:
                block = f.read(min(1 << 20, left))
                if not block:
                    break
                left -= len(block)
                yield decoder.decode(block)
            yield decoder.decode(b"", final=True)

        title, tables = read_html_tables(pieces())
    if not tables:
        return with_note(extract_html(path, book.budget.max_chars), note.replace("an HTML table", "a web page"), "xls")
    for index, table in enumerate(tables, 1):
        name = table.caption or (title if len(tables) == 1 and title else f"Table {index}")
        read_rows(book, book.sheet(index, name), enumerate(table.rows, 1))
    return book.document(title, [note])


_SS = "{urn:schemas-microsoft-com:office:spreadsheet}"


def _spreadsheet_2003(path: Path, book: SheetBook) -> None:
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
                row_no = _index(elem, row_no + 1)
                if not sheet.add(row_no, _ss_cells(elem, book.budget.max_columns)):
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


def _index(elem: ET.Element, default: int) -> int:
    """ss:Index (1-based), or ``default`` when absent or not a number."""
    value = elem.get(f"{_SS}Index") or ""
    return int(value) if value.isdigit() and int(value) > 0 else default


def _ss_cells(row: ET.Element, max_columns: int) -> list[Any]:
    values: list[Any] = []
    for cell in row.iter(f"{_SS}Cell"):
        at = _index(cell, len(values) + 1) - 1
        if at >= max_columns + 1:  # one past the limit, so the sheet still warns that it cut columns
            break
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
            text = iso_text(text)
        values.append(text)
    return values

"""A streaming XLSX reader: worksheet XML parsed with expat straight from the zip, one row at a time.

Not openpyxl: its read-only loader parses every sheet that lacks a <dimension> (files from
openpyxl and many exporters) to its end before the first row is returned, beyond the reach of the
time limit, and builds objects per cell. This reader handles what that leaves to it: shared and
inline strings, date number formats (built-in and custom), 1904-based dates, and sparse rows whose
cells name their own columns.
"""

from __future__ import annotations

import datetime as dt
import posixpath
import re
import zipfile
import zlib
from pathlib import Path
from typing import Any, Iterator, Optional
from xml.etree import ElementTree as ET
from xml.parsers import expat

from spar_desktop.core.documents.budget import human_bytes, too_large
from spar_desktop.core.documents.errors import ExtractionError
from spar_desktop.core.documents.extract_wordproc import one_line
from spar_desktop.core.documents.sheet_text import SheetBook, corrupt_error, iso_text, read_rows

_BUILTIN_DATES = {*range(14, 23), *range(27, 37), *range(45, 48), *range(50, 59)}
_FORMAT_NOISE = re.compile(r'"[^"]*"|\[[^\]]*\]|\\.|_.|\*.')  # quoted text, [Red]/[$-409], escapes
_READ_BLOCK = 1 << 16


def read_xlsx(path: Path, book: SheetBook) -> Optional[str]:
    """Read the workbook's sheets into ``book``; its title (document properties), if any."""
    budget = book.budget
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
                        sheet.warn_wide()
            return _xlsx_title(zf, infos.get("docProps/core.xml"))
    except zipfile.BadZipFile as exc:
        raise ExtractionError("corrupt spreadsheet: not a valid Excel file") from exc
    except (KeyError, zlib.error, EOFError, expat.ExpatError, ET.ParseError) as exc:
        raise corrupt_error(exc) from exc


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
            return excel_date(number, self.date1904)
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


def excel_date(serial: float, date1904: bool) -> Any:
    """An Excel day number (XLSX or XLS) as a date, datetime or time of day."""
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

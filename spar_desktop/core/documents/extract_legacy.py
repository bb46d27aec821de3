"""Office 97–2003 Word (.doc) and PowerPoint (.ppt) files, through an installed converter.

No maintained pure-Python reader exists for these binary formats, so a converter does the reading:
LibreOffice when installed (it keeps slides, tables and headings: the result is read by the DOCX
and PPTX readers), else the small text dumpers antiword/catdoc/catppt. Each runs on a private copy
of the file in a temporary folder (LibreOffice would leave a lock file next to the original), with
the per-file time limit and a cap on its output. Old shares also hold many ".doc" files that are
really RTF, HTML or plain text, and ".xls" files that old exporters wrote as HTML tables, delimited
text or XML Spreadsheet 2003: those are read as what they are.
"""

from __future__ import annotations

import codecs

import csv
import os
import shutil
import signal
import subprocess
import tempfile
import threading
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional
from xml.etree import ElementTree as ET

from spar_desktop.core.documents.budget import SETTINGS_HINT, BudgetExceeded, ExtractionBudget
from spar_desktop.core.documents.errors import ExtractionError
from spar_desktop.core.documents.ole_kinds import OLE_MAGIC, legacy_encrypted, ole_kind
from spar_desktop.core.documents.types import ExtractedDocument, PageText

if TYPE_CHECKING:
    from spar_desktop.core.documents.sheet_text import SheetBook

_KNOWN_SOFFICE = (r"C:\Program Files\LibreOffice\program\soffice.exe",
                  r"C:\Program Files (x86)\LibreOffice\program\soffice.exe",
                  "/Applications/LibreOffice.app/Contents/MacOS/soffice")
_NAMES = {"doc": "Word .doc file", "ppt": "PowerPoint .ppt file"}
_TEXT_TOOLS = {"doc": (("antiword", "-m", "UTF-8.txt"), ("catdoc", "-d", "utf-8", "-w")),
               "ppt": (("catppt", "-d", "utf-8"),)}
_HINT = {"doc": "install LibreOffice (or catdoc) to read it", "ppt": "install LibreOffice (or catppt) to read it"}


# ------------------------------------------------------------------------------ sniffing


def _sniff(path: Path) -> str:
    """'ole', 'zip', 'rtf', 'html', 'text' or 'binary', from the first bytes."""
    with open(path, "rb") as f:
        head = f.read(8192)
    if head.startswith(OLE_MAGIC):
        return "ole"
    if head.startswith(b"PK\x03\x04"):
        return "zip"
    lead = head.lstrip(b"\xef\xbb\xbf \t\r\n")[:1024].lower()
    if lead.startswith(b"{\\rtf"):
        return "rtf"
    if lead.startswith((b"<!doctype html", b"<html")) or b"<html" in lead:
        return "html"
    if not head or (b"\x00" not in head and sum(b < 9 or 13 < b < 32 for b in head) < len(head) // 20):
        return "text"
    return "binary"


# ----------------------------------------------------------------------------------- readers


def extract_doc(path: Path, budget: ExtractionBudget) -> ExtractedDocument:
    return _extract_legacy(path, budget, "doc")


def extract_ppt(path: Path, budget: ExtractionBudget) -> ExtractedDocument:
    return _extract_legacy(path, budget, "ppt")


def legacy_converter(fmt: str = "doc") -> Optional[str]:
    """The tool that would read a legacy ``fmt`` ('doc' or 'ppt') file here, None when none is
    installed (for messages such as "install LibreOffice ...")."""
    if _soffice():
        return "LibreOffice"
    return next((tool[0] for tool in _TEXT_TOOLS[fmt] if shutil.which(tool[0])), None)


def _extract_legacy(path: Path, budget: ExtractionBudget, fmt: str) -> ExtractedDocument:
    kind = _sniff(path)
    if kind != "ole":
        return _read_as_other(path, budget, fmt, kind)
    found = ole_kind(path)
    if found == "encrypted" or (found == fmt and legacy_encrypted(path, fmt)):
        raise ExtractionError(f"{'Word document' if fmt == 'doc' else 'presentation'} is password-protected")
    if found in ("doc", "xls", "ppt") and found != fmt:
        what = {"doc": "a Word document", "xls": "an Excel workbook", "ppt": "a PowerPoint presentation"}[found]
        raise ExtractionError(f"not a {_NAMES[fmt]}: the file holds {what}; rename it to .{found} to read it")
    return _convert(path, budget, fmt)


def _read_as_other(path: Path, budget: ExtractionBudget, fmt: str, kind: str) -> ExtractedDocument:
    """A '.doc' that is RTF/HTML/text, or a '.doc'/'.ppt' that is really DOCX/PPTX."""
    from spar_desktop.core.documents import extract_text

    if kind == "zip":
        if fmt == "doc":
            from spar_desktop.core.documents.extract_office import extract_docx

            doc, note = extract_docx(path, budget.max_chars), "a .docx document saved with a .doc name"
        else:
            from spar_desktop.core.documents.extract_slides import extract_pptx

            doc, note = extract_pptx(path, budget), "a .pptx presentation saved with a .ppt name"
    elif fmt == "ppt":
        raise ExtractionError("corrupt presentation: not a PowerPoint 97–2003 file")
    elif kind == "rtf":
        from spar_desktop.core.documents.extract_wordproc import extract_rtf

        doc, note = extract_rtf(path, budget), "an RTF document saved with a .doc name"
    elif kind == "html":
        doc, note = extract_text.extract_html(path, budget.max_chars), "a web page saved with a .doc name"
    elif kind == "text":
        doc, note = extract_text.extract_txt(path, budget.max_chars), "a plain-text file saved with a .doc name"
    else:  # Word for DOS / Word 2 / WordPerfect: only the text dumpers may cope
        return _convert(path, budget, fmt, tools_only=True)
    return replace(doc, format=fmt, warnings=(note,) + doc.warnings)


# ------------------------------------------------------------------------------- conversion


def _convert(path: Path, budget: ExtractionBudget, fmt: str, tools_only: bool = False) -> ExtractedDocument:
    clock = budget.clock()
    soffice = None if tools_only else _soffice()
    tools = [t for t in _TEXT_TOOLS[fmt] if shutil.which(t[0])]
    if not soffice and not tools:
        if tools_only:
            raise ExtractionError(f"not a {_NAMES[fmt]} this app can read")
        raise ExtractionError(f"legacy {_NAMES[fmt]}: {_HINT[fmt]}")
    if soffice:
        doc = _via_libreoffice(soffice, path, budget, fmt, clock)
        if doc is not None or not tools:
            if doc is None:
                raise ExtractionError(f"corrupt {_NAMES[fmt]}: LibreOffice could not open it")
            return doc
    for tool in tools:
        text = _run_text([*tool, str(path)], budget, clock)
        if text is not None:
            return _text_document(text, budget, fmt, tool[0])
    raise ExtractionError(f"corrupt {_NAMES[fmt]}: {tools[-1][0]} could not read it")


def _soffice() -> Optional[str]:
    found = shutil.which("soffice") or shutil.which("libreoffice")
    return found or next((p for p in _KNOWN_SOFFICE if os.path.isfile(p)), None)


def _via_libreoffice(soffice: str, path: Path, budget: ExtractionBudget, fmt: str, clock) -> Optional[ExtractedDocument]:
    """Convert a private copy to DOCX/PPTX in a temporary folder and read that; None on failure."""
    target = "docx" if fmt == "doc" else "pptx"
    work = Path(tempfile.mkdtemp(prefix="spar-legacy-"))
    try:
        source = work / f"input.{fmt}"
        shutil.copyfile(path, source)
        cmd = [soffice, f"-env:UserInstallation={(work / 'profile').as_uri()}", "--headless",
               "--norestore", "--nologo", "--nodefault", "--nolockcheck",
               "--convert-to", target, "--outdir", str(work / "out"), str(source)]
        _run(cmd, budget, clock, cap_bytes=1 << 20)
        result = work / "out" / f"input.{target}"
        if not result.is_file() or result.stat().st_size == 0:
            return None
        rest = replace(budget, max_seconds=max(0.001, budget.max_seconds - clock.elapsed()))
        if fmt == "doc":
            from spar_desktop.core.documents.extract_office import extract_docx

            doc = extract_docx(result, budget.max_chars)
        else:
            from spar_desktop.core.documents.extract_slides import extract_pptx

            doc = extract_pptx(result, rest)
        return replace(doc, format=fmt)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _run_text(cmd: list[str], budget: ExtractionBudget, clock) -> Optional[str]:
    """A text dumper's output (capped to the text budget), None when it failed."""
    code, out, truncated = _run(cmd, budget, clock, cap_bytes=budget.max_chars * 4)
    if code != 0 and not truncated:
        return None
    return out.decode("utf-8", "replace")


def _text_document(text: str, budget: ExtractionBudget, fmt: str, tool: str) -> ExtractedDocument:
    warnings: list[str] = []
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    # catppt separates slides with form feeds; antiword/catdoc use them for page breaks.
    pages = [p.strip() for p in text.split("\f")] if fmt == "ppt" else [text.replace("\f", "\n\n").strip()]
    kept, left = [], budget.max_chars
    for number, page in enumerate(pages, 1):
        if left <= 0 or number > budget.max_pages:
            warnings.append(f"text truncated at {budget.max_chars:,} characters" if left <= 0
                            else f"only the first {budget.max_pages:,} slides were read (the per-file limit)")
            break
        if len(page) > left:
            page = page[:left]
            warnings.append(f"text truncated at {budget.max_chars:,} characters")
        if page:
            kept.append(PageText(number, page))
        left -= len(page) + 2
    if not kept:
        return ExtractedDocument((), fmt, None, tuple(warnings), f"{'document' if fmt == 'doc' else 'presentation'} has no text")
    warnings.append(f"read with {tool}: layout and tables are approximate (install LibreOffice for better results)")
    return ExtractedDocument(tuple(kept), fmt, None, tuple(warnings))


def _run(cmd: list[str], budget: ExtractionBudget, clock, cap_bytes: int) -> tuple[int, bytes, bool]:
    """Run ``cmd`` within the time left in the budget, keeping at most ``cap_bytes`` of its output
    (the tool is stopped once it has written that much): (exit code, output, truncated)."""
    timeout = budget.max_seconds - clock.elapsed()
    if timeout <= 0:
        clock.check()
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            start_new_session=os.name == "posix")
    chunks: list[bytes] = []
    state = {"size": 0, "truncated": False}

    def pump() -> None:
        while True:
            block = proc.stdout.read1(65536)
            if not block:
                return
            chunks.append(block[: max(0, cap_bytes - state["size"])])
            state["size"] += len(block)
            if state["size"] > cap_bytes:
                state["truncated"] = True
                _kill(proc)
                return

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill(proc)
        proc.wait()
        reader.join(5)
        raise BudgetExceeded(f"too slow to read: stopped after {budget.max_seconds:g} s "
                             f"(the per-file time limit; {SETTINGS_HINT})") from None
    _kill(proc)  # a helper it started may outlive it (soffice.bin): none may stay behind
    reader.join(5)
    proc.stdout.close()
    return proc.returncode, b"".join(chunks), state["truncated"]


def _kill(proc: subprocess.Popen) -> None:
    """Stop the tool and anything it started (soffice is a wrapper around soffice.bin)."""
    try:
        if os.name == "posix":
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    except (ProcessLookupError, PermissionError, OSError):
        pass


# ------------------------------------------------------- '.xls' exports that are not workbooks


def read_xls_export(path: Path, budget: ExtractionBudget, head: bytes) -> ExtractedDocument:
    """An '.xls' that is HTML, XML Spreadsheet 2003 or delimited text (``head``: its first bytes),
    read into the same rows as a workbook."""
    from spar_desktop.core.documents.sheet_text import SheetBook, read_rows

    lead = head.lstrip(b"\xef\xbb\xbf \t\r\n")[:2048].lower()
    book = SheetBook("xls", budget)
    if lead.startswith(b"<?xml") and b"urn:schemas-microsoft-com:office:spreadsheet" in head:
        _spreadsheet_2003(path, book)
        return book.document(None, ["an XML Spreadsheet 2003 saved with an .xls name"])
    if b"<html" in lead or b"<table" in lead or lead.startswith(b"<!doctype"):
        return _html_tables(path, book)
    from spar_desktop.core.documents.extract_structured import sniff_delimiter
    from spar_desktop.core.documents.textio import open_text, sniff_file_encoding

    encoding, warning = sniff_file_encoding(path)
    with open_text(path, encoding, newline="") as f:
        delimiter = sniff_delimiter(f.read(64 * 1024), "tsv")  # Excel's text export is tab-separated
        f.seek(0)
        read_rows(book, book.sheet(1, path.stem), enumerate(csv.reader(f, delimiter=delimiter), 1))
    notes = ["a delimited text file saved with an .xls name"] + ([warning] if warning else [])
    return book.document(None, notes)


def _html_tables(path: Path, book: "SheetBook") -> ExtractedDocument:
    from spar_desktop.core.documents.extract_text import MAX_MARKUP_BYTES, extract_html, html_encoding
    from spar_desktop.core.documents.html_tables import read_html_tables
    from spar_desktop.core.documents.sheet_text import read_rows, with_note

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


def _spreadsheet_2003(path: Path, book: "SheetBook") -> None:
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
    from spar_desktop.core.documents.sheet_text import cell_text, iso_text

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

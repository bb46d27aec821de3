"""Office 97–2003 Word (.doc) and PowerPoint (.ppt) files, through an installed converter.

No maintained pure-Python reader exists for these binary formats, so a converter does the reading:
LibreOffice when installed (it keeps slides, tables and headings: the result is read by the DOCX
and PPTX readers), else the small text dumpers antiword/catdoc/catppt. Each runs on a private copy
of the file in a temporary folder (LibreOffice would leave a lock file next to the original), with
the per-file time limit and a cap on its output. Old shares also hold many ".doc" files that are
really RTF, HTML or plain text, and ".pptx" files that are old-format decks: those are read as what
they are (".xls" text exports: xls_exports.py). This module sits above the modern readers it
hands files to.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import threading
from dataclasses import replace
from pathlib import Path
from typing import Optional

from spar_desktop.core.documents import extract_text
from spar_desktop.core.documents.budget import SETTINGS_HINT, BudgetExceeded, ExtractionBudget
from spar_desktop.core.documents.errors import ExtractionError
from spar_desktop.core.documents.extract_office import extract_docx
from spar_desktop.core.documents.extract_slides import extract_pptx
from spar_desktop.core.documents.extract_wordproc import extract_rtf
from spar_desktop.core.documents.ole_kinds import OLE_MAGIC, legacy_encrypted, ole_kind
from spar_desktop.core.documents.types import ExtractedDocument, PageText

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
    if kind == "zip":
        if fmt == "doc":
            doc, note = extract_docx(path, budget.max_chars), "a .docx document saved with a .doc name"
        else:
            doc, note = extract_pptx(path, budget), "a .pptx presentation saved with a .ppt name"
    elif fmt == "ppt":
        raise ExtractionError("corrupt presentation: not a PowerPoint 97–2003 file")
    elif kind == "rtf":
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
            doc = extract_docx(result, budget.max_chars)
        else:
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


# ------------------------------------------------------------ '.pptx' that is an old-format deck


def extract_pptx_file(path: Path, budget: ExtractionBudget) -> ExtractedDocument:
    """A '.pptx' file: python-pptx, or the .ppt converters when it holds an old-format deck."""
    if ole_kind(path) != "ppt":
        return extract_pptx(path, budget)
    doc = extract_ppt(path, budget)
    return ExtractedDocument(doc.pages, "pptx", doc.title,
                             ("an old-format .ppt presentation saved with a .pptx name",) + doc.warnings,
                             doc.no_text_reason)

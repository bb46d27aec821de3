"""DOCX extraction with python-docx: body paragraphs and tables in document order, one page.

DOCX has no fixed pages (layout happens in Word), so the whole body is page 1.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from spar_desktop.core.documents.errors import ExtractionError
from spar_desktop.core.documents.types import ExtractedDocument, PageText

OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"


def _check_container(path: Path) -> None:
    """Give a precise reason before python-docx fails with a generic one."""
    with open(path, "rb") as f:
        head = f.read(8)
    if head.startswith(OLE_MAGIC):
        # Word stores password-protected .docx files inside an OLE container, like old .doc.
        raise ExtractionError("DOCX is password-protected or is a legacy Word .doc file")
    try:
        with zipfile.ZipFile(path) as zf:
            names = set(zf.namelist())
    except zipfile.BadZipFile as exc:
        raise ExtractionError("not a valid DOCX (not a zip file)") from exc
    if "word/document.xml" not in names:
        raise ExtractionError("not a valid DOCX (zip without word/document.xml)")


def extract_docx(path: Path, max_chars: int) -> ExtractedDocument:
    _check_container(path)
    import docx  # python-docx pulls in lxml: load only when a DOCX is read
    from docx.table import Table

    try:
        document = docx.Document(str(path))
    except Exception as exc:
        raise ExtractionError(f"corrupt DOCX: {exc}") from exc
    title = (document.core_properties.title or "").strip() or None
    blocks: list[str] = []
    warnings: list[str] = []
    total = 0
    for item in document.iter_inner_content():
        block = _table_text(item) if isinstance(item, Table) else item.text.strip()
        if not block:
            continue
        if total + len(block) > max_chars:
            blocks.append(block[: max(0, max_chars - total)])
            warnings.append(f"text truncated at {max_chars:,} characters")
            break
        blocks.append(block)
        total += len(block) + 2
    text = "\n\n".join(b for b in blocks if b)
    if not text:
        return ExtractedDocument((), "docx", title, tuple(warnings), "document has no text")
    return ExtractedDocument((PageText(1, text),), "docx", title, tuple(warnings))


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

"""Document metadata the scan reads cheaply besides PDFs: Office Open XML and OpenDocument core
properties (title, author, created) and mail headers (subject → title, From → author, Date →
created, To/Cc kept), so date tags and date filters work for mail and office files.

Each part is read with a size cap: a crafted ``docProps/core.xml`` that inflates to a gigabyte
costs at most ``MAX_PART_BYTES`` here.
"""

from __future__ import annotations

import re
import zipfile
from datetime import datetime
from pathlib import Path
from typing import Optional

from spar_desktop.core.documents.budget import ExtractionBudget
from spar_desktop.core.documents.errors import ExtractionError
from spar_desktop.core.documents.extract_mail import mail_metadata as read_headers
from spar_desktop.core.library.models import FileStatus
from spar_desktop.core.library.probe_result import ProbeResult

MAX_PART_BYTES = 1024 * 1024
KIND_NAMES = {"docx": "DOCX", "xlsx": "XLSX spreadsheet", "pptx": "PPTX presentation", "odt": "ODT document",
              "ods": "ODS spreadsheet", "odp": "ODP presentation"}
_MAIN_PARTS = {"docx": "word/document.xml", "xlsx": "xl/workbook.xml", "pptx": "ppt/presentation.xml",
               "odt": "content.xml", "ods": "content.xml", "odp": "content.xml"}


def parse_iso_date(value: str | None) -> Optional[datetime]:
    if not value:
        return None
    try:
        dt = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return dt.replace(tzinfo=None)


def _part(zf: zipfile.ZipFile, name: str) -> str:
    try:
        with zf.open(name) as f:
            return f.read(MAX_PART_BYTES).decode("utf-8", "replace")
    except KeyError:
        return ""


def _tag(xml: str, name: str) -> Optional[str]:
    m = re.search(rf"<(?:[\w-]+:)?{name}\b[^>]*>([^<]*)</", xml)
    return (m.group(1).strip() or None) if m else None


def office_metadata(path: str, fmt: str, result: ProbeResult) -> None:
    """Title/author/created/pages of a docx/xlsx/pptx/odt/ods/odp; a broken container → ERROR."""
    kind = KIND_NAMES.get(fmt, fmt)
    try:
        with zipfile.ZipFile(path) as zf:
            names = set(zf.namelist())
            if _MAIN_PARTS[fmt] not in names:
                result.status, result.error = FileStatus.ERROR, f"not a valid {kind} (a zip without {_MAIN_PARTS[fmt]})"
                return
            if fmt in ("odt", "ods", "odp"):
                meta = _part(zf, "meta.xml")
                result.title, result.author = _tag(meta, "title"), _tag(meta, "initial-creator") or _tag(meta, "creator")
                result.created_at = parse_iso_date(_tag(meta, "creation-date"))
                return
            core, app = _part(zf, "docProps/core.xml"), _part(zf, "docProps/app.xml")
    except zipfile.BadZipFile:
        result.status, result.error = FileStatus.ERROR, f"corrupt {kind}: not a valid zip container (damaged, or not what its name says)"
        return
    except (OSError, RuntimeError, ValueError, EOFError) as exc:
        # RuntimeError: an encrypted zip entry
        result.status, result.error = FileStatus.ERROR, f"corrupt {kind}: {exc}"
        return
    except Exception as exc:  # noqa: BLE001 - zlib.error and other decoder errors: one file's problem
        result.status, result.error = FileStatus.ERROR, f"corrupt {kind}: {type(exc).__name__}"
        return
    result.title = _tag(core, "title")
    result.author = _tag(core, "creator")
    result.created_at = parse_iso_date(_tag(core, "created"))
    count = _tag(app, "Pages") or _tag(app, "Slides")
    result.page_count = int(count) if count and count.isdigit() else None


def mail_metadata(path: str, fmt: str, result: ProbeResult) -> None:
    """Subject, sender and date of a mail from its headers; an unreadable mail → ERROR."""
    try:
        meta = read_headers(Path(path), fmt, ExtractionBudget())
    except ExtractionError as exc:
        result.status, result.error = FileStatus.ERROR, exc.message
        return
    except Exception as exc:  # noqa: BLE001 - a mail parser bug on one file must not stop a scan
        result.status, result.error = FileStatus.ERROR, f"unreadable mail: {type(exc).__name__}"
        return
    result.title, result.author, result.created_at = meta.title, meta.author, meta.created_at
    extra = {k: list(v) for k, v in (("to", meta.to), ("cc", meta.cc)) if v}
    if extra:
        result.extra.update(extra)

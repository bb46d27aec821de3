"""Reading a file for a workspace build: extraction, then OCR for what has no text layer.

OCR is expensive, so it never runs during the metadata scan: a build calls ``read_document`` for
the files it needs, with its own progress and cancel. OCR text is cached by content hash
(``cache/ocr.sqlite3`` in the data dir), so the same scan is read once, whichever workspace or
copy needs it. A document that needs OCR when OCR is off (or not installed) raises, so it is
not cached as "no text" and the next build with OCR on reads it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Optional

from spar_desktop.core.documents.budget import ExtractionBudget
from spar_desktop.core.documents.errors import ExtractionError
from spar_desktop.core.documents.extract import extract
from spar_desktop.core.documents.materialize import materialized
from spar_desktop.core.documents.ocr import needs_ocr, ocr_document, ocr_unavailable
from spar_desktop.core.documents.ocr_cache import OcrCache
from spar_desktop.core.documents.types import ExtractedDocument
from spar_desktop.core.documents.virtual import is_virtual
from spar_desktop.core.progress import CancelToken, ProgressCallback, no_progress

OCR_NOTE = "text from OCR"


@dataclass(frozen=True)
class ReadOptions:
    budget: ExtractionBudget = ExtractionBudget()
    ocr: bool = True
    ocr_cache_path: Optional[Path] = None  # None: OCR results are not kept between builds


def read_document(path: str, fmt: Optional[str], content_hash: Optional[str], options: ReadOptions,
                  cancel: Optional[CancelToken] = None, progress: ProgressCallback = no_progress) -> ExtractedDocument:
    """The text of ``path`` (a real or a virtual child path) as a build needs it."""
    if not is_virtual(path) or os.path.exists(path):
        return _read(Path(path), fmt, content_hash, options, cancel, progress)
    with materialized(path, options.budget) as real:
        return _read(real, fmt, content_hash, options, cancel, progress)


def _read(real: Path, fmt: Optional[str], content_hash: Optional[str], options: ReadOptions,
          cancel: Optional[CancelToken], progress: ProgressCallback) -> ExtractedDocument:
    doc = extract(real, fmt, budget=options.budget)
    if not needs_ocr(doc, doc.format):
        return doc
    if not options.ocr:
        if doc.text.strip():
            return replace(doc, warnings=doc.warnings + ("pages without a text layer were not read: OCR is off in Settings",))
        raise ExtractionError("scanned or image-only: its text needs OCR, which is off in Settings")

    missing = ocr_unavailable()
    if missing:
        if doc.text.strip():
            return replace(doc, warnings=doc.warnings + (f"pages without a text layer were not read: {missing}",))
        raise ExtractionError(f"scanned or image-only: {missing}")
    cache = None
    if options.ocr_cache_path is not None and content_hash:
        cache = OcrCache(options.ocr_cache_path)
    read = ocr_document(real, doc.format, doc, options.budget, cancel=cancel, progress=progress, cache=cache,
                        content_hash=content_hash)
    stopped = next((w for w in read.warnings if w.startswith("OCR stopped")), None)
    if stopped:
        # Not a finished document: cached as it is, its remaining pages would never be read. The
        # OCR cache keeps every page read so far, so the next build goes on from there.
        raise ExtractionError(f"{stopped}; build again to continue (pages read so far are kept)")
    return read

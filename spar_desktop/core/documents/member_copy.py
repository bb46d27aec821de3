"""A child document (inside an archive or a mail) copied out for the viewer: PyMuPDF renders a
real file, so the member's bytes go to a private folder the viewer owns while it shows it."""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from spar_desktop.core.documents.budget import ExtractionBudget
from spar_desktop.core.documents.materialize import materialize_into
from spar_desktop.core.documents.virtual import is_virtual
from spar_desktop.core.pdf_lock import PYMUPDF_LOCK
from spar_desktop.core.progress import CancelToken, ProgressCallback, check


@dataclass(frozen=True)
class MemberCopy:
    """A child document's bytes in a private folder the viewer owns while it shows it."""

    virtual_path: str
    real_path: str
    folder: str  # removed (with the file) by remove_member_copy


def new_scratch_root() -> str:
    """The viewer's private temp folder (mode 0700 in the system temp dir, never the user's)."""
    return tempfile.mkdtemp(prefix="spar-viewer-")


def copy_member(path: str, root: str, budget: Optional[ExtractionBudget],
                progress: ProgressCallback, cancel: CancelToken) -> MemberCopy:
    """Copy the child document ``path`` out of its container(s) into a new folder under ``root``."""
    if not is_virtual(path):
        raise ValueError(f"{path} is not inside an archive or a mail")
    folder = tempfile.mkdtemp(prefix="doc-", dir=root)
    try:
        target = str(materialize_into(path, Path(folder), budget))
        check(cancel)  # superseded by another document: nobody will show this copy
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return MemberCopy(path, target, folder)


def remove_member_copy(folder: str, progress: ProgressCallback, cancel: CancelToken) -> None:
    """Delete a copy no longer shown; under the PDF lock so no render still reads it (Windows
    cannot delete an open file)."""
    with PYMUPDF_LOCK:
        shutil.rmtree(folder, ignore_errors=True)


def remove_scratch_root(root: str) -> None:
    shutil.rmtree(root, ignore_errors=True)

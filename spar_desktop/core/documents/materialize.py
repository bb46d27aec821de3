"""A child document as a real file: ``materialized`` copies the member, level by level, into a
private temporary folder (mode 0700 in the system temp dir) and removes it after. Nothing is ever
extracted into the user's folders.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Optional

from spar_desktop.core.documents.budget import ExtractionBudget
from spar_desktop.core.documents.containers import copy_member
from spar_desktop.core.documents.errors import ExtractionError
from spar_desktop.core.documents.virtual import container_format_of, is_virtual, split_virtual


def _sniff_container(path: Path, name: str) -> str:
    with open(path, "rb") as f:
        head = f.read(8)
    if head.startswith(b"PK\x03\x04") or head.startswith(b"PK\x05\x06"):
        return "zip"
    if head.startswith(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"):
        return "msg"
    fmt = container_format_of(name)
    if fmt is None:
        raise ExtractionError(f"{os.path.basename(name)} is not an archive or a mail")
    return fmt


@contextmanager
def materialized(path: str, budget: Optional[ExtractionBudget] = None) -> Iterator[Path]:
    """A real file holding the bytes of the child document ``path`` while the block runs."""
    budget = budget or ExtractionBudget()
    outer, members = split_virtual(path)
    if not members:
        yield Path(path)
        return
    if len(members) > budget.max_depth:
        raise ExtractionError(f"nested more than {budget.max_depth} levels deep: not read")
    workdir = Path(tempfile.mkdtemp(prefix="spar-member-"))  # 0700, private to this user
    try:
        current, name = Path(outer), outer
        for level, member in enumerate(members):
            fmt = _sniff_container(current, name)
            suffix = os.path.splitext(member)[1][:16]
            target = workdir / f"level{level}{suffix}"
            with open(target, "wb") as out:
                copy_member(current, fmt, member, out, budget)
            current, name = target, member
        yield current
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def materialize_into(path: str, folder: Path, budget: Optional[ExtractionBudget] = None) -> Path:
    """A copy of the child document ``path`` that outlives the call, in ``folder`` (the caller owns
    and removes it: e.g. the viewer, which renders a PDF member page by page)."""
    if not is_virtual(path):
        raise ExtractionError(f"{os.path.basename(path)} is not inside an archive or a mail")
    with materialized(path, budget) as real:
        target = Path(folder) / ("member" + real.suffix)
        shutil.move(str(real), target)  # our own temp copy: taken, not copied again
    return target

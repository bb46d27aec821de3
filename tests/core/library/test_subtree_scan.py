"""A scan of a folder inside an indexed root speaks only for that folder: it replaces the scan
issues under it and never vouches that the whole root was scanned."""

from __future__ import annotations

import os
from pathlib import Path

from sqlalchemy import select, update

from spar_desktop.core.library.models import Folder, ScanIssue


def issues(library) -> list[str]:
    with library.session() as s:
        return sorted(Path(p).name for p in s.scalars(select(ScanIssue.path)))


def complete(library) -> bool:
    with library.session() as s:
        return s.scalar(select(Folder.last_scan_complete))


def make(share: Path) -> None:
    for sub in ("sub", "other"):
        (share / sub).mkdir()
        (share / sub / "note.txt").write_text(f"a note in {sub}", encoding="utf-8")
        (share / f"{sub}-target").mkdir()
        # A link to a folder is reported as a scan issue (links to folders are not followed).
        os.symlink(share / f"{sub}-target", share / sub / f"link-{sub}")


def test_subtree_scan_keeps_the_rest_of_the_roots_issues(library, scanner, share):
    make(share)
    scanner.scan([str(share)])
    assert issues(library) == ["link-other", "link-sub"]
    scanner.scan([str(share / "sub")])
    # The subtree's own issue is replaced (not doubled), the other folder's is kept.
    assert issues(library) == ["link-other", "link-sub"]
    os.unlink(share / "sub" / "link-sub")
    scanner.scan([str(share / "sub")])
    assert issues(library) == ["link-other"]


def test_subtree_scan_never_marks_the_root_complete(library, scanner, share):
    make(share)
    scanner.scan([str(share)])
    assert complete(library) is True
    with library.session() as s:  # as a full scan that crashed half way leaves it
        s.execute(update(Folder).values(last_scan_complete=False))
    scanner.scan([str(share / "sub")])
    assert complete(library) is False
    scanner.scan([str(share)])
    assert complete(library) is True

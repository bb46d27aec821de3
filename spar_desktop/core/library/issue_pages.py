"""The Issues list by the page: counts per kind (and per reason for formats without text) from
GROUP BYs, and the rows of one kind or reason a page at a time, by path.

At 100,000 files the Issues dock opened on 50,049 rows read at start-up; here a refresh reads the
counts and the first page of each kind shown expanded, and the rest comes when a group is
expanded or "Show more" is asked for (ix_files_status_error_path, migration 0006, serves both).
"""

from __future__ import annotations

from typing import Optional

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from spar_desktop.core.library.models import File, FileStatus, ScanIssue

ISSUE_PAGE = 200
SCAN = "scan"  # the kind of a folder-level problem (a ScanIssue, no file)


def issue_counts(session: Session) -> tuple[dict[str, int], tuple[tuple[str, int], ...]]:
    """(entries per kind, (reason, files) of the unsupported ones, largest first)."""
    conn = session.connection()
    counts = {str(k): int(n) for k, n in conn.execute(
        select(File.status, func.count()).where(File.status != FileStatus.OK).group_by(File.status))}
    scan = conn.execute(select(func.count(ScanIssue.id))).scalar() or 0
    if scan:
        counts[SCAN] = int(scan)
    reasons = conn.execute(select(File.error, func.count()).where(File.status == FileStatus.UNSUPPORTED)
                           .group_by(File.error)).all()
    ordered = sorted(((str(m or FileStatus.UNSUPPORTED), int(n)) for m, n in reasons), key=lambda r: (-r[1], r[0]))
    return counts, tuple(ordered)


def issue_rows(session: Session, kind: str, reason: Optional[str] = None, offset: int = 0,
               limit: int = ISSUE_PAGE) -> list[tuple[str, str, str, Optional[int]]]:
    """(kind, path, message, file id) of one kind's entries (one reason's, for unsupported
    files), by path."""
    conn = session.connection()
    if kind == SCAN:
        q = select(ScanIssue.path, ScanIssue.message).order_by(ScanIssue.path).offset(offset).limit(limit)
        return [(SCAN, p, m, None) for p, m in conn.execute(q)]
    q = select(File.path, File.error, File.id).where(File.status == kind)
    if reason is not None:
        q = q.where(File.error == reason) if reason != FileStatus.UNSUPPORTED else q.where(File.error.is_(None))
    q = q.order_by(File.path).offset(offset).limit(limit)
    return [(kind, p, e or kind, int(i)) for p, e, i in conn.execute(q)]

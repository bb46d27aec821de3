"""What a person sees of the index, as frozen values: the summary line, the tag tree, a page of
files, one file's details, the issues, a scan's outcome.

Each reader opens its own short session and returns immutable values only (no ORM object leaves
it), so the app's worker threads hand them to the UI thread as they are and the CLI prints the
same values. The app's ops (ui/library/ops.py) are one-line calls of these.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime
from types import MappingProxyType
from typing import Any, Callable, Mapping, Optional, Sequence

from sqlalchemy import func, select

from spar_desktop.core.changes import NOTHING, Changes
from spar_desktop.core.documents.virtual import VIRTUAL_SEP
from spar_desktop.core.library import count_store
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.file_pages import FileListing, listing
from spar_desktop.core.library.issue_pages import ISSUE_PAGE, SCAN, issue_counts, issue_rows
from spar_desktop.core.library.models import File, FileStatus, FileTag, Folder, ScanIssue, Tag
from spar_desktop.core.library.paths import os_path
from spar_desktop.core.library.queries import FileFilter, FileRecord, copies_of_file, count_files, list_files
from spar_desktop.core.library.roots import RootFolders, folder_roots
from spar_desktop.core.library.scan_report import ScanReport
from spar_desktop.core.library.scanner import Scanner
from spar_desktop.core.library.tag_view import SqlTagInfos, read_root_ids
from spar_desktop.core.library.tags import TagInfo
from spar_desktop.core.progress import CancelToken, ProgressCallback, check, no_progress

# A listing holds at most this many files in memory; its total says when a filter matched more.
MAX_LISTED_FILES = 200_000
# A refreshed listing reads this many ids and the count; the app reads the rest once it shows.
FIRST_IDS = 5000
PROBLEM_STATUSES = tuple(s for s in FileStatus.ALL if s != FileStatus.OK)
SERIOUS_STATUSES = (FileStatus.ERROR, FileStatus.ENCRYPTED, FileStatus.MISSING)
MINOR_STATUSES = tuple(s for s in PROBLEM_STATUSES if s not in SERIOUS_STATUSES)
SHOWN_FIRST = (SCAN, *SERIOUS_STATUSES)  # the Issues kinds listed expanded (real errors)

# Sort keys of a file listing, by column: name, folder, format, size, modified, title, author,
# pages, status, error (the app's file table shows these columns in this order). Names sort
# ignoring case, a missing date first, problems before OK files.
FILE_SORT_KEYS: tuple[Callable[[FileRecord], Any], ...] = (
    lambda r: r.name.casefold(), lambda r: r.folder.casefold(), lambda r: r.format, lambda r: r.size,
    lambda r: r.modified_at or datetime.min, lambda r: (r.title or "").casefold(),
    lambda r: (r.author or "").casefold(), lambda r: r.page_count or 0,
    lambda r: (r.status == FileStatus.OK, r.status), lambda r: r.error or "",
)


# ---------------------------------------------------------------------------- values
@dataclass(frozen=True)
class FileRows:
    records: tuple[FileRecord, ...]
    total: int  # matches in the index (may exceed len(records) when capped)
    flt: FileFilter
    sorted_by: Optional[tuple[int, bool]] = None  # (FILE_SORT_KEYS index, descending) the records are in


@dataclass(frozen=True)
class TagSnapshot:
    # tag id → TagInfo; from load_tags a tag_view.SqlTagInfos (read by id as the tree is browsed)
    infos: Mapping[int, TagInfo]
    folder_roots: tuple[RootFolders, ...] = ()  # Folders shows one node per indexed root


@dataclass(frozen=True)
class FileDetails:
    record: FileRecord
    open_path: str  # the path to hand to the OS (real bytes for undecodable names)
    content_hash: Optional[str]
    tags: tuple[tuple[int, str, str, str], ...]  # (tag id, key, label, source)
    extra: tuple[tuple[str, str], ...]
    container: Optional[tuple[int, str]] = None  # (file id, path) of the archive or mail holding it
    members: int = 0  # documents directly inside this archive or mail
    nested_members: int = 0  # all documents inside it, members of members included
    copies: tuple[str, ...] = ()  # other present files with the same content
    workspaces: tuple[tuple[str, str, Optional[str]], ...] = ()  # (workspace, file state, note): workspaces layer
    suggested: tuple[tuple[int, str, float], ...] = ()  # unconfirmed suggestions: (tag id, label, score)

    @property
    def text_from_ocr(self) -> bool:
        return ("text_source", "ocr") in self.extra


@dataclass(frozen=True)
class IssueRow:
    kind: str  # a file status, or "scan" for folder-level problems
    path: str
    message: str
    file_id: Optional[int]


@dataclass(frozen=True)
class Issues:
    """The Issues list by the page: ``rows`` are the first page of each kind shown expanded;
    ``more(kind, reason, offset, limit)`` reads any kind's (one reason's) further rows.
    Without ``more`` (a list made by hand) the rows are all there is."""

    rows: tuple[IssueRow, ...]
    total: int
    counts: Optional[Mapping[str, int]] = None  # entries per kind, all of them (None: the rows')
    reasons: tuple[tuple[str, int], ...] = ()  # unsupported files per reason, largest first
    more: Optional[Callable[[str, Optional[str], int, int], tuple[IssueRow, ...]]] = None


@dataclass(frozen=True)
class LibrarySummary:
    files: int
    problems: int
    roots: tuple[str, ...]
    single_files: int = 0  # roots that are files indexed alone (dropped without their folder)

    def describe(self) -> str:
        if not self.roots and not self.files:
            return "Nothing indexed yet: drop a folder or file on the window"
        folders = len(self.roots) - self.single_files
        where = [f"{folders} folder{'s' if folders != 1 else ''}"] if folders or not self.single_files else []
        if self.single_files:
            where.append(f"{self.single_files} single file{'s' if self.single_files != 1 else ''}")
        text = f"{self.files:,} files in {' and '.join(where)}"
        return text + (f"  ·  {self.problems:,} issues" if self.problems else "")


@dataclass(frozen=True)
class ScanSummary:
    """One or more roots' ScanReports as one frozen value."""

    roots: tuple[str, ...]
    new: int
    changed: int
    unchanged: int
    missing: int
    restored: int
    problems: tuple[tuple[str, str], ...]
    notes: tuple[str, ...]
    cancelled: bool
    seconds: float

    @classmethod
    def from_reports(cls, reports: Sequence[ScanReport], cancelled: bool = False) -> "ScanSummary":
        return cls(tuple(r.root for r in reports), sum(r.new for r in reports), sum(r.changed for r in reports),
                   sum(r.unchanged for r in reports), sum(r.missing for r in reports),
                   sum(r.restored for r in reports), tuple(p for r in reports for p in r.problems),
                   tuple(r.note for r in reports if r.note), cancelled or any(r.cancelled for r in reports),
                   sum(r.seconds for r in reports))

    @property
    def files_changed(self) -> bool:
        """Files were added, changed, removed or came back."""
        return bool(self.new or self.changed or self.missing or self.restored)

    @property
    def changes(self) -> Changes:
        # New and changed files bring folder and date tags. A scan that found nothing new changed
        # nothing a view shows (a watch event's rescan stays quiet).
        return Changes(files=True, tags=True) if self.files_changed else NOTHING

    def describe(self) -> str:
        where = ", ".join(os.path.basename(r) or r for r in self.roots) or "nothing"
        verb = "Indexing of" if not self.cancelled else "Cancelled indexing of"
        parts = [f"{self.new} new", f"{self.changed} changed", f"{self.unchanged} unchanged"]
        if self.missing:
            parts.append(f"{self.missing} missing")
        text = f"{verb} {where}: " + ", ".join(parts)
        if self.problems:
            text += f"; {len(self.problems)} problem{'s' if len(self.problems) != 1 else ''} (see Issues)"
        return text + f" — {self.seconds:.1f} s"


@dataclass(frozen=True)
class LibraryState:
    summary: LibrarySummary
    tags: Optional[TagSnapshot]  # None: loaded by a task of its own (load_everything(with_tags=False))
    files: FileListing  # ids in order, rows read by the page (file_pages.py)
    issues: Issues


# ---------------------------------------------------------------------------- readers
def scan_paths(library: Library, paths: Sequence[str], progress: ProgressCallback = no_progress,
               cancel: Optional[CancelToken] = None) -> ScanSummary:
    cancel = cancel or CancelToken()
    reports = Scanner(library).scan(list(paths), progress=progress, cancel=cancel)
    return ScanSummary.from_reports(reports, cancel.cancelled)


def load_tags(library: Library) -> TagSnapshot:
    """Counts of every tag and the tree's roots; labels are read when the tree shows them."""
    with library.session() as s:
        got = count_store.stored(s)  # small rows kept by the scan and tag edits
    if got is None:
        got = count_store.recount(library)  # behind the index: counted (seconds at 1M files)
    with library.session() as s:
        top = read_root_ids(s)
        roots = folder_roots(s, got[1])
    return TagSnapshot(SqlTagInfos(library, got[0], top), roots)


def load_files(library: Library, flt: FileFilter, sort: tuple[int, bool] = (0, False),
               limit: int = MAX_LISTED_FILES, cancel: Optional[CancelToken] = None) -> FileRows:
    """Up to ``limit`` matching files, sorted by ``sort`` = (FILE_SORT_KEYS index, descending)."""
    with library.session() as s:
        records = list_files(s, flt, limit=limit)  # frozen rows from a column select, no ORM objects
        check(cancel)
        total = len(records) if len(records) < limit else count_files(s, flt)
    records.sort(key=FILE_SORT_KEYS[sort[0]], reverse=sort[1])  # on the worker, not where it is shown
    return FileRows(tuple(records), total, flt, sort)


def file_details(library: Library, file_id: int) -> Optional[FileDetails]:
    """One file's details (without the workspaces holding it: ``workspaces.holding`` adds them)."""
    with library.session() as s:
        f = s.get(File, file_id)
        if f is None:
            return None
        tags = s.execute(select(Tag.id, Tag.key, Tag.value, Tag.source, FileTag.confirmed, FileTag.score)
                         .join(FileTag, FileTag.tag_id == Tag.id)
                         .where(FileTag.file_id == file_id).order_by(Tag.source, Tag.key)).all()
        record = FileRecord(f.id, f.path, f.rel_path, f.name, f.format, f.size, f.modified_at, f.created_at,
                            f.title, f.author, f.page_count, f.status, f.error)
        extra = tuple(sorted((str(k), str(v)) for k, v in (f.extra or {}).items()))
        container = None
        if f.parent_id is not None:
            parent = s.execute(select(File.id, File.path).where(File.id == f.parent_id)).first()
            container = (parent.id, parent.path) if parent else None
        members = s.scalar(select(func.count(File.id)).where(File.parent_id == file_id)) or 0
        nested = members and (s.scalar(select(func.count(File.id)).where(
            File.path.startswith(f.path + VIRTUAL_SEP, autoescape=True))) or 0)
        return FileDetails(record, os_path(f.path, f.raw_path), f.content_hash,
                           tuple((t.id, t.key, t.value, t.source) for t in tags if t.confirmed), extra, container,
                           members, nested, copies_of_file(s, file_id), (),
                           tuple((t.id, t.value, float(t.score)) for t in tags if not t.confirmed))


def scan_issues(session: Any, limit: Optional[int] = None) -> list[tuple[str, str]]:
    """Folder-level scan problems as (path, message), by path."""
    query = select(ScanIssue.path, ScanIssue.message).order_by(ScanIssue.path)
    return [(p, m) for p, m in session.execute(query.limit(limit) if limit is not None else query)]


def load_issues(library: Library, limit: int = ISSUE_PAGE) -> Issues:
    """Counts of every kind, and the first ``limit`` rows of the real errors (shown expanded),
    by path; the other rows are read when asked for (issue_pages.py)."""
    with library.session() as s:
        counts, reasons = issue_counts(s)
        rows = [r for kind in SHOWN_FIRST if counts.get(kind) for r in issue_rows(s, kind, None, 0, limit)]

    def more(kind: str, reason: Optional[str], offset: int, n: int) -> tuple[IssueRow, ...]:
        with library.session() as s:
            return tuple(IssueRow(*r) for r in issue_rows(s, kind, reason, offset, n))

    return Issues(tuple(IssueRow(*r) for r in rows), sum(counts.values()), MappingProxyType(counts), reasons, more)


def load_summary(library: Library) -> LibrarySummary:
    with library.session() as s:
        by_status = dict(s.execute(select(File.status, func.count()).group_by(File.status)).all())
        roots = tuple(s.scalars(select(Folder.path).order_by(Folder.path)))
        issues = s.scalar(select(func.count(ScanIssue.id))) or 0
    present = sum(n for st, n in by_status.items() if st != FileStatus.MISSING)
    problems = sum(n for st, n in by_status.items() if st != FileStatus.OK) + issues
    return LibrarySummary(present, problems, roots, sum(1 for r in roots if os.path.isfile(r)))


def load_everything(library: Library, flt: FileFilter, sort: tuple[int, bool] = (0, False),
                    cancel: Optional[CancelToken] = None, with_tags: bool = True) -> LibraryState:
    """Summary, files, issues and (``with_tags``) tags one after another: run side by side on an
    app's workers they only contend for the GIL (measured: 150 ms UI stalls with four Python-heavy
    workers, none with one). Without tags (``tags`` None) the app shows the rest first and loads the
    tag tree next: at 1M files its 120k tags take several times what the rest does."""
    summary = load_summary(library)
    check(cancel)
    files = listing(library, flt, sort, cancel, first=FIRST_IDS)  # the rest on a worker after it shows
    check(cancel)
    issues = load_issues(library)
    check(cancel)
    return LibraryState(summary, load_tags(library) if with_tags else None, files, issues)


def readable_files(library: Library, fmt: str, min_pages: int = 0, limit: Optional[int] = None) -> list[tuple[int, str]]:
    """(file id, path) of readable files of one format, by path; ``min_pages`` for paged formats."""
    query = select(File.id, File.path).where(File.format == fmt, File.status == FileStatus.OK)
    if min_pages:
        query = query.where(File.page_count >= min_pages)
    with library.session() as s:
        return [(int(i), str(p)) for i, p in s.execute(query.order_by(File.path).limit(limit)).all()]

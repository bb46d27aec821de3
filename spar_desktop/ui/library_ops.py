"""Background ops over the metadata index, as module-level functions (Orange3 style).

Each op has the TaskRunner signature tail ``(..., progress, cancel)`` and is bound with
``functools.partial``. They run on worker threads, open their own short sessions and return
frozen values only (core's FileRecord is one), so nothing mutable (ORM objects, core's FileRow or
ScanReport) ever reaches the UI thread. No Qt in here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime
from types import MappingProxyType
from typing import Any, Callable, Mapping, Optional, Sequence

from sqlalchemy import func, select

from spar_desktop.core.documents.virtual import VIRTUAL_SEP
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.models import File, FileStatus, FileTag, Folder, ScanIssue, Tag, TagSource
from spar_desktop.core.library.paths import os_path
from spar_desktop.core.library.queries import FileFilter, FileRecord, copies_of_file, count_files, list_files
from spar_desktop.core.library.roots import RootFolders, folder_roots
from spar_desktop.core.library.scanner import Scanner, ScanReport
from spar_desktop.core.library.tags import TagInfo, create_tag, tag_files, tag_infos, untag_files
from spar_desktop.core.progress import CancelToken, ProgressCallback, check
from spar_desktop.core.workspaces.models import Workspace, WorkspaceFile

# The table holds at most this many rows in memory; the header says when a filter matched more.
MAX_TABLE_ROWS = 200_000
PROBLEM_STATUSES = tuple(s for s in FileStatus.ALL if s != FileStatus.OK)
SERIOUS_STATUSES = (FileStatus.ERROR, FileStatus.ENCRYPTED, FileStatus.MISSING)
MINOR_STATUSES = tuple(s for s in PROBLEM_STATUSES if s not in SERIOUS_STATUSES)


# ---------------------------------------------------------------------------- values
# Sort keys per table column (name, folder, format, size, modified, title, author, pages,
# status, error); shared by the table model and the loading task, which pre-sorts.
SORT_KEYS: tuple[Callable[[FileRecord], Any], ...] = (
    lambda r: r.name.casefold(), lambda r: r.folder.casefold(), lambda r: r.format, lambda r: r.size,
    lambda r: r.modified_at or datetime.min, lambda r: (r.title or "").casefold(),
    lambda r: (r.author or "").casefold(), lambda r: r.page_count or 0,
    lambda r: (r.status == FileStatus.OK, r.status), lambda r: r.error or "",
)


@dataclass(frozen=True)
class FileRows:
    records: tuple[FileRecord, ...]
    total: int  # matches in the index (may exceed len(records) when capped)
    flt: FileFilter
    sorted_by: Optional[tuple[int, bool]] = None  # (column, descending) the records are in


@dataclass(frozen=True)
class TagSnapshot:
    infos: Mapping[int, TagInfo]  # read-only view; TagInfo is frozen
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
    workspaces: tuple[tuple[str, str, Optional[str]], ...] = ()  # (workspace, file state, note)
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
    rows: tuple[IssueRow, ...]
    total: int


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


# ---------------------------------------------------------------------------- ops
def scan_paths(library: Library, paths: Sequence[str], progress: ProgressCallback, cancel: CancelToken) -> ScanSummary:
    reports = Scanner(library).scan(list(paths), progress=progress, cancel=cancel)
    return ScanSummary.from_reports(reports, cancel.cancelled)


def load_tags(library: Library, progress: ProgressCallback, cancel: CancelToken) -> TagSnapshot:
    with library.session() as s:
        infos = tag_infos(s)
        roots = folder_roots(s)
    return TagSnapshot(MappingProxyType(infos), roots)


def load_files(library: Library, flt: FileFilter, progress: ProgressCallback, cancel: CancelToken,
               sort: tuple[int, bool] = (0, False), limit: int = MAX_TABLE_ROWS) -> FileRows:
    with library.session() as s:
        records = list_files(s, flt, limit=limit)  # frozen rows from a column select, no ORM objects
        check(cancel)
        total = len(records) if len(records) < limit else count_files(s, flt)
    records.sort(key=SORT_KEYS[sort[0]], reverse=sort[1])  # here, not on the UI thread
    return FileRows(tuple(records), total, flt, sort)


def load_details(library: Library, file_id: int, progress: ProgressCallback, cancel: CancelToken) -> Optional[FileDetails]:
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
        workspaces = s.execute(select(Workspace.name, WorkspaceFile.state, WorkspaceFile.error)
                               .join(Workspace, Workspace.id == WorkspaceFile.workspace_id)
                               .where(WorkspaceFile.file_id == file_id).order_by(Workspace.name)).all()
        return FileDetails(record, os_path(f.path, f.raw_path), f.content_hash,
                           tuple((t.id, t.key, t.value, t.source) for t in tags if t.confirmed), extra, container,
                           members, nested, copies_of_file(s, file_id), tuple((n, st, e) for n, st, e in workspaces),
                           tuple((t.id, t.value, float(t.score)) for t in tags if not t.confirmed))


def load_issues(library: Library, progress: ProgressCallback, cancel: CancelToken, limit: int = 5000) -> Issues:
    with library.session() as s:
        # Real errors first, so that a share with thousands of unsupported files (archives,
        # media) cannot push them past the limit of what the Issues view loads.
        serious = FileFilter(statuses=SERIOUS_STATUSES, include_missing=True)
        files = list_files(s, serious, limit=limit)
        if len(files) < limit:
            files += list_files(s, FileFilter(statuses=MINOR_STATUSES), limit=limit - len(files))
        total = count_files(s, FileFilter(statuses=PROBLEM_STATUSES, include_missing=True))
        scan = s.execute(select(ScanIssue.path, ScanIssue.message).order_by(ScanIssue.path).limit(limit)).all()
        total += s.scalar(select(func.count(ScanIssue.id))) or 0
    rows = [IssueRow("scan", p, m, None) for p, m in scan]
    rows += [IssueRow(f.status, f.path, f.error or f.status, f.id) for f in files]
    return Issues(tuple(rows), total)


def load_summary(library: Library, progress: ProgressCallback, cancel: CancelToken) -> LibrarySummary:
    with library.session() as s:
        by_status = dict(s.execute(select(File.status, func.count()).group_by(File.status)).all())
        roots = tuple(s.scalars(select(Folder.path).order_by(Folder.path)))
        issues = s.scalar(select(func.count(ScanIssue.id))) or 0
    present = sum(n for st, n in by_status.items() if st != FileStatus.MISSING)
    problems = sum(n for st, n in by_status.items() if st != FileStatus.OK) + issues
    return LibrarySummary(present, problems, roots, sum(1 for r in roots if os.path.isfile(r)))


@dataclass(frozen=True)
class LibraryState:
    summary: LibrarySummary
    tags: TagSnapshot
    files: FileRows
    issues: Issues


def load_everything(library: Library, flt: FileFilter, sort: tuple[int, bool],
                    progress: ProgressCallback, cancel: CancelToken) -> LibraryState:
    """Summary, tags, files and issues in one task: run side by side they only contend for the
    GIL (measured: 150 ms UI stalls with four Python-heavy workers, none with one)."""
    summary = load_summary(library, progress, cancel)
    check(cancel)
    tags = load_tags(library, progress, cancel)
    check(cancel)
    files = load_files(library, flt, progress, cancel, sort)
    check(cancel)
    return LibraryState(summary, tags, files, load_issues(library, progress, cancel))


def apply_tag(library: Library, file_ids: tuple[int, ...], tag_id: Optional[int], new_label: Optional[str],
              progress: ProgressCallback, cancel: CancelToken) -> int:
    """Tag files with an existing tag, or with a new user tag called ``new_label``."""
    with library.session() as s:
        if tag_id is None:
            label = (new_label or "").strip()
            if not label:
                raise ValueError("a tag needs a name")
            tag_id = create_tag(s, f"{TagSource.USER}:{label}", label, TagSource.USER).id
        return tag_files(s, file_ids, tag_id, TagSource.USER)


def remove_tag(library: Library, file_ids: tuple[int, ...], tag_id: int,
               progress: ProgressCallback, cancel: CancelToken) -> int:
    with library.session() as s:
        return untag_files(s, file_ids, tag_id)


def import_taxonomy_file(library: Library, path: str, progress: ProgressCallback, cancel: CancelToken) -> str:
    from spar_desktop.core.library.taxonomy import import_taxonomy

    with library.session() as s:
        report = import_taxonomy(s, path)
    text = f"Imported {report.tags_created} new tags and {report.edges_created} links from {os.path.basename(path)}"
    if report.problems:
        text += f" ({len(report.problems)} lines skipped, see the log)"
    return text


def import_assignments_file(library: Library, path: str, progress: ProgressCallback, cancel: CancelToken) -> str:
    from spar_desktop.core.library.taxonomy import assign_from_csv

    with library.session() as s:
        report = assign_from_csv(s, path)
    text = f"Assigned {report.assigned} tags to {report.files_matched} files"
    if report.unknown_paths:
        text += f"; {len(report.unknown_paths)} paths not in the index"
    return text

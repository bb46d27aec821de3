"""Finding files in the index: tag groups (DAG-expanded), dates, formats, path globs, status."""

from __future__ import annotations

import fnmatch
from dataclasses import asdict, dataclass, field
from datetime import date, datetime, time
from typing import Callable, Optional, Sequence, TypeVar

from sqlalchemy import Select, and_, case, func, or_, select
from sqlalchemy.orm import Session

from spar_desktop.core.library.models import File, FileStatus, FileTag, Folder, Tag
from spar_desktop.core.library.raw_rows import ids_in
from spar_desktop.core.library.tags import descendant_ids, resolve_tag_group


class FilterError(ValueError):
    """A filter names something the index does not have (e.g. an unknown tag)."""


@dataclass(frozen=True)
class FileFilter:
    """Each entry of ``tag_groups`` is a set of tag ids: a file needs ≥1 tag (or a descendant)
    of every group. ``soft_groups``: a file needs ≥1 tag of at least ``soft_min`` of them (a
    request with many concepts tolerates a file that lacks one). Dates compare with the document
    date (authored date when known, else modified). ``until`` is inclusive.

    Tag conditions count only confirmed assignments (folders, dates, imports, the user, accepted
    suggestions) unless ``include_unconfirmed``: an automatic suggestion nobody reviewed must not
    silently decide what a workspace holds (issue 16)."""

    tag_groups: tuple[frozenset[int], ...] = ()
    soft_groups: tuple[frozenset[int], ...] = ()
    soft_min: int = 0
    since: Optional[date] = None
    until: Optional[date] = None
    formats: tuple[str, ...] = ()
    path_glob: Optional[str] = None
    statuses: tuple[str, ...] = ()
    include_missing: bool = False
    authors: tuple[str, ...] = ()  # any of them (case-insensitive substring)
    folder_ids: tuple[int, ...] = ()
    file_ids: Optional[frozenset[int]] = None
    include_unconfirmed: bool = False


_WHOLE_INDEX = FileFilter()


@dataclass(frozen=True, slots=True)
class FileRecord:
    """One file as a list shows it: plain columns only, immutable (safe to hand across threads).

    ``list_files`` reads these with a column select, several times faster than loading ORM
    objects (no identity map, no attribute instrumentation) for the tens of thousands of rows
    a file table shows."""

    id: int
    path: str
    rel_path: str
    name: str
    format: str
    size: int
    modified_at: Optional[datetime]
    created_at: Optional[datetime]
    title: Optional[str]
    author: Optional[str]
    page_count: Optional[int]
    status: str
    error: Optional[str]

    @property
    def folder(self) -> str:
        """The folder as the user knows it: the indexed root's name, then the path under it
        ("share/Finance/2023"); several roots' folders never look alike in one list. A member of an
        archive or a mail is in its container's folder."""
        rel_dir = self.rel_path.partition("!/")[0].rpartition("/")[0]
        root = self.path[: len(self.path) - len(self.rel_path)].rstrip("/\\") if self.path.endswith(self.rel_path) else ""
        name = root.replace("\\", "/").rpartition("/")[2]
        if not name:
            return rel_dir
        return f"{name}/{rel_dir}" if rel_dir else name


@dataclass(frozen=True)
class FileRow(FileRecord):
    """A FileRecord with its content hash and (``find_files(with_tags=True)``) tag keys, for the CLI."""

    content_hash: Optional[str] = None
    tags: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        d = asdict(self)
        for k in ("modified_at", "created_at"):
            d[k] = d[k].isoformat() if d[k] else None
        return d


_RECORD_COLUMNS = (File.id, File.path, File.rel_path, File.name, File.format, File.size, File.modified_at,
                   File.created_at, File.title, File.author, File.page_count, File.status, File.error)


# Rows per fetch: sqlite3 builds a whole batch in C without releasing the GIL, so a big batch
# read on a worker thread stalls the UI thread (5,000 rows ≈ 35 ms); 500 keeps it to a few ms.
_BATCH = 500
MAX_BOUND_IDS = 10_000  # ids bound one per variable; more are inlined (see build_query)
R = TypeVar("R")


def document_date_expr():
    return func.coalesce(File.created_at, File.modified_at)


def tagged_with(session: Session, tag_ids: frozenset[int], include_unconfirmed: bool = False) -> Select:
    """Ids of files with one of ``tag_ids`` or a descendant; unconfirmed suggestions only when asked."""
    q = select(FileTag.file_id).where(FileTag.tag_id.in_(descendant_ids(session, tag_ids)))
    return q if include_unconfirmed else q.where(FileTag.confirmed.is_(True))


def build_query(session: Session, flt: FileFilter) -> Select:
    q = select(File)
    conds = []
    for group in flt.tag_groups:
        conds.append(File.id.in_(tagged_with(session, group, flt.include_unconfirmed)))
    if flt.soft_groups and flt.soft_min > 0:
        hits = [case((File.id.in_(tagged_with(session, g, flt.include_unconfirmed)), 1), else_=0)
                for g in flt.soft_groups]
        conds.append(sum(hits[1:], hits[0]) >= min(flt.soft_min, len(hits)))
    doc_date = document_date_expr()
    if flt.since:
        conds.append(doc_date >= datetime.combine(flt.since, time.min))
    if flt.until:
        conds.append(doc_date <= datetime.combine(flt.until, time.max))
    if flt.formats:
        conds.append(File.format.in_([f.lower().lstrip(".") for f in flt.formats]))
    if flt.statuses:
        conds.append(File.status.in_(flt.statuses))
    elif not flt.include_missing:
        conds.append(File.status != FileStatus.MISSING)
    if flt.authors:
        conds.append(or_(*(func.lower(File.author).contains(a.lower()) for a in flt.authors)))
    if flt.folder_ids:
        conds.append(File.folder_id.in_(flt.folder_ids))
    if flt.file_ids is not None:
        ids = sorted(flt.file_ids)
        # A big set (a workspace of a large share) is written into the SQL as literals: one bound
        # variable per id would pass SQLite's limit (32,766 in many builds) and fail the query.
        conds.append(File.id.in_(ids) if len(ids) <= MAX_BOUND_IDS else ids_in(File.id, ids))
    if conds:
        q = q.where(and_(*conds))
    return q.order_by(File.path)


def _matching(session: Session, flt: FileFilter, limit: Optional[int], columns: tuple, make: Callable[..., R]) -> list[R]:
    """``make(*row)`` for each file the filter admits, in path order; the path glob is applied
    here (SQL cannot), so a limit goes to SQL only without one."""
    out: list[R] = []
    matcher = _glob_matcher(flt.path_glob)
    q = build_query(session, flt).with_only_columns(*columns)
    if limit is not None and matcher is None:
        q = q.limit(limit)
    for row in session.execute(q).yield_per(_BATCH):
        r = make(*row)
        if matcher and not matcher(r):
            continue
        out.append(r)
        if limit is not None and len(out) >= limit:
            break
    return out


def list_files(session: Session, flt: FileFilter, limit: Optional[int] = None) -> list[FileRecord]:
    """Matching files as frozen FileRecords, in path order (the light path for file lists)."""
    return _matching(session, flt, limit, _RECORD_COLUMNS, FileRecord)


def find_files(session: Session, flt: FileFilter, limit: Optional[int] = None, with_tags: bool = False) -> list[FileRow]:
    """Matching files as FileRows with their content hash and, optionally, tag keys."""
    rows = _matching(session, flt, limit, (*_RECORD_COLUMNS, File.content_hash), FileRow)
    if with_tags and rows:
        by_id = {r.id: r for r in rows}
        ids = list(by_id)
        for i in range(0, len(ids), 900):
            q = select(FileTag.file_id, Tag.key).join(Tag, Tag.id == FileTag.tag_id).where(FileTag.file_id.in_(ids[i:i + 900]))
            for fid, key in session.execute(q):
                by_id[fid].tags.append(key)
        for r in rows:
            r.tags.sort()
    return rows


def count_files(session: Session, flt: FileFilter) -> int:
    if flt == _WHOLE_INDEX:
        # Every file not gone: a request asks this three times (budget, pool, funnel). All rows
        # less the few missing ones is SQLite's row count plus an index range, where counting
        # the status index's entries took 0.1 s at 1M files.
        return (session.scalar(select(func.count()).select_from(File)) or 0) - \
            (session.scalar(select(func.count()).select_from(File).where(File.status == FileStatus.MISSING)) or 0)
    if flt.path_glob:
        return len(list_files(session, flt))
    sub = build_query(session, flt).order_by(None).with_only_columns(File.id).subquery()
    return session.scalar(select(func.count()).select_from(sub)) or 0


def _glob_matcher(glob: Optional[str]):
    """A glob with '/' matches the path relative to its root or the absolute path; without, the name."""
    if not glob:
        return None
    if "/" in glob:
        return lambda f: fnmatch.fnmatch(f.rel_path, glob) or fnmatch.fnmatch(f.path, glob)
    return lambda f: fnmatch.fnmatch(f.name, glob)


def filter_from_text(session: Session, tags: Sequence[str] = (), since: Optional[date] = None,
                     until: Optional[date] = None, formats: Sequence[str] = (), path_glob: Optional[str] = None,
                     statuses: Sequence[str] = (), author: Optional[str] = None) -> FileFilter:
    """Build a FileFilter from what a user typed; unknown tags raise FilterError naming them."""
    groups = []
    for expr in tags:
        ids, unknown = resolve_tag_group(session, expr)
        if unknown:
            raise FilterError(f"unknown tag: {', '.join(unknown)} (see `spar tags`)")
        groups.append(frozenset(ids))
    bad = [s for s in statuses if s not in FileStatus.ALL]
    if bad:
        raise FilterError(f"unknown status {', '.join(bad)}; use one of {', '.join(FileStatus.ALL)}")
    if since and until and since > until:
        raise FilterError(f"--since {since} is after --until {until}: no file can match")
    return FileFilter(tag_groups=tuple(groups), since=since, until=until, formats=tuple(formats), path_glob=path_glob,
                      statuses=tuple(statuses), include_missing=bool(statuses), authors=(author,) if author else ())


def library_stats(session: Session) -> dict:
    by_status = dict(session.execute(select(File.status, func.count()).group_by(File.status)).all())
    by_format = dict(session.execute(select(File.format, func.count()).group_by(File.format)).all())
    roots = [
        {"path": f.path, "last_scan_at": f.last_scan_at.isoformat() if f.last_scan_at else None,
         "complete": f.last_scan_complete}
        for f in session.scalars(select(Folder).order_by(Folder.path))
    ]
    return {
        "files": sum(by_status.values()),
        "by_status": by_status,
        "by_format": by_format,
        "tags": session.scalar(select(func.count(Tag.id))) or 0,
        "roots": roots,
        "total_bytes": session.scalar(select(func.coalesce(func.sum(File.size), 0)).where(File.status != FileStatus.MISSING)),
    }



@dataclass(frozen=True)
class DuplicateGroup:
    """Indexed files with the same content (a full-content hash): one document for embedding."""

    content_hash: str
    size: int
    paths: tuple[str, ...]

    def to_json(self) -> dict:
        return {"content_hash": self.content_hash, "size": self.size, "paths": list(self.paths)}


def duplicate_groups(session: Session, limit: Optional[int] = None) -> list[DuplicateGroup]:
    """Groups of two or more present files sharing a full-content hash, largest waste first.

    Sampled fingerprints ("b2s:") never count: two different large files may share one."""
    present = (File.status != FileStatus.MISSING) & File.content_hash.like("b2:%") & (File.content_hash != "b2:empty")
    hashes = (select(File.content_hash, func.max(File.size).label("size"))
              .where(present).group_by(File.content_hash).having(func.count(File.id) > 1)
              .order_by(func.max(File.size).desc(), File.content_hash))
    if limit:
        hashes = hashes.limit(limit)
    found = session.execute(hashes).all()
    paths: dict[str, list[str]] = {h: [] for h, _ in found}
    keys = list(paths)
    for i in range(0, len(keys), 500):
        for h, p in session.execute(select(File.content_hash, File.path).where(
                present & File.content_hash.in_(keys[i:i + 500])).order_by(File.path)):
            paths[h].append(p)
    return [DuplicateGroup(h, size or 0, tuple(paths[h])) for h, size in found]


def copies_of(session: Session, files: Sequence[File]) -> dict[int, tuple[str, ...]]:
    """file id -> paths of the other present files with the same content (sync copies, "copy of"
    files, a zipped copy): a search hit names them instead of repeating the same passage, and the
    details panel lists them. Sampled fingerprints never count (two large files may share one)."""
    by_hash = {f.content_hash: f.id for f in files
               if f.content_hash and f.content_hash.startswith("b2:") and f.content_hash != "b2:empty"}
    out: dict[int, list[str]] = {}
    hashes = list(by_hash)
    for i in range(0, len(hashes), 500):
        for path, h, fid in session.execute(select(File.path, File.content_hash, File.id).where(
                File.content_hash.in_(hashes[i:i + 500]), File.status != FileStatus.MISSING).order_by(File.path)):
            if fid != by_hash[h]:
                out.setdefault(by_hash[h], []).append(path)
    return {k: tuple(v) for k, v in out.items()}


def copies_of_file(session: Session, file_id: int) -> tuple[str, ...]:
    """Paths of the other present files with this file's content (the details panel's group)."""
    f = session.get(File, file_id)
    return copies_of(session, [f]).get(file_id, ()) if f is not None else ()

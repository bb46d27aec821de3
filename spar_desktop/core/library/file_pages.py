"""The file listing at any size: its order and total from SQL, its rows a page at a time.

The app's file table used to load every matching FileRecord and sort it in Python: at 1,000,000
files seconds and hundreds of MB before the first row showed. Here the filter and the sort run
in SQL and only file ids come back, in order (``file_order``: 8 bytes a file in an ``array``);
the rows a view shows are read by id a page at a time (``read_page``: primary-key lookups, about
a millisecond per 100 rows at 1M). ``file_page`` is the same as one offset/limit call.

Orders are those of ``overview.FILE_SORT_KEYS`` (the in-memory listing's, which the tests
compare against): names ignoring case, a missing date first, problems before OK files, ties in
path order in either direction (Python's stable sort keeps the path order of equal keys when it
reverses). Case is folded with SQL ``lower``, which folds ASCII letters only (SQLite without
ICU): two names differing only in the case of a non-ASCII letter may sort apart.
"""

from __future__ import annotations

from array import array
from collections import namedtuple
from dataclasses import dataclass
from operator import itemgetter
from typing import Any, Callable, Optional, Sequence

from sqlalchemy import case, func, select
from sqlalchemy.orm import Session

from spar_desktop.core.library.database import Library
from spar_desktop.core.library.models import File, FileStatus
from spar_desktop.core.library.raw_rows import driver_cursor
from spar_desktop.core.library.queries import (
    _RECORD_COLUMNS, FileFilter, FileRecord, _glob_matcher, build_query, count_files,
)
from spar_desktop.core.progress import CancelToken, check

_Named = namedtuple("_Named", "id name rel_path path")  # what the path glob looks at
PAGE = 200  # rows per page read: a screenful or two
_FETCH = 5000  # ids per fetch: one int column, a few ms of GIL per batch
_FIRST = itemgetter(0)


@dataclass(frozen=True)
class FileOrder:
    """The files a filter admits, as ids in the order of ``sort`` = (column, descending)."""

    ids: array  # array('q') of file ids (the first ones only when ``count`` is given)
    flt: FileFilter
    sort: tuple[int, bool]
    count: Optional[int] = None  # files the filter admits, when ``ids`` holds only the first of them

    @property
    def total(self) -> int:
        return len(self.ids) if self.count is None else self.count

    @property
    def complete(self) -> bool:
        return len(self.ids) == self.total


@dataclass(frozen=True)
class FilePage:
    records: tuple[FileRecord, ...]
    total: int  # files the filter admits


def _instr(session: Session, text: Any, sub: str) -> Any:
    return func.strpos(text, sub) if session.get_bind().dialect.name == "postgresql" else func.instr(text, sub)


def _basename(text: Any) -> Any:
    """What follows the last '/' (rtrim by every other character leaves the text up to it)."""
    return func.substr(text, func.length(func.rtrim(text, func.replace(text, "/", ""))) + 1)


def _root_names(session: Session) -> dict[int, str]:
    """The root name FileRecord.folder shows, per root folder id (from one file of each)."""
    firsts = select(func.min(File.id)).where(File.folder_id.is_not(None)).group_by(File.folder_id)
    rows = session.execute(select(File.folder_id, File.path, File.rel_path).where(File.id.in_(firsts)))
    out = {}
    for folder_id, path, rel_path in rows:
        root = path[: len(path) - len(rel_path)].rstrip("/\\") if path.endswith(rel_path) else ""
        out[int(folder_id)] = root.replace("\\", "/").rpartition("/")[2]
    return out


def folder_expr(session: Session) -> Any:
    """FileRecord.folder in SQL: the root's name, then the folder under it (a member of an
    archive or a mail: its container's folder). Character-set rtrim (a directory name in SQL)
    costs a pass per character, so it is used only for members and files of no known root."""
    sep = _instr(session, File.rel_path, "!/")
    outer = case((sep > 0, func.substr(File.rel_path, 1, sep - 1)), else_=File.rel_path)
    slow_dir = func.rtrim(func.rtrim(outer, func.replace(outer, "/", "")), "/")
    cut = func.length(File.rel_path) - func.length(File.name) - 1
    rel_dir = case((sep > 0, slow_dir), (cut > 0, func.substr(File.rel_path, 1, cut)), else_="")
    head_len = func.length(File.path) - func.length(File.rel_path)
    root = case((func.substr(File.path, head_len + 1) == File.rel_path,
                 func.rtrim(func.substr(File.path, 1, head_len), "/\\")), else_="")
    names = _root_names(session)
    slow_name = _basename(func.replace(root, "\\", "/"))
    name = case(names, value=File.folder_id, else_=slow_name) if names else slow_name
    return case((name == "", rel_dir), (rel_dir != "", name + "/" + rel_dir), else_=name)


def sort_keys(session: Session, column: int) -> tuple[Any, ...]:
    """SQL sort keys of a file-table column (overview.FILE_SORT_KEYS, in the same order)."""
    keys: tuple[tuple[Any, ...], ...] = (
        (func.lower(File.name),), (func.lower(folder_expr(session)),), (File.format,), (File.size,),
        (File.modified_at,), (func.lower(func.coalesce(File.title, "")),),
        (func.lower(func.coalesce(File.author, "")),), (func.coalesce(File.page_count, 0),),
        (case((File.status == FileStatus.OK, 1), else_=0), File.status), (func.coalesce(File.error, ""),),
    )
    return keys[column]


def _ordered(session: Session, flt: FileFilter, sort: tuple[int, bool], columns: Sequence[Any]) -> Any:
    column, descending = sort
    keys = sort_keys(session, column)
    if column == 4:  # a missing date sorts as the earliest (datetime.min), whatever the database's default
        order = [k.desc().nulls_last() if descending else k.asc().nulls_first() for k in keys]
    else:
        order = [k.desc() if descending else k.asc() for k in keys]
    return build_query(session, flt).order_by(None).with_only_columns(*columns).order_by(*order, File.path)


def file_order(session: Session, flt: FileFilter, sort: tuple[int, bool] = (0, False),
               cancel: Optional[CancelToken] = None, first: Optional[int] = None) -> FileOrder:
    """Every admitted file's id in the listing's order (the path glob, which SQL cannot apply,
    is applied while reading). ``first``: only the first ids and the count (no path glob)."""
    matcher = _glob_matcher(flt.path_glob)
    if first is not None and matcher is None:
        ids = array("q", (r[0] for r in driver_cursor(session, _ordered(session, flt, sort, (File.id,)).limit(first))))
        return FileOrder(ids, flt, sort, count_files(session, flt) if len(ids) == first else None)
    columns = (File.id, File.name, File.rel_path, File.path) if matcher else (File.id,)
    cursor = driver_cursor(session, _ordered(session, flt, sort, columns))
    ids = array("q")
    while True:
        rows = cursor.fetchmany(_FETCH)
        if not rows:
            break
        check(cancel)
        # map(itemgetter) runs in C: the generator's bytecode per id was most of the GIL this held.
        ids.extend(map(_FIRST, rows) if matcher is None else (r[0] for r in rows if matcher(_Named(*r))))
    return FileOrder(ids, flt, sort)


def read_page(session: Session, ids: Sequence[int]) -> list[FileRecord]:
    """The FileRecords of ``ids``, in that order (a file deleted since is left out)."""
    found: dict[int, FileRecord] = {}
    for i in range(0, len(ids), 500):
        # Core rows (their types: dates come back as datetimes), a page is small.
        for row in session.connection().execute(select(*_RECORD_COLUMNS).where(File.id.in_(list(ids[i:i + 500])))):
            found[row[0]] = FileRecord(*row)
    return [found[i] for i in ids if i in found]


def file_page(session: Session, flt: FileFilter, sort: tuple[int, bool] = (0, False), offset: int = 0,
              limit: int = PAGE) -> FilePage:
    """One page of the listing and the total it is a page of (offset/limit in SQL; with a path
    glob, through ``file_order``)."""
    if flt.path_glob:
        order = file_order(session, flt, sort)
        return FilePage(tuple(read_page(session, order.ids[offset:offset + limit])), order.total)
    rows = session.execute(_ordered(session, flt, sort, _RECORD_COLUMNS).offset(offset).limit(limit))
    return FilePage(tuple(FileRecord(*r) for r in rows), count_files(session, flt))


@dataclass(frozen=True)
class FileListing:
    """A FileOrder with the means to read its rows and to re-order it, for a lazy view; both
    open their own short session (a page read is a few primary-key lookups)."""

    order: FileOrder
    read: Callable[[Sequence[int]], list[FileRecord]]
    reorder: Callable[[tuple[int, bool]], FileOrder]

    @property
    def flt(self) -> FileFilter:
        return self.order.flt

    @property
    def total(self) -> int:
        return self.order.total

    @property
    def sort(self) -> tuple[int, bool]:
        return self.order.sort


def listing(library: Library, flt: FileFilter, sort: tuple[int, bool] = (0, False),
            cancel: Optional[CancelToken] = None, first: Optional[int] = None) -> FileListing:
    """The listing's order (``first``: only its first ids and the count, for a window that must
    show before a million ids are read; ``reorder(listing.sort)`` reads them all) and its readers."""
    def read(ids: Sequence[int]) -> list[FileRecord]:
        with library.session() as s:
            return read_page(s, ids)

    def reorder(new_sort: tuple[int, bool]) -> FileOrder:
        with library.session() as s:
            return file_order(s, flt, new_sort)

    with library.session() as s:
        order = file_order(s, flt, sort, cancel, first)
    return FileListing(order, read, reorder)

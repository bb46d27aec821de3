"""The secondary indexes that only queries need: dropped for a bulk first scan, re-created after.

Every inserted file updated ten B-trees (content hash, lower(name), dates ...: most of them
random-keyed), about half of a first scan's time (issue 29). A first scan into an (almost) empty
index therefore drops the indexes below once its first full batch is written, bulk-inserts, and
builds them in one pass at the end, which is several times cheaper than keeping them up to date.

Kill-safe: ``ensure_query_indexes`` runs at every open of the library (``Library.__init__``) and
creates whichever of them is missing (the models' definitions, which a test keeps equal to what
the migrations create), so a scan killed before its rebuild leaves only a slower index until the
next open. A reader meanwhile (the app's window while the CLI scans) gets the same answers from
full-table scans, just slower. The unique constraints (path, file/tag pair) and files.parent_id
stay: the scan's own lookups, and cascading deletes of a container's children, use them.
"""

from __future__ import annotations

import logging
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Optional

from sqlalchemy import Connection, Engine, Index, inspect, text
from sqlalchemy.exc import DBAPIError

from spar_desktop.core.file_lock import try_lock, unlock
from spar_desktop.core.library.models import File, FileTag, index_applies

log = logging.getLogger(__name__)

_KEPT = frozenset({"ix_files_parent_id"})
# A scan takes the bulk path only when the index holds at most this many files: re-creating the
# indexes costs time in proportion to every row, saving it in proportion to the new ones.
BULK_MAX_EXISTING = 50_000


def query_indexes(dialect: str) -> list[Index]:
    """The droppable indexes of files and file_tags on that dialect, in a stable order."""
    found = [ix for table in (File.__table__, FileTag.__table__) for ix in table.indexes
             if not ix.unique and ix.name not in _KEPT and index_applies(ix, dialect)]
    return sorted(found, key=lambda ix: str(ix.name))


def present_index_names(conn: Connection) -> set[str]:
    """Names of the indexes that exist now on files and file_tags (one query on SQLite/PostgreSQL)."""
    dialect = conn.dialect.name
    if dialect == "sqlite":
        rows = conn.execute(text("SELECT name FROM sqlite_master WHERE type = 'index' "
                                 "AND tbl_name IN ('files', 'file_tags')"))
        return {r[0] for r in rows}
    if dialect == "postgresql":
        rows = conn.execute(text("SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() "
                                 "AND tablename IN ('files', 'file_tags')"))
        return {r[0] for r in rows}
    insp = inspect(conn)
    return {ix["name"] for table in ("files", "file_tags") for ix in insp.get_indexes(table)}


def missing_query_indexes(engine: Engine) -> list[str]:
    with engine.connect() as conn:
        present = present_index_names(conn)
    return [str(ix.name) for ix in query_indexes(engine.dialect.name) if ix.name not in present]


def drop_query_indexes(engine: Engine) -> None:
    """Drop them in one short transaction (PostgreSQL locks the table for it)."""
    with engine.begin() as conn:
        present = present_index_names(conn)
        for ix in query_indexes(engine.dialect.name):
            if ix.name in present:
                ix.drop(conn)


def ensure_query_indexes(engine: Engine) -> list[str]:
    """Create whichever query index is missing, each in its own transaction; returns their names.
    Idempotent and cheap when nothing is missing (one query)."""
    created = []
    for name in missing_query_indexes(engine):
        ix = next(i for i in query_indexes(engine.dialect.name) if i.name == name)
        with engine.begin() as conn:
            if name not in present_index_names(conn):  # another process may have just built it
                with _sort_memory(conn):
                    ix.create(conn)
                created.append(name)
    return created


# Up to this many file rows an index build's sort spills to memory (the library's temp_store),
# beyond it to a temporary file: at 1M files the nine builds took 42 s instead of 57 s (wall,
# loaded machine, same CPU) for ~130 MB more peak memory, which must not grow without bound.
SORT_IN_MEMORY_MAX_FILES = 2_000_000


@contextmanager
def _sort_memory(conn: Connection) -> Iterator[None]:
    """SQLite sorts an index's keys within its page cache before spilling to temporary storage:
    64 MB for the build (a quarter less CPU at 100k files), back to the default after."""
    if conn.dialect.name != "sqlite":
        yield
        return
    before = conn.exec_driver_sql("PRAGMA cache_size").scalar()
    store = conn.exec_driver_sql("PRAGMA temp_store").scalar()
    rows = conn.exec_driver_sql("SELECT max(id) FROM files").scalar() or 0  # from the rowid B-tree: instant
    conn.exec_driver_sql("PRAGMA cache_size=-65536")
    if rows > SORT_IN_MEMORY_MAX_FILES:
        conn.exec_driver_sql("PRAGMA temp_store=FILE")
    try:
        yield
    finally:
        conn.exec_driver_sql(f"PRAGMA cache_size={int(before)}")
        conn.exec_driver_sql(f"PRAGMA temp_store={int(store)}")


def restore_at_open(engine: Engine, scan_lock: Optional[Path]) -> list[str]:
    """``ensure_query_indexes`` when opening a library, unless a scan holds the scan lock: that
    scan is bulk-loading and re-creates them itself (building them now would only slow it down).
    A read-only or busy database keeps working without them: logged, never raised."""
    try:
        if not missing_query_indexes(engine):
            return []
        if scan_lock is None:
            return _ensure_logged(engine)
        scan_lock.parent.mkdir(parents=True, exist_ok=True)
        with open(scan_lock, "a+b") as fh:
            if not try_lock(fh):
                return []
            try:
                return _ensure_logged(engine)
            finally:
                unlock(fh)
    except (DBAPIError, OSError) as exc:
        log.warning("could not re-create the index's lookup indexes (queries stay correct, slower): %s", exc)
        return []


def _ensure_logged(engine: Engine) -> list[str]:
    created = ensure_query_indexes(engine)
    if created:
        log.warning("re-created %d lookup indexes an interrupted scan had left out: %s",
                    len(created), ", ".join(created))
    return created

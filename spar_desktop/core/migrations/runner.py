"""Bring a metadata index to this code's schema, or refuse to touch it.

``upgrade_index(engine)`` is called by ``Library`` on every open:

- at ``HEAD_REVISION``: one SELECT (SQLite: on a read-only connection), nothing else;
- at a revision this code does not know: ``IndexTooNewError``, with nothing written;
- otherwise, one process at a time (SQLite: ``fcntl.flock`` on ``.migrate.lock`` beside the
  database file; PostgreSQL: ``pg_advisory_xact_lock``), in one transaction: read the revision
  again (another process may have just done the work), back up an existing SQLite file through
  SQLite's online backup API (``library.sqlite3.bak-0.1.0-<time>`` for a database 0.1.0 made,
  ``...bak-rev<N>-<time>`` for an older revision), run the revisions up to head, check foreign
  keys, commit. A brand-new database runs the same revisions from empty. 0.1.0 wrote no
  ``alembic_version``: its databases go through 0001, which creates only what is missing.

SQLite DDL is transactional, but Python's sqlite3 module would not open a transaction before
DDL: migrations therefore run on their own connection that says ``BEGIN IMMEDIATE`` itself (which
also keeps every other writer out until the commit), with foreign keys off so that copying a
table in batch mode cannot cascade deletes.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import sys
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional
from urllib.parse import quote

from sqlalchemy import Engine, create_engine, event, inspect, text
from sqlalchemy.pool import NullPool

from spar_desktop.core.file_lock import file_lock
from spar_desktop.core.migrations import HEAD_REVISION, IndexTooNewError, MigrationError

log = logging.getLogger(__name__)

HERE = Path(__file__).resolve().parent
LOCK_FILE = ".migrate.lock"
LEGACY_LABEL = "0.1.0"  # what an index without alembic_version was written by
# Tables 0.1.0 always created first: present without alembic_version = a 0.1.0 index.
_SPAR_TABLES = frozenset({"folders", "files", "tags", "workspaces"})
_PG_LOCK_KEY = 0x53504152_4D494752  # 'SPARMIGR': one advisory lock for every SPAR migration


@dataclass(frozen=True)
class UpgradeReport:
    """What opening the index changed. ``from_revision``: None for a new database, '0.1.0' for
    an unversioned one, else the revision it was at."""

    from_revision: Optional[str]
    to_revision: str
    backup: Optional[Path]

    @property
    def created(self) -> bool:
        return self.from_revision is None


# -- Alembic, loaded only when there is something to do -------------------------------------------
def alembic_config(connection: Any = None):
    from alembic.config import Config  # deferred: see the section title

    cfg = Config()
    cfg.set_main_option("script_location", str(HERE).replace("%", "%%"))
    cfg.attributes["connection"] = connection
    return cfg


@lru_cache(maxsize=1)
def script_directory():
    from alembic.script import ScriptDirectory  # deferred: see the section title

    return ScriptDirectory.from_config(alembic_config())


def known_revisions() -> frozenset[str]:
    return frozenset(s.revision for s in script_directory().walk_revisions())


def head_revision() -> str:
    return script_directory().get_current_head()


# -- reading the state without writing ------------------------------------------------------------
def sqlite_file(engine: Engine) -> Optional[Path]:
    """The database file of a file-backed SQLite engine, else None (in-memory, other servers)."""
    db = engine.url.database if engine.dialect.name == "sqlite" else None
    if not db or db == ":memory:" or db.startswith("file:"):
        return None
    return Path(db).resolve()


def describe(engine: Engine) -> str:
    path = sqlite_file(engine)
    return str(path) if path else engine.url.render_as_string(hide_password=True)


def _state(tables: set[str], revisions: list[str]) -> tuple[Optional[str], bool]:
    if len(revisions) > 1:  # branches: never made by SPAR; name them all in the refusal
        return ",".join(sorted(revisions)), True
    return (revisions[0] if revisions else None), bool(tables & _SPAR_TABLES) or bool(revisions)


def _peek_file(path: Path) -> tuple[Optional[str], bool]:
    """(revision, has SPAR tables) read on a read-only connection: a refusal writes nothing."""
    if not path.exists() or path.stat().st_size == 0:
        return None, False
    conn = sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True, timeout=30)
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        revisions = []
        if "alembic_version" in tables:
            revisions = [r[0] for r in conn.execute("SELECT version_num FROM alembic_version")]
        return _state(tables, revisions)
    finally:
        conn.close()


def _peek(conn: Any) -> tuple[Optional[str], bool]:
    tables = set(inspect(conn).get_table_names())
    revisions = []
    if "alembic_version" in tables:
        revisions = [r[0] for r in conn.execute(text("SELECT version_num FROM alembic_version"))]
    return _state(tables, revisions)


def current_revision(engine: Engine) -> Optional[str]:
    path = sqlite_file(engine)
    if path:
        return _peek_file(path)[0]
    with engine.connect() as conn:
        return _peek(conn)[0]


def _check_known(revision: Optional[str], where: str) -> None:
    if revision is not None and revision not in known_revisions():
        raise IndexTooNewError(revision, where)


# -- upgrading --------------------------------------------------------------------------------------
def upgrade_index(engine: Engine) -> Optional[UpgradeReport]:
    """Bring the index behind ``engine`` to head; None when it already was (see module doc)."""
    path = sqlite_file(engine)
    where = describe(engine)
    revision = current_revision(engine)
    if revision == HEAD_REVISION:
        return None
    _check_known(revision, where)
    if engine.dialect.name == "sqlite":
        with file_lock(path.parent / LOCK_FILE) if path else nullcontext():
            return _upgrade(_migration_engine(engine) if path else engine, where, path)
    return _upgrade(engine, where, None)


def _upgrade(engine: Engine, where: str, path: Optional[Path]) -> Optional[UpgradeReport]:
    from alembic import command  # deferred: an index at head never loads Alembic

    postgres = engine.dialect.name == "postgresql"
    backup: Optional[Path] = None
    label = "new"
    try:
        with engine.connect() as conn, conn.begin():
            if postgres:  # waits for another process's upgrade to commit, then sees its result
                conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_LOCK_KEY})
            revision, existing = _peek(conn)
            if revision == head_revision():
                return None  # another process upgraded it while we waited
            _check_known(revision, where)
            label = LEGACY_LABEL if existing and revision is None else (revision or "new")
            if existing and path:
                backup = backup_sqlite(path, label if revision is None else f"rev{revision}")
            if existing:
                if backup:
                    kept = f"; the old database is kept as {backup}"
                elif not path:
                    kept = (" in one transaction; no copy is made of a database server (backing it up before "
                            "an upgrade is its administrator's job, e.g. pg_dump)")
                else:
                    kept = ""
                log.warning("upgrading the metadata index %s from %s to revision %s%s", where, label,
                            head_revision(), kept)
            command.upgrade(alembic_config(conn), "head")
            if engine.dialect.name == "sqlite":
                broken = conn.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
                if broken:
                    raise MigrationError(f"the upgrade would leave {len(broken)} broken references, e.g. {broken[0]}")
    except (IndexTooNewError, MigrationError) as exc:
        if isinstance(exc, MigrationError) and backup:
            raise MigrationError(f"{exc}; nothing was changed (a copy is in {backup})") from exc
        raise
    except Exception as exc:
        kept = f"; a copy of the old database is in {backup}" if backup else ""
        raise MigrationError(
            f"upgrading the metadata index {where} from {label} failed and was undone: {exc}{kept}"
        ) from exc
    finally:
        if path:
            engine.dispose()
    return UpgradeReport(None if label == "new" else label, head_revision(), backup)


def _migration_engine(engine: Engine) -> Engine:
    """A separate SQLite engine whose transactions cover DDL (see module doc)."""
    mig = create_engine(engine.url, poolclass=NullPool, connect_args={"timeout": 30})

    @event.listens_for(mig, "connect")
    def _connect(dbapi_conn, _record) -> None:
        dbapi_conn.isolation_level = None  # the driver stays out of transactions: we BEGIN
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")  # as Library's engine would: a new file starts in WAL
        cur.execute("PRAGMA busy_timeout=30000")
        cur.execute("PRAGMA foreign_keys=OFF")  # batch table copies must not cascade
        cur.close()

    @event.listens_for(mig, "begin")
    def _begin(conn) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE")

    return mig


def backup_sqlite(path: Path, label: str) -> Path:
    """A consistent copy of ``path`` (WAL included) beside it: ``<name>.bak-<label>-<time>``."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.bak-{label}-{stamp}")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}.bak-{label}-{stamp}-{n}")
    partial = target.with_name(target.name + ".partial")
    src = sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True, timeout=30)
    try:
        dst = sqlite3.connect(str(partial))
        try:
            src.backup(dst)
            dst.execute("PRAGMA journal_mode=DELETE")  # one self-contained file, no -wal beside it
        finally:
            dst.close()
        os.replace(partial, target)
    except Exception as exc:
        partial.unlink(missing_ok=True)
        raise MigrationError(f"could not back up {path} before upgrading it ({exc}); nothing was changed") from exc
    finally:
        src.close()
    return target


def new_revision(message: str, autogenerate: bool = True) -> None:
    """For maintainers: write versions/NNNN_<slug>.py for what the models added since head
    (compared on an in-memory SQLite database upgraded to head). Review it before committing."""
    from alembic import command  # deferred: a maintainer's tool

    engine = create_engine("sqlite://")
    with engine.connect() as conn, conn.begin():
        command.upgrade(alembic_config(conn), "head")
        command.revision(alembic_config(conn), message, autogenerate=autogenerate,
                         rev_id=f"{int(head_revision()) + 1:04d}")
    script_directory.cache_clear()


if __name__ == "__main__":  # python -m spar_desktop.core.migrations.runner "what changed"
    if len(sys.argv) != 2:
        sys.exit('usage: python -m spar_desktop.core.migrations.runner "message for the new revision"')
    new_revision(sys.argv[1])
    print(f"now set HEAD_REVISION in {HERE / '__init__.py'} to {head_revision()}")

"""Opening the Metadata Index: engine, sessions, SQLite tuning (WAL, batched commits), schema
migrations on open (core/migrations)."""

from __future__ import annotations

import logging
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Optional

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker

from spar_desktop.core.config import Settings
from spar_desktop.core.migrations import IndexTooNewError, MigrationError  # noqa: F401  (re-exported)
from spar_desktop.core.library.count_store import watch_writes
from spar_desktop.core.library.query_indexes import restore_at_open
from spar_desktop.core.migrations.runner import UpgradeReport, upgrade_index

log = logging.getLogger(__name__)


def _tune_sqlite(dbapi_conn, _record) -> None:
    # WAL lets the UI read while a scan writes; NORMAL sync is safe with WAL and much faster.
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute("PRAGMA busy_timeout=10000")
    cur.execute("PRAGMA temp_store=MEMORY")
    cur.close()


def make_engine(url: str) -> Engine:
    if url.startswith("sqlite"):
        if url.startswith("sqlite:///") and url != "sqlite:///:memory:":
            Path(url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})
        event.listen(engine, "connect", _tune_sqlite)
    else:
        engine = create_engine(url, pool_pre_ping=True)
        if engine.dialect.name == "postgresql":
            event.listen(engine, "connect", _tune_postgresql)
    return engine


def _tune_postgresql(dbapi_conn, _record) -> None:
    """No JIT compilation for SPAR's sessions: its statements are short, but the planner sizes a
    recursive tag query at millions of rows, over JIT's thresholds, and compiling it took 0.78 s
    of a 1.13 s statement at 1M files. Committed: a SET is undone with its transaction."""
    with dbapi_conn.cursor() as cur:
        cur.execute("SET jit = off")
    dbapi_conn.commit()


class Library:
    """A handle on one metadata index: the engine plus a session factory.

    Thread-safe to share: every operation opens its own short session.
    """

    def __init__(self, engine: Engine, settings: Settings | None = None) -> None:
        self.engine = engine
        self.settings = settings
        self._sessions = sessionmaker(engine, expire_on_commit=False)
        # Creates a new index, upgrades an older one (backup first), or raises IndexTooNewError
        # without writing anything; serialized between processes (see core/migrations/runner.py).
        self.upgrade: Optional[UpgradeReport] = upgrade_index(engine)
        # The tag tree's stored counts go stale with every write that can change them (count_store.py).
        watch_writes(engine, self._sessions)
        # A scan killed while bulk-loading left its query indexes out: build them back now.
        restore_at_open(engine, settings.layout.scan_lock if settings is not None else None)

    @classmethod
    def open(cls, settings: Settings) -> "Library":
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        return cls._with_engine(make_engine(settings.resolved_database_url), settings)

    @classmethod
    def _with_engine(cls, engine: Engine, settings: Settings | None) -> "Library":
        try:
            return cls(engine, settings)
        except BaseException:
            engine.dispose()  # a refused or failed open leaves no connection behind
            raise

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A session that commits on success and rolls back on error."""
        session = self._sessions()
        try:
            yield session
            session.commit()
        except BaseException:
            session.rollback()
            raise
        finally:
            session.close()

    def close(self) -> None:
        self.engine.dispose()

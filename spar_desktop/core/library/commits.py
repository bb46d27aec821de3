"""Whether anything was committed to a SQLite index since a moment: ``PRAGMA data_version``.

A check that costs a full read (the tag vocabulary's signature: every tag and edge, 0.06 s at 1M
files) can be skipped when no connection, of this process or another, committed since it last
ran. SQLite tells a connection that: its ``data_version`` changes when another connection
commits. So the watch reads it on a connection of its own that never writes (the pool's
connections would not see their own commits). Other backends, and an in-memory database, have
no such watch: there ``unchanged`` is always False and the check always runs.
"""

from __future__ import annotations

import sqlite3
import threading
from typing import Any, Optional


class CommitWatch:
    """``now()`` before a check, ``mark(that)`` once it succeeded; later, ``unchanged()`` is True
    only when no commit to the database happened since that moment (the check's own commits
    included: they count as changes, and the next check runs)."""

    def __init__(self, engine: Any) -> None:
        url = engine.url
        self._path = url.database if url.get_backend_name() == "sqlite" and url.database not in (None, "", ":memory:") \
            else None
        self._conn: Optional[sqlite3.Connection] = None
        self._seen: Optional[int] = None
        self._lock = threading.Lock()

    def _version(self) -> Optional[int]:
        # The connection lives as long as the watch (its TagIndex); it only ever reads a pragma.
        if self._path is None:
            return None
        try:
            if self._conn is None:
                self._conn = sqlite3.connect(self._path, check_same_thread=False)  # reads, never writes
            return int(self._conn.execute("PRAGMA data_version").fetchone()[0])
        except sqlite3.Error:
            return None

    def now(self) -> Optional[int]:
        """The database's version at this moment (None: no watch)."""
        with self._lock:
            return self._version()

    def mark(self, version: Optional[int]) -> None:
        """The check succeeded on the database as it was at ``version`` (from ``now``)."""
        with self._lock:
            self._seen = version

    def unchanged(self) -> bool:
        with self._lock:
            return self._seen is not None and self._version() == self._seen

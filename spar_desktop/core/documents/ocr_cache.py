"""OCR text cached per page, keyed by (file content hash, OCR engine id, page number).

OCR costs seconds per page, so a page is read once: a rebuild, another workspace admitting the
same file, or a retry after a cancelled or timed-out build reuses every page already read. One
SQLite file (WAL), plain text columns, no pickle. The text is derived data: a file written by an
incompatible version, or one that is damaged, is dropped and rebuilt rather than migrated.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from pathlib import Path
from typing import Optional

log = logging.getLogger(__name__)

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS ocr_pages (
    content_hash TEXT NOT NULL,
    engine_id    TEXT NOT NULL,
    page         INTEGER NOT NULL,
    text         TEXT NOT NULL,
    created_at   REAL NOT NULL,
    PRIMARY KEY (content_hash, engine_id, page)
);
"""


class OcrCache:
    """Thread-safe (one connection behind a lock): build workers share one instance.

    An empty string is a valid entry: the page was read and has no text, so it is not read again.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        try:
            self._conn = self._open()
        except sqlite3.DatabaseError:
            # Not a database (damaged, truncated): derived data, so start afresh.
            log.warning("OCR cache %s is unreadable; starting a new one", self.path)
            self._remove_files()
            self._conn = self._open()

    def _open(self) -> sqlite3.Connection:
        conn = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None)
        try:
            conn.execute("PRAGMA busy_timeout=10000")  # several processes may share the data dir
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: durable enough for derived data
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version not in (0, SCHEMA_VERSION):
                conn.execute("DROP TABLE IF EXISTS ocr_pages")
            conn.executescript(_SCHEMA)
            conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        except sqlite3.DatabaseError:
            conn.close()
            raise
        return conn

    def _remove_files(self) -> None:
        for suffix in ("", "-wal", "-shm"):
            Path(str(self.path) + suffix).unlink(missing_ok=True)

    # -- lifecycle ---------------------------------------------------------------------------
    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> "OcrCache":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- reads and writes --------------------------------------------------------------------
    def get(self, content_hash: str, engine_id: str) -> Optional[dict[int, str]]:
        """Every cached page of one content read by one engine ({page: text}), None when none is."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT page, text FROM ocr_pages WHERE content_hash=? AND engine_id=? ORDER BY page",
                (content_hash, engine_id),
            ).fetchall()
        return {int(page): text for page, text in rows} or None

    def put(self, content_hash: str, engine_id: str, pages: dict[int, str]) -> None:
        """Add or replace these pages in one transaction; other cached pages of the content stay,
        so a document can be stored page by page as it is read."""
        if not pages:
            return
        now = time.time()
        rows = [(content_hash, engine_id, int(page), text, now) for page, text in pages.items()]
        with self._lock:
            cur = self._conn.cursor()
            try:
                cur.execute("BEGIN IMMEDIATE")
                cur.executemany("INSERT OR REPLACE INTO ocr_pages VALUES (?,?,?,?,?)", rows)
                cur.execute("COMMIT")
            except BaseException:
                if self._conn.in_transaction:
                    cur.execute("ROLLBACK")
                raise
            finally:
                cur.close()

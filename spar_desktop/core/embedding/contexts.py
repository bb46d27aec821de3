"""Context lines the language model wrote for passages (contextual chunking), one row each.

Kept in the embedding cache's SQLite file (its own table, its own connection) and committed one
passage at a time: a model call takes seconds, so an enhancement killed at any point loses at
most the passage being asked, and the next run asks only for the others. Keyed by (content hash,
chunker key, chunk id, model, prompt version): an edited file, another chunking, another model or
a reworded prompt is asked again, never served an old reply.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Sequence

from spar_desktop.core.data_layout import DataLayout

_SCHEMA = """
CREATE TABLE IF NOT EXISTS passage_contexts (
    content_hash    TEXT NOT NULL,
    chunker_key     TEXT NOT NULL,
    chunk_id        TEXT NOT NULL,
    llm_model       TEXT NOT NULL,
    prompts_version INTEGER NOT NULL,
    context         TEXT NOT NULL,
    PRIMARY KEY (content_hash, chunker_key, llm_model, prompts_version, chunk_id)
) WITHOUT ROWID;
"""


class ContextCache:
    """Thread-safe (one connection behind a lock)."""

    def __init__(self, data_dir: str | Path, llm_model: str, prompts_version: int) -> None:
        self.path = DataLayout(data_dir).embeddings
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.llm_model, self.prompts_version = llm_model, int(prompts_version)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA busy_timeout=10000")
        self._conn.executescript(_SCHEMA)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> "ContextCache":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _key(self, content_hash: str, chunker_key: str) -> tuple:
        return content_hash, chunker_key, self.llm_model, self.prompts_version

    def get(self, content_hash: str, chunker_key: str) -> dict[str, str]:
        """chunk id → its context, for the passages of one document already done."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT chunk_id, context FROM passage_contexts WHERE content_hash=? AND chunker_key=? "
                "AND llm_model=? AND prompts_version=?", self._key(content_hash, chunker_key)).fetchall()
        return dict(rows)

    def put(self, content_hash: str, chunker_key: str, chunk_id: str, context: str) -> None:
        with self._lock:  # autocommit: one short WAL transaction, durable before the next call
            self._conn.execute("INSERT OR REPLACE INTO passage_contexts VALUES (?,?,?,?,?,?)",
                               (*self._key(content_hash, chunker_key)[:2], chunk_id, self.llm_model,
                                self.prompts_version, context))

    def count(self, hashes: Sequence[str], chunker_key: str) -> int:
        """Passages of these documents that have their context."""
        n = 0
        hashes = sorted(set(hashes))
        with self._lock:
            for i in range(0, len(hashes), 500):
                part = hashes[i:i + 500]
                n += self._conn.execute(
                    "SELECT COUNT(*) FROM passage_contexts WHERE chunker_key=? AND llm_model=? AND prompts_version=? "
                    f"AND content_hash IN ({','.join('?' * len(part))})",
                    (chunker_key, self.llm_model, self.prompts_version, *part)).fetchone()[0]
        return n

"""Chunks and vectors cached by (file content hash, chunker config, model id).

One SQLite file (``DataLayout.embeddings``, WAL) shared by every workspace: a file embedded once
is reused by any workspace that admits it, and archiving a workspace loses nothing that is
expensive to recompute. A changed file has a new content hash, so its old entry is never served
again; old entries stay (there is no size limit yet). Vectors are stored as raw little-endian
float32 blobs (one matrix per document) and chunks as plain columns: no pickle, so the file is
safe to open and inspect.

``file_id`` is deliberately not stored: the cache is keyed by content, and two files with the same
bytes share one entry; callers attach their own file id with ``CachedDocument.with_file_id``.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from spar_desktop.core.data_layout import DataLayout
from spar_desktop.core.documents.types import Chunk

SCHEMA_VERSION = 1
# Levels the searcher indexes (and therefore embeds); parents are kept only as context.
SEARCH_LEVELS = ("child", "flat")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS documents (
    content_hash TEXT NOT NULL,
    chunker_key  TEXT NOT NULL,
    model_id     TEXT NOT NULL,
    dim          INTEGER NOT NULL,
    n_vectors    INTEGER NOT NULL,
    vectors      BLOB NOT NULL,
    info         TEXT NOT NULL,
    created_at   REAL NOT NULL,
    PRIMARY KEY (content_hash, chunker_key, model_id)
);
CREATE TABLE IF NOT EXISTS chunks (
    content_hash TEXT NOT NULL,
    chunker_key  TEXT NOT NULL,
    model_id     TEXT NOT NULL,
    ord          INTEGER NOT NULL,
    chunk_id     TEXT NOT NULL,
    level        TEXT NOT NULL,
    parent_id    TEXT,
    text         TEXT NOT NULL,
    char_start   INTEGER NOT NULL,
    char_end     INTEGER NOT NULL,
    page_start   INTEGER NOT NULL,
    page_end     INTEGER NOT NULL,
    context      TEXT,
    PRIMARY KEY (content_hash, chunker_key, model_id, ord)
);
-- Where a chunk text's vector already is (row ``row`` of a document's matrix): an edited file
-- re-embeds only the chunks whose text is new. Pointers, not copies: no vector is stored twice.
CREATE TABLE IF NOT EXISTS chunk_texts (
    text_key     TEXT NOT NULL,
    model_id     TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    chunker_key  TEXT NOT NULL,
    row          INTEGER NOT NULL,
    PRIMARY KEY (text_key, model_id)
) WITHOUT ROWID;
"""


def is_searchable(chunk: Chunk) -> bool:
    return chunk.level in SEARCH_LEVELS


def text_key(embed_text: str) -> str:
    """What a vector depends on besides the model: the exact text the encoder reads."""
    return hashlib.blake2b(embed_text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


@dataclass(frozen=True)
class CachedDocument:
    """All chunks of one document (parents and children, in chunker order) plus one vector per
    searchable chunk, rows aligned with ``children``. Immutable, so it can cross threads."""

    content_hash: str
    chunker_key: str
    model_id: str
    chunks: tuple[Chunk, ...]
    vectors: np.ndarray  # (len(children), dim) float32, L2-normalised
    title: Optional[str] = None
    no_text_reason: Optional[str] = None
    warnings: tuple[str, ...] = ()

    @property
    def children(self) -> tuple[Chunk, ...]:
        return tuple(c for c in self.chunks if is_searchable(c))

    @property
    def parents(self) -> dict[str, Chunk]:
        return {c.chunk_id: c for c in self.chunks if c.level == "parent"}

    def with_file_id(self, file_id: Optional[int]) -> "CachedDocument":
        """The same document with every chunk labelled with the caller's file id."""
        return replace(self, chunks=tuple(replace(c, file_id=file_id) for c in self.chunks))


@dataclass(frozen=True)
class CacheStats:
    documents: int
    chunks: int
    vectors: int
    vector_bytes: int
    file_bytes: int
    models: tuple[tuple[str, int], ...]  # (model id, documents)


class EmbeddingCache:
    """Thread-safe (one connection behind a lock): workers of the UI pool share one instance."""

    def __init__(self, data_dir: str | Path) -> None:
        self.path = DataLayout(data_dir).embeddings
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._conn = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: durable enough for derived data
        self._conn.execute("PRAGMA busy_timeout=10000")  # several processes may share the data dir
        version = self._conn.execute("PRAGMA user_version").fetchone()[0]
        if version not in (0, SCHEMA_VERSION):
            # Derived data: an incompatible layout is simply rebuilt rather than migrated.
            self._conn.executescript("DROP TABLE IF EXISTS chunks; DROP TABLE IF EXISTS documents;")
        self._conn.executescript(_SCHEMA)
        self._conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    # -- lifecycle ---------------------------------------------------------------------------
    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> "EmbeddingCache":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- reads -------------------------------------------------------------------------------
    def has(self, content_hash: str, chunker_key: str, model_id: str) -> bool:
        with self._lock:
            row = self._conn.execute(
                "SELECT 1 FROM documents WHERE content_hash=? AND chunker_key=? AND model_id=?",
                (content_hash, chunker_key, model_id),
            ).fetchone()
        return row is not None

    def get(self, content_hash: str, chunker_key: str, model_id: str) -> Optional[CachedDocument]:
        with self._lock:
            row = self._conn.execute(
                "SELECT dim, n_vectors, vectors, info FROM documents "
                "WHERE content_hash=? AND chunker_key=? AND model_id=?",
                (content_hash, chunker_key, model_id),
            ).fetchone()
            if row is None:
                return None
            rows = self._conn.execute(
                "SELECT chunk_id, text, char_start, char_end, page_start, page_end, level, parent_id, context "
                "FROM chunks WHERE content_hash=? AND chunker_key=? AND model_id=? ORDER BY ord",
                (content_hash, chunker_key, model_id),
            ).fetchall()
        dim, n_vectors, blob, info_json = row
        vectors = np.frombuffer(blob, dtype="<f4").reshape(n_vectors, dim).astype(np.float32, copy=True)
        chunks = tuple(
            Chunk(chunk_id=r[0], text=r[1], char_start=r[2], char_end=r[3], page_start=r[4], page_end=r[5],
                  level=r[6], parent_id=r[7], context=r[8])
            for r in rows
        )
        info = json.loads(info_json)
        return CachedDocument(
            content_hash=content_hash,
            chunker_key=chunker_key,
            model_id=model_id,
            chunks=chunks,
            vectors=vectors,
            title=info.get("title"),
            no_text_reason=info.get("no_text_reason"),
            warnings=tuple(info.get("warnings", ())),
        )

    def hashes(self, chunker_key: Optional[str] = None, model_id: Optional[str] = None) -> set[str]:
        sql, args = "SELECT DISTINCT content_hash FROM documents WHERE 1=1", []
        if chunker_key is not None:
            sql, args = sql + " AND chunker_key=?", args + [chunker_key]
        if model_id is not None:
            sql, args = sql + " AND model_id=?", args + [model_id]
        with self._lock:
            return {r[0] for r in self._conn.execute(sql, args)}

    def vectors_for_texts(self, keys: Sequence[str], model_id: str) -> dict[str, np.ndarray]:
        """text key → its vector, for the chunk texts some cached document already embedded with
        ``model_id`` (the others are absent)."""
        out: dict[str, np.ndarray] = {}
        keys = sorted(set(keys))
        with self._lock:
            for i in range(0, len(keys), 500):
                part = keys[i:i + 500]
                rows = self._conn.execute(
                    "SELECT t.text_key, d.dim, substr(d.vectors, t.row * d.dim * 4 + 1, d.dim * 4) "
                    "FROM chunk_texts t JOIN documents d ON d.content_hash = t.content_hash "
                    "AND d.chunker_key = t.chunker_key AND d.model_id = t.model_id "
                    f"WHERE t.model_id = ? AND t.row < d.n_vectors AND t.text_key IN ({','.join('?' * len(part))})",
                    (model_id, *part)).fetchall()
                for key, dim, blob in rows:
                    if blob is not None and len(blob) == dim * 4:
                        out[key] = np.frombuffer(blob, dtype="<f4").astype(np.float32, copy=True)
        return out

    # -- writes ------------------------------------------------------------------------------
    def put(self, doc: CachedDocument) -> None:
        self.put_many([doc])

    def put_many(self, docs: Sequence[CachedDocument]) -> None:
        """Store documents in one transaction (per-document commits would dominate build time)."""
        if not docs:
            return
        for doc in docs:
            _validate(doc)
        now = time.time()
        with self._lock, _transaction(self._conn) as cur:
            for doc in docs:
                key = (doc.content_hash, doc.chunker_key, doc.model_id)
                cur.execute("DELETE FROM chunks WHERE content_hash=? AND chunker_key=? AND model_id=?", key)
                vectors = np.ascontiguousarray(doc.vectors, dtype="<f4")
                info = {"title": doc.title, "no_text_reason": doc.no_text_reason, "warnings": list(doc.warnings)}
                cur.execute(
                    "INSERT OR REPLACE INTO documents VALUES (?,?,?,?,?,?,?,?)",
                    (*key, int(vectors.shape[1]), int(vectors.shape[0]), vectors.tobytes(), json.dumps(info), now),
                )
                cur.executemany(
                    "INSERT INTO chunks VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    [
                        (*key, i, c.chunk_id, c.level, c.parent_id, c.text, c.char_start, c.char_end,
                         c.page_start, c.page_end, c.context)
                        for i, c in enumerate(doc.chunks)
                    ],
                )
                cur.executemany(
                    "INSERT OR IGNORE INTO chunk_texts VALUES (?,?,?,?,?)",
                    [(text_key(c.embed_text), doc.model_id, doc.content_hash, doc.chunker_key, row)
                     for row, c in enumerate(c for c in doc.chunks if is_searchable(c))],
                )

    def stats(self) -> CacheStats:
        with self._lock:
            docs, vecs, vbytes = self._conn.execute(
                "SELECT COUNT(*), COALESCE(SUM(n_vectors),0), COALESCE(SUM(LENGTH(vectors)),0) FROM documents"
            ).fetchone()
            chunks = self._conn.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
            models = tuple(
                (r[0], r[1])
                for r in self._conn.execute("SELECT model_id, COUNT(*) FROM documents GROUP BY model_id ORDER BY 1")
            )
        size = sum(p.stat().st_size for p in self.path.parent.glob(self.path.name + "*") if p.is_file())
        return CacheStats(docs, chunks, vecs, vbytes, size, models)


def _validate(doc: CachedDocument) -> None:
    n_children = sum(1 for c in doc.chunks if is_searchable(c))
    if doc.vectors.ndim != 2 or doc.vectors.shape[0] != n_children:
        raise ValueError(
            f"{doc.content_hash[:12]}: {n_children} searchable chunks but vectors of shape {doc.vectors.shape}"
        )


class _transaction:
    """BEGIN IMMEDIATE ... COMMIT/ROLLBACK around a cursor (the connection is in autocommit)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> sqlite3.Cursor:
        self.cur = self.conn.cursor()
        self.cur.execute("BEGIN IMMEDIATE")
        return self.cur

    def __exit__(self, exc_type: object, *_: object) -> None:
        self.conn.execute("ROLLBACK" if exc_type else "COMMIT")
        self.cur.close()


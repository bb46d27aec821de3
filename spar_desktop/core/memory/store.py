"""Reading and writing ERM memory and evolved keys in the SQL database.

A chunk is addressed by ``ChunkRef`` = (content hash, chunker key, chunk id). Rows written with
another embedding model are skipped with a log line (their vectors live in another space)."""

from __future__ import annotations

import hashlib
import logging
from typing import Any, Iterable, Iterator, Mapping, Sequence

import numpy as np
from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from spar_desktop.core.memory.learner import ChunkMemory, EvolvedKey, MemoryEntry
from spar_desktop.core.memory.models import EvolvedKeyRow, MemoryUnitRow

log = logging.getLogger(__name__)

ChunkRef = tuple[str, str, str]  # (content hash, chunker key, chunk id)
_IN_BATCH = 500  # hashes per IN (...) clause


def _batches(values: Sequence[str]) -> Iterator[list[str]]:
    values = sorted(set(values))
    for i in range(0, len(values), _IN_BATCH):
        yield values[i:i + _IN_BATCH]


def to_blob(v: np.ndarray) -> bytes:
    return np.asarray(v, dtype="<f4").tobytes()


def from_blob(b: bytes, dim: int) -> np.ndarray | None:
    v = np.frombuffer(b, dtype="<f4")
    if v.shape[0] != dim or not np.all(np.isfinite(v)):
        return None
    return v.astype(np.float32)


def key_tag(vector: np.ndarray, text: str) -> str:
    """Content-addressed tag of an evolved key: equal tags mean identical keys."""
    return "erm-" + hashlib.blake2b(to_blob(vector) + text.encode("utf-8"), digest_size=8).hexdigest()


def _rows_of_model(s: Session, row_type: Any, hashes: Sequence[str], chunker_key: str, model_id: str,
                   what: str) -> Iterator[Any]:
    """Rows of ``row_type`` for these chunks made with ``model_id``; others are counted and skipped."""
    other = 0
    for part in _batches(hashes):
        for r in s.scalars(select(row_type).where(row_type.content_hash.in_(part), row_type.chunker_key == chunker_key)):
            if r.model_id != model_id:
                other += 1
                continue
            yield r
    if other:
        log.info("ERM: ignored %d %s made with another embedding model (now %s)", other, what, model_id)


def load_memory(s: Session, hashes: Sequence[str], chunker_key: str, model_id: str, dim: int) -> dict[ChunkRef, ChunkMemory]:
    out: dict[ChunkRef, ChunkMemory] = {}
    bad = 0
    for r in _rows_of_model(s, MemoryUnitRow, hashes, chunker_key, model_id, "memory units"):
        vec = from_blob(r.vector, dim)
        if vec is None:
            bad += 1
            continue
        mem = out.setdefault((r.content_hash, r.chunker_key, r.chunk_id), ChunkMemory())
        mem.entries[r.text.lower()] = MemoryEntry(r.text, r.kind, vec, float(r.score), int(r.hits))
    if bad:
        log.warning("ERM: ignored %d memory units with unreadable vectors", bad)
    return out


def save_memory(s: Session, memory: Mapping[ChunkRef, ChunkMemory], refs: Iterable[ChunkRef], model_id: str) -> None:
    """Replace the stored memory of ``refs`` (this model's rows only) with ``memory``'s."""
    for ref in refs:
        h, ck, cid = ref
        s.execute(delete(MemoryUnitRow).where(MemoryUnitRow.content_hash == h, MemoryUnitRow.chunker_key == ck,
                                              MemoryUnitRow.chunk_id == cid, MemoryUnitRow.model_id == model_id))
        for e in (memory.get(ref) or ChunkMemory()).entries.values():
            s.add(MemoryUnitRow(content_hash=h, chunker_key=ck, chunk_id=cid, model_id=model_id, text=e.text,
                                kind=e.kind, vector=to_blob(e.vector), score=e.score, hits=e.hits))


def load_keys(s: Session, hashes: Sequence[str], chunker_key: str, model_id: str, dim: int) -> dict[ChunkRef, tuple[np.ndarray, str, str]]:
    """Evolved keys: ref → (vector, BM25 text, tag)."""
    out: dict[ChunkRef, tuple[np.ndarray, str, str]] = {}
    for r in _rows_of_model(s, EvolvedKeyRow, hashes, chunker_key, model_id, "evolved keys"):
        vec = from_blob(r.vector, dim)
        if vec is None:
            log.warning("ERM: ignored an evolved key with an unreadable vector (%s %s)", r.content_hash[:12], r.chunk_id)
            continue
        out[(r.content_hash, r.chunker_key, r.chunk_id)] = (vec, r.extra_text or "", r.tag)
    return out


def save_keys(s: Session, keys: Mapping[ChunkRef, EvolvedKey], stale: Iterable[ChunkRef], model_id: str) -> None:
    """Write evolved keys; drop the rows of ``stale`` refs (keys no longer evolved)."""
    for h, ck, cid in list(keys) + list(stale):
        s.execute(delete(EvolvedKeyRow).where(EvolvedKeyRow.content_hash == h, EvolvedKeyRow.chunker_key == ck,
                                              EvolvedKeyRow.chunk_id == cid, EvolvedKeyRow.model_id == model_id))
    s.flush()
    for (h, ck, cid), k in keys.items():
        s.add(EvolvedKeyRow(content_hash=h, chunker_key=ck, chunk_id=cid, model_id=model_id, vector=to_blob(k.vector),
                            extra_text=k.text, tag=key_tag(k.vector, k.text)))


def delete_for(s: Session, hashes: Sequence[str], chunker_key: str) -> int:
    """Drop memory and keys (all models) of these files: the workspace is back to its originals."""
    n = 0
    for part in _batches(hashes):
        for table in (MemoryUnitRow, EvolvedKeyRow):
            res = s.execute(delete(table).where(table.content_hash.in_(part), table.chunker_key == chunker_key))
            n += res.rowcount or 0
    return n


def counts(s: Session, hashes: Sequence[str], chunker_key: str, model_id: str) -> dict[str, int]:
    c = {"evolved_keys": 0, "units": 0, "chunks_with_memory": 0, "other_model": 0}
    for part in _batches(hashes):
        k = s.execute(select(EvolvedKeyRow.model_id == model_id, func.count()).where(
            EvolvedKeyRow.content_hash.in_(part), EvolvedKeyRow.chunker_key == chunker_key).group_by(
            EvolvedKeyRow.model_id == model_id)).all()
        for same, n in k:
            c["evolved_keys" if same else "other_model"] += n
        mine = (MemoryUnitRow.content_hash.in_(part), MemoryUnitRow.chunker_key == chunker_key,
                MemoryUnitRow.model_id == model_id)
        c["units"] += s.scalar(select(func.count()).where(*mine)) or 0
        c["chunks_with_memory"] += s.scalar(select(func.count()).select_from(
            select(MemoryUnitRow.content_hash, MemoryUnitRow.chunk_id).where(*mine).distinct().subquery())) or 0
        c["other_model"] += s.scalar(select(func.count()).where(
            MemoryUnitRow.content_hash.in_(part), MemoryUnitRow.chunker_key == chunker_key,
            MemoryUnitRow.model_id != model_id)) or 0
    return c

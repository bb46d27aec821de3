"""Reading and writing ERM memory and evolved keys in the SQL database (evolved keys are read
through ``workspaces/evolved_keys.py``, which builds use too).

A chunk is addressed by ``ChunkRef`` = (content hash, chunker key, chunk id). Rows written with
another embedding model are skipped with a log line (their vectors live in another space)."""

from __future__ import annotations

import logging
from typing import Iterable, Mapping, Sequence

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from spar_desktop.core.memory.learner import ChunkMemory, EvolvedKey, MemoryEntry
from spar_desktop.core.memory.models import MemoryUnitRow
from spar_desktop.core.workspaces.evolved_keys import ChunkRef, batches, from_blob, key_tag, rows_of_model, to_blob
from spar_desktop.core.workspaces.models import EvolvedKeyRow

log = logging.getLogger(__name__)


def load_memory(s: Session, hashes: Sequence[str], chunker_key: str, model_id: str, dim: int) -> dict[ChunkRef, ChunkMemory]:
    out: dict[ChunkRef, ChunkMemory] = {}
    bad = 0
    for r in rows_of_model(s, MemoryUnitRow, hashes, chunker_key, model_id, "memory units"):
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
    for part in batches(hashes):
        for table in (MemoryUnitRow, EvolvedKeyRow):
            res = s.execute(delete(table).where(table.content_hash.in_(part), table.chunker_key == chunker_key))
            n += res.rowcount or 0
    return n


def counts(s: Session, hashes: Sequence[str], chunker_key: str, model_id: str) -> dict[str, int]:
    c = {"evolved_keys": 0, "units": 0, "chunks_with_memory": 0, "other_model": 0}
    for part in batches(hashes):
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

"""Reading the keys chunks evolved to (ERM, paper 001 §4) as searcher overrides.

core/memory learns the keys and writes them (memory/store.py); builds apply them and saved
searchers check them against the database. Reading sits here, below memory, so that workspaces
never import memory: the dependency runs memory → workspaces only. A chunk is addressed by
``ChunkRef`` = (content hash, chunker key, chunk id); rows written with another embedding model
are skipped with a log line (their vectors live in another space).
"""

from __future__ import annotations

import hashlib
import logging
from typing import Any, Iterator, Mapping, Sequence

import numpy as np
from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from spar_desktop.core.retrieval.searcher import KeyOverride
from spar_desktop.core.workspaces.models import EvolvedKeyRow, WorkspaceFile

log = logging.getLogger(__name__)

ChunkRef = tuple[str, str, str]  # (content hash, chunker key, chunk id)
_IN_BATCH = 500  # hashes per IN (...) clause


def batches(values: Sequence[str]) -> Iterator[list[str]]:
    """Sorted distinct values in IN (...)-sized parts."""
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


def rows_of_model(s: Session, row_type: Any, hashes: Sequence[str], chunker_key: str, model_id: str,
                  what: str) -> Iterator[Any]:
    """Rows of ``row_type`` for these chunks made with ``model_id``; others are counted and skipped."""
    other = 0
    for part in batches(hashes):
        for r in s.scalars(select(row_type).where(row_type.content_hash.in_(part), row_type.chunker_key == chunker_key)):
            if r.model_id != model_id:
                other += 1
                continue
            yield r
    if other:
        log.info("ERM: ignored %d %s made with another embedding model (now %s)", other, what, model_id)


def load_keys(s: Session, hashes: Sequence[str], chunker_key: str, model_id: str, dim: int) -> dict[ChunkRef, tuple[np.ndarray, str, str]]:
    """Evolved keys: ref → (vector, BM25 text, tag)."""
    out: dict[ChunkRef, tuple[np.ndarray, str, str]] = {}
    for r in rows_of_model(s, EvolvedKeyRow, hashes, chunker_key, model_id, "evolved keys"):
        vec = from_blob(r.vector, dim)
        if vec is None:
            log.warning("ERM: ignored an evolved key with an unreadable vector (%s %s)", r.content_hash[:12], r.chunk_id)
            continue
        out[(r.content_hash, r.chunker_key, r.chunk_id)] = (vec, r.extra_text or "", r.tag)
    return out


def evolved_overrides(library: Any, documents: Mapping[str, Any], model_id: str, dim: int) -> dict[str, KeyOverride]:
    """Evolved keys stored for these documents (doc id → CachedDocument), as searcher overrides:
    a built or reactivated workspace starts from the keys its chunks evolved to."""
    by_chunker: dict[str, list[str]] = {}
    for doc in documents.values():
        by_chunker.setdefault(doc.chunker_key, []).append(doc.content_hash)
    keys: dict[ChunkRef, tuple[np.ndarray, str, str]] = {}
    with library.session() as s:
        for chunker_key, hashes in by_chunker.items():
            keys.update(load_keys(s, hashes, chunker_key, model_id, dim))
    if not keys:
        return {}
    out = {}
    for doc_id, doc in documents.items():
        for c in doc.children:
            k = keys.get((doc.content_hash, doc.chunker_key, c.chunk_id))
            if k is not None:
                out[f"{doc_id}#{c.chunk_id}"] = KeyOverride(k[0], k[1], k[2])
    return out


def carry_over(library: Any, cache: Any, edits: Sequence[tuple[str, Any]]) -> int:
    """For each (content hash as built, new version's CachedDocument) of an edited file, the keys
    learned for chunks whose text the new version still has now belong to the new version's
    chunk of that text too (a fresh build of the new file starts from them). Returns how many."""
    moved = 0
    with library.session() as s:
        for old_hash, doc in edits:
            rows = list(s.scalars(select(EvolvedKeyRow).where(
                EvolvedKeyRow.content_hash == old_hash, EvolvedKeyRow.chunker_key == doc.chunker_key,
                EvolvedKeyRow.model_id == doc.model_id)))
            old = cache.get(old_hash, doc.chunker_key, doc.model_id) if rows else None
            if old is None:
                continue
            text_of = {c.chunk_id: c.embed_text for c in old.children}
            chunk_of = {c.embed_text: c.chunk_id for c in doc.children}
            have = set(s.scalars(select(EvolvedKeyRow.chunk_id).where(
                EvolvedKeyRow.content_hash == doc.content_hash, EvolvedKeyRow.chunker_key == doc.chunker_key,
                EvolvedKeyRow.model_id == doc.model_id)))
            for r in rows:
                chunk_id = chunk_of.get(text_of.get(r.chunk_id, ""))
                if chunk_id is None or chunk_id in have:
                    continue
                s.add(EvolvedKeyRow(content_hash=doc.content_hash, chunker_key=r.chunker_key, chunk_id=chunk_id,
                                    model_id=r.model_id, vector=r.vector, extra_text=r.extra_text, tag=r.tag,
                                    evolved_at=r.evolved_at))
                have.add(chunk_id)
                moved += 1
    return moved


def drop_unreferenced(library: Any, hashes: set[str]) -> int:
    """Delete the evolved keys of these document versions when no workspace (archived ones
    included) holds them any more: their chunks are gone. Returns how many rows went."""
    dropped = 0
    with library.session() as s:
        for part in batches(list(hashes)):
            held = set(s.scalars(select(WorkspaceFile.content_hash).where(WorkspaceFile.content_hash.in_(part))))
            gone = [h for h in part if h not in held]
            if gone:
                dropped += s.execute(delete(EvolvedKeyRow).where(EvolvedKeyRow.content_hash.in_(gone))).rowcount or 0
    return dropped

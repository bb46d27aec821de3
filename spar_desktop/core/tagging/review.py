"""The review queue: unconfirmed ``file_tags`` rows, accepted (confirmed, they then count like any
tag and vote for neighbours) or rejected (removed, and remembered in ``tag_rejections`` so the
pair is never suggested again)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable, Optional

from sqlalchemy import delete, func, select, update

from spar_desktop.core.library import count_store
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.models import File, FileTag, Tag, TagRejection, utcnow

_IN_CHUNK = 500


@dataclass(frozen=True)
class Suggestion:
    file_id: int
    path: str
    tag_id: int
    tag_key: str
    tag_value: str
    source: str  # 'auto' | 'llm'
    score: float


def pending(library: Library, tag_id: Optional[int] = None, file_id: Optional[int] = None, min_score: float = 0.0,
            limit: Optional[int] = None) -> list[Suggestion]:
    """Unconfirmed suggestions, best first (then by path and tag)."""
    q = (select(FileTag.file_id, File.path, FileTag.tag_id, Tag.key, Tag.value, FileTag.source, FileTag.score)
         .join(File, File.id == FileTag.file_id).join(Tag, Tag.id == FileTag.tag_id)
         .where(FileTag.confirmed.is_(False), FileTag.score >= min_score)
         .order_by(FileTag.score.desc(), File.path, Tag.key))
    if tag_id is not None:
        q = q.where(FileTag.tag_id == tag_id)
    if file_id is not None:
        q = q.where(FileTag.file_id == file_id)
    if limit is not None:
        q = q.limit(limit)
    with library.session() as s:
        return [Suggestion(int(f), p, int(t), k, v, src, float(sc)) for f, p, t, k, v, src, sc in s.execute(q)]


def pending_counts(library: Library) -> dict[int, int]:
    """Unconfirmed suggestions per tag id."""
    with library.session() as s:
        return {int(t): int(n) for t, n in s.execute(select(FileTag.tag_id, func.count())
                                                     .where(FileTag.confirmed.is_(False)).group_by(FileTag.tag_id))}


def _by_tag(pairs: Iterable[tuple[int, int]]) -> dict[int, list[int]]:
    out: dict[int, set[int]] = defaultdict(set)
    for file_id, tag_id in pairs:
        out[int(tag_id)].add(int(file_id))
    return {t: sorted(f) for t, f in out.items()}


def accept(library: Library, pairs: Iterable[tuple[int, int]]) -> int:
    """Confirm these (file_id, tag_id) suggestions; returns how many were pending."""
    n, by_tag = 0, _by_tag(pairs)
    with library.session() as s:
        for tag_id, files in by_tag.items():
            for i in range(0, len(files), _IN_CHUNK):
                n += s.execute(update(FileTag).where(FileTag.tag_id == tag_id, FileTag.file_id.in_(files[i:i + _IN_CHUNK]),
                                                     FileTag.confirmed.is_(False)).values(confirmed=True)).rowcount or 0
        count_store.refresh(s, by_tag)  # the accepted tags are counted again
    return n


def reject(library: Library, pairs: Iterable[tuple[int, int]]) -> int:
    """Remove these suggestions and remember them (never suggested again); a tag the file
    already has for sure is left alone. Returns how many suggestions were removed."""
    n = 0
    with library.session() as s:
        for tag_id, files in _by_tag(pairs).items():
            for i in range(0, len(files), _IN_CHUNK):
                part = files[i:i + _IN_CHUNK]
                n += s.execute(delete(FileTag).where(FileTag.tag_id == tag_id, FileTag.file_id.in_(part),
                                                     FileTag.confirmed.is_(False))).rowcount or 0
                kept = set(s.scalars(select(FileTag.file_id).where(FileTag.tag_id == tag_id, FileTag.file_id.in_(part))))
                known = set(s.scalars(select(TagRejection.file_id).where(TagRejection.tag_id == tag_id,
                                                                         TagRejection.file_id.in_(part))))
                real = set(s.scalars(select(File.id).where(File.id.in_(part))))
                exists = s.scalar(select(Tag.id).where(Tag.id == tag_id)) is not None
                now = utcnow()
                s.add_all(TagRejection(file_id=f, tag_id=tag_id, rejected_at=now)
                          for f in part if exists and f in real and f not in kept and f not in known)
        count_store.refresh(s, ())  # suggestions only: no count changed
    return n


def accept_above(library: Library, threshold: float, tag_id: Optional[int] = None) -> int:
    """Confirm every pending suggestion scored at or above ``threshold`` (of one tag, or all)."""
    q = update(FileTag).where(FileTag.confirmed.is_(False), FileTag.score >= threshold).values(confirmed=True)
    if tag_id is not None:
        q = q.where(FileTag.tag_id == tag_id)
    with library.session() as s:
        n = s.execute(q).rowcount or 0
        count_store.refresh(s, None if tag_id is None else (tag_id,))
        return n



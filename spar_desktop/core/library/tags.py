"""The tag DAG: creating tags and edges (refusing cycles), resolving what a user typed to tags,
expanding a selection to its descendants, and tagging files by hand.

Tag keys: folder tags use the folder's path relative to its root ('comp/sys/mac'); date tags
'date:2019', 'date:2019-Q2', 'date:2019-05'; other sources '<source>:<name>'.
"""

from __future__ import annotations

import calendar
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from typing import Iterable, Mapping, Optional

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from spar_desktop.core.library.bulk import ids_appended, insert_rows
from spar_desktop.core.library.models import FileTag, Tag, TagEdge, TagSource, utcnow
from spar_desktop.core.library.raw_rows import driver_rows, ids_in
from spar_desktop.core.library.tag_counts import file_counts


class TagError(ValueError):
    """A tag operation that cannot be done (unknown tag, would make a cycle...)."""


@dataclass(frozen=True)
class TagInfo:
    id: int
    key: str
    value: str
    source: str
    description: Optional[str]
    parent_ids: tuple[int, ...]
    child_ids: tuple[int, ...]
    file_count: int  # files tagged with this tag or any descendant


def date_tag_specs(when: datetime) -> list[tuple[str, str]]:
    """(key, label) from year down to month for a document date."""
    q = (when.month - 1) // 3 + 1
    return [
        (f"date:{when.year}", str(when.year)),
        (f"date:{when.year}-Q{q}", f"Q{q} {when.year}"),
        (f"date:{when.year}-{when.month:02d}", f"{calendar.month_name[when.month]} {when.year}"),
    ]


def path_tag_specs(rel_dir: str) -> list[tuple[str, str]]:
    """(key, label) for every folder level of a '/'-separated relative folder path."""
    parts = [p for p in rel_dir.split("/") if p]
    return [("/".join(parts[: i + 1]), parts[i]) for i in range(len(parts))]


class TagCache:
    """In-memory key→id map plus known edges, so a scan creates each tag/edge once per batch."""

    def __init__(self, session: Session) -> None:
        self.ids: dict[str, int] = dict(session.execute(select(Tag.key, Tag.id)).all())
        self.edges: set[tuple[int, int]] = set(session.execute(select(TagEdge.parent_id, TagEdge.child_id)).all())

    def ensure_chains(self, session: Session, chains: list[tuple[list[tuple[str, str]], str]]) -> list[int]:
        """Create the tags of parent→child (specs, source) chains where missing, in a few
        statements: the missing tags in one executemany, their ids from SQLite's rowid rule
        (``ids_appended``) or else in one select per 500 keys, the missing edges in one more.
        Returns the deepest tag id of each chain. Core inserts: no ORM object per tag."""
        new: dict[str, dict] = {}
        for specs, source in chains:
            for key, label in specs:
                if key not in self.ids and key not in new:
                    new[key] = {"key": key, "value": label, "source": source, "created_at": utcnow()}
        if new:
            conn = session.connection()
            top = conn.execute(select(func.max(Tag.id))).scalar() or 0
            insert_rows(conn, Tag.__table__, list(new.values()))
            keys = list(new)
            ids = ids_appended(conn, Tag.id, top, len(keys))
            if ids is not None:
                self.ids.update(zip(keys, ids))
            else:
                for i in range(0, len(keys), 500):
                    self.ids.update(conn.execute(select(Tag.key, Tag.id).where(Tag.key.in_(keys[i:i + 500]))).all())
        edges = []
        deepest = []
        for specs, _ in chains:
            parent_id: Optional[int] = None
            parent_new = False
            for key, _ in specs:
                tag_id, tag_new = self.ids[key], key in new
                # An edge is laid only with a tag this call created: between two tags that already
                # existed a missing edge was removed on purpose (the user grouped or moved the tag),
                # and a re-scan must not put it back.
                if parent_id is not None and (tag_new or parent_new) and (parent_id, tag_id) not in self.edges:
                    self.edges.add((parent_id, tag_id))
                    edges.append({"parent_id": parent_id, "child_id": tag_id})
                parent_id, parent_new = tag_id, tag_new
            assert parent_id is not None
            deepest.append(parent_id)
        if edges:
            insert_rows(session.connection(), TagEdge.__table__, edges)
        return deepest


def descendant_ids(session: Session, tag_ids: Iterable[int]) -> set[int]:
    """The given tags and all their descendants (recursive CTE; works on SQLite and PostgreSQL)."""
    ids = list(set(tag_ids))
    if not ids:
        return set()
    base = select(Tag.id.label("id")).where(Tag.id.in_(ids))
    tree = base.cte("tree", recursive=True)
    tree = tree.union(select(TagEdge.child_id).join(tree, TagEdge.parent_id == tree.c.id))
    return set(session.scalars(select(tree.c.id)).all())


def ancestor_ids(session: Session, tag_ids: Iterable[int]) -> set[int]:
    ids = list(set(tag_ids))
    if not ids:
        return set()
    up = select(Tag.id.label("id")).where(Tag.id.in_(ids)).cte("up", recursive=True)
    up = up.union(select(TagEdge.parent_id).join(up, TagEdge.child_id == up.c.id))
    return set(session.scalars(select(up.c.id)).all())


def under_another(session: Session, tag_ids: Iterable[int]) -> set[int]:
    """Those of ``tag_ids`` with a proper ancestor that is also in ``tag_ids``: those reached by one
    edge or more from a tag of ``tag_ids``. Only tags with children can reach any, so the walk
    starts from those alone: a keyword matching 16,687 same-named leaf folders at 1M files costs
    one read of which of them are parents, where walking every match's way up read ~100k edges."""
    ids = set(tag_ids)
    parents: list[int] = []
    ordered = sorted(ids)
    for i in range(0, len(ordered), 5_000):
        parents.extend(session.scalars(select(TagEdge.parent_id).distinct()
                                       .where(ids_in(TagEdge.parent_id, ordered[i:i + 5_000]))))
    if not parents:
        return set()
    reached: set[int] = set()
    for i in range(0, len(parents), 5_000):
        start = select(TagEdge.child_id.label("id")).where(ids_in(TagEdge.parent_id, parents[i:i + 5_000]))
        down = start.cte("down", recursive=True)
        down = down.union(select(TagEdge.child_id).join(down, TagEdge.parent_id == down.c.id))
        reached.update(session.scalars(select(down.c.id)))
    return ids & reached


def add_edge(session: Session, parent_id: int, child_id: int) -> bool:
    """Add parent→child unless it exists; refuse (TagError) if it would close a cycle."""
    if parent_id == child_id or parent_id in descendant_ids(session, [child_id]):
        raise TagError("would create a cycle")
    exists = session.scalar(select(TagEdge.id).where(TagEdge.parent_id == parent_id, TagEdge.child_id == child_id))
    if exists:
        return False
    session.add(TagEdge(parent_id=parent_id, child_id=child_id))
    session.flush()
    return True


def remove_edge(session: Session, parent_id: int, child_id: int) -> bool:
    """Remove parent→child (the tags and their files stay); False when there was no such edge."""
    result = session.execute(delete(TagEdge).where(TagEdge.parent_id == parent_id, TagEdge.child_id == child_id))
    return bool(result.rowcount)


def resolve_tags(session: Session, text: str) -> list[Tag]:
    """Tags a user means by ``text``: the exact key, else every tag whose label matches
    (case-insensitive), else keys ending with '/text' (a folder name typed without its parents)."""
    text = text.strip().strip("/")
    if not text:
        return []
    tag = session.scalar(select(Tag).where(Tag.key == text))
    if tag is not None:
        return [tag]
    low = text.lower()
    found = list(session.scalars(select(Tag).where(func.lower(Tag.key) == low)))
    if found:
        return found
    found = list(session.scalars(select(Tag).where(func.lower(Tag.value) == low)))
    if found:
        return found
    return list(session.scalars(select(Tag).where(func.lower(Tag.key).like(f"%/{low}"))))


def resolve_tag_group(session: Session, expr: str) -> tuple[set[int], list[str]]:
    """A group 'a|b|c' → ids of a, b, c (not yet expanded) and the names that matched nothing."""
    ids: set[int] = set()
    unknown: list[str] = []
    for part in expr.split("|"):
        tags = resolve_tags(session, part)
        if not tags:
            unknown.append(part.strip())
        ids.update(t.id for t in tags)
    return ids, unknown


def tag_files(session: Session, file_ids: Iterable[int], tag_id: int, source: str = TagSource.USER,
              score: float = 1.0, confirmed: bool = True) -> int:
    """Attach a tag to files (idempotent); returns how many new assignments were made."""
    file_ids = list(set(file_ids))
    have = set(session.scalars(select(FileTag.file_id).where(FileTag.tag_id == tag_id, FileTag.file_id.in_(file_ids))))
    new = [fid for fid in file_ids if fid not in have]
    session.add_all(FileTag(file_id=fid, tag_id=tag_id, source=source, score=score, confirmed=confirmed) for fid in new)
    session.flush()
    return len(new)


def untag_files(session: Session, file_ids: Iterable[int], tag_id: int) -> int:
    result = session.execute(delete(FileTag).where(FileTag.tag_id == tag_id, FileTag.file_id.in_(list(file_ids))))
    return result.rowcount or 0


def create_tag(session: Session, key: str, value: str, source: str, description: Optional[str] = None) -> Tag:
    tag = session.scalar(select(Tag).where(Tag.key == key))
    if tag is None:
        tag = Tag(key=key, value=value, source=source, description=description)
        session.add(tag)
        session.flush()
    elif description and not tag.description:
        tag.description = description
    return tag


def tag_infos(session: Session, counts: Optional[Mapping[int, int]] = None) -> dict[int, TagInfo]:
    """Every tag with its parents, children and the number of files under it (DAG-expanded;
    ``counts``: those numbers already known, e.g. count_store's rows)."""
    parents: dict[int, list[int]] = defaultdict(list)
    children: dict[int, list[int]] = defaultdict(list)
    for p, c in driver_rows(session, select(TagEdge.parent_id, TagEdge.child_id)):  # 100k+ at a 1M-file share
        parents[c].append(p)
        children[p].append(c)
    tags = driver_rows(session, select(Tag.id, Tag.key, Tag.value, Tag.source, Tag.description))
    # Confirmed assignments only: a suggestion nobody accepted yet is not the file's tag.
    if counts is None:
        counts = file_counts(session, [t[0] for t in tags], children)
    return {
        i: TagInfo(i, key, value, source, description, tuple(parents.get(i, ())),
                   tuple(sorted(children.get(i, ()))), counts.get(i, 0))
        for i, key, value, source, description in tags
    }


def root_tag_ids(infos: dict[int, TagInfo]) -> list[int]:
    return sorted((i for i, t in infos.items() if not t.parent_ids), key=lambda i: (infos[i].source, infos[i].key))


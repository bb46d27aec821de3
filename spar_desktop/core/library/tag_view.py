"""The tag tree's tags, read from SQL as the tree is browsed instead of built all at once.

At 1,000,000 files (120,000 folder and date tags) building every TagInfo in Python took seconds
before the tree could show. Here a snapshot holds only the files under each tag (ints, the rows
count_store.py keeps, read on a worker); a tag's label, parents and children
are read by id when the tree shows it (its roots at start-up, a node's children when it is
expanded) and kept for the snapshot's life. The text filter searches a folded copy of every label
held for the snapshot's life (core/library/tag_search.py), built by the first search, on a worker.

``HeldTagInfos`` gives the same interface over TagInfos already in memory (snapshots made by hand).
"""

from __future__ import annotations

import threading
from collections import defaultdict
from typing import Iterable, Iterator, Mapping, Optional

from sqlalchemy import exists, or_, select

from spar_desktop.core.library.models import Tag, TagEdge
from spar_desktop.core.library.raw_rows import driver_rows
from spar_desktop.core.library.tag_search import (  # noqa: F401  (TagRow, MAX_MATCHES: read from here too)
    CHUNK, MAX_MATCHES, LabelIndex, TagMatches, TagRow, ancestors, fold, read_label_index, read_rows, sql_matches,
)
from spar_desktop.core.library.tags import TagInfo


class TagInfos(Mapping[int, TagInfo]):
    """tag id → TagInfo, plus what the tree asks of the whole set without reading it."""

    def row(self, tag_id: int) -> Optional[TagRow]:
        """The tag's row (None if it is gone); read with ``load`` before asking for many."""
        raise NotImplementedError

    def root_ids(self) -> list[int]:
        raise NotImplementedError

    def load(self, ids: Iterable[int]) -> None:
        """Read these tags' rows now, in one go (before a node's children are shown)."""

    def rows(self, ids: Iterable[int]) -> list[TagRow]:
        """The rows of these tags that exist, read in one go."""
        ids = list(ids)
        self.load(ids)
        return [r for i in ids if (r := self.row(i)) is not None]

    def matches(self, text: str) -> TagMatches:
        """The filter's answer for ``text`` (label, key or description, Unicode case-insensitive):
        safe on a worker (it reads, it does not fill this object's caches); ``remember`` it after."""
        raise NotImplementedError

    def remember(self, found: TagMatches) -> None:
        """Keep what ``matches`` read (on the thread that shows the tree), so showing it reads nothing."""

    def search(self, text: str) -> tuple[set[int], set[int]]:
        """(tags whose label, key or description holds ``text``, those and all their ancestors)."""
        found = self.matches(text)
        self.remember(found)
        return set(found.matching), set(found.visible)

    def max_count(self) -> int:
        raise NotImplementedError

    def by_sources(self, sources: Iterable[str]) -> dict[str, int]:
        """label → tag id of the tags of these sources (the user's and taxonomy tags: few)."""
        raise NotImplementedError


class HeldTagInfos(TagInfos):
    def __init__(self, infos: Mapping[int, TagInfo]) -> None:
        self._infos = infos

    def __getitem__(self, tag_id: int) -> TagInfo:
        return self._infos[tag_id]

    def __iter__(self) -> Iterator[int]:
        return iter(self._infos)

    def __len__(self) -> int:
        return len(self._infos)

    def root_ids(self) -> list[int]:
        return [i for i, t in self._infos.items() if not t.parent_ids]

    def row(self, tag_id: int) -> Optional[TagRow]:
        t = self._infos.get(tag_id)
        return None if t is None else TagRow(t.id, t.key, t.value, t.source, t.description, bool(t.child_ids),
                                             t.file_count)

    def matches(self, text: str) -> TagMatches:
        needle = fold(text.strip())
        if not needle:
            return TagMatches(text.strip(), frozenset(), frozenset())
        matching = {i for i, t in self._infos.items()
                    if needle in fold(t.value) or needle in fold(t.key)
                    or (t.description is not None and needle in fold(t.description))}
        visible = ancestors(matching, lambda ids: [p for i in ids for p in self._infos[i].parent_ids])
        return TagMatches(text.strip(), frozenset(matching), frozenset(visible))

    def max_count(self) -> int:
        return max((t.file_count for t in self._infos.values()), default=0)

    def by_sources(self, sources: Iterable[str]) -> dict[str, int]:
        wanted, out = set(sources), {}
        for t in self._infos.values():
            if t.source in wanted:
                out.setdefault(t.value, t.id)
        return out


class SqlTagInfos(TagInfos):
    """Tags read by id from the library, with the counts a worker read (``count_store``)."""

    def __init__(self, library, counts: Mapping[int, int], roots: Optional[list[int]] = None) -> None:
        self._library = library
        self._counts = counts
        self._roots = roots
        self._rows: dict[int, TagRow] = {}
        self._held: dict[int, TagInfo] = {}
        self._labels: Optional[LabelIndex] = None  # built by the first search (on a worker)
        self._labels_lock = threading.Lock()

    def __getitem__(self, tag_id: int) -> TagInfo:
        info = self._held.get(tag_id)
        if info is None:
            if tag_id not in self._counts:
                raise KeyError(tag_id)
            self._load_infos([tag_id])
            info = self._held.get(tag_id)
            if info is None:  # deleted since the counts were read
                raise KeyError(tag_id)
        return info

    def __contains__(self, tag_id: object) -> bool:
        return tag_id in self._counts

    def __iter__(self) -> Iterator[int]:
        return iter(self._counts)

    def __len__(self) -> int:
        return len(self._counts)

    def values(self):  # every tag at once (small indexes, tests): one read, not one per tag
        self._load_infos(self._counts)
        return super().values()

    def items(self):
        self._load_infos(self._counts)
        return super().items()

    def loaded(self) -> frozenset[int]:
        """The tags read so far (what browsing the tree cost)."""
        return frozenset(self._rows) | frozenset(self._held)

    def root_ids(self) -> list[int]:
        if self._roots is None:
            with self._library.session() as s:
                self._roots = read_root_ids(s)
        return list(self._roots)

    def row(self, tag_id: int) -> Optional[TagRow]:
        if tag_id not in self._rows:
            self.load([tag_id])
        return self._rows.get(tag_id)

    def load(self, ids: Iterable[int]) -> None:
        todo = [i for i in dict.fromkeys(ids) if i not in self._rows and i in self._counts]
        if not todo:
            return
        # A connection, not an ORM session nor driver_rows: a node's children are a few hundred rows
        # at most, and SQLAlchemy's statement cache saves compiling the statement on each expand.
        with self._library.engine.connect() as c:
            self._rows.update(read_rows(c, todo, self._counts))

    def _load_infos(self, ids: Iterable[int]) -> None:
        """Whole TagInfos (parent and child ids too): asked of a node being expanded, a few at a time."""
        todo = [i for i in dict.fromkeys(ids) if i not in self._held and i in self._counts]
        if not todo:
            return
        self.load(todo)
        parents: dict[int, list[int]] = defaultdict(list)
        children: dict[int, list[int]] = defaultdict(list)
        with self._library.engine.connect() as c:
            for start in range(0, len(todo), CHUNK):
                chunk = todo[start:start + CHUNK]
                for p, ch in c.execute(select(TagEdge.parent_id, TagEdge.child_id).where(
                        or_(TagEdge.parent_id.in_(chunk), TagEdge.child_id.in_(chunk)))):
                    children[p].append(ch)
                    parents[ch].append(p)
        for i in todo:
            r = self._rows.get(i)
            if r is not None:
                self._held[i] = TagInfo(i, r.key, r.value, r.source, r.description,
                                        tuple(sorted(set(parents.get(i, ())))),  # a chunk's edge may come twice
                                        tuple(sorted(set(children.get(i, ())))), r.file_count)

    def matches(self, text: str) -> TagMatches:
        with self._labels_lock:  # one build per snapshot, whichever search asks first
            if self._labels is None:
                self._labels = read_label_index(self._library.engine)
            labels = self._labels
        return sql_matches(self._library.engine, labels, self._counts, text)

    def remember(self, found: TagMatches) -> None:
        self._rows.update((r.id, r) for r in found.rows)
        self._held.update((t.id, t) for t in found.opened)

    def max_count(self) -> int:
        return max(self._counts.values(), default=0)

    def by_sources(self, sources: Iterable[str]) -> dict[str, int]:
        out: dict[str, int] = {}
        with self._library.session() as s:
            for tag_id, value in driver_rows(s, select(Tag.id, Tag.value).where(Tag.source.in_(list(sources)))
                                             .order_by(Tag.id)):
                out.setdefault(value, tag_id)
        return out


class TagNames(Mapping[int, str]):
    """tag id → label, each read when asked (the review dialog names the tags it lists)."""

    def __init__(self, infos: Mapping[int, TagInfo]) -> None:
        self._infos = infos

    def __getitem__(self, tag_id: int) -> str:
        return self._infos[tag_id].value

    def __iter__(self) -> Iterator[int]:
        return iter(self._infos)

    def __len__(self) -> int:
        return len(self._infos)


def as_tag_infos(infos: Mapping[int, TagInfo]) -> TagInfos:
    return infos if isinstance(infos, TagInfos) else HeldTagInfos(infos)


def read_root_ids(session) -> list[int]:
    """Tags without a parent (the tree's top level), by the child index of the edges."""
    return list(session.scalars(select(Tag.id).where(~exists().where(TagEdge.child_id == Tag.id)).order_by(Tag.id)))

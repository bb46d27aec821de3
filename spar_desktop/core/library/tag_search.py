"""The tag filter's search: every tag's label, key and description folded once, searched in memory.

SQLite's ``lower()``/``LIKE`` fold ASCII only ("über" did not find "Über-Projekt") and scanned the
tags table on every keystroke (0.12 s at 1M files). A ``LabelIndex`` instead holds each tag's texts
NFC-normalised and casefolded, joined into one string (5 MB for the 120,119 tags of a 1M-file
share, read and folded in ~0.45 s on a worker once per snapshot); a keystroke is ``str.find`` over
it (~7 ms at 1M) plus SQL for the matches' ancestors. No column to keep at scan time: the index is
built from the rows as they are, so every writer of tags (scan, edits, taxonomy, PostgreSQL) is
covered by construction.

``sql_matches`` runs on a worker and returns a frozen ``TagMatches``: the hits, their ancestors,
the rows the tree will show and the whole TagInfos of the nodes the panel will open to reach the
hits (with their children's rows), so applying it on the UI thread reads no SQL.
"""

from __future__ import annotations

import unicodedata
from array import array
from bisect import bisect_right
from collections import defaultdict
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, NamedTuple, Optional

from sqlalchemy import exists, select

from spar_desktop.core.library.models import Tag, TagEdge
from spar_desktop.core.library.tags import TagInfo

CHUNK = 500  # ids per IN (...): well under SQLite's variable limit
MAX_MATCHES = 5_000  # a broad text filter shows this many matching tags (and their ancestors)
MAX_OPENED = 300  # nodes the tag panel opens to show the matches (their children come with the matches)
_FIELD, _TAG = "\x1f", "\x00"  # never in a needle (fold() drops them), so a hit never spans two texts


class TagRow(NamedTuple):
    """What the tree shows of a tag: no parent or child ids, only whether it has children."""

    id: int
    key: str
    value: str
    source: str
    description: Optional[str]
    has_children: bool
    file_count: int


def fold(text: str) -> str:
    """What a search compares: NFC (a Mac's decomposed "é" equals a typed one), then casefold
    (Unicode: "ÅRSRAPPORT" ~ "årsrapport", "Straße" ~ "strasse")."""
    return unicodedata.normalize("NFC", text).casefold().replace(_FIELD, "").replace(_TAG, "")


class LabelIndex:
    """Tag ids (ascending) and their folded texts, one string with each tag's start offset."""

    def __init__(self, rows: Iterable[tuple[int, str, str, Optional[str]]]) -> None:
        self._ids = array("q")
        self._starts = array("q", [0])
        parts: list[str] = []
        at = 0
        for tag_id, key, value, description in rows:
            text = _FIELD.join((fold(value), fold(key), fold(description or ""))) + _TAG
            self._ids.append(tag_id)
            parts.append(text)
            at += len(text)
            self._starts.append(at)
        self._text = "".join(parts)

    def __len__(self) -> int:
        return len(self._ids)

    def find(self, needle: str, limit: int = MAX_MATCHES) -> list[int]:
        """Ids of the tags whose label, key or description holds ``needle`` (folded), in id order."""
        needle = fold(needle)
        out: list[int] = []
        if not needle:
            return out
        text, starts, ids = self._text, self._starts, self._ids
        pos = text.find(needle)
        while pos != -1 and len(out) < limit:
            k = bisect_right(starts, pos) - 1
            out.append(ids[k])
            pos = text.find(needle, starts[k + 1])  # the next tag: one hit per tag
        return out


@dataclass(frozen=True)
class TagMatches:
    """One filter text's answer, as the tree applies it."""

    text: str  # the filter as typed (stripped)
    matching: frozenset[int]
    visible: frozenset[int]  # the matches and all their ancestors
    rows: tuple[TagRow, ...] = ()  # of the visible tags and of the opened tags' children
    opened: tuple[TagInfo, ...] = ()  # ancestors the panel opens, parents and children included
    truncated: bool = False  # MAX_MATCHES reached


def ancestors(matching: set[int], parents_of: Callable[[set[int]], Iterable[int]]) -> set[int]:
    visible, frontier = set(matching), set(matching)
    while frontier:
        frontier = {p for p in parents_of(frontier) if p not in visible}
        visible |= frontier
    return visible


def read_label_index(engine) -> LabelIndex:
    with engine.connect() as c:
        return LabelIndex(c.execute(select(Tag.id, Tag.key, Tag.value, Tag.description).order_by(Tag.id)))


def read_rows(conn, ids: Iterable[int], counts: Mapping[int, int]) -> dict[int, TagRow]:
    """Rows of these tags (those in the snapshot's counts), with whether each has children."""
    todo = [i for i in dict.fromkeys(ids) if i in counts]
    kids = exists().where(TagEdge.parent_id == Tag.id)  # one probe of the edges' parent index each
    out: dict[int, TagRow] = {}
    for start in range(0, len(todo), CHUNK):
        for i, key, value, source, description, has_kids in conn.execute(
                select(Tag.id, Tag.key, Tag.value, Tag.source, Tag.description, kids)
                .where(Tag.id.in_(todo[start:start + CHUNK]))):
            out[i] = TagRow(i, key, value, source, description, bool(has_kids), counts.get(i, 0))
    return out


def _edges(conn, ids: list[int], by_child: bool) -> list[tuple[int, int]]:
    """(parent, child) edges of these children (by_child) or parents."""
    col = TagEdge.child_id if by_child else TagEdge.parent_id
    return [(p, ch) for start in range(0, len(ids), CHUNK)
            for p, ch in conn.execute(select(TagEdge.parent_id, TagEdge.child_id)
                                      .where(col.in_(ids[start:start + CHUNK])))]


def _to_open(matching: set[int], visible: set[int], parents: Mapping[int, list[int]]) -> list[int]:
    """The ancestors the panel opens, top-down as it walks them (breadth first), MAX_OPENED at most."""
    below: dict[int, list[int]] = defaultdict(list)
    for child in visible:
        for p in parents.get(child, ()):
            below[p].append(child)
    wanted = visible - matching
    level = sorted(i for i in wanted if not parents.get(i))
    out: list[int] = []
    seen: set[int] = set()
    while level and len(out) < MAX_OPENED:
        out.extend(level[:MAX_OPENED - len(out)])
        seen.update(level)
        level = sorted({c for p in level for c in below[p] if c in wanted and c not in seen})
    return out


def sql_matches(engine, labels: LabelIndex, counts: Mapping[int, int], text: str) -> TagMatches:
    """The filter's answer from the library (any thread): hits from ``labels``, the rest from SQL."""
    text = text.strip()
    hits = [i for i in labels.find(text, MAX_MATCHES + 1) if i in counts]
    truncated = len(hits) > MAX_MATCHES
    matching = set(hits[:MAX_MATCHES])
    parents: dict[int, list[int]] = defaultdict(list)
    with engine.connect() as c:
        def parents_of(ids: set[int]) -> list[int]:
            found = _edges(c, sorted(ids), by_child=True)
            for p, ch in found:
                parents[ch].append(p)
            return [p for p, _ in found]

        visible = {i for i in ancestors(matching, parents_of) if i in counts}
        opened = _to_open(matching, visible, parents)
        children: dict[int, list[int]] = defaultdict(list)
        for p, ch in _edges(c, opened, by_child=False):
            children[p].append(ch)
        rows = read_rows(c, [*visible, *(ch for kids in children.values() for ch in kids)], counts)
    infos = tuple(TagInfo(i, r.key, r.value, r.source, r.description, tuple(sorted(set(parents.get(i, ())))),
                          tuple(sorted(set(children.get(i, ())))), r.file_count)
                  for i in opened if (r := rows.get(i)) is not None)
    return TagMatches(text, frozenset(matching), frozenset(visible), tuple(rows.values()), infos, truncated)

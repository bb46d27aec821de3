"""Per candidate file, the best match score of each keyword group's tags, as arrays (issues 29, 30).

Ranked admission reads, for each optional keyword group, the files that have one of the group's
tags (or a descendant) and meet the hard filter, reduced in SQL to one row per file. At 100k
files a request has ~27k such files; reading them as SQLAlchemy rows with their paths into
per-file Python lists cost more than the queries (0.43 of a request's 0.65 s). So the queries
return (id, best, best confirmed) on the driver's cursor, the scores go into one float64 matrix,
and paths are read only for the files that can be admitted (``best_rows``).

On SQLite, when only confirmed tags count (the default), a group's links come back as one text
of numbers (``_confirmed_rows``): at 1M files the driver's rows cost more than the statement.
On PostgreSQL the group's tag tree is read first and its links then by tag id (``_linked_rows``):
its planner cannot size a recursive CTE and chose a plan over every link of the index.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain
from typing import Any, Mapping, Optional, Sequence

import numpy as np
from sqlalchemy import ARRAY, Float, Integer, any_, bindparam, cast, exists, func, literal, select, union_all

from spar_desktop.core.library.models import File, FileStatus, FileTag, Tag, TagEdge
from spar_desktop.core.library.queries import MAX_BOUND_IDS, FileFilter, build_query
from spar_desktop.core.library.raw_rows import driver_rows, ids_in

_IN_CHUNK = 5_000


@dataclass(frozen=True)
class GroupScores:
    """Candidates (files with a tag of some group, meeting the hard filter) and their scores."""

    ids: np.ndarray  # int64, ascending
    counted: np.ndarray  # float64 (len(ids), groups): best score per group (suggestions weighed if counted)
    confirmed: np.ndarray  # float64, same shape: best over confirmed tags only (0.0 where none)

    @classmethod
    def empty(cls, groups: int) -> "GroupScores":
        return cls(np.zeros(0, dtype=np.int64), np.zeros((0, groups)), np.zeros((0, groups)))

    def __len__(self) -> int:
        return len(self.ids)

    def tag_scores(self) -> np.ndarray:
        """Mean best-tag score over the groups, summed left to right as Python's ``sum`` does, so
        a file's score is bit for bit the reference's (ties at the budget's edge go by path)."""
        n = max(1, self.counted.shape[1])
        total = np.zeros(len(self.ids))
        for g in range(self.counted.shape[1]):
            total = total + self.counted[:, g]
        return total / n

    def confirmed_sums(self, ids: np.ndarray) -> np.ndarray:
        """Per id of ``ids`` (0.0 for a non-candidate), the summed confirmed scores, left to right."""
        out = np.zeros(len(ids))
        if not len(self.ids) or not len(ids):
            return out
        pos = np.minimum(np.searchsorted(self.ids, ids), len(self.ids) - 1)
        hit = self.ids[pos] == ids
        for g in range(self.confirmed.shape[1]):
            out[hit] = out[hit] + self.confirmed[pos[hit], g]
        return out


def _group_tree(gi: int, group: Mapping[int, float], dialect: str):
    """The group's tags and their descendants, each with its root's match score: (id, score) rows.
    The scores ride in the recursion (one id list per distinct score, so no more bound values than
    tags), and UNION drops a tag reached twice with the same score."""
    by_score: dict[float, list[int]] = {}
    for tag_id, score in group.items():
        by_score.setdefault(float(score), []).append(tag_id)
    roots = union_all(*(select(Tag.id.label("id"), literal(score, Float).label("score"))
                        .where(_among(Tag.id, ids, dialect))
                        for score, ids in sorted(by_score.items()))).subquery(f"roots_{gi}")
    tree = select(roots.c.id, roots.c.score).cte(f"group_{gi}", recursive=True)
    return tree.union(select(TagEdge.child_id, tree.c.score).join(tree, TagEdge.parent_id == tree.c.id))


def _among(column: Any, ids: Sequence[int], dialect: str, literal: bool = False) -> Any:
    """``column IN ids``. PostgreSQL gets one array value (``= ANY``): thousands of bound values
    cost more to compile and convert than its query. Elsewhere a long list (thousands of
    same-named folders at 1M files) is written into the SQL as literals, as queries.build_query
    does: SQLite limits bound variables; ``literal``: always (integer ids, one statement)."""
    ids = sorted(ids)
    if dialect == "postgresql":
        return column == any_(bindparam(None, ids, type_=ARRAY(Integer)))
    return column.in_(ids) if len(ids) <= MAX_BOUND_IDS and not literal else ids_in(column, ids)


def _tag_scores(session, gi: int, group: Mapping[int, float], dialect: str) -> tuple[np.ndarray, np.ndarray]:
    """The group's tags and descendants (ascending ids) with the best root score reaching each.
    Read first, on their own: joined to the links as a recursive CTE, PostgreSQL estimated the
    tree at ~1M rows (it had ~2k) and merge-joined every link of the index (0.5-0.9 s at 100k)."""
    tree = _floats(driver_rows(session, select(_group_tree(gi, group, dialect))), 2)
    tree = tree[np.lexsort((-tree[:, 1], tree[:, 0]))]  # by id, the best score first
    first = np.ones(len(tree), dtype=bool)
    first[1:] = tree[1:, 0] != tree[:-1, 0]
    return tree[first, 0].astype(np.int64), tree[first, 1]


def _grouped_rows(session, gi: int, group: Mapping[int, float], hard: FileFilter) -> np.ndarray:
    """(file id, best, best confirmed or NaN) rows: the group's tag tree (a recursive CTE) joined to
    its links, reduced per file here. SQLite probes the links per tag of the tree, reading the
    covering (tag, confirmed, score, file) index only; the files are joined only when the hard
    filter asks something of them (``_links_query``). Grouping in SQL sorted every link through a
    temporary B-tree: 0.65-0.73 s for the 166k 'minutes' links at 1M files, against 0.20-0.35 s
    read plain and reduced here."""
    dialect = session.get_bind().dialect.name
    tree = _group_tree(gi, group, dialect)
    q = (_links_query(session, hard, None, dialect).with_only_columns(FileTag.file_id, tree.c.score,
                                                                     FileTag.confirmed, FileTag.score)
         .join(tree, tree.c.id == FileTag.tag_id))
    links = _floats(driver_rows(session, q), 4)  # file, tag's score, confirmed, certainty
    return _best_per_file(links[:, 0], links[:, 1], links[:, 2] == 1.0, links[:, 3], hard.include_unconfirmed)


def _confirmed_rows(session, gi: int, group: Mapping[int, float], hard: FileFilter) -> np.ndarray:
    """The same rows as ``_grouped_rows`` when only confirmed tags count (the default), on SQLite.
    A confirmed link weighs its tag's score, so a file's best is the best score among the roots
    whose trees reach it. The statement returns the group's links as one text (``group_concat``)
    of integers, each (2 x file id + confirmed) x levels + the level of its root's score, parsed
    and reduced by numpy: the 166,670 'minutes' links at 1M files took 0.31 s of CPU as rows
    (the driver makes a tuple and its values per link), 0.07 s so. ``confirmed`` is filtered
    here, not in the statement: there SQLite read every confirmed link of the index when the
    hard filter joins the files. The tree is ``_group_tree``'s, carrying level numbers."""
    dialect = session.get_bind().dialect.name
    levels = np.array(sorted({float(score) for score in group.values()}, reverse=True))  # level 0: the best
    level_of = {score: float(i) for i, score in enumerate(levels.tolist())}
    tree = _group_tree(gi, {tag_id: level_of[float(score)] for tag_id, score in group.items()}, dialect)
    k = len(levels)
    link = (FileTag.file_id * 2 + cast(FileTag.confirmed, Integer)) * k + cast(tree.c.score, Integer)
    q = (_links_query(session, hard, None, dialect).with_only_columns(func.group_concat(link))
         .join(tree, tree.c.id == FileTag.tag_id))
    links = _ids_of(session.execute(q).scalar())
    rest = links // k
    confirmed = (rest & 1) == 1
    key = np.sort((rest[confirmed] >> 1) * k + links[confirmed] % k)  # by file, its best level first
    fid, level = key // k, key % k
    first = np.r_[True, fid[1:] != fid[:-1]] if len(fid) else np.zeros(0, dtype=bool)
    best = levels[level[first]]
    return np.column_stack([fid[first].astype(np.float64), best, best])


def _ids_of(text: Optional[str]) -> np.ndarray:
    """Integer ids from ``group_concat``'s comma-separated text (None: no row)."""
    if not text:
        return np.zeros(0, dtype=np.int64)
    return np.fromstring(text, dtype=np.int64, sep=",")


def _linked_rows(session, gi: int, group: Mapping[int, float], hard: FileFilter) -> np.ndarray:
    """The same rows as ``_grouped_rows``, for PostgreSQL, which estimated that statement's tag
    tree at ~1M rows (it had ~2k) and merge-joined every link of the index, sorting every file
    (0.5-0.9 s a group at 100k). Here the tree is read first; its links are then read by tag id
    (``= ANY(array)``: a bitmap scan of the tag index) with the hard filter and reduced per file
    here. A tag reached from two roots counts its best score: a link's weighed score grows
    with its tag's, so the maximum over the pairs is the same."""
    dialect = session.get_bind().dialect.name
    tag_ids, tag_score = _tag_scores(session, gi, group, dialect)
    rows = driver_rows(session, _links_query(session, hard, tag_ids.tolist(), dialect)) if len(tag_ids) else []
    links = _floats(rows, 4)  # file, tag, confirmed, certainty
    score = tag_score[np.searchsorted(tag_ids, links[:, 1].astype(np.int64))] if len(links) else np.zeros(0)
    return _best_per_file(links[:, 0], score, links[:, 2] == 1.0, links[:, 3], hard.include_unconfirmed)


def _floats(rows: list[tuple], width: int) -> np.ndarray:
    """Rows of numbers as one float64 matrix, through a flat iterator: ``np.array`` of a list of
    tuples took 0.12 s for 166k links, this 0.04 s. A NULL (not in these columns) reads as NaN."""
    try:
        flat = np.fromiter(chain.from_iterable(rows), dtype=np.float64, count=width * len(rows))
        return flat.reshape(len(rows), width)
    except TypeError:
        return np.array(rows, dtype=np.float64).reshape(len(rows), width)


def _best_per_file(fids: np.ndarray, score: np.ndarray, confirmed: np.ndarray, certainty: np.ndarray,
                   include_unconfirmed: bool) -> np.ndarray:
    """Links (file, its tag's match score, confirmed?, the link's certainty) reduced to one row
    per file: (file id, best, best confirmed or NaN), ascending ids. A suggestion weighs as much
    as its own certainty (clamped to 0..1, none counting 0); a confirmed tag fully. Without
    ``include_unconfirmed`` only confirmed links count. The products and maxima are the SQL
    expressions' (IEEE doubles), so scores equal the Python reference bit for bit."""
    if not include_unconfirmed:
        fids, score, certainty = fids[confirmed], score[confirmed], certainty[confirmed]
        confirmed = confirmed[confirmed]
    if not len(fids):
        return np.zeros((0, 3))
    best = np.where(confirmed, score, score * np.clip(np.nan_to_num(certainty, nan=0.0), 0.0, 1.0))
    best_confirmed = np.where(confirmed, score, -np.inf)
    order = np.argsort(fids, kind="stable")
    fids, best, best_confirmed = fids[order], best[order], best_confirmed[order]
    starts = np.flatnonzero(np.r_[True, fids[1:] != fids[:-1]])
    top_confirmed = np.maximum.reduceat(best_confirmed, starts)
    return np.column_stack([fids[starts], np.maximum.reduceat(best, starts),
                            np.where(np.isneginf(top_confirmed), np.nan, top_confirmed)])


def _links_query(session, hard: FileFilter, tag_ids: Optional[list[int]], dialect: str):
    """The links (of ``tag_ids``, unless None) whose file meets ``hard``. Without a filter of its
    own (the common request) the only condition is "not missing": then the few missing files are
    left out without joining the files, which at 1M files hash-joined every file for a quarter of
    them on PostgreSQL (0.6-1.0 s a group) and looked up each link's file on SQLite. SQLite gets
    ``NOT IN`` (a list of the missing ids, read once from the status index), PostgreSQL an
    anti-join."""
    links = select(FileTag.file_id, FileTag.tag_id, FileTag.confirmed, FileTag.score)
    if _only_presence(hard):
        q = links
        if not hard.include_missing and dialect == "postgresql":
            q = q.where(~exists(select(File.id).where(File.id == FileTag.file_id, File.status == FileStatus.MISSING)))
        elif not hard.include_missing:
            q = q.where(FileTag.file_id.not_in(select(File.id).where(File.status == FileStatus.MISSING)))
    else:
        q = (build_query(session, hard).order_by(None).with_only_columns(*links.selected_columns)
             .select_from(File).join(FileTag, FileTag.file_id == File.id))
    return q if tag_ids is None else q.where(_among(FileTag.tag_id, tag_ids, dialect))


def _only_presence(hard: FileFilter) -> bool:
    """``build_query`` of ``hard`` asks at most "not missing" of a file (its default)."""
    return hard == FileFilter(include_missing=hard.include_missing, include_unconfirmed=hard.include_unconfirmed)


def group_scores(session, groups: Sequence[Mapping[int, float]], hard: FileFilter) -> GroupScores:
    """Per group, the files with one of its tags (or a descendant) that meet the hard filter,
    reduced to one row per file (in SQL, or from the links on PostgreSQL): only the candidates
    are read, each once per group, without their paths."""
    n = len(groups)
    dialect = session.get_bind().dialect.name
    rows_of = _linked_rows if dialect == "postgresql" else _grouped_rows if hard.include_unconfirmed else _confirmed_rows
    parts = [(gi, rows_of(session, gi, group, hard)) for gi, group in enumerate(groups) if group]
    parts = [(gi, p) for gi, p in parts if len(p)]
    if not parts:
        return GroupScores.empty(n)
    ids = np.unique(np.concatenate([p[:, 0] for _, p in parts])).astype(np.int64)
    counted, confirmed = np.zeros((len(ids), n)), np.zeros((len(ids), n))
    for gi, p in parts:
        pos = np.searchsorted(ids, p[:, 0].astype(np.int64))
        counted[pos, gi] = p[:, 1]
        confirmed[pos, gi] = np.nan_to_num(p[:, 2], nan=0.0)
    return GroupScores(ids, counted, confirmed)


def file_rows(session, ids: Sequence[int]) -> dict[int, tuple[str, Optional[str]]]:
    """id → (path, content hash), for ``ids`` only: integer ids written into the SQL as literals,
    in chunks (compiling tens of thousands of bound values cost more than the reads)."""
    out: dict[int, tuple[str, Optional[str]]] = {}
    ids = sorted(int(i) for i in ids)
    for i in range(0, len(ids), _IN_CHUNK):
        chunk = ids[i:i + _IN_CHUNK]
        q = select(File.id, File.path, File.content_hash).where(ids_in(File.id, chunk))
        out.update((fid, (path, h)) for fid, path, h in driver_rows(session, q))
    return out


def best_rows(session, ids: np.ndarray, scores: np.ndarray, keep: int
              ) -> list[tuple[int, str, Optional[str]]]:
    """The best ``keep`` of ``ids`` by score, ties by path: (id, path, content hash), best first.
    Paths are read for the files above the edge; when the edge cuts through files tied at it (a
    keyword's every 'minutes' folder scores alike: tens of thousands at 1M files), the database
    picks the first of those by path and returns only them."""
    if keep <= 0 or not len(ids):
        return []
    tie_rows: list[tuple[int, str, Optional[str]]] = []
    if keep < len(ids):
        kth = np.partition(scores, len(scores) - keep)[len(scores) - keep]
        above, tied = scores > kth, scores == kth
        need = keep - int(np.count_nonzero(above))  # >= 1: kth is the keep-th best score
        if need < np.count_nonzero(tied):
            tie_rows = first_by_path(session, ids[tied].tolist(), need)
            ids, scores = ids[above], scores[above]
        else:
            ids, scores = ids[above | tied], scores[above | tied]
    rows = file_rows(session, ids.tolist())
    by_id = dict(zip(ids.tolist(), scores.tolist()))
    order = sorted(by_id, key=lambda fid: (-by_id[fid], rows[fid][0]))
    return ([(fid, *rows[fid]) for fid in order] + tie_rows)[:keep]


def first_by_path(session, ids: Sequence[int], keep: int) -> list[tuple[int, str, Optional[str]]]:
    """The first ``keep`` of ``ids`` by path, in code point order as Python sorts (SQLite compares
    UTF-8 bytes; PostgreSQL is told to, its default collation is the locale's), in one statement,
    or on SQLite by walking the path index when ``ids`` are dense enough (``_walk_by_path``)."""
    dialect = session.get_bind().dialect.name
    if dialect == "sqlite" and keep < len(ids):
        files = session.scalar(select(func.max(File.id))) or 0  # the rowid B-tree's end: no scan
        if keep * files <= _WALK_FACTOR * len(ids) * len(ids):
            return _walk_by_path(session, ids, keep, page=max(keep, min(_WALK_PAGE, keep * files // len(ids) + 1)))
    path = File.path.collate("C") if dialect == "postgresql" else File.path
    q = (select(File.id, File.path, File.content_hash)
         .where(_among(File.id, [int(i) for i in ids], dialect, literal=True)).order_by(path).limit(keep))
    return [(fid, p, h) for fid, p, h in driver_rows(session, q)]


# Walk the path index when the expected walk (keep x files / tied) is at most this many times the
# tied files: a walked entry costs a fraction of what a tied file costs in the statement above.
_WALK_FACTOR = 2
_WALK_PAGE = 50_000


def _walk_by_path(session, ids: Sequence[int], keep: int, page: int) -> list[tuple[int, str, Optional[str]]]:
    """``first_by_path`` by reading (id, path) from SQLite's path index in order, a page at a
    time, until ``keep`` of ``ids`` are seen. For the 166k files tied at one request's edge at 1M
    files the statement wrote every id into the SQL and looked up each file to sort them (0.23-0.35
    s); 3,000 of them were among the first ~18k paths of the index."""
    wanted = np.sort(np.asarray(ids, dtype=np.int64))  # not np.unique: numpy 2.4 hashes integers (0.24 s for 166k)
    chosen: list[int] = []
    last: Optional[str] = None
    while len(chosen) < keep:
        q = select(File.id, File.path).order_by(File.path).limit(page)
        rows = driver_rows(session, q if last is None else q.where(File.path > last))
        if not rows:
            break
        page_ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        pos = np.minimum(np.searchsorted(wanted, page_ids), len(wanted) - 1)
        chosen.extend(page_ids[wanted[pos] == page_ids][:keep - len(chosen)].tolist())
        last = rows[-1][1]
    found = file_rows(session, chosen)
    return [(fid, *found[fid]) for fid in chosen]

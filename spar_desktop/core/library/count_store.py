"""The tag tree's counts kept in the index: files under each tag, and a root's files under each
top-level folder, so that opening the tree reads small rows instead of every link and every file
(at 1,000,000 files counting took ~3.5 s of CPU: the links' GROUP BY summed up the DAG, and a pass
over the files table for the roots).

Exact, never approximate: the rows are what ``tag_counts.file_counts`` and the roots' GROUP BY
compute, written at a *generation* of the index. Every committed transaction that wrote to the
counted tables moves the generation on (``watch_writes``: an engine hook sees the statement, the
session's commit bumps the one ``count_state`` row), so a write that no one refreshed after leaves
the rows stale, and ``stored`` answers None: the reader counts as before. Who refreshes:
- the scan, once at its end (``refresh``: everything, a few seconds at 1M, in its own transaction);
- a person's tag edits, in the edit's transaction (``refresh(session, touched)``: the edited tags
  and their ancestors, from those tags' links only), when the rows were fresh before it;
- anyone else (a taxonomy import, an older writer) leaves them stale until the next refresh.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from typing import Any, Iterable, Optional

from sqlalchemy import Engine, delete, event, func, insert, select, update
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session

from spar_desktop.core.library.models import CountState, File, Folder, RootTopCount, Tag, TagEdge, TagFileCount
from spar_desktop.core.library.raw_rows import driver_rows, ids_in
from spar_desktop.core.library.tag_counts import file_counts

TOUCHED = "spar_counts_touched"  # connection.info flag: this transaction wrote to a counted table
STATE_ID = 1
# A partial refresh reads the links of at most this many tags (the edited ones' ancestors and all
# under those); past it (a root's whole subtree) it counts everything.
PARTIAL_LIMIT = 20_000
# Writes that can change a count: rows added to or removed from these tables, and changed links,
# edges or files (a renamed tag or a root's scan time cannot).
_COUNTED = re.compile(r'^\s*(?:(?:INSERT\s+(?:OR\s+\w+\s+)?INTO|DELETE\s+FROM)\s+"?(?:files|file_tags|tags|tag_edges|folders)'
                      r'|UPDATE\s+"?(?:files|file_tags|tag_edges))\b', re.IGNORECASE)


# (tag id → files under it, root folder id → Counter(top-level folder name → files; '' → all))
Counts = tuple[dict[int, int], dict[int, Counter]]


# ---------------------------------------------------------------------------- staleness
def watch_writes(engine: Engine, sessions: Any) -> None:
    """Flag a connection whose transaction writes to a counted table; bump the generation when a
    session commits such a transaction; forget the flag on rollback."""
    def seen(conn, _cursor, statement, _params, _context, _many) -> None:
        if _COUNTED.match(statement):
            conn.info[TOUCHED] = True

    def before_commit(session: Session) -> None:
        if not session.in_transaction():
            return
        session.flush()  # the hook runs before commit's own flush: pending objects' INSERTs count too
        conn = session.connection()
        if conn.info.pop(TOUCHED, False):
            conn.execute(update(CountState).where(CountState.id == STATE_ID)
                         .values(generation=CountState.generation + 1))

    event.listen(engine, "before_cursor_execute", seen)
    event.listen(engine, "rollback", lambda conn: conn.info.pop(TOUCHED, None))
    event.listen(sessions, "before_commit", before_commit)


def _state(session: Session) -> Optional[tuple[int, int]]:
    row = session.execute(select(CountState.generation, CountState.fresh).where(CountState.id == STATE_ID)).first()
    return (int(row[0]), int(row[1])) if row else None


# ---------------------------------------------------------------------------- reading
def stored(session: Session) -> Optional[Counts]:
    """(tag id → files, root folder id → Counter(top folder name → files; '' = all)), or None when
    the rows are behind the index (then ``recount``)."""
    state = _state(session)
    if state is None or state[0] != state[1] or session.connection().info.get(TOUCHED):
        return None  # behind, or this very transaction wrote what they do not count yet
    tags = dict(driver_rows(session, select(TagFileCount.tag_id, TagFileCount.files)))
    roots: dict[int, Counter] = defaultdict(Counter)
    for folder_id, top, n in driver_rows(session, select(RootTopCount.folder_id, RootTopCount.top, RootTopCount.files)):
        roots[folder_id][top] = n
    return tags, roots


# ---------------------------------------------------------------------------- computing
def _children(session: Session) -> dict[int, list[int]]:
    children: dict[int, list[int]] = defaultdict(list)
    for p, c in driver_rows(session, select(TagEdge.parent_id, TagEdge.child_id)):
        children[p].append(c)
    return children


def count_tags(session: Session) -> dict[int, int]:
    """tag id → files under it, for every tag (0 included), counted from the links."""
    ids = [r[0] for r in driver_rows(session, select(Tag.id))]
    counts = file_counts(session, ids, _children(session))
    return {i: counts.get(i, 0) for i in ids}


def count_roots(session: Session) -> dict[int, Counter]:
    """Root folder id → Counter(top-level folder name → files under it; '' → all its files): one
    pass over the files table in SQL, no row reaches Python."""
    out: dict[int, Counter] = {fid: Counter({"": 0}) for fid in session.scalars(select(Folder.id))}
    for folder_id, n in session.execute(select(File.folder_id, func.count()).group_by(File.folder_id)):
        if folder_id in out:
            out[folder_id][""] = n
    slash = (func.strpos if session.get_bind().dialect.name == "postgresql" else func.instr)(File.rel_path, "/")
    top = func.substr(File.rel_path, 1, slash - 1)
    for folder_id, name, n in session.execute(select(File.folder_id, top, func.count())
                                              .where(slash > 1).group_by(File.folder_id, top)):
        if folder_id in out:
            out[folder_id][name] += n
    return out


def _partial(session: Session, touched: set[int]) -> Optional[dict[int, int]]:
    """The counts of the touched tags and their ancestors, from the links under those only;
    None when that is most of the tags anyway."""
    children = _children(session)
    parents: dict[int, list[int]] = defaultdict(list)
    for p, kids in children.items():
        for c in kids:
            parents[c].append(p)
    up, stack = set(touched), list(touched)
    while stack:
        for p in parents.get(stack.pop(), ()):
            if p not in up:
                up.add(p)
                stack.append(p)
    under, stack = set(up), list(up)
    while stack:
        for c in children.get(stack.pop(), ()):
            if c not in under:
                under.add(c)
                stack.append(c)
                if len(under) > PARTIAL_LIMIT:
                    return None
    existing = set(session.scalars(select(Tag.id).where(ids_in(Tag.id, sorted(up)))))
    counts = file_counts(session, sorted(existing), children, within=under)
    return {i: counts.get(i, 0) for i in existing}


# ---------------------------------------------------------------------------- writing
def refresh(session: Session, touched: Optional[Iterable[int]] = None) -> Optional[Counts]:
    """Count and store, in ``session``'s transaction. ``touched``: the tags whose links or edges
    this transaction changed (a person's edit; empty: it changed no count, e.g. suggestions): only
    they and their ancestors are counted again, and only when the rows were fresh before it (rows
    already stale stay so). Without ``touched`` everything is counted and returned."""
    state = _state(session)
    if state is None:
        return None  # an index whose migration has not run (cannot happen after Library.open)
    generation, fresh = state
    conn = session.connection()
    if touched is not None:
        if generation != fresh:
            return None
        touched = set(touched)
        if not touched:  # suggestions only: no count changed, and nothing to read (all edges, at 1M 118k)
            conn.info.pop(TOUCHED, None)
            return None
        partial = _partial(session, touched)
        if partial is not None:
            _write_tags(session, partial, replace=False)
            conn.info.pop(TOUCHED, None)  # these writes are counted: the commit must not call them stale
            return None
    elif generation == fresh and not conn.info.get(TOUCHED):
        return stored(session)  # nothing was written since they were counted (an unchanged re-scan)
    counts = count_tags(session), count_roots(session)
    _write_tags(session, counts[0], replace=True)
    session.execute(delete(RootTopCount))
    rows = [{"folder_id": f, "top": t, "files": n} for f, c in counts[1].items() for t, n in c.items()]
    if rows:
        session.execute(insert(RootTopCount), rows)
    session.execute(update(CountState).where(CountState.id == STATE_ID).values(fresh=generation))
    conn.info.pop(TOUCHED, None)
    return counts


def recount(library: Any) -> Counts:
    """The counts when the stored ones are behind: counted and stored for the next reader (one
    reader pays for a write no one refreshed after, e.g. a taxonomy import); if the index will not
    take the write now (another process is writing), counted only."""
    try:
        with library.session() as s:
            counts = refresh(s)
        if counts is not None:
            return counts
    except OperationalError:
        pass
    with library.session() as s:
        return count_tags(s), count_roots(s)


def _write_tags(session: Session, counts: dict[int, int], replace: bool) -> None:
    if replace:
        session.execute(delete(TagFileCount))
    else:
        ids = sorted(counts)
        for i in range(0, len(ids), 5000):
            session.execute(delete(TagFileCount).where(ids_in(TagFileCount.tag_id, ids[i:i + 5000])))
    rows = [{"tag_id": t, "files": n} for t, n in counts.items()]
    for i in range(0, len(rows), 20_000):
        session.execute(insert(TagFileCount), rows[i:i + 20_000])


def fill(session: Session) -> None:
    """The state row and every count (the migration that adds them: an existing index is counted)."""
    if _state(session) is None:
        session.execute(insert(CountState).values(id=STATE_ID, generation=0, fresh=-1))
    refresh(session)

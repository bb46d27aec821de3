"""The query log read as EDR-MQ query sets and as co-access sessions.

``QueryLogEntry`` rows are written by workspaces/search.py: one per search or chat retrieval, with
the ranked files and the files opened or cited. A session is everything sharing a session_key
(a chat thread, or searches close in time, which log_query already buckets together).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Iterable, Optional, Sequence

from sqlalchemy import select

from spar_desktop.core.workspaces.models import QueryLogEntry

if TYPE_CHECKING:
    from spar_desktop.core.library.database import Library


@dataclass(frozen=True)
class LoggedQuery:
    log_id: int
    workspace_id: Optional[int]
    session_key: str
    query: str
    source: str
    results: tuple[tuple[int, float], ...]  # (file id, score), best first
    opened: tuple[int, ...]
    created_at: datetime


@dataclass(frozen=True)
class Session:
    key: str
    workspace_id: Optional[int]
    queries: tuple[LoggedQuery, ...]  # oldest first

    def co_accessed(self, results_per_query: int = 3) -> list[int]:
        """Files the user needed together, in the order they came up: per query, what was opened
        (the strongest signal) then the top results; a file is listed once, where first seen."""
        seen: dict[int, None] = {}
        for q in self.queries:
            for fid in list(q.opened) + [fid for fid, _ in q.results[:results_per_query]]:
                seen.setdefault(int(fid), None)
        return list(seen)


def read_query_log(library: "Library", workspace_id: Optional[int] = None, after_id: int = 0,
                   sources: Optional[Sequence[str]] = None) -> list[LoggedQuery]:
    """Log entries (oldest first) of one workspace, or of all when ``workspace_id`` is None;
    ``after_id`` reads only entries newer than a previous build (incremental updates)."""
    stmt = select(QueryLogEntry).where(QueryLogEntry.id > after_id).order_by(QueryLogEntry.id)
    if workspace_id is not None:
        stmt = stmt.where(QueryLogEntry.workspace_id == workspace_id)
    if sources:
        stmt = stmt.where(QueryLogEntry.source.in_(list(sources)))
    with library.session() as s:
        rows = list(s.scalars(stmt))
        return [_entry(r) for r in rows]


def _entry(r) -> LoggedQuery:
    results = []
    for item in r.results or []:
        try:  # the column is free JSON: skip anything that is not [file id, score]
            results.append((int(item[0]), float(item[1])))
        except (TypeError, ValueError, IndexError):
            continue
    opened = tuple(int(x) for x in (r.opened or []) if isinstance(x, (int, float, str)) and str(x).lstrip("-").isdigit())
    return LoggedQuery(r.id, r.workspace_id, r.session_key, r.query or "", r.source or "search", tuple(results),
                       opened, r.created_at)


def group_sessions(entries: Iterable[LoggedQuery]) -> list[Session]:
    """Entries grouped by session key, sessions ordered by their first query."""
    by_key: dict[str, list[LoggedQuery]] = {}
    for e in entries:
        by_key.setdefault(e.session_key, []).append(e)
    sessions = [Session(k, qs[0].workspace_id, tuple(sorted(qs, key=lambda q: (q.created_at, q.log_id))))
                for k, qs in by_key.items()]
    return sorted(sessions, key=lambda s: (s.queries[0].created_at, s.queries[0].log_id))


def query_texts(entries: Iterable[LoggedQuery], dedupe: bool = True) -> list[str]:
    """The query set X from the log. Exact repeats are dropped by default: EDR-MQ assumes a
    uniform p(x) over distinct information needs, and a query re-run ten times in a row is one."""
    out: list[str] = []
    seen: set[str] = set()
    for e in entries:
        text = " ".join(e.query.split())
        if not text:
            continue
        key = text.lower()
        if dedupe and key in seen:
            continue
        seen.add(key)
        out.append(text)
    return out


def session_sequences(sessions: Iterable[Session], results_per_query: int = 3, min_length: int = 2) -> list[list[int]]:
    """Co-access sequences (file ids) for the co-occurrence embedding; single-file sessions carry
    no co-occurrence and are dropped."""
    out = []
    for s in sessions:
        seq = s.co_accessed(results_per_query)
        if len(seq) >= min_length:
            out.append(seq)
    return out

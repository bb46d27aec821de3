"""Searching inside a workspace: hybrid retrieval restricted to its collection, hits mapped back
to files (path, page span), and every query logged (workspace history, relation discovery).

The manager resolves the workspace (``WorkspaceInfo``) and the searcher cache; nothing here calls
back into it and nothing here builds: a searcher that cannot be opened, or a vector store that
fails mid-search, raises ``NeedsBuild`` and the caller decides.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Optional

from sqlalchemy import select

from spar_desktop.core.documents.types import storable_text
from spar_desktop.core.library.models import File, FileStatus, utcnow
from spar_desktop.core.library.queries import copies_of
from spar_desktop.core.retrieval.explain import ScoreExplanation, explain_score, matched_spans
from spar_desktop.core.retrieval.partial import coverage_note
from spar_desktop.core.retrieval.vector_store import VectorStoreError
from spar_desktop.core.workspaces.errors import NeedsBuild, WorkspaceError
from spar_desktop.core.workspaces.freshness import Freshness
from spar_desktop.core.workspaces.lookup import WorkspaceInfo
from spar_desktop.core.workspaces.models import QueryLogEntry, Workspace, WorkspaceFile, WorkspaceStatus

log = logging.getLogger(__name__)

# Searches closer together than this in one workspace form one session (for co-occurrence).
SESSION_GAP = timedelta(minutes=30)


@dataclass(frozen=True)
class WorkspaceHit:
    rank: int
    file_id: int
    path: str
    title: Optional[str]
    page_start: int
    page_end: int
    score: float
    bm25_score: Optional[float]
    dense_score: Optional[float]
    text: str
    context: Optional[str]  # the parent chunk: what an answer is grounded on
    chunk_id: str
    file_missing: bool = False
    also_at: tuple[str, ...] = ()  # other files with the same content (copies collapse into one hit)
    # Why this result (core/retrieval/explain.py): keyword + meaning shares of ``score`` (TM2C2
    # hybrid only), what BM25 scored, where the query's words are in ``text``, evolved keys.
    keyword_part: Optional[float] = None
    meaning_part: Optional[float] = None
    alpha: Optional[float] = None
    keyword_unit: str = "parent"
    matched: tuple[tuple[int, int], ...] = ()
    evolved: bool = False
    rank_without_evolution: Optional[int] = None
    file_changed: bool = False  # edited since the build: this text is the version the build read
    reranked_by: Optional[str] = None  # the model that reordered the top results (workspaces/reranking.py)
    rerank_ms: Optional[float] = None  # what that reordering cost

    def to_json(self) -> dict:
        d = dict(self.__dict__)
        d["also_at"] = list(self.also_at)
        d["matched"] = [list(span) for span in self.matched]
        return d

    def explanation(self, query: str) -> ScoreExplanation:
        return explain_score(self, query, keyword_unit=self.keyword_unit)


@dataclass(frozen=True)
class WorkspaceResults:
    workspace: str
    query: str
    hits: tuple[WorkspaceHit, ...]
    message: Optional[str]
    latency_ms: float
    log_id: Optional[int] = None
    notes: tuple[str, ...] = ()
    chunking: Optional[str] = None  # how this workspace is cut and scored (short vs long documents)
    rerank: Optional[Any] = None  # RerankOutcome when conditional reranking was considered (reranking.py)
    # Share of the passages meaning search covered; ``building``: answered from a running build's
    # snapshot (keyword search over every file, meaning search over what is embedded so far).
    dense_coverage: float = 1.0
    building: bool = False
    keyword_coverage: float = 1.0  # below 1 only while the build is still reading files

    @property
    def coverage_note(self) -> Optional[str]:
        """The line a partial answer carries ("searching while building: ... 42% of passages")."""
        return coverage_note(self.dense_coverage, self.keyword_coverage) if self.building else None


@dataclass(frozen=True)
class SearchTarget:
    """A workspace ready to search: its row as read, its searcher, notes on how it was opened, and
    (when asked for) how it differs from the index now."""
    info: WorkspaceInfo
    searcher: Any
    notes: tuple[str, ...] = ()
    freshness: Optional[Freshness] = None


def open_searcher(searchers: Any, info: WorkspaceInfo, library: Any = None) -> Any:
    """The searcher of ``info``'s current build, from memory or the state its build saved
    (searchers.SearcherCache). Archived or never built: WorkspaceError; built but no usable saved
    state: NeedsBuild (its ``why`` says what was wrong). ``library``: where the state's rows are
    read (a shared session), else the cache's own."""
    name = info.name
    if info.archived:
        raise WorkspaceError(f"'{name}' is archived: reactivate it first (spar ws reactivate \"{name}\")")
    live = searchers.partial(info.id)  # a build running in this process: its latest snapshot,
    if live is not None and (info.built_at is None or live.keyword_coverage >= 1.0):  # once it has all files
        return live
    if not info.searchable:
        raise WorkspaceError(unbuilt_message(info, searchers.building_here(info.id)))
    searcher, why = searchers.open(info.id, info.built_at, library)
    if searcher is None:
        raise NeedsBuild(name, why)
    return searcher


def unbuilt_message(info: WorkspaceInfo, building_here: bool = False) -> str:
    """Why a workspace with no finished build cannot be searched here, and what to do."""
    name = info.name
    if building_here:  # its first snapshot is not out yet
        return f"'{name}' is being built: it answers as soon as its first files are read (seconds)"
    if info.status == WorkspaceStatus.BUILDING:  # by another process
        return (f"'{name}' is being built by another process and has no finished build yet: its search "
                "index is saved when that build ends (the app or terminal building it can search it already)")
    if info.status == WorkspaceStatus.INTERRUPTED or (info.last_error or "").startswith("build cancelled"):
        return (f"'{name}' has no finished build: its build stopped part-way. `spar ws build \"{name}\"` "
                "resumes it (passages already embedded are kept) and answers keyword searches within seconds")
    return f"'{name}' is not built yet: spar ws build \"{name}\""


def search_workspace(library: Any, target: SearchTarget, query: str, k: int = 10, method: str = "hybrid",
                     session_key: Optional[str] = None, source: str = "search") -> WorkspaceResults:
    """Search ``target`` and log the query; the hits' files, the log entry and the workspace's
    last use are read and written in one session. A vector store that fails raises NeedsBuild
    with ``store_failed`` (the caller rebuilds from the cache, reopening the store)."""
    query = storable_text(query)  # an undecodable byte in a typed query must not fail the search or its log
    info, searcher = target.info, target.searcher
    t0 = time.perf_counter()
    try:
        results = searcher.search(query, k=k, method=method)
    except VectorStoreError as exc:  # deleted or damaged behind our back
        log.warning("vector store failed during a search (%s)", exc)
        raise NeedsBuild(info.name, "the vector collection had disappeared", store_failed=True) from exc
    latency = (time.perf_counter() - t0) * 1000
    ids = {h.file_id for h in results.hits if h.file_id is not None}
    with library.session() as s:
        hits = _workspace_hits(s, info.id, query, results.hits, ids, searcher)
        ranked = [(fh.file_id, fh.score) for fh in results.files if fh.file_id]
        log_id = log_query(s, info.id, query, ranked, latency, session_key, source)
        ws = s.get(Workspace, info.id)
        if ws is not None:
            ws.last_used_at = utcnow()
    building = bool(getattr(searcher, "building", False))
    coverage = float(getattr(searcher, "dense_coverage", 1.0))
    keyword = float(getattr(searcher, "keyword_coverage", 1.0))
    notes = target.notes + ((coverage_note(coverage, keyword),) if building else ())
    return WorkspaceResults(info.name, query, tuple(hits), results.message, latency, log_id, notes,
                            searcher.chunking.describe() if hasattr(searcher, "chunking") else None,
                            dense_coverage=coverage, building=building, keyword_coverage=keyword)


def _workspace_hits(s, ws_id: int, query: str, chunk_hits: Any, ids: set[int], searcher: Any) -> list[WorkspaceHit]:
    """The chunk hits as files: path, copies elsewhere, missing or changed since the build."""
    files = {f.id: f for f in s.scalars(select(File).where(File.id.in_(ids)))} if ids else {}
    copies = copies_of(s, list(files.values()))
    as_built = {fid: h for fid, h in s.execute(select(WorkspaceFile.file_id, WorkspaceFile.content_hash).where(
        WorkspaceFile.workspace_id == ws_id, WorkspaceFile.file_id.in_(ids)))} if ids else {}
    hits = []
    tokenizer, unit = searcher.bm25.tokenizer, getattr(searcher, "keyword_unit", "chunk")
    for h in chunk_hits:
        f = files.get(h.file_id)
        if f is None:
            continue
        hits.append(WorkspaceHit(h.rank, f.id, f.path, f.title, h.page_start, h.page_end, h.score, h.bm25_score,
                                 h.dense_score, h.text, h.parent_text, h.chunk_id, f.status == FileStatus.MISSING,
                                 copies.get(f.id, ()), h.keyword_part, h.meaning_part, h.alpha, unit,
                                 tuple(matched_spans(query, h.text, tokenizer)), h.evolved,
                                 h.rank_without_evolution,
                                 file_changed=f.id in as_built and as_built[f.id] != f.content_hash))
    return hits


def log_query(s, ws_id: Optional[int], query: str, ranked: list[tuple[int, float]],
              latency_ms: Optional[float], session_key: Optional[str], source: str) -> int:
    """Log a query in session ``s``; searches close in time share a session key (co-occurrence)."""
    if session_key is None:
        last = s.scalar(select(QueryLogEntry).where(QueryLogEntry.workspace_id == ws_id)
                        .order_by(QueryLogEntry.id.desc()).limit(1))
        now = utcnow()
        if last is not None and now - last.created_at < SESSION_GAP and last.session_key.startswith("run-"):
            session_key = last.session_key
        else:
            session_key = f"run-{ws_id}-{int(now.timestamp())}"
    entry = QueryLogEntry(workspace_id=ws_id, session_key=session_key, query=query, source=source,
                          results=[[fid, round(float(sc), 5)] for fid, sc in ranked], latency_ms=latency_ms)
    s.add(entry)
    s.flush()
    return entry.id


def mark_opened(library: Any, log_id: int, file_id: int) -> None:
    """A result was opened or cited: the strongest signal of what the query was about."""
    with library.session() as s:
        entry = s.get(QueryLogEntry, log_id)
        if entry is not None and file_id not in (entry.opened or []):
            entry.opened = list(entry.opened or []) + [file_id]

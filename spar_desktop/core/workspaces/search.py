"""Searching inside a workspace: hybrid retrieval restricted to its collection, hits mapped back
to files (path, page span), and every query logged (workspace history, relation discovery)."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Optional

from sqlalchemy import select

from spar_desktop.core.documents.types import storable_text
from spar_desktop.core.library.models import File, FileStatus, utcnow
from spar_desktop.core.library.queries import copies_of
from spar_desktop.core.retrieval.explain import Explanation, explain, matched_spans
from spar_desktop.core.retrieval.vector_store import VectorStoreError
from spar_desktop.core.workspaces.errors import WorkspaceError
from spar_desktop.core.workspaces.models import QueryLogEntry, WorkspaceFile

log = logging.getLogger(__name__)

if TYPE_CHECKING:  # the manager calls this module: a type only
    from spar_desktop.core.workspaces.manager import Workspaces

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

    def explanation(self, query: str) -> Explanation:
        return explain(self, query, keyword_unit=self.keyword_unit)


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


def open_searcher(manager: "Workspaces", name: str) -> tuple[int, Any, tuple[str, ...]]:
    """(workspace id, searcher, notes). The searcher of the current build comes from memory or
    from the state its build saved (searchers.py); only a missing or stale state (notes say
    why) rebuilds it, from the embedding cache: nothing is re-embedded unless files changed."""
    info = manager.get(name)
    if info.archived:
        raise WorkspaceError(f"'{name}' is archived: reactivate it first (spar ws reactivate \"{name}\")")
    if not info.searchable:
        raise WorkspaceError(f"'{name}' is not built yet: spar ws build \"{name}\"")
    searcher, why = manager.searchers.open(info.id, info.built_at)
    if searcher is not None:
        return info.id, searcher, ()
    report = manager.build(name)
    notes = ((f"{why}: rebuilt from the cache",) if why else ()) + tuple(report.notes)
    built = manager.get(name)
    searcher = manager.searchers.get(built.id, built.built_at)
    if searcher is None:  # pragma: no cover - a build that finished always leaves its searcher
        raise WorkspaceError(f"'{name}' could not be opened after a build")
    return built.id, searcher, notes


def search_workspace(manager: "Workspaces", name: str, query: str, k: int = 10, method: str = "hybrid",
                     session_key: Optional[str] = None, source: str = "search") -> WorkspaceResults:
    query = storable_text(query)  # an undecodable byte in a typed query must not fail the search or its log
    ws_id, searcher, notes = open_searcher(manager, name)
    t0 = time.perf_counter()
    try:
        results = searcher.search(query, k=k, method=method)
    except VectorStoreError as exc:  # deleted or damaged behind our back: reopen, rebuild once from the cache
        log.warning("vector store failed during a search (%s); reopening it", exc)
        manager.searchers.forget(ws_id, disk=False)  # the build below saves a new state
        manager.engine.reopen_chroma()
        report = manager.build(name)
        notes = tuple(report.notes) + ("the vector collection had disappeared; rebuilt from cached embeddings",)
        ws_id, searcher, _ = open_searcher(manager, name)
        results = searcher.search(query, k=k, method=method)
    latency = (time.perf_counter() - t0) * 1000
    ids = {h.file_id for h in results.hits if h.file_id is not None}
    with manager.library.session() as s:
        files = {f.id: f for f in s.scalars(select(File).where(File.id.in_(ids)))} if ids else {}
        copies = copies_of(s, list(files.values()))
        as_built = {fid: h for fid, h in s.execute(select(WorkspaceFile.file_id, WorkspaceFile.content_hash).where(
            WorkspaceFile.workspace_id == ws_id, WorkspaceFile.file_id.in_(ids)))} if ids else {}
    hits = []
    tokenizer, unit = searcher.bm25.tokenizer, getattr(searcher, "keyword_unit", "chunk")
    for h in results.hits:
        f = files.get(h.file_id)
        if f is None:
            continue
        hits.append(WorkspaceHit(h.rank, f.id, f.path, f.title, h.page_start, h.page_end, h.score, h.bm25_score,
                                 h.dense_score, h.text, h.parent_text, h.chunk_id, f.status == FileStatus.MISSING,
                                 copies.get(f.id, ()), h.keyword_part, h.meaning_part, h.alpha, unit,
                                 tuple(matched_spans(query, h.text, tokenizer)), h.evolved,
                                 h.rank_without_evolution,
                                 file_changed=f.id in as_built and as_built[f.id] != f.content_hash))
    log_id = log_query(manager, ws_id, query, [(fh.file_id, fh.score) for fh in results.files if fh.file_id],
                       latency, session_key, source)
    manager.touch(ws_id)
    return WorkspaceResults(name, query, tuple(hits), results.message, latency, log_id, notes,
                            searcher.chunking.describe() if hasattr(searcher, "chunking") else None)


def log_query(manager: "Workspaces", ws_id: Optional[int], query: str, ranked: list[tuple[int, float]],
              latency_ms: Optional[float], session_key: Optional[str], source: str) -> int:
    with manager.library.session() as s:
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


def mark_opened(manager: "Workspaces", log_id: int, file_id: int) -> None:
    """A result was opened or cited: the strongest signal of what the query was about."""
    with manager.library.session() as s:
        entry = s.get(QueryLogEntry, log_id)
        if entry is not None and file_id not in (entry.opened or []):
            entry.opened = list(entry.opened or []) + [file_id]


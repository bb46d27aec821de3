"""Workspace lifecycle: create from a request and/or explicit filters, explain, edit, build,
update, search, archive (drop vectors, keep everything else), reactivate from cache, delete.

The heavy parts live in builder.py (build/update) and search.py; export/import in sparws.py.
The manager resolves rows and filters (lookup.py) and passes plain values down: neither builder
nor search imports it. It also owns the policy a search does not have: a searcher that needs a
build gets one here (``build_if_needed``). Methods that read or replace a workspace's collection
or searcher take its lock (locks.py), so every caller (the app's workers, chat, the CLI) gets the
same exclusion.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import replace
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING, Any, Optional, Sequence

from sqlalchemy import delete, select

from spar_desktop.core.documents.types import storable_text
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.models import utcnow
from spar_desktop.core.progress import CancelToken, ProgressCallback, no_progress
from spar_desktop.core.retrieval.vector_store import delete_collection
from spar_desktop.core.workspaces import ranking
from spar_desktop.core.workspaces.chunkings import chunking_of
from spar_desktop.core.workspaces.engine import Engine, engine_for
from spar_desktop.core.workspaces.errors import NeedsBuild, WorkspaceError, WorkspaceNotFound
from spar_desktop.core.workspaces.freshness import UP_TO_DATE, Freshness, freshness
from spar_desktop.core.workspaces.locks import WorkspaceLocks
from spar_desktop.core.workspaces.lookup import (  # noqa: F401 - WorkspaceInfo, INTERRUPTED_MESSAGE: importable here
    INTERRUPTED_MESSAGE, WorkspaceInfo, live_filter, shared_session, workspace_info, workspace_row,
)
from spar_desktop.core.workspaces.names import (  # noqa: F401 - name_problem, clean_name: importable here
    MAX_NAME_LENGTH, check_name, clean_name, collection_name, name_problem, name_taken,
)
from spar_desktop.core.workspaces.models import (
    QueryLogEntry, Workspace, WorkspaceFile, WorkspaceFileState, WorkspaceStatus,
)
from spar_desktop.core.workspaces.request import ParsedRequest, parse_request
from spar_desktop.core.workspaces.selection import (
    Explanation, TagChoice, WorkspaceFilter, build_filter, explain, require_scope, tag_choice,
)
from spar_desktop.core.workspaces.tag_index import TagIndex

if TYPE_CHECKING:  # a request (create, explain) never loads the builder nor the searcher (issue 30)
    from spar_desktop.core.workspaces.builder import WorkspaceBuildReport
    from spar_desktop.core.workspaces.search import SearchTarget, WorkspaceResults
    from spar_desktop.core.workspaces.searchers import SearcherCache

log = logging.getLogger(__name__)


class Workspaces:
    def __init__(self, library: Library, engine: Optional[Engine] = None) -> None:
        if library.settings is None and engine is None:
            raise ValueError("Workspaces need settings (a data dir) or an engine")
        self.library = library
        self.engine = engine or engine_for(library.settings)
        self._tag_index: Any = None
        self.locks = WorkspaceLocks()
        self._searchers: Optional[SearcherCache] = None
        self._searchers_lock = threading.Lock()

    @property
    def searchers(self) -> SearcherCache:
        """Workspace id → searcher, in memory and saved (searchers.py); made on first use (a request needs none)."""
        with self._searchers_lock:
            if self._searchers is None:
                from spar_desktop.core.workspaces.searchers import SearcherCache
                self._searchers = SearcherCache(self.library, lambda: self.engine)
            return self._searchers

    def remove_orphaned_states(self) -> list[str]:
        """Remove saved-searcher folders of workspaces that no longer exist (deleted by another
        process, or a delete that could not remove them then); returns the collections removed.
        Housekeeping with a directory listing: run when the app opens its workspaces, at a build
        and after a delete, never on construction (read-only commands construct a manager too)."""
        try:
            with self.library.session() as s:
                return self.searchers.remove_orphans(lambda: set(s.scalars(select(Workspace.collection))))
        except Exception as exc:  # noqa: BLE001 - housekeeping must never stop the workspaces opening
            log.warning("could not remove orphaned search indexes: %s", exc)
            return []

    def lock(self, name: str):
        """The lock of workspace ``name`` (re-entrant): hold it across several calls that must
        see one state of it; the methods below take it themselves."""
        return self.locks.workspace(name)

    # -- tag index ------------------------------------------------------------------------
    @property
    def tag_index(self) -> Any:
        """The tag index, synced (new and changed tags embedded) and opened once per process."""
        return self.sync_tag_index()

    def sync_tag_index(self, progress: ProgressCallback = no_progress, cancel: Optional[CancelToken] = None) -> Any:
        """Bring the tag index up to date (only tags not embedded yet cost anything; resumable)."""
        with self.locks.tags:
            if self._tag_index is None:
                self._tag_index = TagIndex(self.library, lambda: self.engine.encoder, self.engine.settings)
            self._tag_index.sync(progress, cancel)
            return self._tag_index

    # -- create / read --------------------------------------------------------------------
    def create(self, name: str, request: str = "", *, tags: Sequence[str] = (), since: Optional[date] = None,
               until: Optional[date] = None, types: Sequence[str] = (), today: Optional[date] = None,
               filter: Optional[WorkspaceFilter] = None, chunking: Optional[str] = None,
               summarised: bool = False) -> tuple[WorkspaceInfo, Explanation]:
        """From a request and/or options, or from ``filter`` exactly as given (e.g. one a user
        edited after a preview: no request is parsed and no tag is matched again). ``summarised``:
        the caller made the candidates' summaries already (with its progress line): not asked again."""
        name = check_name(name)
        with self.library.session() as s:
            if name_taken(s, name):
                raise WorkspaceError(f"a workspace named '{name}' already exists")
        # Nothing that chooses files (e.g. keywords no tag matched) is refused, never "every file";
        # the whole index only when the filter says so on purpose (WorkspaceFilter.all_files).
        flt = require_scope(filter if filter is not None else
                            self.filter_for(request, tags=tags, since=since, until=until, types=types, today=today))
        if not summarised:
            self.summarise_candidates(flt)  # ranks by likeness now, not after the background job
        with self.library.session() as s:
            ws = Workspace(name=name, collection=collection_name(name), filter_json=flt.to_json(),
                           chunking=chunking_of(chunking))
            s.add(ws)
            s.flush()
            info = workspace_info(s, ws, self.data_dir, flt)  # the filter as stored, not read back
        return info, explain(self.library, flt)

    def preview(self, request: str, progress: ProgressCallback = no_progress,
                cancel: Optional[CancelToken] = None) -> Explanation:
        """Request → explained filter (the rules' reading, and the model's when it answers). Saves no
        workspace; the candidates' summaries it may compute are kept, as ``create`` would keep them."""
        from spar_desktop.core.workspaces.request_merge import read_request  # the model's client loads on use

        flt = self.filter_for(request, reading=read_request(request, self.library.settings))
        return self.explain_filter(flt, progress, cancel)

    def explain_filter(self, flt: WorkspaceFilter, progress: ProgressCallback = no_progress,
                       cancel: Optional[CancelToken] = None) -> Explanation:
        """What ``create(filter=flt)`` would admit, explained: the same on-demand summaries first, so
        a preview never shows files that the workspace made from it would not hold."""
        self.summarise_candidates(flt, progress, cancel)
        return explain(self.library, flt)

    def filter_for(self, request: str = "", *, tags: Sequence[str] = (), since: Optional[date] = None,
                   until: Optional[date] = None, types: Sequence[str] = (), today: Optional[date] = None,
                   match: str = "ranked", reading: Optional[ParsedRequest] = None) -> WorkspaceFilter:
        """Request → filter, then explicit options on top (they win over what the request said).
        ``reading``: the request already read (request_merge.understand_request, with a model).

        ``match``: 'ranked' (score and admit the best up to a budget), 'most' (all-or-nothing; a
        file may lack a group when none has them all) or 'all' (every group)."""
        if match not in ("ranked", "most", "all"):
            raise WorkspaceError(f"unknown match mode '{match}': ranked, most or all")
        with self.locks.tags:  # the tag index is synced and queried as one step
            return self._filter_for(request, tags, since, until, types, today, match, reading)

    def _filter_for(self, request: str, tags: Sequence[str], since: Optional[date], until: Optional[date],
                    types: Sequence[str], today: Optional[date], match: str,
                    reading: Optional[ParsedRequest] = None) -> WorkspaceFilter:
        if request.strip():
            parsed = reading if reading is not None else parse_request(request, today)
            flt = build_filter(self.library, parsed, self.tag_index, relax=match == "most", ranked=match == "ranked") \
                if parsed.keywords or parsed.folders else \
                WorkspaceFilter(since=parsed.since, until=parsed.until, formats=parsed.formats, authors=parsed.authors,
                                request=request, notes=parsed.notes, problems=parsed.problems, sources=parsed.sources)
            if flt.ranked and parsed.keywords:
                flt = self.with_request_vector(flt)
        elif not (tags or since or until or types):
            raise WorkspaceError("give a request (--prompt) or at least one filter (--tag, --since, --until, --type)")
        else:
            flt = WorkspaceFilter()
        problems = list(flt.problems)
        for t in tags:
            choices: list[TagChoice] = []
            for part in t.split("|"):
                found = tag_choice(self.library, part)
                if not found:
                    problems.append(f"unknown tag '{part}'; not applied")
                choices += found
            if choices:
                flt = flt.with_group(f"tag {t}", choices)
        if since:
            flt = replace(flt, since=since)
        if until:
            flt = replace(flt, until=until)
        if types:
            flt = replace(flt, formats=tuple(x.lower().lstrip(".") for x in types))
        if flt.since and flt.until and flt.since > flt.until:
            problems.append(f"since {flt.since} is after until {flt.until}: no file can match")
        return replace(flt, problems=tuple(dict.fromkeys(problems)))

    def with_request_vector(self, flt: WorkspaceFilter) -> WorkspaceFilter:
        """``flt`` with its request encoded, when there are file summaries to compare it with: the
        index has some (tagging.summaries), or its keywords' tags bring candidates whose summaries
        are computed on demand (summarise_candidates). Otherwise nothing is encoded."""
        # The tag index knows the model id without loading the encoder (0.4 s, 170 MB a request).
        model_id = self._tag_index.model_id if self._tag_index is not None else self.engine.encoder.model_id
        if not flt.request.strip() or not (flt.optional_groups or ranking.summaries_available(self.library, model_id)):
            return flt
        if self._tag_index is not None:  # a request asked before is not encoded again (its query cache)
            vector = self._tag_index.query_vector(storable_text(flt.request))
            return replace(flt, request_vector=ranking.encode_vector(vector), vector_model=self._tag_index.model_id)
        encoder = self.engine.encoder
        return replace(flt, request_vector=ranking.request_vector(encoder, flt.request), vector_model=encoder.model_id)

    def summarise_candidates(self, flt: WorkspaceFilter, progress: ProgressCallback = no_progress,
                             cancel: Optional[CancelToken] = None) -> Optional[Any]:
        """The missing summaries of a ranked filter's best candidates, computed and stored now
        (ranking.summarise_candidates: bounded, O(candidates)); None when it ranks without a request vector."""
        if not (flt.ranks and flt.request_vector):
            return None
        return ranking.summarise_candidates(self.library, self.library.settings, lambda: self.engine.encoder, flt,
                                            progress, cancel)

    def workspace_row(self, s, name: str) -> Workspace:
        """The row named ``name`` in session ``s`` (lookup.workspace_row)."""
        return workspace_row(s, name)

    @property
    def data_dir(self) -> Optional[str]:
        settings = self.library.settings or getattr(self.engine, "settings", None)
        return str(settings.data_dir) if settings is not None else None

    def _info(self, s, ws: Workspace) -> WorkspaceInfo:
        return workspace_info(s, ws, self.data_dir)

    def get(self, name: str) -> WorkspaceInfo:
        with self.library.session() as s:
            return self._info(s, self.workspace_row(s, name))

    def find(self, name: str) -> Optional[WorkspaceInfo]:
        """Like get, but None for an unknown name."""
        try:
            return self.get(name)
        except WorkspaceNotFound:
            return None

    def ready_hashes(self, name: str) -> list[str]:
        """Content hashes of the workspace's files that made it into the last build."""
        with self.library.session() as s:
            ws = self.workspace_row(s, name)
            return [h for h in s.scalars(select(WorkspaceFile.content_hash).where(
                WorkspaceFile.workspace_id == ws.id, WorkspaceFile.state == WorkspaceFileState.READY)) if h]

    def list(self) -> list[WorkspaceInfo]:
        with self.library.session() as s:
            return [self._info(s, w) for w in s.scalars(select(Workspace).order_by(Workspace.name))]

    def files(self, name: str) -> list[WorkspaceFile]:
        with self.library.session() as s:
            ws = self.workspace_row(s, name)
            return list(s.scalars(select(WorkspaceFile).where(WorkspaceFile.workspace_id == ws.id).order_by(WorkspaceFile.path)))

    # -- filter ---------------------------------------------------------------------------
    def current_filter(self, name: str) -> WorkspaceFilter:
        """The stored filter, minus tags deleted since (each named in ``problems``)."""
        with self.library.session() as s:
            return live_filter(s, WorkspaceFilter.from_json(workspace_row(s, name).filter_json or {}))

    def freshness(self, name: str) -> Freshness:
        """How a built workspace differs from what its request admits from the index now
        (freshness.py); up to date when it is not built or archived (nothing to compare). One
        session for all of it."""
        with shared_session(self.library) as (lib, s):
            return self._freshness(lib, s, workspace_info(s, workspace_row(s, name), self.data_dir))

    @staticmethod
    def _freshness(lib: Any, s, info: WorkspaceInfo) -> Freshness:
        if info.built_at is None or info.archived:
            return UP_TO_DATE
        return freshness(lib, info.id, live_filter(s, info.filter))

    def out_of_date(self) -> list[tuple[str, Freshness]]:
        """(name, freshness) of every active workspace the index has moved away from (after a scan)."""
        with self.library.session() as s:
            names = list(s.scalars(select(Workspace.name).where(
                Workspace.status == WorkspaceStatus.ACTIVE, Workspace.built_at.is_not(None)).order_by(Workspace.name)))
        found = [(n, self.freshness(n)) for n in names]
        return [(n, f) for n, f in found if f.stale]

    def explain(self, name: str) -> Explanation:
        return explain(self.library, self.current_filter(name))

    def set_filter(self, name: str, flt: WorkspaceFilter) -> Explanation:
        with self.lock(name), self.library.session() as s:
            self.workspace_row(s, name).filter_json = flt.to_json()
        return explain(self.library, flt)

    # -- build / search (see builder.py and search.py) ---------------------------------------
    def build(self, name: str, progress: ProgressCallback = no_progress, cancel: Optional[CancelToken] = None,
              rebuild: bool = False, reopen_store: bool = False) -> WorkspaceBuildReport:
        """Build or update ``name``; a build is also when saved searchers of deleted workspaces
        are tidied away. ``reopen_store``: a search found the vector store failing."""
        from spar_desktop.core.workspaces import builder

        with self.lock(name):
            self.remove_orphaned_states()
            with self.library.session() as s:
                ws = workspace_row(s, name)
                target = builder.BuildTarget(ws.id, name, ws.collection,
                                             live_filter(s, WorkspaceFilter.from_json(ws.filter_json or {})))
            services = builder.BuildServices(self.library, self.engine, self.searchers)
            return builder.build_workspace(services, target, progress, cancel, rebuild, reopen_store)

    def open_search(self, name: str, *, with_freshness: bool = False, build_if_needed: bool = True) -> SearchTarget:
        """``name`` ready to search: its row, its searcher (from memory or its saved state) and,
        with ``with_freshness``, how it differs from the index, all read in one session. A
        searcher that needs a build (NeedsBuild) is rebuilt from the cache when
        ``build_if_needed`` (notes say why), else the NeedsBuild is raised for the caller."""
        target, needs = self._open_search(name, with_freshness)
        if needs is None:
            return target
        if not build_if_needed:
            raise needs
        report = self.build(name)  # waits for the lock when an update is running
        target, again = self._open_search(name, with_freshness)
        if again is not None:  # pragma: no cover - a build that finished always leaves its searcher
            raise WorkspaceError(f"'{name}' could not be opened after a build")
        notes = ((f"{needs.why}: rebuilt from the cache",) if needs.why else ()) + tuple(report.notes)
        return replace(target, notes=notes)

    def _open_search(self, name: str, with_freshness: bool) -> tuple[SearchTarget, Optional[NeedsBuild]]:
        from spar_desktop.core.workspaces.search import SearchTarget, open_searcher

        with shared_session(self.library) as (lib, s):
            info = workspace_info(s, workspace_row(s, name), self.data_dir)
            fresh = self._freshness(lib, s, info) if with_freshness else None
            try:
                return SearchTarget(info, open_searcher(self.searchers, info, lib), freshness=fresh), None
            except NeedsBuild as exc:
                return SearchTarget(info, None, freshness=fresh), exc

    def search(self, name: str, query: str, k: int = 10, method: str = "hybrid", session_key: Optional[str] = None,
               source: str = "search", *, build_if_needed: bool = True) -> WorkspaceResults:
        """Without the workspace's lock: searchers are immutable, so a search reads the current
        build's while an update (which holds the lock for as long as it embeds) prepares the
        next one and swaps it in at its end. Only a search that must rebuild waits (build
        takes the lock)."""
        target = self.open_search(name, build_if_needed=build_if_needed)
        return self.search_in(target, query, k, method, session_key, source, build_if_needed=build_if_needed)

    def search_in(self, target: SearchTarget, query: str, k: int = 10, method: str = "hybrid",
                  session_key: Optional[str] = None, source: str = "search", *,
                  build_if_needed: bool = True) -> WorkspaceResults:
        """Search an opened ``target`` (one session: hits, log, last use). A vector store that
        fails is reopened by a rebuild from the cache, once, when ``build_if_needed``."""
        from spar_desktop.core.workspaces.search import search_workspace

        try:
            return search_workspace(self.library, target, query, k, method, session_key, source)
        except NeedsBuild as exc:
            if not (build_if_needed and exc.store_failed):
                raise
            self.searchers.forget(target.info.id, disk=False)  # the build below saves a new state
            report = self.build(target.info.name, reopen_store=True)
            again = self.open_search(target.info.name, build_if_needed=False)
            notes = tuple(report.notes) + ("the vector collection had disappeared; rebuilt from cached embeddings",)
            return search_workspace(self.library, replace(again, notes=notes), query, k, method, session_key, source)

    def searcher(self, name: str):
        """(workspace id, its HybridSearcher, notes): opened from memory or its saved state,
        rebuilt from the cache only when that state is missing or stale (notes say why)."""
        target = self.open_search(name)
        return target.info.id, target.searcher, target.notes

    # -- archive / reactivate / delete -----------------------------------------------------------
    def archive(self, name: str) -> WorkspaceInfo:
        with self.lock(name), self.library.session() as s:
            ws = self.workspace_row(s, name)
            delete_collection(self.engine.chroma, ws.collection)
            self.searchers.forget(ws.id, ws.collection)  # archive drops vectors: saved ones too
            ws.status, ws.archived_at = WorkspaceStatus.ARCHIVED, utcnow()
        return self.get(name)

    def reactivate(self, name: str, progress: ProgressCallback = no_progress, cancel: Optional[CancelToken] = None):
        """Rebuild the collection from the embedding cache (re-embeds only what changed)."""
        return self.build(name, progress, cancel)

    def archive_idle(self, days: Optional[int] = None, now: Optional[datetime] = None) -> list[str]:
        """Archive active workspaces unused for ``days`` (settings.workspace_idle_archive_days)."""
        days = self.library.settings.workspace_idle_archive_days if days is None else days
        if days <= 0:
            return []
        cutoff = (now or utcnow()) - timedelta(days=days)
        with self.library.session() as s:
            idle = list(s.scalars(select(Workspace.name).where(
                Workspace.status == WorkspaceStatus.ACTIVE, Workspace.last_used_at < cutoff)))
        for n in idle:
            self.archive(n)
            log.info("archived idle workspace %s", n)
        return idle

    def delete(self, name: str) -> None:
        with self.lock(name), self.library.session() as s:
            ws = self.workspace_row(s, name)
            delete_collection(self.engine.chroma, ws.collection)
            self.searchers.forget(ws.id, ws.collection)
            s.execute(delete(QueryLogEntry).where(QueryLogEntry.workspace_id == ws.id))
            s.execute(delete(WorkspaceFile).where(WorkspaceFile.workspace_id == ws.id))
            s.delete(ws)
        self.remove_orphaned_states()

    def touch(self, workspace_id: int) -> None:
        with self.library.session() as s:
            ws = s.get(Workspace, workspace_id)
            if ws is not None:
                ws.last_used_at = utcnow()

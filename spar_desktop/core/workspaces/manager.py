"""Workspace lifecycle: create from a request and/or explicit filters, explain, edit, build,
update, search, archive (drop vectors, keep everything else), reactivate from cache, delete.

The heavy parts live in builder.py (build/update) and search.py; export/import in sparws.py.
Methods that read or replace a workspace's collection or searcher take its lock (locks.py), so
every caller (the app's workers, chat, the CLI) gets the same exclusion.
"""

from __future__ import annotations

import logging
import re
import secrets
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from typing import Any, Optional, Sequence

from sqlalchemy import delete, func, select

from spar_desktop.core.library.database import Library
from spar_desktop.core.library.models import Tag, utcnow
from spar_desktop.core.progress import CancelToken, ProgressCallback, no_progress
from spar_desktop.core.retrieval.vector_store import delete_collection
from spar_desktop.core.workspaces import builder, ranking
from spar_desktop.core.workspaces.build_lock import build_in_progress
from spar_desktop.core.workspaces.chunkings import chunking_of
from spar_desktop.core.workspaces.engine import Engine, engine_for
from spar_desktop.core.workspaces.errors import WorkspaceError, WorkspaceNotFound
from spar_desktop.core.workspaces.freshness import UP_TO_DATE, Freshness, freshness
from spar_desktop.core.workspaces.locks import WorkspaceLocks
from spar_desktop.core.workspaces.models import (
    QueryLogEntry, Workspace, WorkspaceFile, WorkspaceFileState, WorkspaceStatus,
)
from spar_desktop.core.workspaces.request import parse_request
from spar_desktop.core.workspaces.search import open_searcher, search_workspace
from spar_desktop.core.workspaces.searchers import SearcherCache
from spar_desktop.core.workspaces.selection import (
    Explanation, TagChoice, WorkspaceFilter, build_filter, explain, require_scope, tag_choice,
)
from spar_desktop.core.workspaces.tag_index import TagIndex

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class WorkspaceInfo:
    id: int
    name: str
    status: str
    collection: str
    filter: WorkspaceFilter
    created_at: datetime
    built_at: Optional[datetime]
    last_used_at: datetime
    archived_at: Optional[datetime]
    file_count: int
    chunk_count: int
    model_id: Optional[str]
    last_error: Optional[str]
    chunker_key: Optional[str] = None
    chunking: str = "hierarchical"  # chunkings.CHUNKINGS

    @property
    def archived(self) -> bool:
        return self.status == WorkspaceStatus.ARCHIVED

    @property
    def active(self) -> bool:
        return self.status == WorkspaceStatus.ACTIVE

    @property
    def interrupted(self) -> bool:
        """A build of it was killed (no process is building it): building again resumes it."""
        return self.status == WorkspaceStatus.INTERRUPTED

    @property
    def request(self) -> str:
        return self.filter.request

    @property
    def searchable(self) -> bool:
        """Built once and not archived (an update may be running or was interrupted): a search
        opens its searcher."""
        return self.built_at is not None and self.status in (
            WorkspaceStatus.ACTIVE, WorkspaceStatus.BUILDING, WorkspaceStatus.INTERRUPTED)

    def to_json(self) -> dict:
        return {
            "id": self.id, "name": self.name, "status": self.status, "files": self.file_count,
            "chunks": self.chunk_count, "model_id": self.model_id, "last_error": self.last_error,
            "created_at": self.created_at.isoformat(), "built_at": self.built_at.isoformat() if self.built_at else None,
            "last_used_at": self.last_used_at.isoformat(),
            "archived_at": self.archived_at.isoformat() if self.archived_at else None,
            "filter": self.filter.to_json(), "chunking": self.chunking,
        }


INTERRUPTED_MESSAGE = "build interrupted: build again to resume (finished work is kept in the cache)"
MAX_NAME_LENGTH = 200
# Control characters (C0, DEL, C1: a name is printed in terminals and lists), line and paragraph
# separators, bidi overrides and isolates (they reorder what is shown), path separators (a name
# must never read as a path), and lone surrogates (undecodable bytes: no database stores them).
_BAD_NAME_CHAR = re.compile("[\x00-\x1f\x7f-\x9f/\\\\\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def name_problem(name: str) -> Optional[str]:
    """Why ``name`` (already stripped) cannot name a workspace, or None."""
    if not name:
        return "a workspace needs a name"
    if len(name) > MAX_NAME_LENGTH:
        return f"a workspace name is limited to {MAX_NAME_LENGTH} characters"
    bad = _BAD_NAME_CHAR.search(name)
    if bad:
        c = bad[0]
        what = ("a path separator ('/' or '\\')" if c in "/\\" else
                f"the control character U+{ord(c):04X}" if ord(c) <= 0x9F else
                "an undecodable byte" if 0xD800 <= ord(c) <= 0xDFFF else f"the invisible character U+{ord(c):04X}")
        return f"a workspace name cannot contain {what}"
    return None


def check_name(name: str) -> str:
    """``name`` stripped, or WorkspaceError saying what is wrong with it (names a user typed)."""
    name = (name or "").strip()
    problem = name_problem(name)
    if problem:
        raise WorkspaceError(problem)
    return name


def clean_name(name: str, fallback: str = "imported workspace") -> str:
    """A usable name from one someone else chose (a shared file): control characters become
    spaces, path separators '-', runs of spaces one; ``fallback`` when nothing is left."""
    cleaned = _BAD_NAME_CHAR.sub(lambda m: "-" if m[0] in "/\\" else " ", name or "")
    cleaned = " ".join(cleaned.split())[:MAX_NAME_LENGTH].strip()
    return cleaned or fallback


def name_taken(s, name: str) -> bool:
    """Names are unique ignoring case ('Falcon' and 'falcon' would be the same workspace to a user)."""
    return s.scalar(select(Workspace.id).where(func.lower(Workspace.name) == name.lower()).limit(1)) is not None


def collection_name(name: str) -> str:
    """Safe, unique and recognisable: 'ws-<slug>-<random>' (names may repeat after a delete)."""
    slug = re.sub(r"[^a-zA-Z0-9]+", "-", name).strip("-").lower()[:40] or "workspace"
    return f"ws-{slug}-{secrets.token_hex(4)}"


class Workspaces:
    def __init__(self, library: Library, engine: Optional[Engine] = None) -> None:
        if library.settings is None and engine is None:
            raise ValueError("Workspaces need settings (a data dir) or an engine")
        self.library = library
        self.engine = engine or engine_for(library.settings)
        self._tag_index: Any = None
        self.locks = WorkspaceLocks()
        # Workspace id → its searcher, in memory and saved for the next process (searchers.py).
        self.searchers = SearcherCache(library, lambda: self.engine)
        self.remove_orphaned_states()

    def remove_orphaned_states(self) -> list[str]:
        """Remove saved-searcher folders of workspaces that no longer exist (deleted by another
        process, or a delete that could not remove them then); returns the collections removed."""
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
                self._tag_index = TagIndex(self.library, self.engine.chroma, self.engine.encoder)
            self._tag_index.sync(progress, cancel)
            return self._tag_index

    # -- create / read --------------------------------------------------------------------
    def create(self, name: str, request: str = "", *, tags: Sequence[str] = (), since: Optional[date] = None,
               until: Optional[date] = None, types: Sequence[str] = (), today: Optional[date] = None,
               filter: Optional[WorkspaceFilter] = None,
               chunking: Optional[str] = None) -> tuple[WorkspaceInfo, Explanation]:
        """From a request and/or options, or from ``filter`` exactly as given (e.g. one a user
        edited after a preview: no request is parsed and no tag is matched again)."""
        name = check_name(name)
        with self.library.session() as s:
            if name_taken(s, name):
                raise WorkspaceError(f"a workspace named '{name}' already exists")
        # Nothing that chooses files (e.g. keywords no tag matched) is refused, never "every file";
        # the whole index only when the filter says so on purpose (WorkspaceFilter.all_files).
        flt = require_scope(filter if filter is not None else
                            self.filter_for(request, tags=tags, since=since, until=until, types=types, today=today))
        with self.library.session() as s:
            ws = Workspace(name=name, collection=collection_name(name), filter_json=flt.to_json(),
                           chunking=chunking_of(chunking))
            s.add(ws)
        return self.get(name), explain(self.library, flt)

    def filter_for(self, request: str = "", *, tags: Sequence[str] = (), since: Optional[date] = None,
                   until: Optional[date] = None, types: Sequence[str] = (), today: Optional[date] = None,
                   match: str = "ranked") -> WorkspaceFilter:
        """Request → filter, then explicit options on top (they win over what the request said).

        ``match``: 'ranked' (score and admit the best up to a budget), 'most' (all-or-nothing; a
        file may lack a group when none has them all) or 'all' (every group)."""
        if match not in ("ranked", "most", "all"):
            raise WorkspaceError(f"unknown match mode '{match}': ranked, most or all")
        with self.locks.tags:  # the tag index is synced and queried as one step
            return self._filter_for(request, tags, since, until, types, today, match)

    def _filter_for(self, request: str, tags: Sequence[str], since: Optional[date], until: Optional[date],
                    types: Sequence[str], today: Optional[date], match: str) -> WorkspaceFilter:
        if request.strip():
            parsed = parse_request(request, today)
            flt = build_filter(self.library, parsed, self.tag_index, relax=match == "most", ranked=match == "ranked") \
                if parsed.keywords or parsed.folders else \
                WorkspaceFilter(since=parsed.since, until=parsed.until, formats=parsed.formats, authors=parsed.authors,
                                request=request, notes=parsed.notes, problems=parsed.problems)
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
        """``flt`` with its request encoded, when the index has file summaries to compare it with
        (tagging.summaries); without them ranking uses tags alone and nothing is encoded."""
        encoder = self.engine.encoder
        if not flt.request.strip() or not ranking.summaries_available(self.library, encoder.model_id):
            return flt
        return replace(flt, request_vector=ranking.request_vector(encoder, flt.request), vector_model=encoder.model_id)

    def workspace_row(self, s, name: str) -> Workspace:
        """The row named ``name`` (exact name first, then case-insensitive) in session ``s``;
        WorkspaceNotFound lists the names there are."""
        ws = s.scalar(select(Workspace).where(Workspace.name == name))
        if ws is None:
            ws = s.scalar(select(Workspace).where(func.lower(Workspace.name) == name.lower()))
        if ws is None:
            known = ", ".join(s.scalars(select(Workspace.name).order_by(Workspace.name)).all()) or "none yet"
            raise WorkspaceNotFound(f"no workspace named '{name}' (workspaces: {known})")
        return ws

    @property
    def data_dir(self) -> Optional[str]:
        settings = self.library.settings or getattr(self.engine, "settings", None)
        return str(settings.data_dir) if settings is not None else None

    def _info(self, s, ws: Workspace) -> WorkspaceInfo:
        n = s.scalar(select(func.count(WorkspaceFile.id)).where(WorkspaceFile.workspace_id == ws.id)) or 0
        status, last_error = ws.status, ws.last_error
        if status == WorkspaceStatus.BUILDING and not build_in_progress(self.data_dir, ws.collection):
            # Left BUILDING by a process that died mid-build; the stored status stays (no writes
            # from a read) and the next build overwrites it.
            status = WorkspaceStatus.INTERRUPTED
            last_error = last_error or INTERRUPTED_MESSAGE
        return WorkspaceInfo(ws.id, ws.name, status, ws.collection, WorkspaceFilter.from_json(ws.filter_json or {}),
                             ws.created_at, ws.built_at, ws.last_used_at, ws.archived_at, n, ws.chunk_count,
                             ws.model_id, last_error, ws.chunker_key, chunking_of(ws.chunking))

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
        flt = self.get(name).filter
        ids = {t.tag_id for g in flt.groups for t in g.tags}
        with self.library.session() as s:
            alive = set(s.scalars(select(Tag.id).where(Tag.id.in_(ids)))) if ids else set()
        gone = [t for g in flt.groups for t in g.tags if t.tag_id not in alive]
        if not gone:
            return flt
        groups = tuple(replace(g, tags=tuple(t for t in g.tags if t.tag_id in alive)) for g in flt.groups)  # keeps required
        problems = flt.problems + tuple(f"tag '{t.value}' was deleted; removed from the filter" for t in gone)
        emptied = [g.label for g in groups if not g.tags]
        problems += tuple(f"tag group '{label}' lost all its tags and was dropped" for label in emptied)
        return replace(flt, groups=tuple(g for g in groups if g.tags), problems=problems)

    def freshness(self, name: str) -> Freshness:
        """How a built workspace differs from what its request admits from the index now
        (freshness.py); up to date when it is not built or archived (nothing to compare)."""
        info = self.get(name)
        if info.built_at is None or info.archived:
            return UP_TO_DATE
        return freshness(self.library, info.id, self.current_filter(info.name))

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
              rebuild: bool = False):
        with self.lock(name):
            return builder.build_workspace(self, name, progress, cancel, rebuild)

    def search(self, name: str, query: str, k: int = 10, method: str = "hybrid", session_key: Optional[str] = None,
               source: str = "search"):
        """Without the workspace's lock: searchers are immutable, so a search reads the current
        build's while an update (which holds the lock for as long as it embeds) prepares the
        next one and swaps it in at its end. Only a search that must rebuild waits (build
        takes the lock)."""
        return search_workspace(self, name, query, k, method, session_key, source)

    def searcher(self, name: str):
        """(workspace id, its HybridSearcher, notes): opened from memory or its saved state,
        rebuilt from the cache only when that state is missing or stale (notes say why)."""
        return open_searcher(self, name)

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

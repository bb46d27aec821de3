"""Workspace rows by name or id, as plain values: what the manager, the CLI and core/relations
read without constructing ``Workspaces`` (no searcher cache, no tag index, no housekeeping).

Every function here takes an open session, so a command can read a workspace, its live filter and
its freshness in one session (``shared_session``).
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, fields, replace
from datetime import datetime
from typing import Any, Iterator, Optional

from sqlalchemy import func, select

from spar_desktop.core.library.models import Tag
from spar_desktop.core.workspaces.build_lock import build_in_progress
from spar_desktop.core.workspaces.chunkings import chunking_of
from spar_desktop.core.workspaces.errors import WorkspaceNotFound
from spar_desktop.core.workspaces.models import Workspace, WorkspaceFile, WorkspaceStatus
from spar_desktop.core.workspaces.selection import WorkspaceFilter

INTERRUPTED_MESSAGE = "build interrupted: build again to resume (finished work is kept in the cache)"


@dataclass(frozen=True, eq=False)
class WorkspaceInfo:
    id: int
    name: str
    status: str
    collection: str
    # The filter, or the JSON it was saved as, made into one on first use (``filter``): listing
    # workspaces showed only their requests, yet made every saved filter (one keyword can match
    # 16,687 folders at 1M files: 0.1 s a workspace).
    saved_filter: Any
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
    def filter(self) -> WorkspaceFilter:
        value = self.saved_filter
        if not isinstance(value, WorkspaceFilter):
            value = WorkspaceFilter.from_json(value or {})
            object.__setattr__(self, "saved_filter", value)  # made once; a race makes it twice, alike
        return value

    def _fields(self) -> tuple:
        return tuple(getattr(self, f.name) for f in fields(self) if f.name != "saved_filter") + (self.filter,)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, WorkspaceInfo) and self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash((self.id, self.name, self.status))

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
        value = self.saved_filter
        return value.request if isinstance(value, WorkspaceFilter) else str((value or {}).get("request", ""))

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


def workspace_row(s, name: str) -> Workspace:
    """The row named ``name`` (exact name first, then case-insensitive) in session ``s``;
    WorkspaceNotFound lists the names there are."""
    ws = s.scalar(select(Workspace).where(Workspace.name == name))
    if ws is None:
        ws = s.scalar(select(Workspace).where(func.lower(Workspace.name) == name.lower()))
    if ws is None:
        known = ", ".join(s.scalars(select(Workspace.name).order_by(Workspace.name)).all()) or "none yet"
        raise WorkspaceNotFound(f"no workspace named '{name}' (workspaces: {known})")
    return ws


def workspace_info(s, ws: Workspace, data_dir: Optional[str], flt: Optional[WorkspaceFilter] = None) -> WorkspaceInfo:
    """``ws`` as a frozen value; a row left BUILDING by a process that died reads INTERRUPTED.
    ``flt``: the filter just stored in ``ws``; else its JSON, made into a filter on first use."""
    n = s.scalar(select(func.count(WorkspaceFile.id)).where(WorkspaceFile.workspace_id == ws.id)) or 0
    status, last_error = ws.status, ws.last_error
    if status == WorkspaceStatus.BUILDING and not build_in_progress(data_dir, ws.collection):
        # The stored status stays (no writes from a read) and the next build overwrites it.
        status = WorkspaceStatus.INTERRUPTED
        last_error = last_error or INTERRUPTED_MESSAGE
    return WorkspaceInfo(ws.id, ws.name, status, ws.collection, flt if flt is not None else (ws.filter_json or {}),
                         ws.created_at, ws.built_at, ws.last_used_at, ws.archived_at, n, ws.chunk_count,
                         ws.model_id, last_error, ws.chunker_key, chunking_of(ws.chunking))


def find_workspace_id(library: Any, name: str) -> int:
    """The id of workspace ``name`` (WorkspaceNotFound otherwise): one query, no manager."""
    with library.session() as s:
        return workspace_row(s, name).id


def live_filter(s, flt: WorkspaceFilter) -> WorkspaceFilter:
    """``flt`` minus tags deleted since it was stored (each named in ``problems``)."""
    ids = {t.tag_id for g in flt.groups for t in g.tags}
    alive = set(s.scalars(select(Tag.id).where(Tag.id.in_(ids)))) if ids else set()
    gone = [t for g in flt.groups for t in g.tags if t.tag_id not in alive]
    if not gone:
        return flt
    groups = tuple(replace(g, tags=tuple(t for t in g.tags if t.tag_id in alive)) for g in flt.groups)  # keeps required
    problems = flt.problems + tuple(f"tag '{t.value}' was deleted; removed from the filter" for t in gone)
    emptied = [g.label for g in groups if not g.tags]
    problems += tuple(f"tag group '{label}' lost all its tags and was dropped" for label in emptied)
    return replace(flt, groups=tuple(g for g in groups if g.tags), problems=problems)


class SharedSession:
    """A Library stand-in whose ``session()`` hands out one open session: the reads of one step
    (a search's workspace, filter, freshness and saved searcher) cost one session, not ten. The
    outer ``shared_session`` commits or rolls back; the inner ones only borrow it."""

    def __init__(self, library: Any, session: Any) -> None:
        self._library = library
        self._session = session

    @property
    def settings(self) -> Any:
        return self._library.settings

    @contextmanager
    def session(self) -> Iterator[Any]:
        yield self._session

    def __getattr__(self, name: str) -> Any:
        return getattr(self._library, name)


@contextmanager
def shared_session(library: Any) -> Iterator[tuple[SharedSession, Any]]:
    """(a library whose sessions are this one, the session)."""
    with library.session() as s:
        yield SharedSession(library, s), s

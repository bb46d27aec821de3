"""Background ops for workspaces, search and chat threads (no Qt): module-level functions the
TaskRunner runs on its pool, each returning a frozen value.

``WorkspaceService`` is the window's one ``Workspaces`` manager (it owns the lazily loaded
encoder and the Chroma client) plus the locks that keep worker ops from colliding: one per
workspace (a build and a search of the same collection must not interleave) and one for the tag
vocabulary index (previews sync it). The UI thread only holds the service as an opaque handle
and passes it to these ops; it never calls the manager itself.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Optional

from spar_desktop.core.library.database import Library
from spar_desktop.core.progress import CancelToken, Progress, ProgressCallback, check

log = logging.getLogger(__name__)

MAX_HITS = 20


@dataclass(frozen=True)
class WorkspaceRow:
    """What the panel shows of one workspace."""

    id: int
    name: str
    status: str  # draft | building | active | archived | error
    file_count: int
    chunk_count: int
    request: str
    created_at: datetime
    built_at: Optional[datetime]
    archived_at: Optional[datetime]
    last_error: Optional[str]

    @classmethod
    def from_info(cls, info: Any) -> "WorkspaceRow":
        return cls(info.id, info.name, info.status, info.file_count, info.chunk_count, info.filter.request,
                   info.created_at, info.built_at, info.archived_at, info.last_error)

    @property
    def searchable(self) -> bool:
        return self.status == "active"


@dataclass(frozen=True)
class BuildSummary:
    name: str
    admitted: int
    ready: int
    chunks: int
    embedded_chunks: int
    reused_documents: int
    problems: tuple[tuple[str, str, str], ...]  # (path, state, message)
    notes: tuple[str, ...]
    cancelled: bool
    seconds: float
    chunking: str = ""  # how the files were cut and scored, chosen from their lengths

    @classmethod
    def from_report(cls, r: Any) -> "BuildSummary":
        return cls(r.name, r.admitted, r.ready, r.chunks, r.embedded_chunks, r.reused_documents,
                   tuple(tuple(p) for p in r.problems), tuple(r.notes), r.cancelled, r.seconds,
                   getattr(r, "chunking", ""))

    def describe(self) -> str:
        if self.cancelled:
            return f"Build of '{self.name}' stopped; finished files are kept and the next build resumes"
        text = (f"'{self.name}' is ready: {self.ready} of {self.admitted} files, {self.chunks:,} passages "
                f"({self.embedded_chunks:,} newly embedded) in {self.seconds:.1f} s")
        if self.problems:
            text += f"; {len(self.problems)} file{'s' if len(self.problems) != 1 else ''} could not be used"
        return text


@dataclass(frozen=True)
class ImportSummary:
    name: str
    files_total: int
    matched: int
    not_found: tuple[str, ...]
    threads: int
    outside_roots: tuple[str, ...] = ()  # in the index, but not under a folder indexed here: dropped
    renamed_from: Optional[str] = None

    def describe(self) -> str:
        text = f"Imported '{self.name}': {self.matched} of {self.files_total} files found in this index"
        if self.threads:
            text += f", {self.threads} chat thread{'s' if self.threads != 1 else ''}"
        dropped = []
        if self.not_found:
            dropped.append(f"{len(self.not_found)} not in this index")
        if self.outside_roots:
            dropped.append(f"{len(self.outside_roots)} outside the folders indexed here")
        if dropped:
            text += f"; dropped {' and '.join(dropped)}"
        if self.renamed_from:
            text += f" (the file named it '{self.renamed_from}')"
        return text + ". Build it to search."


class WorkspaceService:
    def __init__(self, manager: Any) -> None:
        self.manager = manager
        self.library: Library = manager.library
        self.tag_lock = threading.RLock()
        self._locks: dict[str, threading.RLock] = {}
        self._guard = threading.Lock()

    def lock(self, name: str) -> threading.RLock:
        with self._guard:
            return self._locks.setdefault(name.casefold(), threading.RLock())

    def locked_manager(self) -> "LockedManager":
        return LockedManager(self)


class LockedManager:
    """The manager as ChatSession sees it: its retrieval (``search``, run in asyncio's worker
    thread) takes the same per-workspace lock as the panel's builds and searches."""

    def __init__(self, service: WorkspaceService) -> None:
        self._service = service
        self.library = service.library

    def search(self, name: str, *args: Any, **kw: Any) -> Any:
        with self._service.lock(name):
            return self._service.manager.search(name, *args, **kw)

    def __getattr__(self, item: str) -> Any:
        return getattr(self._service.manager, item)


# ---------------------------------------------------------------------------- service
def open_service(library: Library, progress: ProgressCallback, cancel: CancelToken) -> WorkspaceService:
    """Create the manager (cheap: the encoder loads on first use) and import the chat stack here
    so the UI thread never pays for importing ollama/httpx/pydantic."""
    import importlib

    from spar_desktop.core.workspaces.manager import Workspaces

    importlib.import_module("spar_desktop.core.chat.session")  # ~2 s of imports, here rather than on the UI thread

    return WorkspaceService(Workspaces(library))


def warm_up(service: WorkspaceService, progress: ProgressCallback, cancel: CancelToken) -> bool:
    """Load the encoder and sync the tag vocabulary before the user needs them (seconds)."""
    progress(Progress(0, 2, "loading the embedding model"))
    service.manager.engine.encoder
    from spar_desktop.ui.runtime import freeze_long_lived

    freeze_long_lived()
    check(cancel)
    progress(Progress(1, 2, "indexing the tag vocabulary"))
    with service.tag_lock:
        service.manager.tag_index
    progress(Progress(2, 2, "ready"))
    return True


# ---------------------------------------------------------------------------- workspaces
def list_workspaces(service: WorkspaceService, progress: ProgressCallback, cancel: CancelToken) -> tuple[WorkspaceRow, ...]:
    return tuple(WorkspaceRow.from_info(i) for i in service.manager.list())


def preview(service: WorkspaceService, request: str, progress: ProgressCallback, cancel: CancelToken):
    """Request → explained filter, without saving anything."""
    from spar_desktop.core.workspaces.selection import explain

    progress(Progress(0, None, "matching keywords to tags"))
    with service.tag_lock:
        flt = service.manager.filter_for(request)
    check(cancel)
    return explain(service.library, flt)


def explain_filter(service: WorkspaceService, flt: Any, progress: ProgressCallback, cancel: CancelToken):
    from spar_desktop.core.workspaces.selection import explain

    return explain(service.library, flt)


def find_tags(service: WorkspaceService, text: str, progress: ProgressCallback, cancel: CancelToken) -> tuple:
    from spar_desktop.core.workspaces.selection import tag_choice

    return tuple(tag_choice(service.library, text))


def workspace_explanation(service: WorkspaceService, name: str, progress: ProgressCallback, cancel: CancelToken):
    return service.manager.explain(name)


def create_workspace(service: WorkspaceService, name: str, flt: Any, progress: ProgressCallback,
                     cancel: CancelToken) -> WorkspaceRow:
    """Create ``name`` with exactly the filter the user edited."""
    info, _ = service.manager.create(name, filter=flt)
    return WorkspaceRow.from_info(info)


def save_filter(service: WorkspaceService, name: str, flt: Any, progress: ProgressCallback, cancel: CancelToken):
    with service.lock(name):
        return service.manager.set_filter(name, flt)


def build_workspace(service: WorkspaceService, name: str, progress: ProgressCallback, cancel: CancelToken) -> BuildSummary:
    with service.lock(name):
        return BuildSummary.from_report(service.manager.build(name, progress, cancel))


def archive_workspace(service: WorkspaceService, name: str, progress: ProgressCallback, cancel: CancelToken) -> WorkspaceRow:
    with service.lock(name):
        return WorkspaceRow.from_info(service.manager.archive(name))


def delete_workspace(service: WorkspaceService, name: str, progress: ProgressCallback, cancel: CancelToken) -> str:
    with service.lock(name):
        service.manager.delete(name)
    return name


def export_workspace(service: WorkspaceService, name: str, path: str, progress: ProgressCallback,
                     cancel: CancelToken) -> str:
    from spar_desktop.core.workspaces.sparws import export_workspace as export

    with service.lock(name):
        return str(export(service.manager, name, path))


def import_workspace(service: WorkspaceService, path: str, progress: ProgressCallback, cancel: CancelToken) -> ImportSummary:
    from spar_desktop.core.workspaces.sparws import import_workspace as do_import

    r = do_import(service.manager, path)
    return ImportSummary(r.name, r.files_total, r.matched_by_hash + r.matched_by_path, tuple(r.not_found), r.threads,
                         tuple(r.outside_roots), r.renamed_from)


# ---------------------------------------------------------------------------- search
def search(service: WorkspaceService, name: str, query: str, k: int, progress: ProgressCallback, cancel: CancelToken):
    progress(Progress(0, None, f"searching {name}"))
    with service.lock(name):
        check(cancel)
        return service.manager.search(name, query, k)


def mark_opened(service: WorkspaceService, log_id: int, file_id: int, progress: ProgressCallback,
                cancel: CancelToken) -> None:
    from spar_desktop.core.workspaces.search import mark_opened as mark

    mark(service.manager, log_id, file_id)


# ---------------------------------------------------------------------------- learning (ERM)
def learn(service: WorkspaceService, name: str, query: str, chunks: tuple, success: bool, progress: ProgressCallback,
          cancel: CancelToken, *, config: Any = None, helpers: Any = None) -> Any:
    """Feedback for the evolving keys: ``chunks`` ('<file id>#<chunk id>') confirmed for ``query``.
    Under the workspace lock: closing a round rewrites the collection and swaps the searcher,
    which must not interleave with a build or search of it. Returns the FeedbackOutcome."""
    from spar_desktop.core.memory import ERMConfig
    from spar_desktop.core.memory.service import record_feedback
    from spar_desktop.core.memory.units import llm_units

    config = config or ERMConfig()
    # Ollama's units first, outside the lock: a generation takes seconds and must not hold up
    # a search of this workspace. None (or a failed generation) falls back to local feedback.
    units = []
    if helpers is not None and success:
        try:
            units = llm_units(helpers, query, config)
        except Exception as exc:  # noqa: BLE001 - any LLM trouble: learn from local feedback instead
            log.info("no LLM expansion units (%s); using local feedback", exc)
    check(cancel)
    with service.lock(name):
        return record_feedback(service.manager, name, query, list(chunks), success, config=config, units=units)


def learning_stats(service: WorkspaceService, name: str, progress: ProgressCallback, cancel: CancelToken) -> Any:
    """MemoryStats of ``name`` (database reads only: no lock)."""
    from spar_desktop.core.memory.service import memory_stats

    return memory_stats(service.manager, name)


def reset_learning(service: WorkspaceService, name: str, progress: ProgressCallback, cancel: CancelToken) -> Any:
    """Original keys back, exactly; returns the stats afterwards."""
    from spar_desktop.core.memory.service import memory_stats, reset_memory

    with service.lock(name):
        reset_memory(service.manager, name)
    return memory_stats(service.manager, name)


def parse_types(text: str) -> tuple[str, ...]:
    """'PDF, .docx md' → ('pdf', 'docx', 'md')."""
    parts = text.replace(",", " ").replace(";", " ").split()
    return tuple(dict.fromkeys(p.lower().lstrip(".") for p in parts if p.strip(".")))


def date_text(d: Optional[date]) -> str:
    return d.isoformat() if d else "…"

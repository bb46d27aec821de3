"""Background ops for workspaces, search and learning: one-line calls of the core (no Qt), each
returning the core's frozen value or report (WorkspaceInfo, WorkspaceBuildReport,
WorkspaceImportReport, Explanation, WorkspaceResults, Freshness, FeedbackOutcome, MemoryStats).

The locks that keep a build, a search and a memory round of one workspace apart are the core's
(``Workspaces`` takes them: core/workspaces/locks.py), so the CLI and chat's retrieval get the
same ones. ``WorkspaceService`` is only the opaque handle the UI thread passes to these ops.

The UI thread imports this module at start-up, before the window shows: the workspace, chat and
memory modules (SQLAlchemy models, then numpy and the retrieval engine) are imported inside the
ops, on a worker (open_service and runtime.preload_in_background load them early there).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

from spar_desktop.core.library.database import Library
from spar_desktop.core.progress import CancelToken, Progress, ProgressCallback, check

if TYPE_CHECKING:  # types only: imported on a worker (see above)
    from spar_desktop.core.memory.config import ERMConfig
    from spar_desktop.core.memory.feedback import FeedbackOutcome, MemoryStats
    from spar_desktop.core.workspaces.builder import WorkspaceBuildReport
    from spar_desktop.core.workspaces.freshness import Freshness
    from spar_desktop.core.workspaces.manager import WorkspaceInfo, Workspaces
    from spar_desktop.core.workspaces.sparws import WorkspaceImportReport

MAX_HITS = 20


@dataclass(frozen=True)
class WorkspaceService:
    """The window's one ``Workspaces`` manager (it owns the encoder and the Chroma client)."""

    manager: Workspaces

    @property
    def library(self) -> Library:
        return self.manager.library


# ---------------------------------------------------------------------------- service
def open_service(library: Library, progress: ProgressCallback, cancel: CancelToken) -> WorkspaceService:
    """Create the manager (cheap: the encoder loads on first use) and import the chat stack here
    so the UI thread never pays for importing ollama/httpx/pydantic (~2 s)."""
    from spar_desktop.core.workspaces.manager import Workspaces

    importlib.import_module("spar_desktop.core.chat.session")
    manager = Workspaces(library)
    manager.remove_orphaned_states()  # once, as the app opens its workspaces (not per construction)
    return WorkspaceService(manager)


def release_store(settings: Any) -> None:
    """The window closed with no task left running: the data dir's engine closes (its vector-store
    helper stops, the embedding cache is closed), leaving the data dir closed, not just abandoned."""
    from spar_desktop.core.workspaces.engine import release_engine

    release_engine(settings)


def warm_up(service: WorkspaceService, progress: ProgressCallback, cancel: CancelToken) -> bool:
    """Load the encoder and sync the tag vocabulary before the user needs them (seconds)."""
    from spar_desktop.ui.base.runtime import freeze_long_lived

    progress(Progress(0, 2, "loading the embedding model"))
    service.manager.engine.encoder
    freeze_long_lived()
    check(cancel)
    progress(Progress(1, 2, "indexing the tag vocabulary"))
    service.manager.tag_index
    progress(Progress(2, 2, "ready"))
    return True


def prepare_vocabulary(service: WorkspaceService, progress: ProgressCallback, cancel: CancelToken) -> tuple[int, int]:
    """After a scan or a tag edit: embed the tags not embedded yet (only texts the vocabulary
    does not hold are encoded); cancellable between batches, and a cancelled job resumes where it
    stopped. Returns (tags brought up to date, tags removed).

    At normal priority, on the runner's worker: it used to run in a nice-10 thread, which under
    load waited for a CPU while it held the GIL, and the UI thread waited for it (0.7-0.8 s window
    stalls at 1M files while the user scrolled, the job's thread 0.69-0.75 s in the run queue:
    benchmarks/app_at_scale.py --early --probe)."""
    return service.manager.sync_tag_index(progress, cancel).last_sync


# ---------------------------------------------------------------------------- workspaces
def list_workspaces(service: WorkspaceService, progress: ProgressCallback, cancel: CancelToken) -> tuple[WorkspaceInfo, ...]:
    return tuple(service.manager.list())


def preview(service: WorkspaceService, request: str, progress: ProgressCallback, cancel: CancelToken):
    """Request → explained filter (rules, and the model when it answers), without saving anything."""
    progress(Progress(0, None, "reading the request and matching keywords to tags"))
    return service.manager.preview(request, progress, cancel)


def explain_filter(service: WorkspaceService, flt: Any, progress: ProgressCallback, cancel: CancelToken):
    return service.manager.explain_filter(flt, progress, cancel)


def find_tags(service: WorkspaceService, text: str, progress: ProgressCallback, cancel: CancelToken) -> tuple:
    from spar_desktop.core.workspaces.selection import tag_choice

    return tuple(tag_choice(service.library, text))


def workspace_explanation(service: WorkspaceService, name: str, progress: ProgressCallback, cancel: CancelToken):
    return service.manager.explain(name)


def create_workspace(service: WorkspaceService, name: str, flt: Any, progress: ProgressCallback,
                     cancel: CancelToken, chunking: Optional[str] = None) -> WorkspaceInfo:
    """Create ``name`` with exactly the filter the user edited (and the chunking chosen)."""
    return service.manager.create(name, filter=flt, chunking=chunking)[0]


def save_filter(service: WorkspaceService, name: str, flt: Any, progress: ProgressCallback, cancel: CancelToken):
    return service.manager.set_filter(name, flt)


def build_workspace(service: WorkspaceService, name: str, progress: ProgressCallback,
                    cancel: CancelToken) -> WorkspaceBuildReport:
    return service.manager.build(name, progress, cancel)


def update_in_background(service: WorkspaceService, name: str, progress: ProgressCallback,
                         cancel: CancelToken) -> WorkspaceBuildReport:
    """An automatic update: the build on a thread at nice 10, so the window and a scan keep the CPU."""
    from spar_desktop.core.in_thread import in_low_priority_thread

    return in_low_priority_thread(lambda: service.manager.build(name, progress, cancel), f"update {name}")


def workspace_freshness(service: WorkspaceService, name: str, progress: ProgressCallback,
                        cancel: CancelToken) -> Freshness:
    """What changed in the index under a built workspace (SQL over its rows and its filter)."""
    return service.manager.freshness(name)


def archive_idle(service: WorkspaceService, progress: ProgressCallback, cancel: CancelToken) -> tuple[str, ...]:
    """Archive the workspaces unused for settings.workspace_idle_archive_days; their names."""
    return tuple(service.manager.archive_idle())


def archive_workspace(service: WorkspaceService, name: str, progress: ProgressCallback, cancel: CancelToken) -> WorkspaceInfo:
    return service.manager.archive(name)


def delete_workspace(service: WorkspaceService, name: str, progress: ProgressCallback, cancel: CancelToken) -> str:
    service.manager.delete(name)
    return name


def export_workspace(service: WorkspaceService, name: str, path: str, progress: ProgressCallback,
                     cancel: CancelToken) -> str:
    from spar_desktop.core.chat import share
    from spar_desktop.core.workspaces.sparws import export_workspace as export

    return str(export(service.manager, name, path, threads=share))


def import_workspace(service: WorkspaceService, path: str, progress: ProgressCallback,
                     cancel: CancelToken) -> WorkspaceImportReport:
    from spar_desktop.core.chat import share
    from spar_desktop.core.workspaces.sparws import import_workspace as do_import

    return do_import(service.manager, path, threads=share)


# ---------------------------------------------------------------------------- search
def search(service: WorkspaceService, name: str, query: str, k: int, progress: ProgressCallback, cancel: CancelToken):
    progress(Progress(0, None, f"searching {name}"))
    return service.manager.search(name, query, k)


def mark_opened(service: WorkspaceService, log_id: int, file_id: int, progress: ProgressCallback,
                cancel: CancelToken) -> None:
    from spar_desktop.core.workspaces.search import mark_opened as mark_hit_opened

    mark_hit_opened(service.library, log_id, file_id)


# ---------------------------------------------------------------------------- learning (ERM)
def learn(service: WorkspaceService, name: str, query: str, chunks: tuple, success: bool, progress: ProgressCallback,
          cancel: CancelToken, *, config: Optional[ERMConfig] = None, helpers: Any = None) -> FeedbackOutcome:
    """Feedback for the evolving keys: ``chunks`` ('<file id>#<chunk id>') confirmed for ``query``;
    Ollama's expansion units through ``helpers`` when given, else local feedback (the core decides)."""
    from spar_desktop.core.memory.config import ERMConfig
    from spar_desktop.core.memory.feedback import record_feedback

    return record_feedback(service.manager, name, query, list(chunks), success, helpers=helpers,
                           config=config or ERMConfig())


def learning_stats(service: WorkspaceService, name: str, progress: ProgressCallback, cancel: CancelToken) -> MemoryStats:
    from spar_desktop.core.memory.feedback import memory_stats

    return memory_stats(service.manager, name)


def reset_learning(service: WorkspaceService, name: str, progress: ProgressCallback, cancel: CancelToken) -> MemoryStats:
    """Original keys back, exactly; returns the stats afterwards."""
    from spar_desktop.core.memory.feedback import memory_stats, reset_memory

    reset_memory(service.manager, name)
    return memory_stats(service.manager, name)


def parse_types(text: str) -> tuple[str, ...]:
    """'PDF, .docx md' → ('pdf', 'docx', 'md')."""
    parts = text.replace(",", " ").replace(";", " ").split()
    return tuple(dict.fromkeys(p.lower().lstrip(".") for p in parts if p.strip(".")))

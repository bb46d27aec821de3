"""Everything the window asks of workspaces, as tasks on the TaskRunner.

Owns the window's one ``WorkspaceService`` (created in a background task; the encoder inside it
loads on first use, or early through ``warm_up``), the list of workspaces, which one is current
(it scopes search and chat), builds with progress and cancel, and latest-wins searches.
Widgets only see frozen values through its signals. The list reloads when the task runner
announces that workspaces changed (``TaskRunner.changed``), whichever operation changed them.

Freshness: the current workspace is compared with what its filter admits from the index whenever
it is selected and whenever files, tags or workspaces change (a watcher's scan, a tag edit, a
build that ended); with ``Settings.workspace_updates == "auto"`` a stale one is updated in the
background (search and chat keep answering from the previous build until the new one lands).
At start, workspaces unused for ``workspace_idle_archive_days`` are archived.
"""

from __future__ import annotations

import logging
from functools import partial
from typing import TYPE_CHECKING, Any, Callable, Optional

from PySide6.QtCore import QObject, Signal

from spar_desktop.core.changes import Changes
from spar_desktop.core.library.database import Library
from spar_desktop.core.progress import Progress
from spar_desktop.ui.base.tasks import TaskError, TaskHandle, TaskRunner
from spar_desktop.ui.workspaces import ops

if TYPE_CHECKING:  # types only: the workspace modules load on a worker (workspaces/ops.py)
    from spar_desktop.core.workspaces.builder import WorkspaceBuildReport
    from spar_desktop.core.workspaces.freshness import Freshness
    from spar_desktop.core.workspaces.manager import WorkspaceInfo
    from spar_desktop.core.workspaces.sparws import WorkspaceImportReport

WORKSPACES = Changes(workspaces=True)
VOCABULARY_JOB = "tag-vocabulary"  # the background vocabulary job's task key: one at a time, latest wins

log = logging.getLogger(__name__)


def build_key(name: str) -> str:
    return f"ws-build:{name.casefold()}"


class WorkspaceController(QObject):
    ready = Signal()  # the service exists: workspace actions can start
    workspaces_loaded = Signal(object)  # tuple[WorkspaceInfo, ...]
    current_changed = Signal(object)  # Optional[WorkspaceInfo]
    build_progress = Signal(str, object)  # name, Progress
    build_finished = Signal(str, object)  # name, Optional[WorkspaceBuildReport] (None: failed)
    search_started = Signal(str)  # query
    search_finished = Signal(object)  # WorkspaceResults
    search_failed = Signal(str)
    learning_loaded = Signal(str, object)  # workspace name, MemoryStats
    freshness_loaded = Signal(str, object)  # workspace name, Freshness (the current workspace's)
    idle_archived = Signal(object)  # tuple[str, ...]: archived at start for being unused
    status = Signal(str)
    error = Signal(str, str)  # message, details

    def __init__(self, library: Library, runner: TaskRunner, parent: Optional[QObject] = None) -> None:
        super().__init__(parent)
        self.library = library
        self.runner = runner
        self.service: Optional[ops.WorkspaceService] = None
        self.rows: tuple[WorkspaceInfo, ...] = ()
        self.current: Optional[WorkspaceInfo] = None
        self.last_results = None  # WorkspaceResults of the latest search
        self._warm: Optional[TaskHandle] = None
        # ERMConfig for feedback (None: the core default); tests use a small batch to close rounds.
        self.erm_config: Any = None
        self._learned_hits: set[tuple[Optional[int], str]] = set()  # (log id, chunk key) already credited
        self._freshness: dict[str, Freshness] = {}  # casefolded name -> last computed
        self.archived_idle: set[str] = set()  # casefolded names archive_idle archived this session
        # Counts the announcements of file or tag changes: an automatic update is tried once per
        # state of the index, so a build that fails (or leaves it stale) never restarts in a loop.
        self._index_generation = 0
        self._auto_tried: dict[str, int] = {}  # casefolded name -> generation of its last auto update
        self._busy: dict[str, int] = {}  # casefolded name -> running archive/delete/filter saves
        runner.changed.connect(self._changed)

    def _changed(self, changes: Changes) -> None:
        if changes.workspaces:
            self.refresh()  # a current row that changed recomputes its freshness again (_loaded)
        if changes.files or changes.tags:
            self._index_generation += 1
            self.prepare_vocabulary()
        if changes.files or changes.tags or changes.workspaces:
            self.refresh_freshness()  # supersedes one started before this change (latest wins)

    # ------------------------------------------------------------------ service
    def start(self) -> None:
        self.runner.run(partial(ops.open_service, self.library), title="Opening workspaces", visible=False,
                        on_success=self._opened, on_failure=self._failed)

    def _opened(self, service: ops.WorkspaceService) -> None:
        self.service = service
        self.ready.emit()
        self.prepare_vocabulary()  # tags a CLI scan added, or a data dir from before the vector file
        self.archive_idle()  # before the list loads, so none is auto-updated just to be archived

    def archive_idle(self) -> None:
        """Archive the workspaces unused for settings.workspace_idle_archive_days; then reload."""
        if self.service is not None:
            self.runner.run(partial(ops.archive_idle, self.service), title="Archiving unused workspaces",
                            visible=False, on_success=self._archived_idle, on_failure=self._archive_idle_failed)

    def _archived_idle(self, names: tuple[str, ...]) -> None:
        self.archived_idle.update(n.casefold() for n in names)
        if names:
            days = self.settings_value("workspace_idle_archive_days", 30)
            self.status.emit(f"Archived {', '.join(repr(n) for n in names)}: unused for {days} days "
                             "(Reactivate brings a workspace up to date with the index)")
            self.idle_archived.emit(names)
        self.refresh()

    def _archive_idle_failed(self, err: TaskError) -> None:
        log.warning("archiving idle workspaces failed: %s\n%s", err.message, err.details)
        self.refresh()

    def prepare_vocabulary(self) -> Optional[TaskHandle]:
        """Embed new tags in the background (after a scan, a tag edit, at start), so that a
        request finds the vocabulary ready; a newer job replaces a running one (latest wins),
        which keeps the batches it finished."""
        if self.service is None:
            return None
        return self.runner.run(partial(ops.prepare_vocabulary, self.service), title="Preparing the tag vocabulary",
                               key=VOCABULARY_JOB, on_failure=self._vocabulary_failed, background=True)

    def _vocabulary_failed(self, err: TaskError) -> None:
        """Not the user's action: logged and said in the status bar; a request embeds what is left."""
        log.warning("%s failed: %s\n%s", err.title, err.message, err.details)
        self.status.emit(f"{err.title} failed: {err.message}")

    def warm_up(self) -> None:
        """Load the encoder and tag index in the background (once): the first preview, build or
        search would otherwise wait for it."""
        if self._warm is None and self.service is not None:
            self._warm = self.runner.run(partial(ops.warm_up, self.service), title="Loading the embedding model",
                                         key="ws-warm", on_failure=self._failed)

    # ------------------------------------------------------------------ list / current
    def refresh(self) -> None:
        if self.service is None:
            return
        self.runner.run(partial(ops.list_workspaces, self.service), title="Loading workspaces", key="ws-list",
                        visible=False, on_success=self._loaded, on_failure=self._failed)

    def _loaded(self, rows: tuple[WorkspaceInfo, ...]) -> None:
        self.rows = rows
        self.workspaces_loaded.emit(rows)
        if self.current is not None:
            row = self.row(self.current.name)
            if row != self.current:
                self.current = row
                self.current_changed.emit(row)
                self.refresh_learning()  # built, archived or reactivated: which keys count changed
                self.refresh_freshness()  # built, archived or its filter saved: compare again

    def row(self, name: Optional[str]) -> Optional[WorkspaceInfo]:
        if name is None:
            return None
        return next((r for r in self.rows if r.name.casefold() == name.casefold()), None)

    def select(self, name: Optional[str]) -> None:
        row = self.row(name)
        if row == self.current:
            return
        self.current = row
        self.last_results = None
        self.current_changed.emit(row)
        self.refresh_learning()
        self.refresh_freshness()

    # ------------------------------------------------------------------ lifecycle
    def is_building(self, name: str) -> bool:
        return self.runner.is_running(build_key(name))

    def build(self, name: str, title: Optional[str] = None, background: bool = False) -> Optional[TaskHandle]:
        """Build ``name``, or update it when it was built (only what changed is read and embedded);
        ``background``: an update nobody asked for, run at low priority."""
        if self.service is None or self.is_building(name):
            return None
        row = self.row(name)
        title = title or (f"Updating {name}" if row is not None and row.built_at else f"Building {name}")
        self.archived_idle.discard(name.casefold())  # reactivated: a later archive is the user's

        def done(report: WorkspaceBuildReport) -> None:
            if not report.cancelled:
                self._freshness.pop(name.casefold(), None)  # caught up; recomputed once the list reloads
            self.status.emit(report.describe())
            for note in report.notes:
                log.info("build note (%s): %s", name, note)
            self.build_finished.emit(name, report)

        def failed(err: TaskError) -> None:
            self._failed(err)
            self.build_finished.emit(name, None)

        def cancelled() -> None:
            self.status.emit(f"Build of '{name}' cancelled")
            self.build_finished.emit(name, None)

        # However it ends, the row's status changed (WORKSPACES reloads the list).
        op = ops.update_in_background if background else ops.build_workspace
        handle = self.runner.run(partial(op, self.service, name), title=title,
                                 key=build_key(name), on_progress=lambda p: self.build_progress.emit(name, p),
                                 on_success=done, on_failure=failed, on_cancelled=cancelled, changes=WORKSPACES,
                                 background=background)
        self.build_progress.emit(name, Progress(0, None, "starting"))
        self.refresh()  # the row now says 'building'
        return handle

    # ------------------------------------------------------------------ freshness
    def settings_value(self, field: str, default: Any) -> Any:
        """The library's live setting (Settings ▸ Save replaces library.settings)."""
        return getattr(self.library.settings, field, default) if self.library.settings is not None else default

    def freshness(self, name: str) -> Optional[Freshness]:
        """The last freshness computed for ``name`` (None: not known yet, or nothing to compare)."""
        return self._freshness.get(name.casefold())

    def refresh_freshness(self) -> None:
        """Compare the current workspace with the index in the background; latest wins."""
        row = self.current
        if self.service is None or row is None:
            return
        if row.built_at is None or row.archived:
            self._freshness.pop(row.name.casefold(), None)  # nothing built to compare
            return
        name = row.name

        def done(fresh: Freshness) -> None:
            if self.current is None or self.current.name != name:
                return  # the answer for a workspace no longer shown
            if fresh.stale:
                self._freshness[name.casefold()] = fresh
            else:
                self._freshness.pop(name.casefold(), None)
            self.freshness_loaded.emit(name, fresh)
            self._maybe_update(name, fresh)

        self.runner.run(partial(ops.workspace_freshness, self.service, name),
                        title=f"Checking {name} against the index", key="ws-freshness", visible=False, on_success=done,
                        on_failure=lambda err: log.info("freshness of '%s': %s", name, err.message))

    def _maybe_update(self, name: str, fresh: Freshness) -> None:
        """'auto': update a stale workspace in the background, once per state of the index."""
        if not fresh.stale or self.settings_value("workspace_updates", "auto") != "auto" or self.is_building(name):
            return
        if self._busy.get(name.casefold()):
            return  # being archived, deleted or re-filtered: its end recomputes the freshness
        if self._auto_tried.get(name.casefold()) == self._index_generation:
            return  # this state was tried already (failed, cancelled, or still stale): wait for a change
        self._auto_tried[name.casefold()] = self._index_generation
        log.info("updating '%s' in the background: %s", name, fresh.counts())
        self.build(name, title=f"Updating {name}", background=True)

    def cancel_build(self, name: str) -> None:
        self.runner.cancel(build_key(name))

    def reactivate(self, name: str) -> Optional[TaskHandle]:
        return self.build(name, title=f"Reactivating {name}")

    def archive(self, name: str) -> Optional[TaskHandle]:
        return self._changing(name, self._simple(
            partial(ops.archive_workspace, self.service, name), f"Archiving {name}",
            f"Archived '{name}': its vectors are dropped; filter, files, threads and history are kept"))

    def delete(self, name: str) -> Optional[TaskHandle]:
        if self.current is not None and self.current.name == name:
            self.select(None)
        return self._changing(name, self._simple(partial(ops.delete_workspace, self.service, name), f"Deleting {name}",
                                                 f"Deleted workspace '{name}' (your files are untouched)"))

    def export(self, name: str, path: str) -> Optional[TaskHandle]:
        return self._simple(partial(ops.export_workspace, self.service, name, path), f"Exporting {name}",
                            f"Exported '{name}' to {path}")

    def import_file(self, path: str) -> Optional[TaskHandle]:
        if self.service is None:
            return None

        def done(report: WorkspaceImportReport) -> None:
            self.status.emit(report.describe())
            self.select_later(report.name)

        return self.runner.run(partial(ops.import_workspace, self.service, path), title="Importing a workspace",
                               on_success=done, on_failure=self._failed)

    def save_filter(self, name: str, flt, on_saved: Optional[Callable] = None) -> Optional[TaskHandle]:
        def done(explanation) -> None:
            built = self.row(name) is not None and self.row(name).built_at is not None
            follows = built and self.settings_value("workspace_updates", "auto") == "auto"
            self.status.emit(f"Saved the filter of '{name}': {explanation.admitted} files"
                             + ("" if follows else "; build to update it"))
            if on_saved is not None:
                on_saved(explanation)

        return self._changing(name, self.runner.run(
            partial(ops.save_filter, self.service, name, flt), title=f"Saving the filter of {name}",
            on_success=done, on_failure=self._failed, changes=WORKSPACES))

    def _changing(self, name: str, handle: Optional[TaskHandle]) -> Optional[TaskHandle]:
        """Mark ``name`` busy while ``handle`` (archive, delete, filter) runs: a freshness computed
        before it must not start an update (its end announces workspaces: freshness is recomputed)."""
        if handle is None or handle.done:
            return handle
        key = name.casefold()
        self._busy[key] = self._busy.get(key, 0) + 1

        def ended() -> None:  # before the task's changes are announced (TaskRunner._deliver)
            left = self._busy.pop(key, 1) - 1
            if left:
                self._busy[key] = left

        handle.finished.connect(ended)
        return handle

    def select_later(self, name: str) -> None:
        """Select ``name`` once the list that contains it has loaded."""
        def loaded(_rows) -> None:
            if self.row(name) is not None:
                self.workspaces_loaded.disconnect(loaded)
                self.select(name)
        self.workspaces_loaded.connect(loaded)
        self.refresh()

    def _simple(self, op, title: str, message: str) -> Optional[TaskHandle]:
        if self.service is None:
            return None

        return self.runner.run(op, title=title, on_success=lambda _value: self.status.emit(message),
                               on_failure=self._failed, changes=WORKSPACES)

    # ------------------------------------------------------------------ search
    def search(self, query: str, k: int = ops.MAX_HITS) -> Optional[TaskHandle]:
        query = query.strip()
        row = self.current
        if self.service is None or row is None or not query:
            return None
        self.search_started.emit(query)

        def done(results) -> None:
            self.last_results = results
            self.search_finished.emit(results)

        def failed(err: TaskError) -> None:
            log.info("search failed: %s", err.message)
            self.search_failed.emit(err.message)

        return self.runner.run(partial(ops.search, self.service, row.name, query, k), title=f"Searching {row.name}",
                               key="search", on_success=done, on_failure=failed)

    def mark_opened(self, log_id: Optional[int], file_id: int) -> None:
        if self.service is not None and log_id is not None:
            self.runner.run(partial(ops.mark_opened, self.service, log_id, file_id), title="Recording the opened result",
                            visible=False, on_failure=lambda err: log.info("mark_opened failed: %s", err.message))

    # ------------------------------------------------------------------ learning (evolving keys)
    def learn(self, workspace: str, query: str, chunks: tuple[str, ...], success: bool, helpers: Any = None) -> None:
        """Feed one validated (or failed) query to the workspace's memory in the background.
        Never an error dialog: feedback that teaches nothing is logged, evolution is announced."""
        if self.service is None or not chunks:
            return

        def done(outcome: Any) -> None:
            if not outcome.accepted:
                log.info("feedback for '%s' not learned: %s", workspace, outcome.reason)
            elif outcome.evolved_keys:
                self.status.emit(f"Search in '{workspace}' learned from your feedback: "
                                 f"{outcome.evolved_keys} passage keys evolved")
            self.refresh_learning(workspace)

        def failed(err: TaskError) -> None:
            log.warning("learning from feedback failed: %s\n%s", err.message, err.details)
            self.status.emit("Could not learn from that feedback (details in the log)")

        self.runner.run(partial(ops.learn, self.service, workspace, query, tuple(chunks), success,
                                config=self.erm_config, helpers=helpers),
                        title="Learning from feedback", visible=False, on_success=done, on_failure=failed)

    def learn_from_hit(self, results: Any, hit: Any) -> None:
        """An opened search result confirms its chunk for the query (once per search)."""
        if results is None or not results.query.strip() or not hit.chunk_id:
            return  # no chunk: a file Cover my session added by its cluster, shown by its opening
        key = f"{hit.file_id}#{hit.chunk_id}"
        if (results.log_id, key) in self._learned_hits:
            return
        self._learned_hits.add((results.log_id, key))
        self.learn(results.workspace, results.query, (key,), True)

    def refresh_learning(self, name: Optional[str] = None) -> None:
        """Reload the learning stats of ``name`` (default: the current workspace)."""
        name = name or (self.current.name if self.current is not None else None)
        if self.service is None or name is None:
            return
        self.runner.run(partial(ops.learning_stats, self.service, name), title="Reading learning stats",
                        key=f"ws-learning:{name.casefold()}", visible=False,
                        on_success=lambda stats: self.learning_loaded.emit(name, stats),
                        on_failure=lambda err: log.info("learning stats of '%s': %s", name, err.message))

    def reset_learning(self, name: str) -> Optional[TaskHandle]:
        """Forget what ``name``'s files learned: the original keys, exactly."""
        if self.service is None:
            return None

        def done(stats: Any) -> None:
            self._learned_hits.clear()
            self.status.emit(f"Reset learning for '{name}': search uses the original passage keys")
            self.learning_loaded.emit(name, stats)

        return self.runner.run(partial(ops.reset_learning, self.service, name), title=f"Resetting learning of {name}",
                               on_success=done, on_failure=self._failed)

    # ------------------------------------------------------------------ errors
    def _failed(self, err: TaskError) -> None:
        log.error("%s failed: %s\n%s", err.title, err.message, err.details)
        self.status.emit(f"{err.title} failed: {err.message}")
        self.error.emit(f"{err.title} failed: {err.message}", err.details)

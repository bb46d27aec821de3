"""Everything the main window asks of the metadata index, as tasks on the TaskRunner.

The controller owns the current tag filter, turns drops/adds/watch events into scan tasks,
and refreshes tree, table, issues and summary when the task runner announces that files or tags
changed (``TaskRunner.changed``: a scan, a tag edit, a taxonomy import, a review decision, in
this window or one of its dialogs). Widgets only receive the frozen results through its signals,
so they can be tested (and replaced) separately.
"""

from __future__ import annotations

import logging
import os
from functools import partial
from pathlib import Path
from typing import Callable, Iterable, Optional

from PySide6.QtCore import QObject, Signal

from spar_desktop.core.changes import NOTHING, Changes
from spar_desktop.core.config import Settings
from spar_desktop.core.data_layout import DataLayout
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.paths import is_within
from spar_desktop.core.library.queries import FileFilter
from spar_desktop.core.library.tag_edits import TagEdit
from spar_desktop.ui.base.process_ops import scan_op
from spar_desktop.ui.base.tasks import TaskError, TaskHandle, TaskRunner
from spar_desktop.ui.library import ops
from spar_desktop.ui.library.first_run import SampleImport, import_sample_corpus, sample_corpus_dir
from spar_desktop.ui.library.watcher import FolderWatcher

log = logging.getLogger(__name__)
USER_SCAN = Changes(files=True)  # roots, statuses and issues; new files also bring tags (ScanSummary.changes)


class LibraryController(QObject):
    tags_loaded = Signal(object)  # TagSnapshot
    files_loaded = Signal(object, str)  # FileListing, filter description
    files_completed = Signal(object, object)  # FileListing, its whole FileOrder (it showed with the first ids)
    issues_loaded = Signal(object)  # Issues
    summary_loaded = Signal(object)  # LibrarySummary
    scan_finished = Signal(object)  # ScanSummary
    sample_imported = Signal(object)  # SampleImport
    tags_changed = Signal()  # tags changed (an edit, an import, a scan): details of the selection are stale
    status = Signal(str)  # one line for the status bar
    error = Signal(str, str)  # (message, details) of a failed user action
    tagging_finished = Signal(object)  # TaggingReport: tag suggestions changed

    def __init__(self, library: Library, runner: TaskRunner, data_dir: Path, watch: bool = True,
                 debounce_ms: int = 2000, parent: Optional[QObject] = None) -> None:
        super().__init__(parent)
        self.library = library
        self.runner = runner
        self.data_dir = Path(data_dir)
        self.tag_groups: tuple[frozenset[int], ...] = ()
        self.filter_description = ""
        # The Overview's narrowing on top of the tags (a kind bar, a workspace's files): the
        # FileFilter fields the tag tree has no entry for; "Clear filter" drops them.
        self.formats: tuple[str, ...] = ()
        self.file_ids: Optional[frozenset[int]] = None
        self.narrow_description = ""
        self._sort: tuple[int, bool] = (0, False)  # the table's (column, descending): the listing's SQL order
        self.summary: Optional[ops.LibrarySummary] = None
        self.watcher: Optional[FolderWatcher] = None
        if watch:
            # Our own writes (database, logs) must never look like changes to a watched folder
            # that happens to contain the data dir; the sample corpus copy in it is watched.
            self.watcher = FolderWatcher(debounce_ms, ignore=(str(self.data_dir),),
                                         allow=(str(DataLayout(self.data_dir).sample_corpus),), parent=self)
            self.watcher.changed.connect(lambda root: self.start_scan(root, from_watch=True))
            self.watcher.not_fully_watched.connect(lambda root: self.status.emit(
                f"{root} has more folders than can be watched: it is re-scanned every "
                f"{self.watcher.poll_minutes:g} minutes instead"))
        self._scan_targets: dict[str, str] = {}  # task key → folder being scanned
        # Tag suggestions (ui/tag_review.TagSuggestions turns the automatic run on and supplies the
        # window's current settings): after a scan that found new or changed files.
        # None: follow the settings (Settings ▸ Reading files); True/False: decided by the caller.
        self.auto_tagging: Optional[bool] = False
        self.settings_provider: Callable[[], Optional[Settings]] = lambda: library.settings
        self._pending_rescans: set[str] = set()
        runner.changed.connect(self._changed)

    def _changed(self, changes: Changes) -> None:
        """Reload what shows the parts that changed (the runner's one notification)."""
        if changes.files:
            self.refresh_all()  # summary, tags, files and issues in one task
        elif changes.tags:
            self.reload_tags()
            if self.tag_groups:
                self.reload_files()  # the filter's files changed with their tags
        if changes.tags:
            self.tags_changed.emit()

    @property
    def sort(self) -> tuple[int, bool]:
        return self._sort

    @sort.setter
    def sort(self, value: tuple[int, bool]) -> None:
        """The header's sort indicator: a new order is a new listing (SQL sorts it on a worker)."""
        changed, self._sort = tuple(value) != self._sort, tuple(value)
        if changed and self.summary is not None:
            self.reload_files()

    def _auto_tagging(self) -> bool:
        if self.auto_tagging is not None:
            return self.auto_tagging
        return bool(getattr(self.settings_provider(), "auto_tagging", True))

    # ------------------------------------------------------------------ refreshing
    def refresh_all(self) -> None:
        """Reload summary, tags, files and issues (one task, latest-wins)."""
        flt, description = self.file_filter(), self.description()

        def loaded(state: ops.LibraryState) -> None:
            self._summary_loaded(state.summary)
            if state.files.flt == self.file_filter() and not self.runner.is_running("files"):
                self.files_loaded.emit(state.files, description)  # else a newer filter's load is on its way
                self._complete(state.files)
            self.issues_loaded.emit(state.issues)
            self.reload_tags()  # after the table shows: at 1M files the tags take longest

        self.runner.run(partial(ops.load_everything, self.library, flt, self.sort), title="Refreshing the library",
                        key="refresh", visible=False, on_success=loaded, on_failure=self._failed)

    def _complete(self, listing: ops.FileListing) -> None:
        """The rest of a listing shown with its first ids (start-up reads no more than a page)."""
        if not listing.order.complete:
            self.runner.run(partial(ops.complete_listing, listing), title="Listing files", key="files-rest", visible=False,
                            on_success=lambda order: self.files_completed.emit(listing, order), on_failure=self._failed)

    def reload_tags(self) -> None:
        self.runner.run(partial(ops.load_tags, self.library), title="Loading tags", key="tags",
                        visible=False, on_success=lambda value: self.tags_loaded.emit(value), on_failure=self._failed)

    def file_filter(self) -> FileFilter:
        return FileFilter(tag_groups=self.tag_groups, formats=self.formats, file_ids=self.file_ids)

    def description(self) -> str:
        return "; ".join(d for d in (self.narrow_description, self.filter_description) if d)

    def reload_files(self) -> TaskHandle:
        flt, description = self.file_filter(), self.description()
        return self.runner.run(partial(ops.load_files, self.library, flt, sort=self.sort), title="Loading files", key="files",
                               on_success=lambda rows: self.files_loaded.emit(rows, description),
                               on_failure=self._failed)

    def set_tag_filter(self, groups: tuple[frozenset[int], ...], description: str) -> None:
        self.tag_groups, self.filter_description = tuple(groups), description
        self.reload_files()

    def set_narrow(self, formats: tuple[str, ...] = (), file_ids: Optional[frozenset[int]] = None,
                   description: str = "") -> None:
        """Narrow the table beyond its tags (Overview bars); all defaults: no narrowing."""
        if (formats, file_ids, description) == (self.formats, self.file_ids, self.narrow_description):
            return
        self.formats, self.file_ids, self.narrow_description = tuple(formats), file_ids, description
        self.reload_files()

    def _summary_loaded(self, summary: ops.LibrarySummary) -> None:
        self.summary = summary
        if self.watcher is not None:
            for root in summary.roots:
                self.watcher.watch(root)
        self.summary_loaded.emit(summary)

    # ------------------------------------------------------------------ indexing
    def index_paths(self, paths: Iterable[str]) -> list[TaskHandle]:
        """Index dropped/added paths: each folder as one task; files not inside a dropped folder
        are indexed alone (not their siblings), together in one task."""
        folders: list[str] = []
        files: list[str] = []
        for p in paths:
            real = os.path.realpath(p)
            if os.path.isdir(real):
                folders.append(real)
            elif os.path.isfile(real):
                files.append(real)
            else:
                self.status.emit(f"Cannot index {p}: not a folder or file")
        folders = list(dict.fromkeys(folders))
        files = [f for f in dict.fromkeys(files) if not any(is_within(f, d) for d in folders)]
        handles = [self.start_scan(f) for f in folders]
        if len(files) == 1:
            handles.append(self.start_scan(files[0]))
        elif files:
            handles.append(self._scan_files(tuple(files)))
        return [h for h in handles if h is not None]

    def _scan_files(self, files: tuple[str, ...]) -> TaskHandle:
        return self.runner.run(scan_op(self.library, files), title=f"Indexing {len(files)} files",
                               key="scan-files:" + "\n".join(sorted(files)),
                               on_success=lambda summary: self._scan_done(summary, "", False),
                               on_failure=self._failed, changes=USER_SCAN)

    def root_of(self, folder: str) -> str:
        roots = self.summary.roots if self.summary else ()
        return next((r for r in roots if is_within(folder, r)), folder)

    def start_scan(self, folder: str, from_watch: bool = False) -> Optional[TaskHandle]:
        """One scan task per root (key ``scan:<root>``): the user asking again restarts it
        (latest-wins; scans resume cheaply), a watch event during a scan queues one rescan."""
        root = self.root_of(folder)
        key = f"scan:{root}"
        if self.runner.is_running(key):
            if from_watch:
                self._pending_rescans.add(root)
                return None
            if self._scan_targets.get(key) == root and folder != root:
                self.status.emit(f"{folder} is already being indexed as part of {root}")
                return None
        name = os.path.basename(folder.rstrip(os.sep)) or folder  # a folder's or a single file's
        title = f"Updating {name}" if from_watch else f"Indexing {name}"
        self._scan_targets[key] = folder
        # A scan the user asked for shows its roots and statuses whatever it found; a watch event's
        # reloads only when its ScanSummary reports changed files (summary.changes).
        return self.runner.run(scan_op(self.library, (folder,)), title=title, key=key,
                               on_success=lambda summary: self._scan_done(summary, root, from_watch),
                               on_failure=self._failed, changes=NOTHING if from_watch else USER_SCAN)

    def rescan_all(self) -> None:
        for root in (self.summary.roots if self.summary else ()):
            self.start_scan(root)

    def _scan_done(self, summary: ops.ScanSummary, root: str, from_watch: bool) -> None:
        if not from_watch or summary.files_changed:
            self.status.emit(summary.describe())
        for note in summary.notes:
            log.info("scan note: %s", note)
        self.scan_finished.emit(summary)
        if self._auto_tagging() and not summary.cancelled and (summary.new or summary.changed or summary.restored):
            self.start_tagging()  # after the scan, never inside it: the scan stays fast
        if root in self._pending_rescans:
            self._pending_rescans.discard(root)
            self.start_scan(root, from_watch=True)

    # ------------------------------------------------------------------ first run
    def import_sample(self) -> Optional[TaskHandle]:
        source = sample_corpus_dir()
        if source is None:
            self.status.emit("The sample corpus is not installed")
            return None
        target = DataLayout(self.data_dir).sample_corpus

        def done(result: SampleImport) -> None:
            self.status.emit(result.describe())
            for p in result.problems:
                log.info("sample import: %s", p)
            self.sample_imported.emit(result)  # its Changes reload the views

        return self.runner.run(partial(import_sample_corpus, self.library, source, target),
                               title="Importing the sample corpus", key=f"scan:{os.path.realpath(target)}",
                               on_success=done, on_failure=self._failed, changes=USER_SCAN)

    # ------------------------------------------------------------------ tagging
    def tag_files(self, file_ids: tuple[int, ...], tag_id: Optional[int], new_label: Optional[str] = None) -> None:
        if not file_ids:
            self.status.emit("Select files in the table first")
            return
        self.runner.run(partial(ops.apply_tag, self.library, file_ids, tag_id, new_label), title="Tagging files",
                        on_success=self._tags_edited, on_failure=self._failed)

    def untag_files(self, file_ids: tuple[int, ...], tag_id: int) -> None:
        if not file_ids:
            self.status.emit("Select files in the table first")
            return
        self.runner.run(partial(ops.remove_tag, self.library, file_ids, tag_id), title="Removing tag",
                        on_success=self._tags_edited, on_failure=self._failed)

    def start_tagging(self, use_llm: bool = False) -> Optional[TaskHandle]:
        """Summaries and tag suggestions in the background (resumable, cancellable in the task
        list, low priority). A newer request replaces a running one, which keeps its work."""
        from spar_desktop.ui.library.tag_review import JOB_KEY, tagging_op

        settings = self.settings_provider()
        if settings is None:
            return None

        def done(report) -> None:
            self.status.emit(f"Tag suggestions: {report.message()}")
            self.tagging_finished.emit(report)

        return self.runner.run(partial(tagging_op, self.library, settings, use_llm), title="Suggesting tags",
                               key=JOB_KEY, on_success=done, on_failure=self._failed, background=True)

    def import_taxonomy(self, path: str) -> None:
        self.runner.run(partial(ops.import_taxonomy_file, self.library, path), title="Importing taxonomy",
                        on_success=self._tags_edited, on_failure=self._failed)

    def import_assignments(self, path: str) -> None:
        self.runner.run(partial(ops.import_assignments_file, self.library, path), title="Importing tag assignments",
                        on_success=self._tags_edited, on_failure=self._failed)

    def _tags_edited(self, edit: TagEdit) -> None:
        self.status.emit(edit.message)  # its Changes(tags=True) reload tree, table and details

    # ------------------------------------------------------------------ shutdown/errors
    def _failed(self, err: TaskError) -> None:
        log.error("%s failed: %s\n%s", err.title, err.message, err.details)
        self.status.emit(f"{err.title} failed: {err.message}")
        self.error.emit(f"{err.title} failed: {err.message}", err.details)

    def shutdown(self) -> None:
        if self.watcher is not None:
            self.watcher.stop()

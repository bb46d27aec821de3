"""The main window, in two views (ui/base/view_modes.py): the library (tag tree left, file table
centre, details right) and the workspace (request, search and chat centre, the workspace list
right); the document viewer and the relation graph are pages of the same centre. Issues stay in a
hidden dock behind a status-bar badge; running tasks show in the status bar."""

from __future__ import annotations

import logging
from functools import partial
from pathlib import Path
from typing import Callable, Optional

from PySide6.QtCore import QSettings, Qt, QTimer, QUrl
from PySide6.QtGui import QAction, QDesktopServices, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QDockWidget,
    QFileDialog,
    QInputDialog,
    QMainWindow,
    QMenu,
    QMessageBox,
    QTabWidget,
    QWidget,
)

from spar_desktop.core.config import Settings
from spar_desktop.core.documents.virtual import is_virtual, outer_path
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.models import TagSource
from spar_desktop.ui.base import window_state
from spar_desktop.ui.base.file_manager import reveal_in_file_manager
from spar_desktop.ui.base.interaction import watch_interaction
from spar_desktop.ui.base.status_bar import ElidingStatusBar, WordElidedLabel
from spar_desktop.ui.base.task_list import TaskListWidget
from spar_desktop.ui.base.tasks import TaskRunner
from spar_desktop.ui.base.view_modes import ViewModes
from spar_desktop.ui.chat.features import ChatFeatures
from spar_desktop.ui.library import ops
from spar_desktop.ui.library.controller import LibraryController
from spar_desktop.ui.library.details import DetailsPanel
from spar_desktop.ui.library.drop import DropOverlay, local_paths
from spar_desktop.ui.library.file_panel import FilePanel
from spar_desktop.ui.library.first_run import sample_corpus_dir
from spar_desktop.ui.library.issues import IssuesPanel
from spar_desktop.ui.library.issues_badge import IssuesBadge
from spar_desktop.ui.library.overview_page import attach as attach_overview
from spar_desktop.ui.library.tag_panel import TagPanel
from spar_desktop.ui.relations.features import RelationsFeatures
from spar_desktop.ui.viewer.document_viewer import DocumentViewer
from spar_desktop.ui.workspaces import ops as workspace_ops
from spar_desktop.ui.workspaces.features import WorkspaceFeatures
from spar_desktop.ui.window_actions import build_actions
from spar_desktop.ui.workspaces.workspace_view import WorkspaceView

log = logging.getLogger(__name__)
FEATURES_AT_THE_LATEST_MS = 10_000  # workspaces open even when the library's first load failed


class MainWindow(QMainWindow):
    def __init__(self, settings: Settings, library: Library, *, runner: Optional[TaskRunner] = None,
                 watch: bool = True, interactive: Optional[bool] = None, debounce_ms: int = 2000) -> None:
        super().__init__()
        self.settings = settings
        self.library = library
        # Offscreen (tests, --smoke) never opens message boxes: errors go to the log and status bar.
        self.interactive = QGuiApplication.platformName() != "offscreen" if interactive is None else interactive
        self.runner = runner or TaskRunner(self)
        self.controller = LibraryController(library, self.runner, settings.data_dir, watch, debounce_ms, self)
        self.setWindowTitle("SPAR Desktop")
        self.setAcceptDrops(True)
        self.resize(1440, 900)
        self.setDockOptions(QMainWindow.DockOption.AnimatedDocks | QMainWindow.DockOption.AllowTabbedDocks)

        self.tag_panel = TagPanel(runner=self.runner)
        self.file_panel = FilePanel()
        self.details = DetailsPanel()
        self.issues = IssuesPanel()
        self.viewer = DocumentViewer(self.runner, budget=lambda: self.settings.extraction_budget())
        self.features = WorkspaceFeatures(self)
        self._features_started, self._after_shown = False, []  # see when_library_shown
        self.workspaces = self.features.controller
        self.workspace_panel = self.features.panel
        self.chat_features = ChatFeatures(self, self.workspaces)  # chat follows the current workspace
        self.chat = self.chat_features.controller
        self.chat_pane = self.chat_features.pane
        self.file_panel.empty.set_sample_available(sample_corpus_dir() is not None)

        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.workspace_view = WorkspaceView(self.workspace_panel.search_section, self.chat_pane,
                                            lambda: self.controller.summary.files if self.controller.summary else None)
        self.tabs.addTab(self.file_panel, "Library")
        self.tabs.addTab(self.workspace_view, "Workspace")
        self.tabs.addTab(self.viewer, "Document")
        self.relations = RelationsFeatures(self)  # the relation graph tab (loads when first shown)
        self.tabs.addTab(self.relations.page, "Relations")
        self.setCentralWidget(self.tabs)
        self.views = ViewModes(self)
        self.overview = attach_overview(self)  # the Overview page (charts)
        self.tags_dock = self._dock("Tags", "tagsDock", self.tag_panel, Qt.DockWidgetArea.LeftDockWidgetArea)
        self.details_dock = self._dock("Details", "detailsDock", self.details, Qt.DockWidgetArea.RightDockWidgetArea)
        self.workspace_dock = self._dock("Workspaces", "workspaceDock", self.features.panel_area,
                                         Qt.DockWidgetArea.RightDockWidgetArea)
        self.issues_dock = self._dock("Issues", "issuesDock", self.issues, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.tabifyDockWidget(self.details_dock, self.workspace_dock)
        self.details_dock.raise_()
        window_state.default_docks(self)

        self.setStatusBar(ElidingStatusBar(self))  # messages end at a word with "…", never cut mid-word
        self.summary_label = WordElidedLabel(full_tip=True)
        self.summary_label.setObjectName("muted")
        self.task_list = TaskListWidget(self.runner)
        self.issues_badge = IssuesBadge(self.issues, self.issues_dock)  # the dock stays hidden until asked for
        self.statusBar().addPermanentWidget(self.task_list)
        self.statusBar().addPermanentWidget(self.issues_badge)
        self.statusBar().addPermanentWidget(self.summary_label)
        self.overlay = DropOverlay(self)
        self._build_actions()
        self._connect()
        self._restore_state()
        self.controller.refresh_all()
        # Workspaces open (and the tag vocabulary job starts) once the library shows: at 1M files
        # their imports and the job's Python held the GIL while the table and tags were loading.
        self.controller.tags_loaded.connect(self._start_features, Qt.ConnectionType.SingleShotConnection)
        QTimer.singleShot(FEATURES_AT_THE_LATEST_MS, self._start_features)  # the library's load failed
        from spar_desktop.ui.base.process_ops import warm_up

        self.runner.run(warm_up, title="Starting the scan worker", visible=False)

    def when_library_shown(self, fn: Callable[[], None]) -> None:
        """Call ``fn`` once the file table and tag tree have shown (at once if they have): the
        app's engine preload waits for it too."""
        if self._features_started:
            fn()
        else:
            self._after_shown.append(fn)

    def _start_features(self, *_args: object) -> None:
        if not self._features_started:
            self._features_started = True
            self.features.start()
            for fn in self._after_shown:
                fn()

    # ------------------------------------------------------------------ construction
    def _dock(self, title: str, name: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(name)  # saveState/restoreState need stable names
        dock.setWidget(widget)
        dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable | QDockWidget.DockWidgetFeature.DockWidgetClosable)
        self.addDockWidget(area, dock)
        return dock

    def _action(self, text: str, slot, icon=None, shortcut=None, tip: Optional[str] = None) -> QAction:
        act = QAction(text, self)
        if icon is not None:
            act.setIcon(self.style().standardIcon(icon))
        if shortcut is not None:
            act.setShortcut(QKeySequence(shortcut))
        if tip:
            act.setToolTip(tip)
            act.setStatusTip(tip)
        act.triggered.connect(slot)
        return act

    def _build_actions(self) -> None:
        build_actions(self)  # the menus and the toolbar: ui/window_actions.py

    def open_topics(self) -> None:
        from spar_desktop.ui.library.topic_proposal import open_topic_proposal

        open_topic_proposal(self)

    def _connect(self) -> None:
        from spar_desktop.ui.library.tag_review import TagSuggestions

        self.tag_suggestions = TagSuggestions(self)  # the tag panel's Suggest / Review, and the job after scans
        c = self.controller
        c.tags_loaded.connect(self.tag_panel.set_snapshot)
        c.files_loaded.connect(self.file_panel.set_rows)
        c.files_completed.connect(self.file_panel.model.complete)
        c.issues_loaded.connect(self.issues.set_issues)
        c.summary_loaded.connect(self._summary_loaded)
        c.status.connect(lambda text: self.statusBar().showMessage(text, 15000))
        c.error.connect(self._show_error)
        c.tags_changed.connect(lambda: self._load_details(self.details.record))
        self.runner.task_failed.connect(lambda err: self._show_error(f"{err.title} failed: {err.message}", err.details))
        self.tag_panel.filter_changed.connect(c.set_tag_filter)
        self.tag_panel.tag_files_requested.connect(self.tag_selected_files)
        self.tag_panel.untag_files_requested.connect(
            lambda tag_id: c.untag_files(self._selected_ids(), tag_id))
        self.tag_panel.import_taxonomy_requested.connect(self.choose_taxonomy)
        self.file_panel.selection_changed.connect(self._selection_changed)
        self.file_panel.activated.connect(lambda _r: self.view_current())
        self.file_panel.clear_filter_clicked.connect(self.tag_panel.clear_selection)
        self.file_panel.clear_filter_clicked.connect(lambda: c.set_narrow())  # an Overview bar's kind/workspace
        self.file_panel.empty.add_folder_clicked.connect(self.choose_folder)
        self.file_panel.empty.sample_clicked.connect(c.import_sample)
        self.file_panel.table.customContextMenuRequested.connect(self._table_menu)
        self.file_panel.table.horizontalHeader().sortIndicatorChanged.connect(
            lambda column, order: setattr(c, "sort", (column, order == Qt.SortOrder.DescendingOrder)))
        watch_interaction(self.runner.user_activity, self.file_panel.table, self.tag_panel.tree_view,
                          self.tag_panel.filter_view)
        self.details.open_requested.connect(self.open_current)
        self.details.reveal_requested.connect(self.reveal_current)
        self.details.view_requested.connect(self.view_current)
        self.details.container_requested.connect(self._show_file_by_id)
        self.issues.count_changed.connect(
            lambda n: self.issues_dock.setWindowTitle(f"Issues ({n:,})" if n else "Issues"))
        self.issues.file_activated.connect(self._show_file_by_id)
        self.features.connect()
        self.chat_features.connect()
        self.relations.connect()
        wv = self.workspace_view
        wv.edit_requested.connect(self.features.edit_workspace)
        wv.new_requested.connect(lambda: self.features.new_workspace())
        self.workspaces.current_changed.connect(wv.set_workspace)
        self.workspaces.workspaces_loaded.connect(lambda _rows: wv.set_workspace(self.workspaces.current))
        c.summary_loaded.connect(lambda _s: wv.refresh())
        # Choosing a workspace (a click in the list) opens it at the centre.
        self.workspace_panel.list.itemClicked.connect(lambda *_: self.views.show_workspace())

    # ------------------------------------------------------------------ state
    def state_settings(self) -> QSettings:
        return QSettings(str(self.settings.layout.window_state), QSettings.Format.IniFormat)

    def _restore_state(self) -> None:
        qs = self.state_settings()
        window_state.restore(self, qs)  # only a layout that fits the screen
        self.views.restore(qs)  # library or workspace view, as it was left

    def closeEvent(self, event) -> None:
        qs = self.state_settings()
        window_state.save(self, qs)  # never a layout wider than the screen
        self.views.save(qs)  # the view is kept even when the layout is not
        self.controller.shutdown()
        self.chat_features.shutdown()
        finished = self.runner.shutdown()
        self.viewer.release()  # after the renders stopped: its copies of archive members go
        if finished:  # a task still running past the wait keeps its store; the process exit ends it
            workspace_ops.release_store(self.settings)
        super().closeEvent(event)

    # ------------------------------------------------------------------ library events
    def _summary_loaded(self, summary: ops.LibrarySummary) -> None:
        empty = summary.files == 0 and not summary.roots
        self.file_panel.set_library_empty(empty)
        self.summary_label.setText(summary.describe())

    def _selection_changed(self, record: Optional[ops.FileRecord]) -> None:
        self.details.show_record(record)
        for act in (self.open_action, self.reveal_action, self.view_action):
            act.setEnabled(record is not None)
        self._load_details(record)

    def _load_details(self, record: Optional[ops.FileRecord]) -> None:
        if record is not None:
            self.runner.run(partial(ops.load_details, self.library, record.id), title="Loading details",
                            key="details", visible=False, on_success=self.details.show_details)

    def _show_file_by_id(self, file_id: int) -> None:
        if not self.file_panel.select_file(file_id):
            # Not in the current table (filtered out, or missing files): show its details anyway.
            self.runner.run(partial(ops.load_details, self.library, file_id), title="Loading details", key="details",
                            visible=False, on_success=self._show_loaded_details)
        self.details_dock.raise_()

    def _show_loaded_details(self, details: Optional[ops.FileDetails]) -> None:
        if details is not None:
            self.details.show_record(details.record)
            self.details.show_details(details)
            for act in (self.open_action, self.reveal_action, self.view_action):
                act.setEnabled(True)

    def _show_error(self, message: str, details: str = "") -> None:
        self.statusBar().showMessage(message, 20000)
        if not self.interactive:
            return
        box = QMessageBox(QMessageBox.Icon.Warning, "SPAR Desktop", message, QMessageBox.StandardButton.Ok, self)
        box.setDetailedText(details)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()  # non-modal to the event loop: tasks keep running behind it

    # ------------------------------------------------------------------ file actions
    def _target_path(self) -> Optional[str]:
        d = self.details
        if d.details is not None and d.record is not None and d.details.record.id == d.record.id:
            return d.details.open_path
        return d.record.path if d.record is not None else None

    def open_current(self) -> None:
        path = self._target_path()
        if path and not is_virtual(path):  # a member of an archive has no file an app could open
            QDesktopServices.openUrl(QUrl.fromLocalFile(path))

    def reveal_current(self) -> None:
        path = self._target_path()
        if path:
            reveal_in_file_manager(outer_path(path))  # a member of an archive: the archive

    def view_current(self) -> None:
        path = self._target_path()
        if path:
            self.open_document(path)

    def open_document(self, path: str, page: Optional[int] = None, highlight: Optional[str] = None) -> None:
        self.viewer.open_document(path, page, highlight)
        self.tabs.setCurrentWidget(self.viewer)

    def focus_tag_filter(self) -> None:
        self.tags_dock.show()
        self.tags_dock.raise_()
        self.tag_panel.search.setFocus()
        self.tag_panel.search.selectAll()

    def focus_workspace_search(self) -> None:
        self.views.show_workspace()
        box = self.workspace_panel.search_box
        if box.isEnabled():
            box.setFocus()
            box.selectAll()
        else:
            self.statusBar().showMessage("Select a built workspace in the Workspace panel to search it", 8000)

    def _selected_ids(self) -> tuple[int, ...]:
        return tuple(r.id for r in self.file_panel.selected_records())

    def tag_selected_files(self, tag_id: Optional[int]) -> None:
        ids = self._selected_ids()
        if not ids:
            self.statusBar().showMessage("Select files in the table first", 8000)
            return
        if tag_id is not None:
            self.controller.tag_files(ids, tag_id)
            return
        choices = self.tag_panel.model.infos.by_sources((TagSource.USER, TagSource.TAXONOMY))
        label, ok = QInputDialog.getItem(self, "Tag files", f"Tag {len(ids)} selected file(s) with (type a new name to create a tag):",
                                         sorted(choices, key=str.casefold), 0, True)
        if ok and label.strip():
            self.controller.tag_files(ids, choices.get(label.strip()), label.strip())

    def _table_menu(self, pos) -> None:
        menu = QMenu(self)
        for act in (self.view_action, self.open_action, self.reveal_action):
            menu.addAction(act)
        menu.addSeparator()
        menu.addAction("Tag selected files…", lambda: self.tag_selected_files(None))
        record = self.file_panel.current_record()
        related = menu.addAction("Show related files in graph",
                                 lambda: record is not None and self.relations.show_around(record.id))
        related.setEnabled(record is not None)
        related.setToolTip("The Relations tab with only this file and the files related to it (1-3 hops)")
        menu.popup(self.file_panel.table.viewport().mapToGlobal(pos))

    # ------------------------------------------------------------------ dialogs
    def choose_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Add a folder to the index", str(Path.home()))
        if folder:
            self.controller.index_paths([folder])

    def choose_taxonomy(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Import a taxonomy", str(Path.home()),
                                              "Taxonomies (*.json *.csv *.tsv *.txt);;All files (*)")
        if path:
            self.controller.import_taxonomy(path)

    def choose_assignments(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Import tag assignments", str(Path.home()), "CSV (*.csv);;All files (*)")
        if path:
            self.controller.import_assignments(path)

    def open_settings(self):
        from spar_desktop.ui.base.settings_dialog import SettingsDialog

        dialog = SettingsDialog(self.settings, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.accepted.connect(lambda: self.apply_settings(dialog.result_settings))
        dialog.open()  # window-modal, not a nested loop: tasks keep delivering behind it
        return dialog

    def apply_settings(self, saved: Optional[Settings]) -> None:
        """Saved settings reach every holder at once: this window's (the viewer, dialogs and the
        tag features read it), the library's (scans, builds, tag suggestions) and chat's client
        (a new Ollama host or model, the server re-checked); storage, device and chunking wait for
        the next start."""
        if saved is None:
            return
        if saved.data_dir != self.settings.data_dir:
            self.statusBar().showMessage(
                f"Settings saved in {saved.data_dir}. Start SPAR Desktop with --data-dir {saved.data_dir} "
                "(or set SPAR_DATA_DIR) to use it.", 30000)
            return
        from spar_desktop.ui.base.settings_dialog import apply_live_settings, reading_changed, restart_changes

        old, self.settings = self.settings, saved
        restart = restart_changes(old, saved)
        reading = reading_changed(old, saved)
        server = (old.ollama_host, old.ollama_model) != (saved.ollama_host, saved.ollama_model)
        apply_live_settings(self.library, saved)
        self.chat.apply_settings()  # reads self.settings
        if old.workspace_updates != saved.workspace_updates:
            self.workspaces.refresh_freshness()  # 'auto' now: a stale current workspace updates at once
        text = "Settings saved" + (f"; now using Ollama at {saved.ollama_host}" if server else "")
        text += "; the next scan and build use the new reading limits" if reading else ""
        if restart:
            text += f"; {', '.join(restart)} change{'s' if len(restart) > 1 else ''} after a restart"
        self.statusBar().showMessage(text, 15000)

    def show_shortcuts(self):
        from spar_desktop.ui.base.shortcuts_dialog import ShortcutsDialog

        dialog = ShortcutsDialog([a.menu() for a in self.menuBar().actions() if a.menu() is not None], self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        return dialog

    def about(self) -> None:
        """Help ▸ About SPAR Desktop: version, data folder, licences (ui/base/about_dialog.py)."""
        from spar_desktop.ui.base.about_dialog import AboutDialog

        if getattr(self, "about_dialog", None) is None:
            self.about_dialog = AboutDialog(self.settings.data_dir, self)
        self.about_dialog.show()
        self.about_dialog.raise_()

    # ------------------------------------------------------------------ drag and drop
    def dragEnterEvent(self, event) -> None:
        if local_paths(event.mimeData()):
            event.acceptProposedAction()
            self.overlay.show_over(self)
        else:
            event.ignore()

    def dragMoveEvent(self, event) -> None:
        if local_paths(event.mimeData()):
            event.acceptProposedAction()

    def dragLeaveEvent(self, event) -> None:
        self.overlay.hide()
        super().dragLeaveEvent(event)

    def dropEvent(self, event) -> None:
        self.overlay.hide()
        paths = local_paths(event.mimeData())
        if not paths:
            event.ignore()
            return
        event.acceptProposedAction()
        self.controller.index_paths(paths)

"""Right dock: the workspaces (status, build progress, archive/reactivate, export/import) and a
search box over the selected one (what it says, as text: panel_text.py).

Selecting a workspace makes it current (the controller tells chat); a double-clicked search
hit asks the window to open the viewer at its page with the passage highlighted (and counts as
feedback for the evolving keys). The Learning line shows how many keys evolved, with a reset.
The freshness line says when the index changed under the built workspace (with Update), that
an update is running (search and chat answer from the previous build meanwhile), or that the
workspace was archived for being unused.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QProgressBar,
    QPushButton,
    QStyle,
    QToolButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from spar_desktop.core.progress import Progress
from spar_desktop.ui.base.flow_layout import FlowLayout
from spar_desktop.ui.base.progress_view import shown
from spar_desktop.ui.workspaces import chunking_choice
from spar_desktop.ui.workspaces.controller import WorkspaceController
from spar_desktop.ui.workspaces.panel_status import PanelStatusLines
from spar_desktop.ui.workspaces.panel_text import describe_row, status_text
from spar_desktop.ui.workspaces.search_results import CLUSTER_ROLE, HIT_ROLE, HitDelegate, hit_tooltip
from spar_desktop.ui.workspaces.rerank_follow import RerankFollowUp
from spar_desktop.ui.workspaces.session_search import SessionSearch, session_summary

if TYPE_CHECKING:  # types only: the workspace modules load on a worker (workspaces/ops.py)
    from spar_desktop.core.workspaces.manager import WorkspaceInfo

STATUS_COLOURS = {"active": "#1e7b34", "building": "#2f6fde", "archived": "#6a7180", "draft": "#a15c00",
                  "error": "#b3261e"}


class WorkspacePanel(PanelStatusLines, QWidget):
    new_requested = Signal()
    edit_requested = Signal(str)  # workspace name
    export_requested = Signal(str)
    import_requested = Signal()
    delete_requested = Signal(str)
    reset_learning_requested = Signal(str)
    hit_activated = Signal(object)  # WorkspaceHit

    def __init__(self, controller: WorkspaceController, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self._progress: dict[str, Progress] = {}
        self._chunking: dict[str, str] = {}  # workspace -> how it is cut and scored (last build/search)
        self._learning = None  # MemoryStats of the current workspace, once read
        self._enhancer = chunking_choice.watch(controller, self._update_actions)  # contextual passages
        self._build()
        c = controller
        c.ready.connect(self._ready)
        c.workspaces_loaded.connect(self.set_rows)
        c.current_changed.connect(self._current_changed)
        c.build_progress.connect(self._build_progress)
        c.build_finished.connect(self._build_finished)
        c.search_started.connect(self._search_started)
        c.search_finished.connect(self.show_results)
        c.search_failed.connect(self._search_failed)
        self.reranking = RerankFollowUp(c, self.show_results, self.results_label)  # Ollama's order when unsure
        c.learning_loaded.connect(self._learning_loaded)
        c.freshness_loaded.connect(lambda _name, _fresh: self._update_actions())
        c.idle_archived.connect(lambda _names: self._update_actions())

    # ------------------------------------------------------------------ layout
    def _build(self) -> None:
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.setSpacing(6)
        layout.addLayout(self._build_header())
        self._build_list_section(layout)
        layout.addWidget(self._build_learning_section())
        layout.addWidget(self._build_actions_section())
        self._build_progress_section(layout)
        layout.addStretch(1)
        self._build_search()
        self._update_actions()

    def _build_header(self) -> QHBoxLayout:
        """'Workspaces' and New workspace…"""
        head = QHBoxLayout()
        title = QLabel("Workspaces")
        title.setObjectName("sectionTitle")
        self.new_button = QPushButton("New workspace…")
        self.new_button.setObjectName("primaryButton")
        self.new_button.setToolTip("Describe the files you need; see and edit how they are chosen; build")
        self.new_button.setEnabled(False)
        self.new_button.clicked.connect(self.new_requested)
        head.addWidget(title)
        head.addStretch(1)
        head.addWidget(self.new_button)
        return head

    def _build_list_section(self, layout: QVBoxLayout) -> None:
        """The list (or what a workspace is when there is none), the selected one's description
        and its freshness bar."""
        self.list = QTreeWidget()
        self.list.setObjectName("workspaceList")
        self.list.setHeaderLabels(["Workspace", "Status", "Files"])
        self.list.setRootIsDecorated(False)
        self.list.setUniformRowHeights(True)
        self.list.setAlternatingRowColors(True)
        header = self.list.header()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(False)
        self.list.currentItemChanged.connect(self._item_changed)
        self.list.itemDoubleClicked.connect(lambda item, _col: self.edit_requested.emit(item.data(0, Qt.ItemDataRole.UserRole)))
        self.empty_label = QLabel("No workspaces yet. A workspace turns a request such as “incident reports from "
                                  "2023” into tag and date filters you can check, then builds a searchable "
                                  "collection of just those files.")
        self.empty_label.setObjectName("muted")
        self.empty_label.setWordWrap(True)
        layout.addWidget(self.list)
        layout.addWidget(self.empty_label)

        self.info = QLabel()
        self.info.setObjectName("muted")
        self.info.setWordWrap(True)
        self.info.setTextFormat(Qt.TextFormat.RichText)
        layout.addWidget(self.info)
        layout.addWidget(self._freshness_bar())

    def _build_actions_section(self) -> QWidget:
        """Build, Archive, Filter…, More (export, delete, import)."""
        # The buttons wrap to a second line in a narrow dock (or at 150% scale) instead of being cut.
        actions_box = QWidget()
        actions = FlowLayout(actions_box, spacing=4)
        self.build_button = QPushButton("Build")
        self.build_button.clicked.connect(self._build_clicked)
        self.archive_button = QPushButton("Archive")
        self.archive_button.setToolTip("Drop the vectors to free space; filter, files, threads and history stay")
        self.archive_button.clicked.connect(self._archive_clicked)
        self.edit_button = QPushButton("Filter…")
        self.edit_button.setToolTip("See and edit how the files were chosen")
        self.edit_button.clicked.connect(lambda: self._emit_for_current(self.edit_requested))
        self.more_button = QToolButton(text="More", popupMode=QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(self.more_button)
        self.export_action = menu.addAction("Export…", lambda: self._emit_for_current(self.export_requested))
        self.delete_action = menu.addAction("Delete…", lambda: self._emit_for_current(self.delete_requested))
        menu.addSeparator()
        self.import_action = menu.addAction("Import a shared workspace…", self.import_requested.emit)
        self.more_button.setMenu(menu)
        for w in (self.build_button, self.archive_button, self.edit_button, self.more_button):
            actions.addWidget(w)
        return actions_box

    def _build_progress_section(self, layout: QVBoxLayout) -> None:
        """A build's progress line and bar, with its cancel button."""
        self.progress_box = QWidget()
        pl = QHBoxLayout(self.progress_box)
        pl.setContentsMargins(0, 0, 0, 0)
        self.progress_label = QLabel()
        self.progress_label.setObjectName("muted")
        self.progress_bar = QProgressBar()
        self.progress_bar.setFixedHeight(14)
        self.progress_bar.setTextVisible(False)
        self.cancel_build_button = QToolButton(toolTip="Stop the build (finished files are kept)", autoRaise=True)
        self.cancel_build_button.setIcon(self.style().standardIcon(QStyle.StandardPixmap.SP_DialogCancelButton))
        self.cancel_build_button.clicked.connect(self._cancel_build)
        pl.addWidget(self.progress_bar, 1)
        pl.addWidget(self.cancel_build_button)
        layout.addWidget(self.progress_label)
        layout.addWidget(self.progress_box)

    def _build_search(self) -> None:
        """Search box, "Cover my session", results: a section of its own that the window shows in
        the workspace view at the centre, where hits have room to be read (in the ~270 px dock the
        query field and hit texts were cut every four words)."""
        self.search_section = QWidget()
        self.search_section.setObjectName("searchSection")
        layout = QVBoxLayout(self.search_section)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        self.search_box = QLineEdit()
        self.search_box.setPlaceholderText("Search in the workspace…")
        self.search_box.setClearButtonEnabled(True)
        self.search_box.returnPressed.connect(lambda: self.controller.search(self.search_box.text()))
        self.session = SessionSearch(self)  # "Cover my session": cluster-expanded search beside plain search
        search_row = QHBoxLayout()
        search_row.setSpacing(4)
        search_row.addWidget(self.search_box, 1)
        search_row.addWidget(self.session.button)
        layout.addLayout(search_row)
        self.results_label = QLabel()
        self.results_label.setObjectName("muted")
        self.results_label.setWordWrap(True)
        layout.addWidget(self.results_label)
        self.results = QListWidget()
        self.results.setObjectName("searchResults")
        self.results.setItemDelegate(HitDelegate(self.results, snippet_chars=420))  # the centre has room
        self.results.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.results.setUniformItemSizes(False)
        self.results.setResizeMode(QListWidget.ResizeMode.Adjust)
        self.results.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        # Row heights depend on the width: a scroll bar appearing later would make them too short.
        self.results.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
        self.results.itemActivated.connect(self._hit_activated)
        self.results.currentRowChanged.connect(self._hit_selected)
        self.results.setToolTip("Double-click (or Enter) to open the document at this page")
        layout.addWidget(self.results, 1)

    def _ready(self) -> None:
        self.new_button.setEnabled(True)
        self._update_actions()

    # ------------------------------------------------------------------ list
    def set_rows(self, rows: tuple[WorkspaceInfo, ...]) -> None:
        current = self.controller.current.name if self.controller.current else None
        self.list.blockSignals(True)
        self.list.clear()
        for row in rows:
            item = QTreeWidgetItem([row.name, "", f"{row.file_count:,}"])
            item.setData(0, Qt.ItemDataRole.UserRole, row.name)
            item.setToolTip(0, row.request or row.name)
            item.setTextAlignment(2, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.list.addTopLevelItem(item)
            self._paint_status(item, row)
            if row.name == current:
                self.list.setCurrentItem(item)
        self.list.blockSignals(False)
        self.list.setVisible(bool(rows))
        # As tall as its rows (2 to 6), so the search results below get the rest of the dock.
        rows_h = self.list.sizeHintForRow(0) if rows else 22
        self.list.setFixedHeight(self.list.header().sizeHint().height() + rows_h * min(6, max(2, len(rows))) + 6)
        self.empty_label.setVisible(not rows)
        if current is None and rows and self.list.currentItem() is None:
            self.list.setCurrentItem(self.list.topLevelItem(0))  # selects through _item_changed
        self._update_actions()

    def _paint_status(self, item: QTreeWidgetItem, row: WorkspaceInfo) -> None:
        building = self.controller.is_building(row.name)
        text = status_text(row, building)
        view = shown(self._progress.get(row.name))
        if building and view.percent is not None:
            text += f" {view.percent}%"  # the same number as the bar and the progress text
        item.setText(1, text)
        item.setForeground(1, QColor(STATUS_COLOURS.get("building" if building else row.status, "#6a7180")))

    def item_for(self, name: str) -> Optional[QTreeWidgetItem]:
        for i in range(self.list.topLevelItemCount()):
            item = self.list.topLevelItem(i)
            if item.data(0, Qt.ItemDataRole.UserRole) == name:
                return item
        return None

    def select_workspace(self, name: str) -> bool:
        item = self.item_for(name)
        if item is not None:
            self.list.setCurrentItem(item)
        return item is not None

    def _item_changed(self, item: Optional[QTreeWidgetItem], _previous) -> None:
        self.controller.select(item.data(0, Qt.ItemDataRole.UserRole) if item is not None else None)

    def _current_changed(self, row: Optional[WorkspaceInfo]) -> None:
        if row is not None and (self.list.currentItem() is None
                                or self.list.currentItem().data(0, Qt.ItemDataRole.UserRole) != row.name):
            self.select_workspace(row.name)
        name = row.name if row else None
        if self._learning is not None and self._learning.workspace != name:
            self._learning = None  # another workspace's stats: hide until this one's arrive
        if self.results.property("workspace") != name:
            self.results.clear()
            self.results.setProperty("workspace", name)
            self.results_label.setText("Search the passages of these files; double-click a result to open it "
                                       "at its page." if row is not None and row.active else "")
        self.search_box.setPlaceholderText(f"Search in {row.name}…  (Ctrl+K)" if row else "Select a workspace to search it")
        self._update_actions()

    def _update_actions(self) -> None:
        row = self.controller.current
        building = row is not None and self.controller.is_building(row.name)
        has = row is not None and self.controller.service is not None
        self.info.setText(describe_row(row, self._chunking.get(row.name)) + self._enhancer.note(row) if row else "")
        self.info.setVisible(row is not None)
        self.build_button.setEnabled(has and not building and row.status != "archived")
        self.build_button.setText("Update" if row is not None and row.status == "active" else "Build")
        self.build_button.setToolTip("Add and remove files that changed since the last build" if
                                     row is not None and row.status == "active" else "Embed the files and make them searchable")
        archived = row is not None and row.status == "archived"
        self.archive_button.setText("Reactivate" if archived else "Archive")
        self.archive_button.setEnabled(has and not building and row.status in ("active", "archived", "draft", "error"))
        self.edit_button.setEnabled(has and not building)
        self.export_action.setEnabled(has and not building)
        self.delete_action.setEnabled(has and not building)
        self.more_button.setEnabled(self.controller.service is not None)
        # An update keeps answering from the previous build; a first build answers from its
        # snapshots once its files are read (core/workspaces/live_build.py).
        self.search_box.setEnabled(has and (row.searchable or building))
        self.session.set_enabled(self.search_box.isEnabled())
        self.progress_box.setVisible(building)
        self.progress_label.setVisible(building)
        self._show_learning(row, building)
        self._show_freshness(row, building)
        for i in range(self.list.topLevelItemCount()):
            item = self.list.topLevelItem(i)
            r = self.controller.row(item.data(0, Qt.ItemDataRole.UserRole))
            if r is not None:
                self._paint_status(item, r)

    def _emit_for_current(self, signal) -> None:
        if self.controller.current is not None:
            signal.emit(self.controller.current.name)

    # ------------------------------------------------------------------ actions
    def _build_clicked(self) -> None:
        if self.controller.current is not None:
            self.controller.build(self.controller.current.name)
            self._update_actions()

    def _archive_clicked(self) -> None:
        row = self.controller.current
        if row is None:
            return
        if row.status == "archived":
            self.controller.reactivate(row.name)
        else:
            self.controller.archive(row.name)
        self._update_actions()

    def _cancel_build(self) -> None:
        if self.controller.current is not None:
            self.controller.cancel_build(self.controller.current.name)
            self.progress_label.setText("Stopping after the current batch…")

    def _build_progress(self, name: str, p: Progress) -> None:
        first = name not in self._progress
        self._progress[name] = p
        if first:
            self._update_actions()  # a build started (perhaps by itself): buttons and freshness line follow
        item = self.item_for(name)
        row = self.controller.row(name)
        if item is not None and row is not None:
            self._paint_status(item, row)
        if self.controller.current is None or self.controller.current.name != name:
            return
        self.progress_box.setVisible(True)
        self.progress_label.setVisible(True)
        view = shown(p)
        if view.fraction is not None:
            self.progress_bar.setRange(0, 1000)
            self.progress_bar.setValue(int(view.fraction * 1000))
        else:
            self.progress_bar.setRange(0, 0)
        verb = "Updating" if row is not None and row.built_at else "Building"
        self.progress_label.setText(f"{verb}: {view.text}" if view.text else f"{verb}…")

    def _build_finished(self, name: str, summary) -> None:
        self._progress.pop(name, None)
        if getattr(summary, "chunking", None):
            self._chunking[name] = summary.chunking
        self._update_actions()

    # ------------------------------------------------------------------ search
    def _search_started(self, query: str) -> None:
        self.results_label.setText(f"Searching for “{query}”…")

    def _search_failed(self, message: str) -> None:
        self.results.clear()
        self.results_label.setText(message)

    def show_results(self, results) -> None:
        if getattr(results, "chunking", None) and self._chunking.get(results.workspace) != results.chunking:
            self._chunking[results.workspace] = results.chunking
            self._update_actions()
        self.results.clear()
        self.results.setProperty("workspace", results.workspace)
        added = getattr(results, "from_cluster", ())  # Cover my session marks what clusters added
        for i, hit in enumerate(results.hits):
            item = QListWidgetItem()
            item.setData(HIT_ROLE, hit)
            item.setData(CLUSTER_ROLE, bool(added[i]) if added else False)
            item.setToolTip(hit_tooltip(hit, from_cluster=bool(added[i]) if added else False))
            self.results.addItem(item)
        n = len(results.hits)
        text = f"{n} passage{'s' if n != 1 else ''} for “{results.query}” ({results.latency_ms:.0f} ms)" if n else \
            f"Nothing in {results.workspace} matches “{results.query}”"
        if hasattr(results, "from_cluster"):
            text = session_summary(results)
        if results.message:
            text += f" — {results.message}"
        note = getattr(results, "coverage_note", None)  # a running build's snapshot: never labelled complete
        if note:
            text += f" — {note}"
        self.results_label.setText(text)

    def hit(self, row: int):
        item = self.results.item(row)
        return item.data(HIT_ROLE) if item is not None else None

    def _hit_selected(self, _row: int) -> None:
        """The selected hit shows why it ranks where it does (on demand, not on every row)."""
        self.results.doItemsLayout()  # row heights change with the why line
        self.results.viewport().update()

    def _hit_activated(self, item: QListWidgetItem) -> None:
        hit = item.data(HIT_ROLE)
        if hit is not None:
            self.hit_activated.emit(hit)

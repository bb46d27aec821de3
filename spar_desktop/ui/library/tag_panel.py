"""Left dock: filter box + tag tree; the selection becomes the file table's tag filter.

Selection semantics (faceted search): selected tags of the *same* group (Folders, Dates,
Taxonomy, ...) form one tag group — a file needs any of them; different groups must all match.
Selecting "Finance" and "HR" under Folders shows files of either folder; adding "2023" under
Dates narrows that to 2023. Selecting a group node itself adds no constraint.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from functools import partial
from typing import Optional

from PySide6.QtCore import QItemSelectionModel, QModelIndex, QPoint, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QHBoxLayout,
    QPushButton,
    QSizePolicy,
    QStackedWidget,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from spar_desktop.core.library.tag_search import MAX_MATCHES, MAX_OPENED, TagMatches
from spar_desktop.ui.base.lazy_tree_view import LazyTreeView
from spar_desktop.ui.base.tasks import TaskError, TaskRunner
from spar_desktop.ui.library import ops
from spar_desktop.ui.library.ops import TagSnapshot
from spar_desktop.ui.library.tag_menu import add_grouping_actions, show_context_menu
from spar_desktop.ui.library.tag_tree import GROUPS, TagFilterProxy, TagTreeModel

log = logging.getLogger(__name__)

MAX_AUTO_EXPAND = MAX_OPENED  # the search reads these nodes' children with the matches
OPEN_SLICE_S = 0.012  # opening the way to the matches yields to the event loop after this long


NO_TAGS = ("Tags appear here once files are indexed: one per folder and per year, quarter and month, "
           "plus your taxonomy (File ▸ Import taxonomy…). Select tags to filter the file table.")


class TagPanel(QWidget):
    # (tag groups for FileFilter, human description of the selection)
    filter_changed = Signal(object, str)
    tag_files_requested = Signal(object)  # tag id, or None to pick/create one
    untag_files_requested = Signal(int)
    import_taxonomy_requested = Signal()
    suggest_requested = Signal()  # "Suggest tags": run the tagging job now
    review_requested = Signal(object)  # tag id, or None for every suggestion

    def __init__(self, parent: Optional[QWidget] = None, runner: Optional[TaskRunner] = None) -> None:
        super().__init__(parent)
        self.runner = runner  # the filter searches on it; without one (a panel on its own) it searches here
        self.model = TagTreeModel(self)
        self.proxy = TagFilterProxy(self)
        self.proxy.setSourceModel(self.model)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Filter tags…  (Ctrl+F)")
        self.search.setClearButtonEnabled(True)
        self._count_width = 64
        # Two views: the tree, and the filter's rows (the proxy) while the filter box has text.
        # Switching views keeps the tree's layout: setting the proxy on the one view and back reset
        # it, and laying out a large tree again took 100 ms and more on each filter and clear.
        self.tree_view = self._make_view(self.model)
        self.filter_view = self._make_view(self.proxy)
        self.views = QStackedWidget()
        self.views.addWidget(self.tree_view)
        self.views.addWidget(self.filter_view)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.setSpacing(6)
        self.empty_label = QLabel(NO_TAGS)  # an empty tree says why, and how to get tags
        self.empty_label.setObjectName("muted")
        self.empty_label.setWordWrap(True)
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignHCenter)
        # A wrapped label asks for a width of its own; the dock's width is the user's choice.
        self.empty_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        layout.addWidget(self.search)
        layout.addWidget(self.views)
        layout.addWidget(self.empty_label)
        layout.addLayout(self._suggestion_row())
        self._debounce = QTimer(self, singleShot=True, interval=200)
        self._debounce.timeout.connect(self._apply_search)
        self.search.textChanged.connect(lambda _t: self._debounce.start())
        self._last_groups: tuple = ()
        self._restoring = False
        self._searching = False  # a search for the filter's text is on the runner
        self._truncated = False
        self._way: deque = deque()  # (tree node, fetched) left to open towards the matches
        self._opened = 0
        self._opening = False
        self._user_opened: list[tuple] = []  # what the user expanded while filtering (kept after)
        self._way_timer = QTimer(self, singleShot=True, interval=0)
        self._way_timer.timeout.connect(self._open_way)

    def _suggestion_row(self) -> QVBoxLayout:
        """'12 suggested' + Review…: automatic tags wait here for a person."""
        self.pending: dict[int, int] = {}
        self.suggested_label = QLabel("")
        self.suggested_label.setObjectName("muted")
        self.suggested_label.setWordWrap(True)  # the panel must stay narrow on small screens
        self.suggested_label.setToolTip("Tags suggested for files (from tag text, similar files and the LLM) "
                                        "that nobody has accepted or rejected yet")
        # "Suggest tags" lives in the Tags menu and this panel's context menu: a second button here
        # made the panel (and the window's minimum width) too wide for small screens.
        self.review_button = QPushButton("Review…")
        self.review_button.setToolTip("Accept or reject the suggested tags, per tag or per file")
        self.review_button.clicked.connect(lambda: self.review_requested.emit(None))
        # It may shrink with the dock rather than widen the window's minimum (small screens).
        self.review_button.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.review_button.setMinimumWidth(48)
        buttons = QHBoxLayout()
        buttons.addWidget(self.review_button, 1)
        buttons.addStretch(1)
        box = QVBoxLayout()
        box.setSpacing(4)
        box.addWidget(self.suggested_label)
        box.addLayout(buttons)
        self.set_pending({})
        return box

    def set_pending(self, counts: dict[int, int]) -> None:
        """Unconfirmed suggestions per tag id (review.pending_counts)."""
        self.pending = dict(counts)
        total = sum(self.pending.values())
        self.suggested_label.setText(f"Suggested: {total:,} to review" if total else "No suggestions to review")
        self.review_button.setEnabled(total > 0)

    # ------------------------------------------------------------------ view ↔ model
    def _make_view(self, model) -> QTreeView:
        view = LazyTreeView()  # an expand lays out its new rows only, not every visible row
        view.setUniformRowHeights(True)
        view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        view.setAlternatingRowColors(False)
        view.setAnimated(False)
        view.setModel(model)
        view.selectionModel().selectionChanged.connect(self._selection_changed)
        header = view.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Fixed)
        header.resizeSection(1, self._count_width)
        view.customContextMenuRequested.connect(self._context_menu)
        view.expanded.connect(self._user_expanded)
        return view

    @property
    def view(self) -> QTreeView:
        """The view shown: the tree, or the filter's rows while the filter box has text."""
        return self.views.currentWidget()  # type: ignore[return-value]

    def _src(self, index: QModelIndex) -> QModelIndex:
        """The tree model's index of a view index."""
        return self.proxy.mapToSource(index) if index.model() is self.proxy else index

    def view_index(self, source: QModelIndex, view: Optional[QTreeView] = None) -> QModelIndex:
        """The view's index of a tree model index (invalid when the filter hides it)."""
        return self.proxy.mapFromSource(source) if (view or self.view) is self.filter_view else source

    # ------------------------------------------------------------------ data
    def set_snapshot(self, snapshot: TagSnapshot) -> None:
        """Swap in fresh tags (after a scan) keeping expanded nodes and the selection."""
        filtering = self.view is self.filter_view
        expanded, selected = self._expanded_paths(self.tree_view), self._selected_paths()
        self._stop_opening()
        self.model.set_snapshot(snapshot)
        self.proxy.refresh()
        self._restore(self.tree_view, expanded, [] if filtering else selected, open_groups=not expanded)
        if filtering:
            self._restore(self.filter_view, self._user_opened, selected)
        if self.search.text().strip():  # shown or still searching: the new snapshot's tags, searched again
            self._apply_search()
        self._fit_count_column(snapshot)
        self._update_empty()
        self._selection_changed()  # emits only if the effective filter changed (a tag vanished)

    def _restore(self, view: QTreeView, expanded: list[tuple], selected: list[tuple], open_groups: bool = False,
                 clear: bool = False) -> None:
        self._restoring = True
        try:
            for path in sorted(expanded, key=len):
                index = self.view_index(self.model.index_for_path(path), view)
                if index.isValid():
                    view.expand(index)
            if open_groups:  # first load: open the groups so the top level is visible
                shown = view.model()
                for row in range(shown.rowCount()):
                    view.expand(shown.index(row, 0))
            sel = view.selectionModel()
            if clear:
                sel.clearSelection()
            for path in selected:
                index = self.view_index(self.model.index_for_path(path), view)
                if index.isValid():
                    sel.select(index, QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows)
        finally:
            self._restoring = False

    def _fit_count_column(self, snapshot: TagSnapshot) -> None:
        """The counts column as wide as its widest number: a fixed 64 px cut "100,000" to "100,…"
        on a big share, and a count must never be elided."""
        widest = self.model.infos.max_count()  # the snapshot's counts: no tag is read for it
        for root in snapshot.folder_roots:
            widest = max([widest, root.files, *root.tag_files.values()])
        # item padding (4 px each side, style.py) plus the cell's own margins
        self._count_width = self.view.fontMetrics().horizontalAdvance(f"{max(widest, 9999):,}") + 22
        for view in (self.tree_view, self.filter_view):
            view.header().resizeSection(1, self._count_width)

    def _update_empty(self) -> None:
        text = self.search.text().strip()
        if not self.model.infos:
            self.empty_label.setText(NO_TAGS)
        elif text and self.proxy.rowCount() == 0:
            self.empty_label.setText(f"No tag matches “{text}”.")
        elif text and self._truncated and self.view is self.filter_view:
            self.empty_label.setText(f"Showing the first {MAX_MATCHES:,} matching tags: type more to narrow them.")
        else:
            self.empty_label.setText("")
        self.empty_label.setVisible(bool(self.empty_label.text()))

    def selected_tag_ids(self) -> list[int]:
        ids = []
        for index in self.view.selectionModel().selectedRows(0):
            tag_id = self.model.tag_id(self._src(index))
            if tag_id is not None and tag_id not in ids:
                ids.append(tag_id)
        return ids

    def select_tag(self, tag_id: int) -> bool:
        """Select one position of a tag (used by smoke steps and 'show files with this tag')."""
        source = self.model.first_index_of_tag(tag_id)
        index = self.view_index(source)
        if not index.isValid():
            return False
        parent = index.parent()
        while parent.isValid():
            self.view.expand(parent)
            parent = parent.parent()
        self.view.selectionModel().select(
            index, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows)
        self.view.scrollTo(index)
        return True

    def clear_selection(self) -> None:
        self.view.selectionModel().clearSelection()

    # ------------------------------------------------------------------ selection → filter
    def _selection_changed(self, *_args) -> None:
        if self._restoring:
            return
        by_group: dict[str, set[int]] = {}
        labels: dict[str, list[str]] = {}
        for index in self.view.selectionModel().selectedRows(0):
            node = self.model.node(self._src(index))
            if node is None or node.tag_id is None:
                continue
            by_group.setdefault(node.group, set()).add(node.tag_id)
            labels.setdefault(node.group, []).append(self.model.infos.row(node.tag_id).value)
        order = [gid for gid, _, _ in GROUPS]
        groups = tuple(frozenset(by_group[g]) for g in order if g in by_group)
        if groups == self._last_groups:
            return
        self._last_groups = groups
        names = {gid: label for gid, label, _ in GROUPS}
        description = "; ".join(f"{names[g]}: {' or '.join(sorted(set(labels[g])))}" for g in order if g in labels)
        self.filter_changed.emit(groups, description)

    # ------------------------------------------------------------------ search
    @property
    def search_pending(self) -> bool:
        """A typed filter not shown yet (waiting, searching, or still opening the way to matches)."""
        return self._debounce.isActive() or self._searching or bool(self._way)

    def _apply_search(self) -> None:
        """The debounced filter text: searched on the runner (a newer text supersedes it), shown
        when the answer comes; clearing it is immediate."""
        text = self.search.text().strip()
        self._stop_opening()
        infos = self.model.infos
        if not text or self.runner is None:
            self._searching = False
            self._show_matches(infos.matches(text) if text else TagMatches("", frozenset(), frozenset()))
            return

        def found(matches: TagMatches) -> None:
            if infos is self.model.infos and matches.text == self.search.text().strip():
                self._searching = False
                self._show_matches(matches)
            # else a newer text (or snapshot) has its own search on the way

        def failed(error: TaskError) -> None:
            self._searching = False
            log.warning("tag filter %r: %s", text, error.message)

        self._searching = True
        self.runner.run(partial(ops.search_tags, infos, text), title="Filtering tags", key="tag-filter",
                        visible=False, on_success=found, on_failure=failed)

    def _show_matches(self, found: TagMatches) -> None:
        """A filter's answer into the view: the filter's view shows it, or the tree comes back as it
        was before the filter with what the user opened under it and the selection. The filter's
        view is collapsed and its proxy's mappings dropped before its rows change: re-filtering
        them re-accepted every row the last filter had fetched (1.5 s after a broad one at 100k)."""
        start = time.perf_counter()
        self.model.infos.remember(found)  # the rows and nodes the search read: showing them reads nothing
        self._truncated = found.truncated
        filtering, was = bool(found.text), self.view is self.filter_view
        if not was and not filtering:
            self._update_empty()
            return
        selected = self._selected_paths()  # a selected tag the new filter hides is dropped, as before
        if not was:
            self._user_opened = []
        self._restoring = True
        try:
            self.filter_view.collapseAll()
            self.proxy.set_matches(found)
            self.views.setCurrentWidget(self.filter_view if filtering else self.tree_view)
        finally:
            self._restoring = False
        if filtering:
            self._restore(self.filter_view, self._user_opened, selected, clear=True)
        else:  # the selection stays in sight
            self._restore(self.tree_view, [*self._user_opened, *(p[:n] for p in selected for n in range(1, len(p)))],
                          selected, clear=True)
        self._selection_changed()
        self._update_empty()
        if filtering:
            # Open the way to the matches (bounded: a broad filter on a huge taxonomy must not open
            # the whole DAG), a slice of OPEN_SLICE_S at a time so typing stays responsive.
            self._way = deque((node, False) for node in self.model.top_nodes() if self._shown(node))
            self._opened = 0
            self._open_way(start)

    def _user_expanded(self, index: QModelIndex) -> None:
        if index.model() is self.proxy and not self._restoring and not self._opening:
            self._user_opened.append(self.model.node(self._src(index)).path())

    def _open_way(self, start: Optional[float] = None) -> None:
        """Open nodes towards the matches until OPEN_SLICE_S has passed, then yield to the event loop.
        A node's fetch and its expand are separate steps: each is up to ~40 ms for a department of
        416 projects at 1M files, too much for one slice together."""
        wanted = self.proxy.ancestors_of_matches()
        end = (start or time.perf_counter()) + OPEN_SLICE_S
        view = self.filter_view
        self._opening = True
        while self._way and self._opened < MAX_AUTO_EXPAND and time.perf_counter() < end:
            node, fetched = self._way.popleft()
            index = self.view_index(self.model.index_of(node), view)
            if not index.isValid():
                continue
            if not fetched and self.proxy.canFetchMore(index):
                self.proxy.fetchMore(index)
                self._way.appendleft((node, True))  # expanded next, in this slice or the next
                continue
            if not view.isExpanded(index):
                view.expand(index)
            self._opened += 1
            self._way.extend((c, False) for c in node.children or () if
                             (c.tag_id in wanted if c.tag_id is not None else self._shown(c)))
        self._opening = False
        if self._opened >= MAX_AUTO_EXPAND:
            self._way.clear()
        if self._way:
            # Painted once the way is open: a paint between slices (the view's data() for each
            # visible row, in Python) doubled each slice's stall.
            view.setUpdatesEnabled(False)
            self._way_timer.start()
        else:
            view.setUpdatesEnabled(True)

    def _shown(self, node) -> bool:
        return self.view_index(self.model.index_of(node), self.filter_view).isValid()

    def _stop_opening(self) -> None:
        self._way.clear()
        self._way_timer.stop()
        self.filter_view.setUpdatesEnabled(True)

    # ------------------------------------------------------------------ state helpers
    def _expanded_paths(self, view: QTreeView) -> list[tuple]:
        """Paths of the expanded nodes ``view`` shows."""
        shown = view.model()
        out = []
        stack = [QModelIndex()]
        while stack:
            parent = stack.pop()
            for row in range(shown.rowCount(parent)):
                index = shown.index(row, 0, parent)
                if view.isExpanded(index):
                    out.append(self.model.node(self._src(index)).path())
                    stack.append(index)
        return out

    def _selected_paths(self) -> list[tuple]:
        return [self.model.node(self._src(i)).path() for i in self.view.selectionModel().selectedRows(0)]

    # ------------------------------------------------------------------ context menu
    def _context_menu(self, pos: QPoint) -> None:
        show_context_menu(self, pos)

    def _add_grouping_actions(self, menu: QMenu, index: QModelIndex) -> None:
        add_grouping_actions(self, menu, index)

    def group_tags(self, tag_ids: tuple[int, ...], parent_id: Optional[int]):
        """Open the grouping dialog on the window that holds this panel (its runner, library and
        settings); None when the panel sits in no such window."""
        from spar_desktop.ui.library.tag_grouping import open_tag_grouping

        host = self.parentWidget()
        while host is not None and not all(hasattr(host, a) for a in ("runner", "library", "settings")):
            host = host.parentWidget()
        return open_tag_grouping(host, tag_ids, parent_id) if host is not None else None

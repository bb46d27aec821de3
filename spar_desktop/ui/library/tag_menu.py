"""The tag panel's context menu: tag or untag the selected files, review suggestions, group sibling
tags, import a taxonomy."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, QPoint
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu

from spar_desktop.core.tagging.grouping_proposal import MIN_TAGS


def show_context_menu(panel: Any, pos: QPoint) -> None:
    index = panel.view.indexAt(pos)
    tag_id = panel.model.tag_id(panel._src(index)) if index.isValid() else None
    menu = QMenu(panel)
    if tag_id is not None:
        label = panel.model.infos.row(tag_id).value
        act = QAction(f"Tag selected files with “{label}”", menu)
        act.triggered.connect(lambda: panel.tag_files_requested.emit(tag_id))
        menu.addAction(act)
    act = QAction("Tag selected files…", menu)
    act.triggered.connect(lambda: panel.tag_files_requested.emit(None))
    menu.addAction(act)
    if tag_id is not None:
        act = QAction(f"Untag “{panel.model.infos.row(tag_id).value}” from selected files", menu)
        act.triggered.connect(lambda: panel.untag_files_requested.emit(tag_id))
        menu.addAction(act)
    menu.addSeparator()
    waiting = panel.pending.get(tag_id, 0) if tag_id is not None else 0
    if waiting:
        act = QAction(f"Review {waiting:,} suggestion{'s' if waiting != 1 else ''} of “"
                      f"{panel.model.infos.row(tag_id).value}”…", menu)
        act.triggered.connect(lambda: panel.review_requested.emit(tag_id))
        menu.addAction(act)
    act = QAction("Review suggestions…", menu)
    act.setEnabled(bool(panel.pending))
    act.triggered.connect(lambda: panel.review_requested.emit(None))
    menu.addAction(act)
    act = QAction("Suggest tags", menu)
    act.triggered.connect(panel.suggest_requested)
    menu.addAction(act)
    add_grouping_actions(panel, menu, index)
    menu.addSeparator()
    act = QAction("Import taxonomy…", menu)
    act.triggered.connect(panel.import_taxonomy_requested)
    menu.addAction(act)
    menu.popup(panel.view.viewport().mapToGlobal(pos))

# ------------------------------------------------------------------ grouping sibling tags
def add_grouping_actions(panel: Any, menu: QMenu, index: QModelIndex) -> None:
    """"Group these tags…" on selected siblings, "Group its children…" on a parent."""
    nodes = [panel.model.node(panel._src(i)) for i in panel.view.selectionModel().selectedRows(0)]
    nodes = [n for n in nodes if n is not None and n.tag_id is not None]
    if len(nodes) >= MIN_TAGS and len({id(n.parent) for n in nodes}) == 1:
        parent_id = nodes[0].parent.tag_id if nodes[0].parent is not None else None
        ids = tuple(dict.fromkeys(n.tag_id for n in nodes))
        act = QAction(f"Group these {len(ids)} tags…", menu)
        act.triggered.connect(lambda: panel.group_tags(ids, parent_id))
        menu.addAction(act)
    node = panel.model.node(panel._src(index)) if index.isValid() else None
    if node is None or (node.tag_id is None and node.root is None and node.group == "folders" and panel.model.roots):
        return  # Folders with roots under it: its rows are roots, not tags
    kids = tuple(panel.model._child_ids(node))
    if len(kids) >= MIN_TAGS:
        act = QAction("Group its children…" if node.tag_id is not None else "Group its tags…", menu)
        act.triggered.connect(lambda: panel.group_tags(kids, node.tag_id))
        menu.addAction(act)

"""Tag tree ▸ "Group these tags…" / "Group its children…": intermediate tags proposed for sibling
tags, shown as an editable tree — a group's name is editable, its checkbox keeps or drops it, a
tag moves between groups (right-click ▸ Move to) — and accepted into the tag tree. Nothing changes
until Accept. The proposal (model or clustering) and the accept run on the task runner; only
frozen GroupingProposal values come back to this thread.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Optional, Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView, QCheckBox, QDialog, QDialogButtonBox, QHBoxLayout, QLabel, QMenu, QPushButton, QTreeWidget,
    QTreeWidgetItem, QVBoxLayout, QWidget,
)

from spar_desktop.core.changes import Changes
from spar_desktop.core.library.database import Library
from spar_desktop.core.tagging.grouping_proposal import GroupingError, GroupingProposal, GroupingReport
from spar_desktop.ui.base.tasks import TaskError, TaskRunner

GROUP_ROLE = Qt.ItemDataRole.UserRole + 1  # a group row: its id
TAG_ROLE = Qt.ItemDataRole.UserRole + 2  # a tag row: its tag id
UNGROUPED = "Not grouped"


# ---------------------------------------------------------------- ops (worker thread, no widgets)
def propose_op(library: Library, settings: Any, tag_ids: tuple[int, ...], parent_id: Optional[int], use_llm: bool,
               progress, cancel) -> GroupingProposal:
    from spar_desktop.core.tagging.grouping import ollama_grouper, propose_grouping
    from spar_desktop.core.tagging.grouping_proposal import select_siblings
    from spar_desktop.core.workspaces.engine import encoder_for

    with library.session() as s:
        selection = select_siblings(s, tag_ids, parent_id)
    generate, why_not = ollama_grouper(settings) if use_llm else (None, "")
    return propose_grouping(selection, lambda texts: encoder_for(settings).encode(texts), generate,
                            why_no_model=why_not or "")


def accept_op(library: Library, proposal: GroupingProposal, progress, cancel) -> GroupingReport:
    from spar_desktop.core.tagging.grouping_proposal import accept_grouping

    with library.session() as s:
        return accept_grouping(s, proposal)


# ---------------------------------------------------------------- the dialog
class TagGroupingDialog(QDialog):
    tags_changed = Signal(object)  # GroupingReport, after the groups went into the tag tree

    def __init__(self, runner: TaskRunner, library: Library, settings: Any, tag_ids: Sequence[int],
                 parent_id: Optional[int] = None, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Group tags")
        self.resize(560, 520)
        self.runner, self.library, self.settings = runner, library, settings
        self.tag_ids, self.parent_id = tuple(tag_ids), parent_id
        self.proposal: Optional[GroupingProposal] = None
        self._filling = False
        self.summary = QLabel("Grouping the tags…")
        self.summary.setWordWrap(True)
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["Group / tag"])
        edit = QAbstractItemView.EditTrigger
        self.tree.setEditTriggers(edit.DoubleClicked | edit.EditKeyPressed | edit.SelectedClicked)
        self.tree.itemChanged.connect(self._item_changed)
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.tree.customContextMenuRequested.connect(self._context_menu)
        self.status = QLabel()
        self.status.setObjectName("muted")
        self.status.setWordWrap(True)
        self.use_llm = QCheckBox("Ask the Ollama model")
        self.use_llm.setChecked(True)
        self.use_llm.setToolTip("One prompt listing the tags; without a server (or with an unusable reply) the "
                                "tags are grouped by the similarity of their names")
        self.regroup_button = QPushButton("Group again")
        self.regroup_button.clicked.connect(self.propose)
        top = QHBoxLayout()
        top.addWidget(self.summary, 1)
        top.addWidget(self.use_llm)
        top.addWidget(self.regroup_button)
        self.buttons = QDialogButtonBox()
        self.accept_button = self.buttons.addButton("Accept into tags", QDialogButtonBox.ButtonRole.AcceptRole)
        self.close_button = self.buttons.addButton(QDialogButtonBox.StandardButton.Close)
        self.accept_button.clicked.connect(self.accept_grouping)
        self.close_button.clicked.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.tree, 1)
        layout.addWidget(QLabel("Double-click a group to rename it; untick it to leave it out; right-click a "
                                "tag to move it to another group. Files keep their tags."))
        layout.addWidget(self.status)
        layout.addWidget(self.buttons)
        self._update_buttons()
        self.propose()

    # -------------------------------------------------------------- showing
    def show_proposal(self, proposal: Optional[GroupingProposal], unticked: frozenset[str] = frozenset()) -> None:
        self.proposal = proposal
        self._filling = True
        self.tree.clear()
        if proposal is not None:
            sel = proposal.selection
            by = "the Ollama model" if proposal.method == "ollama" else "the similarity of their names"
            where = f"under “{sel.parent_label}”" if sel.parent_label else "at the top level"
            self.summary.setText(f"{len(proposal.groups)} groups for {len(sel.tags)} tags {where}, grouped by {by}.")
            for group in proposal.groups:
                item = QTreeWidgetItem([group.name])
                item.setData(0, GROUP_ROLE, group.id)
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable | Qt.ItemFlag.ItemIsUserCheckable)
                item.setCheckState(0, Qt.CheckState.Unchecked if group.id in unticked else Qt.CheckState.Checked)
                self._add_tags(item, group.tag_ids)
            if proposal.ungrouped:
                item = QTreeWidgetItem([UNGROUPED])
                item.setFlags(Qt.ItemFlag.ItemIsEnabled)
                self._add_tags(item, proposal.ungrouped)
            self.tree.expandAll()
            if proposal.note:
                self.status.setText(proposal.note)
        self._filling = False
        self._update_buttons()

    def _add_tags(self, parent: QTreeWidgetItem, tag_ids: Sequence[int]) -> None:
        assert self.proposal is not None
        self.tree.addTopLevelItem(parent)
        for tag_id in tag_ids:
            child = QTreeWidgetItem([self.proposal.selection.label_of(tag_id)])
            child.setData(0, TAG_ROLE, tag_id)
            child.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
            parent.addChild(child)

    def group_items(self) -> list[QTreeWidgetItem]:
        items = [self.tree.topLevelItem(i) for i in range(self.tree.topLevelItemCount())]
        return [i for i in items if i.data(0, GROUP_ROLE) is not None]

    def item_for(self, group_id: str) -> Optional[QTreeWidgetItem]:
        return next((i for i in self.group_items() if i.data(0, GROUP_ROLE) == group_id), None)

    def _unticked(self) -> frozenset[str]:
        return frozenset(i.data(0, GROUP_ROLE) for i in self.group_items() if i.checkState(0) != Qt.CheckState.Checked)

    def _update_buttons(self) -> None:
        self.accept_button.setEnabled(self.proposal is not None and bool(self.kept().groups))

    # -------------------------------------------------------------- editing
    def _item_changed(self, item: QTreeWidgetItem, column: int) -> None:
        if self._filling or self.proposal is None or item.data(0, GROUP_ROLE) is None:
            return
        group_id = item.data(0, GROUP_ROLE)
        if item.text(0) != self.proposal.group(group_id).name:
            try:
                self.proposal = self.proposal.rename(group_id, item.text(0))
            except GroupingError as exc:
                self.status.setText(str(exc))
            self._filling = True
            item.setText(0, self.proposal.group(group_id).name)  # cleaned, or the old name back
            self._filling = False
        self._update_buttons()

    def _context_menu(self, pos) -> None:
        item = self.tree.itemAt(pos)
        if item is None or item.data(0, TAG_ROLE) is None or self.proposal is None:
            return
        tag_id = item.data(0, TAG_ROLE)
        here = item.parent().data(0, GROUP_ROLE) if item.parent() is not None else None
        menu = QMenu(self)
        move = menu.addMenu("Move to")
        for group in self.proposal.groups:
            if group.id != here:
                move.addAction(group.name, partial(self.move_tag, tag_id, group.id))
        if here is not None:
            move.addAction(UNGROUPED, partial(self.move_tag, tag_id, None))
        menu.popup(self.tree.viewport().mapToGlobal(pos))

    def move_tag(self, tag_id: int, group_id: Optional[str]) -> None:
        """Move a tag into a group (None: out of every group), keeping the other groups' ticks."""
        if self.proposal is None:
            return
        try:
            moved = self.proposal.move(tag_id, group_id)
        except GroupingError as exc:
            self.status.setText(str(exc))
            return
        self.show_proposal(moved, self._unticked())

    def kept(self) -> GroupingProposal:
        """The proposal without the unticked groups."""
        assert self.proposal is not None
        proposal = self.proposal
        for group_id in self._unticked():
            proposal = proposal.drop(group_id)
        return proposal

    # -------------------------------------------------------------- actions
    def propose(self) -> None:
        self.regroup_button.setEnabled(False)
        self.accept_button.setEnabled(False)
        self.status.setText("Grouping the tags…")
        self.runner.run(partial(propose_op, self.library, self.settings, self.tag_ids, self.parent_id,
                                self.use_llm.isChecked()),
                        title="Grouping tags", key="tag-grouping", on_success=self._proposed, on_failure=self._failed)

    def _proposed(self, proposal: GroupingProposal) -> None:
        self.status.setText("")
        self.show_proposal(proposal)
        if not self.status.text():
            self.status.setText("Rename, untick or move, then accept; nothing has changed yet.")
        self.regroup_button.setEnabled(True)

    def accept_grouping(self) -> None:
        if self.proposal is None:
            return
        self.accept_button.setEnabled(False)
        self.regroup_button.setEnabled(False)
        self.runner.run(partial(accept_op, self.library, self.kept()), title="Grouping tags in the tag tree",
                        on_success=self._accepted, on_failure=self._failed, changes=Changes(tags=True))

    def _accepted(self, report: GroupingReport) -> None:
        self.status.setText(report.message() + ".")
        self.tags_changed.emit(report)

    def _failed(self, err: TaskError) -> None:
        self.status.setText(f"{err.title} failed: {err.message}")
        self.regroup_button.setEnabled(True)
        self._update_buttons()


def open_tag_grouping(window: Any, tag_ids: Sequence[int], parent_id: Optional[int] = None) -> TagGroupingDialog:
    """Open the dialog for a MainWindow (non-modal; one at a time): accepting announces
    Changes(tags=True) on the window's task runner, which reloads its tag tree."""
    old = getattr(window, "_tag_grouping", None)
    if old is not None:
        old.close()
        old.deleteLater()
    dialog = TagGroupingDialog(window.runner, window.library, window.settings, tag_ids, parent_id, window)
    window._tag_grouping = dialog
    dialog.show()
    dialog.raise_()
    dialog.activateWindow()
    return dialog

"""Tags ▸ Propose topics…: the induced topic hierarchy as an editable tree (names editable, a
checkbox per topic to keep or drop it, file counts and key phrases), with Propose / Accept /
Discard / Close. Every core call (induction, loading, saving, accepting) runs through the task
runner; only Proposal values (frozen) cross back to this thread.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone
from functools import partial
from pathlib import Path
from typing import Any, Optional

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView, QCheckBox, QDialog, QDialogButtonBox, QHBoxLayout, QHeaderView, QLabel, QMenu, QPushButton,
    QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget,
)

from spar_desktop.core.changes import Changes
from spar_desktop.core.library.database import Library
from spar_desktop.core.tagging.proposal import AcceptReport, Proposal, ProposalError
from spar_desktop.ui.base.tasks import TaskError, TaskRunner

ID_ROLE = Qt.ItemDataRole.UserRole + 1


# ---------------------------------------------------------------- ops (worker thread, no widgets)
def induce_op(library: Library, settings: Any, use_llm: bool, progress, cancel) -> Proposal:
    from spar_desktop.core.tagging.hierarchy import induce_for_library, ollama_namer
    from spar_desktop.core.workspaces.engine import encoder_for

    namer = ollama_namer(settings)[0] if use_llm else None
    return induce_for_library(library, settings, encoder_for(settings), namer, progress=progress, cancel=cancel)


def load_op(data_dir: Path, progress, cancel) -> Optional[Proposal]:
    from spar_desktop.core.tagging.proposal import load_proposal

    return load_proposal(data_dir)


def save_op(data_dir: Path, proposal: Proposal, progress, cancel) -> Proposal:
    from spar_desktop.core.tagging.proposal import save_proposal

    save_proposal(data_dir, proposal)
    return proposal


def accept_op(library: Library, data_dir: Path, proposal: Proposal, progress, cancel) -> tuple[Proposal, AcceptReport]:
    from spar_desktop.core.tagging.proposal import accept_proposal, save_proposal

    with library.session() as s:
        report = accept_proposal(s, proposal)
    proposal = replace(proposal, accepted_at=datetime.now(timezone.utc).isoformat(timespec="seconds"))
    save_proposal(data_dir, proposal)
    return proposal, report


def discard_op(data_dir: Path, progress, cancel) -> bool:
    from spar_desktop.core.tagging.proposal import discard_proposal

    return discard_proposal(data_dir)


# ---------------------------------------------------------------- the dialog
class TopicProposalDialog(QDialog):
    tags_changed = Signal(object)  # AcceptReport, after the proposal went into the tag tree

    def __init__(self, runner: TaskRunner, library: Library, settings: Any, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Propose topics")
        self.resize(760, 560)
        self.runner, self.library, self.settings = runner, library, settings
        self.data_dir = Path(settings.data_dir)
        self.proposal: Optional[Proposal] = None
        self._filling = False
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.tree = QTreeWidget()
        self.tree.setColumnCount(3)
        self.tree.setHeaderLabels(["Topic", "Files", "Key phrases"])
        edit = QAbstractItemView.EditTrigger
        self.tree.setEditTriggers(edit.DoubleClicked | edit.EditKeyPressed | edit.SelectedClicked)
        header = self.tree.header()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.resizeSection(0, 260)
        header.resizeSection(1, 60)
        header.setStretchLastSection(True)
        self.tree.itemChanged.connect(self._item_changed)
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.tree.customContextMenuRequested.connect(self._context_menu)
        self.status = QLabel()
        self.status.setObjectName("muted")
        self.status.setWordWrap(True)
        self.use_llm = QCheckBox("Name topics with the Ollama model")
        self.use_llm.setToolTip("When no server answers, topics are named from their key phrases")
        self.propose_button = QPushButton("Propose topics")
        self.propose_button.clicked.connect(self.propose)
        top = QHBoxLayout()
        top.addWidget(self.summary, 1)
        top.addWidget(self.use_llm)
        top.addWidget(self.propose_button)
        self.buttons = QDialogButtonBox()
        self.accept_button = self.buttons.addButton("Accept into tags", QDialogButtonBox.ButtonRole.AcceptRole)
        self.discard_button = self.buttons.addButton("Discard", QDialogButtonBox.ButtonRole.DestructiveRole)
        self.close_button = self.buttons.addButton(QDialogButtonBox.StandardButton.Close)
        self.accept_button.clicked.connect(self.accept_proposal)
        self.discard_button.clicked.connect(self.discard)
        self.close_button.clicked.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.tree, 1)
        layout.addWidget(QLabel("Double-click a name to rename it; untick a topic to leave it out "
                                "(an unticked sub-topic's files stay in its topic); right-click a "
                                "sub-topic to move it under another topic."))
        layout.addWidget(self.status)
        layout.addWidget(self.buttons)
        self.show_proposal(None)
        self.runner.run(partial(load_op, self.data_dir), title="Loading the topic proposal", visible=False,
                        on_success=self.show_proposal, on_failure=self._failed)

    # -------------------------------------------------------------- showing
    def show_proposal(self, proposal: Optional[Proposal]) -> None:
        self.proposal = proposal
        self._filling = True
        self.tree.clear()
        if proposal is None:
            self.summary.setText("No topic proposal yet. SPAR groups the indexed files by their key phrases into "
                                 "topics and sub-topics; nothing is tagged until you accept.")
        else:
            named = "the Ollama model" if proposal.named_by == "ollama" else "their key phrases"
            self.summary.setText(f"{len(proposal.nodes)} topics for {proposal.file_count:,} files, named by {named}"
                                 + (f"; accepted {proposal.accepted_at}" if proposal.accepted_at else "") + ".")
            for node in proposal.nodes:
                item = self._item(node)
                self.tree.addTopLevelItem(item)
                for child in node.children:
                    item.addChild(self._item(child))
                item.setExpanded(True)
        self._filling = False
        self._update_buttons()

    def _item(self, node) -> QTreeWidgetItem:
        item = QTreeWidgetItem([node.name, f"{node.file_count:,}", ", ".join(node.phrases[:6])])
        item.setData(0, ID_ROLE, node.id)
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable | Qt.ItemFlag.ItemIsUserCheckable)
        item.setCheckState(0, Qt.CheckState.Checked)
        item.setTextAlignment(1, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return item

    def _update_buttons(self) -> None:
        has = self.proposal is not None
        self.accept_button.setEnabled(has and bool(self.kept().nodes))
        self.discard_button.setEnabled(has)

    def _items(self) -> list[QTreeWidgetItem]:
        tops = [self.tree.topLevelItem(i) for i in range(self.tree.topLevelItemCount())]
        return [item for top in tops for item in [top] + [top.child(k) for k in range(top.childCount())]]

    def item_for(self, node_id: str) -> Optional[QTreeWidgetItem]:
        return next((item for item in self._items() if item.data(0, ID_ROLE) == node_id), None)

    # -------------------------------------------------------------- editing
    def _item_changed(self, item: QTreeWidgetItem, column: int) -> None:
        if self._filling or self.proposal is None or column != 0:
            return
        node_id = item.data(0, ID_ROLE)
        node, _ = self.proposal.find(node_id)
        if item.text(0) != node.name:
            try:
                self.proposal = self.proposal.rename(node_id, item.text(0))
            except ProposalError as exc:
                self.status.setText(str(exc))
            self._filling = True
            item.setText(0, self.proposal.find(node_id)[0].name)  # cleaned, or the old name back
            self._filling = False
            self._save()
        # An unticked topic greys its sub-topics: they go with it.
        if item.parent() is None:
            for k in range(item.childCount()):
                item.child(k).setDisabled(item.checkState(0) != Qt.CheckState.Checked)
        self._update_buttons()

    def _context_menu(self, pos) -> None:
        item = self.tree.itemAt(pos)
        if item is None or item.parent() is None or self.proposal is None:
            return
        menu = QMenu(self)
        move = menu.addMenu("Move to")
        for node in self.proposal.nodes:
            if node.id != item.parent().data(0, ID_ROLE):
                move.addAction(node.name, partial(self.move_subtopic, item.data(0, ID_ROLE), node.id))
        menu.popup(self.tree.viewport().mapToGlobal(pos))

    def move_subtopic(self, node_id: str, top_id: str) -> None:
        """Move a sub-topic under another topic, keeping the other rows' ticks."""
        if self.proposal is None:
            return
        try:
            moved = self.proposal.move(node_id, top_id)
        except ProposalError as exc:
            self.status.setText(str(exc))
            return
        unticked = {item.data(0, ID_ROLE) for item in self._items() if item.checkState(0) != Qt.CheckState.Checked}
        self.show_proposal(moved)
        for node_id in unticked:
            item = self.item_for(node_id)
            if item is not None:
                item.setCheckState(0, Qt.CheckState.Unchecked)
        self._save()

    def kept(self) -> Proposal:
        """The proposal without the unticked topics."""
        assert self.proposal is not None
        proposal = self.proposal
        for i in range(self.tree.topLevelItemCount()):
            top = self.tree.topLevelItem(i)
            if top.checkState(0) != Qt.CheckState.Checked:
                proposal = proposal.remove(top.data(0, ID_ROLE))
                continue
            for k in range(top.childCount()):
                if top.child(k).checkState(0) != Qt.CheckState.Checked:
                    proposal = proposal.remove(top.child(k).data(0, ID_ROLE))
        return proposal

    def _save(self) -> None:
        if self.proposal is not None:
            self.runner.run(partial(save_op, self.data_dir, self.proposal), title="Saving the topic proposal",
                            visible=False, key="topic-proposal-save", on_failure=self._failed)

    # -------------------------------------------------------------- actions
    def propose(self) -> None:
        self.propose_button.setEnabled(False)
        self.status.setText("Proposing topics…")
        self.runner.run(partial(induce_op, self.library, self.settings, self.use_llm.isChecked()),
                        title="Proposing topics", key="topic-proposal", on_success=self._proposed,
                        on_failure=self._failed, on_progress=lambda p: self.status.setText(p.message),
                        on_cancelled=lambda: self._done("Stopped; nothing changed."))

    def _proposed(self, proposal: Proposal) -> None:
        self.show_proposal(proposal)
        self._done("A new proposal: rename or untick topics, then accept it into the tags.")

    def accept_proposal(self) -> None:
        if self.proposal is None:
            return
        self.accept_button.setEnabled(False)
        self.runner.run(partial(accept_op, self.library, self.data_dir, self.kept()), title="Adding topics to the tags",
                        on_success=self._accepted, on_failure=self._failed, changes=Changes(tags=True))

    def _accepted(self, result: tuple[Proposal, AcceptReport]) -> None:
        proposal, report = result
        self.show_proposal(proposal)
        self._done(report.message() + ". The topics are under Automatic tags.")
        self.tags_changed.emit(report)

    def discard(self) -> None:
        self.runner.run(partial(discard_op, self.data_dir), title="Discarding the topic proposal", visible=False,
                        on_success=lambda _: (self.show_proposal(None), self._done("Proposal discarded.")),
                        on_failure=self._failed)

    def _done(self, message: str) -> None:
        self.status.setText(message)
        self.propose_button.setEnabled(True)
        self._update_buttons()

    def _failed(self, err: TaskError) -> None:
        self._done(f"{err.title} failed: {err.message}")


def open_topic_proposal(window: Any) -> TopicProposalDialog:
    """Open the dialog for a MainWindow (non-modal); accepting announces Changes(tags=True) on the
    window's task runner, which reloads its tag tree."""
    dialog = getattr(window, "_topic_proposal", None)
    if dialog is None:
        dialog = TopicProposalDialog(window.runner, window.library, window.settings, window)
        window._topic_proposal = dialog
    dialog.show()
    dialog.raise_()
    dialog.activateWindow()
    return dialog

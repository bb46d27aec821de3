"""Tag suggestions in the app: the background job's op, the review dialog, and the wiring that
ties the tag panel's "Suggested" row, the dialog and the library controller together.

Every core call runs on the TaskRunner (ops are module-level functions returning frozen values);
the dialog only shows what they return. Reviewing per tag or per file: the dialog opens on one
tag (the tag tree's context menu), one file (``open_for(file_id=...)``) or everything.
"""

from __future__ import annotations

import os
from functools import partial
from typing import Any, Callable, Optional

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QDoubleSpinBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from spar_desktop.core.changes import Changes
from spar_desktop.core.config import Settings
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.tag_view import TagNames
from spar_desktop.core.tagging import review
from spar_desktop.core.tagging.review import Suggestion
from spar_desktop.ui.base.tasks import TaskError, TaskRunner

JOB_KEY = "tag-suggestions"
COLUMNS = ("Score", "Tag", "File", "From")
SOURCE_NAMES = {"auto": "similar files / tag text", "llm": "LLM"}
TAGS = Changes(tags=True)  # a decision confirms or rejects assignments: the tree, table and details reload


# -- ops (worker thread; frozen values back) ------------------------------------------------------
def tagging_op(library: Library, settings: Settings, use_llm: bool, progress, cancel):
    """The tagging job (core/tagging/job.py) with the app's encoder; the LLM only when asked for
    and reachable (after a scan the job runs without it: seconds per file is not background work)."""
    from spar_desktop.core.tagging.job import run_tagging
    from spar_desktop.core.workspaces.engine import encoder_for

    from spar_desktop.core.tagging.llm import ollama_classifier

    classify = ollama_classifier(settings)[0] if use_llm else None
    return run_tagging(library, settings, encoder_for(settings), classify, progress=progress, cancel=cancel)


def load_counts(library: Library, _progress=None, _cancel=None) -> tuple[tuple[int, int], ...]:
    return tuple(sorted(review.pending_counts(library).items()))


def load_queue(library: Library, tag_id: Optional[int], file_id: Optional[int], _progress=None,
               _cancel=None) -> tuple[Suggestion, ...]:
    return tuple(review.pending(library, tag_id, file_id))


def decide_op(library: Library, action: str, pairs: tuple[tuple[int, int], ...], _progress=None, _cancel=None) -> str:
    if action == "accept":
        n = review.accept(library, pairs)
        return f"Accepted {n} suggestion{'s' if n != 1 else ''}"
    n = review.reject(library, pairs)
    return f"Rejected {n} suggestion{'s' if n != 1 else ''} (not suggested again)"


def accept_above_op(library: Library, threshold: float, tag_id: Optional[int], file_id: Optional[int],
                    _progress=None, _cancel=None) -> str:
    if file_id is None:
        n = review.accept_above(library, threshold, tag_id)
    else:
        n = review.accept(library, [(s.file_id, s.tag_id) for s in review.pending(library, tag_id, file_id, threshold)])
    return f"Accepted {n} suggestion{'s' if n != 1 else ''} scored {threshold:.2f} or more"


# -- the dialog ------------------------------------------------------------------------------------
class TagReviewDialog(QDialog):
    """Pending suggestions, best first: accept or reject the selected rows, or accept everything
    at or above a score. Emits ``changed`` after every decision (tags and counts are stale)."""

    changed = Signal()

    def __init__(self, library: Library, runner: TaskRunner, tag_names: Callable[[], dict[int, str]],
                 parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Review tag suggestions")
        self.resize(820, 520)
        self.library, self.runner, self.tag_names = library, runner, tag_names
        self.file_id: Optional[int] = None
        self.rows: tuple[Suggestion, ...] = ()
        self.tag_box = QComboBox()
        self.tag_box.currentIndexChanged.connect(lambda _i: self.reload())
        self.file_label = QLabel("")
        self.all_files = QPushButton("All files")
        self.all_files.clicked.connect(lambda: self.open_for(self.current_tag(), None))
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.setTextElideMode(Qt.TextElideMode.ElideMiddle)  # a long path keeps its file name
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        for col in (0, 1, 3):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.ResizeToContents)
        self.accept_button = QPushButton("Accept selected")
        self.reject_button = QPushButton("Reject selected")
        self.accept_button.clicked.connect(lambda: self._decide("accept"))
        self.reject_button.clicked.connect(lambda: self._decide("reject"))
        self.threshold = QDoubleSpinBox()
        self.threshold.setRange(0.0, 1.0)
        self.threshold.setSingleStep(0.05)
        self.threshold.setDecimals(2)
        self.threshold.setValue(0.7)
        self.threshold.valueChanged.connect(lambda _v: self._update_buttons())
        self.bulk_button = QPushButton("Accept all at or above")
        self.bulk_button.clicked.connect(self._accept_above)
        self.status = QLabel("")
        self.status.setObjectName("muted")
        close = QPushButton("Close")
        close.clicked.connect(self.close)
        top = QHBoxLayout()
        top.addWidget(QLabel("Tag:"))
        top.addWidget(self.tag_box, 1)
        top.addWidget(self.file_label)
        top.addWidget(self.all_files)
        bottom = QHBoxLayout()
        for w in (self.accept_button, self.reject_button):
            bottom.addWidget(w)
        bottom.addSpacing(16)
        bottom.addWidget(self.bulk_button)
        bottom.addWidget(self.threshold)
        bottom.addStretch(1)
        bottom.addWidget(close)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.status)
        layout.addLayout(bottom)
        self.table.itemSelectionChanged.connect(self._update_buttons)
        self._update_buttons()

    # -- what is shown ----------------------------------------------------------------------------
    def current_tag(self) -> Optional[int]:
        return self.tag_box.currentData()

    def set_counts(self, counts: dict[int, int], keep: Optional[int] = None) -> None:
        """Fill the tag chooser: every tag with pending suggestions, most first."""
        names = self.tag_names()
        keep = self.current_tag() if keep is None else keep
        self.tag_box.blockSignals(True)
        self.tag_box.clear()
        self.tag_box.addItem(f"All suggested tags ({sum(counts.values()):,})", None)
        for tag_id, n in sorted(counts.items(), key=lambda kv: (-kv[1], names.get(kv[0], ""))):
            self.tag_box.addItem(f"{names.get(tag_id, tag_id)} ({n:,})", tag_id)
        index = self.tag_box.findData(keep) if keep is not None else 0
        self.tag_box.setCurrentIndex(max(index, 0))
        self.tag_box.blockSignals(False)

    def open_for(self, tag_id: Optional[int] = None, file_id: Optional[int] = None) -> None:
        """Show one tag's suggestions, one file's, or all; loads the counts, then the rows."""
        self.file_id = file_id
        self.file_label.setVisible(file_id is not None)
        self.all_files.setVisible(file_id is not None)

        def counted(counts: tuple[tuple[int, int], ...]) -> None:
            self.set_counts(dict(counts), keep=tag_id)
            self.reload()

        self.runner.run(partial(load_counts, self.library), title="Loading tag suggestions", key="tag-review-counts",
                        visible=False, on_success=counted, on_failure=self._failed)
        self.show()
        self.raise_()

    def reload(self) -> None:
        self.runner.run(partial(load_queue, self.library, self.current_tag(), self.file_id),
                        title="Loading tag suggestions", key="tag-review-rows", visible=False,
                        on_success=self.set_rows, on_failure=self._failed)

    def set_rows(self, rows: tuple[Suggestion, ...]) -> None:
        self.rows = tuple(rows)
        self.table.setRowCount(len(self.rows))
        for r, s in enumerate(self.rows):
            cells = (f"{s.score:.2f}", s.tag_value, s.path, SOURCE_NAMES.get(s.source, s.source))
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if c == 2:
                    item.setToolTip(s.path)
                    item.setTextAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(r, c, item)
        if self.file_id is not None:
            name = os.path.basename(self.rows[0].path) if self.rows else "this file"
            self.file_label.setText(f"File: {name}")
        self.status.setText(f"{len(self.rows):,} suggestion{'s' if len(self.rows) != 1 else ''} waiting for review"
                            if self.rows else "Nothing to review here.")
        self._update_buttons()

    def selected_pairs(self) -> tuple[tuple[int, int], ...]:
        rows = sorted({i.row() for i in self.table.selectionModel().selectedRows()})
        return tuple((self.rows[r].file_id, self.rows[r].tag_id) for r in rows if r < len(self.rows))

    def _update_buttons(self) -> None:
        chosen = bool(self.table.selectionModel().selectedRows())
        self.accept_button.setEnabled(chosen)
        self.reject_button.setEnabled(chosen)
        above = sum(1 for s in self.rows if s.score >= self.threshold.value())
        self.bulk_button.setEnabled(above > 0)
        self.bulk_button.setText(f"Accept all {above:,} at or above")

    # -- decisions ---------------------------------------------------------------------------------
    def _decide(self, action: str) -> None:
        pairs = self.selected_pairs()
        if pairs:
            self.runner.run(partial(decide_op, self.library, action, pairs), title="Reviewing tag suggestions",
                            on_success=self._done, on_failure=self._failed, changes=TAGS)

    def _accept_above(self) -> None:
        self.runner.run(partial(accept_above_op, self.library, self.threshold.value(), self.current_tag(),
                                self.file_id),
                        title="Accepting tag suggestions", on_success=self._done, on_failure=self._failed,
                        changes=TAGS)

    def _done(self, message: str) -> None:
        self.status.setText(message)
        self.changed.emit()
        self.open_for(self.current_tag(), self.file_id)

    def _failed(self, err: TaskError) -> None:
        self.status.setText(f"{err.title} failed: {err.message}")


# -- wiring ----------------------------------------------------------------------------------------
class TagSuggestions(QObject):
    """Connects the tag panel, the controller and the dialog in a main window: ``TagSuggestions(window)``.
    Needs ``window.tag_panel``, ``.controller``, ``.runner``, ``.library`` and ``.settings``."""

    def __init__(self, window: Any, auto: Optional[bool] = None) -> None:
        super().__init__(window)
        self.window = window
        self.dialog: Optional[TagReviewDialog] = None
        c = window.controller
        c.settings_provider = lambda: window.settings
        # After a scan that found something new, the job runs by itself unless the settings say not
        # (Settings ▸ Reading files, SPAR_AUTO_TAGGING=0); None follows them as they change.
        c.auto_tagging = auto
        c.tagging_finished.connect(lambda _report: self.refresh())
        c.tags_loaded.connect(lambda _snapshot: self.refresh())
        window.tag_panel.suggest_requested.connect(lambda: c.start_tagging(use_llm=True))
        window.tag_panel.review_requested.connect(lambda tag_id: self.review(tag_id))

    def refresh(self) -> None:
        self.window.runner.run(partial(load_counts, self.window.library), title="Counting tag suggestions",
                               key="tag-suggestion-counts", visible=False,
                               on_success=lambda counts: self.window.tag_panel.set_pending(dict(counts)))

    def review(self, tag_id: Optional[int] = None, file_id: Optional[int] = None) -> TagReviewDialog:
        if self.dialog is None:
            names = lambda: TagNames(self.window.tag_panel.model.infos)  # noqa: E731  (read by id, as asked)
            self.dialog = TagReviewDialog(self.window.library, self.window.runner, names, self.window)
            self.dialog.changed.connect(self._decided)
        self.dialog.open_for(tag_id, file_id)
        return self.dialog

    def _decided(self) -> None:
        # The runner announced the decision's Changes(tags=True): tree, table and details reload.
        self.window.controller.status.emit("Tag suggestions reviewed")

"""The "New workspace" dialog (and "Filter…" of an existing one): a plain-language request
becomes an explained filter the user can edit before anything is built.

Shown (dialog_explanation.py fills it): the tags matched per keyword (checkable, with score and
how they matched), keyword groups relaxation left out (unchecked: check to require them again),
keywords no tag matched, the constraints (dates, file types, authors), notes and problems, and the
funnel of file counts, recomputed after every edit (latest-wins). A ranked filter (issue 16) shows
its size with Show more / fewer (budget ×2 or ÷2) and the files only unconfirmed suggestions bring.
"""
from __future__ import annotations

from functools import partial
from typing import Optional

import shiboken6
from PySide6.QtCore import QDate, Qt, QTimer, Signal
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import (
    QCheckBox,
    QDateEdit,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTreeWidget,
    QVBoxLayout,
    QWidget,
)

from spar_desktop.core.changes import Changes
from spar_desktop.ui.base.tasks import TaskError
from spar_desktop.ui.workspaces import ops, request_sources
from spar_desktop.ui.workspaces.chunking_choice import add_chunking_row
from spar_desktop.ui.workspaces.controller import WorkspaceController
from spar_desktop.ui.workspaces.dialog_explanation import FilterExplanationView
from spar_desktop.ui.workspaces.filter_widgets import FunnelWidget

class WorkspaceDialog(FilterExplanationView, QDialog):
    created = Signal(object)  # WorkspaceInfo (new) or the saved Explanation (edit)
    explained = Signal(object)  # Explanation: every preview and re-count (tests wait on it)

    def __init__(self, controller: WorkspaceController, parent: Optional[QWidget] = None,
                 edit_name: Optional[str] = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.runner = controller.runner
        self.edit_name = edit_name
        self.base = None  # WorkspaceFilter of the latest preview
        self.explanation = None
        self._closed = False  # results of tasks still running when the dialog closed are dropped
        self._name_edited = False
        self._filling = False
        self._previewing: Optional[str] = None  # the request of a preview still running
        self.setWindowTitle(f"Filter of “{edit_name}”" if edit_name else "New workspace")
        self.setObjectName("workspaceDialog")
        self.resize(900, 640)
        self._build()
        self._recount = QTimer(self, singleShot=True, interval=250)
        self._recount.timeout.connect(self._explain_current)
        self._auto_preview = QTimer(self, singleShot=True, interval=800)
        self._auto_preview.timeout.connect(self.preview)
        controller.warm_up()
        if edit_name:
            self._set_busy("Loading the filter…")
            self.runner.run(partial(ops.workspace_explanation, controller.service, edit_name),
                            title=f"Explaining {edit_name}", key="ws-preview", visible=False,
                            on_success=self._while_open(self._show_explanation),
                            on_failure=self._while_open(self._failed))

    # ------------------------------------------------------------------ layout
    def _build(self) -> None:
        layout = QVBoxLayout(self)
        self._build_request_section(layout)
        body = QHBoxLayout()
        body.addWidget(self._build_tags_section(), 3)
        right = QVBoxLayout()
        right.addWidget(self._build_constraints_section())
        right.addWidget(self._build_counts_section())
        self.notes_label = QLabel()
        self.notes_label.setWordWrap(True)
        self.notes_label.setTextFormat(Qt.TextFormat.RichText)
        right.addWidget(self.notes_label)
        self.sources_view = request_sources.install(self, right)  # where each constraint came from
        right.addStretch(1)
        body.addLayout(right, 2)
        layout.addLayout(body, 1)
        layout.addWidget(self._build_buttons())
        self._update_buttons()

    def _build_request_section(self, layout: QVBoxLayout) -> None:
        """Name, request with Preview, and the status line under them."""
        form = QFormLayout()
        self.name_edit = QLineEdit()
        self.name_edit.setPlaceholderText("A short name, e.g. Incidents 2023")
        self.name_edit.textEdited.connect(lambda _t: setattr(self, "_name_edited", True))
        self.name_edit.textChanged.connect(lambda _t: self._update_buttons())
        self.request_edit = QLineEdit()
        self.request_edit.setPlaceholderText("Describe the files, e.g. “incident reports for Project Falcon from 2023”")
        self.request_edit.returnPressed.connect(self._request_entered)
        self.request_edit.textEdited.connect(self._request_edited)
        self.request_edit.textChanged.connect(lambda _t: self._update_buttons())
        self.preview_button = QPushButton("Preview")
        self.preview_button.setAutoDefault(False)
        self.preview_button.clicked.connect(self.preview)
        row = QHBoxLayout()
        row.addWidget(self.request_edit, 1)
        row.addWidget(self.preview_button)
        if not self.edit_name:
            form.addRow("Name", self.name_edit)
        form.addRow("Request", row)
        self.chunking_combo = None if self.edit_name else add_chunking_row(form)  # how files become passages
        layout.addLayout(form)
        self.status_label = QLabel("Keywords are matched to tags; dates, quarters and file types become constraints. "
                                   "Nothing is built until you say so.")
        self.status_label.setObjectName("muted")
        self.status_label.setWordWrap(True)
        layout.addWidget(self.status_label)

    def _build_tags_section(self) -> QGroupBox:
        """The tags matched per keyword, Add tag, and how the keywords combine."""
        tags_box = QGroupBox("Tags matched per keyword")
        tl = QVBoxLayout(tags_box)
        self.tree = QTreeWidget()
        self.tree.setObjectName("tagChoices")
        self.tree.setHeaderLabels(["Keyword / tag", "Score", "How"])
        self.tree.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.tree.header().setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.header().setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.header().setStretchLastSection(False)
        self.tree.itemChanged.connect(self._item_changed)
        self.tree.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        tl.addWidget(self.tree, 1)
        add_row = QHBoxLayout()
        self.add_tag_edit = QLineEdit()
        self.add_tag_edit.setPlaceholderText("Require another tag, by name…")
        self.add_tag_edit.returnPressed.connect(self.add_tag)
        self.add_tag_button = QPushButton("Add tag")
        self.add_tag_button.setAutoDefault(False)
        self.add_tag_button.clicked.connect(self.add_tag)
        add_row.addWidget(self.add_tag_edit, 1)
        add_row.addWidget(self.add_tag_button)
        tl.addLayout(add_row)
        self.match_all_check = QCheckBox("Every keyword must match")
        self.match_all_check.setObjectName("matchAll")
        self.match_all_check.setChecked(True)
        self.match_all_check.setToolTip("Off: files are ranked by how many keywords' tags they have (and how "
                                        "like the request their text is), the best first; required tags — a "
                                        "folder, a tag you added, a name like “patient A” or “T-07” — always hold.")
        self.match_all_check.toggled.connect(lambda _on: None if self._filling else self._recount.start())
        tl.addWidget(self.match_all_check)
        self.suggested_check = QCheckBox("Count unconfirmed tag suggestions")
        self.suggested_check.setObjectName("countSuggested")
        self.suggested_check.setToolTip("Automatic tag suggestions nobody reviewed yet count as tags "
                                        "(the files they alone bring in are listed under the counts)")
        self.suggested_check.toggled.connect(lambda _on: None if self._filling else self._recount.start())
        tl.addWidget(self.suggested_check)
        tl.addWidget(self._muted("Unchecked tags are left out. Files are ranked by the checked tags (or sub-tags) "
                                 "they have; with “Every keyword must match” a file needs one of every keyword."))
        return tags_box

    def _build_constraints_section(self) -> QGroupBox:
        """Dates, file types and authors."""
        cons = QGroupBox("Constraints")
        cf = QFormLayout(cons)
        self.since_check, self.since_edit = self._date_row()
        self.until_check, self.until_edit = self._date_row()
        cf.addRow(self.since_check, self.since_edit)
        cf.addRow(self.until_check, self.until_edit)
        self.since_check.setText("From")
        self.until_check.setText("Until")
        self.types_edit = QLineEdit()
        self.types_edit.setPlaceholderText("any type (e.g. pdf, docx)")
        self.types_edit.textEdited.connect(lambda _t: self._recount.start())
        cf.addRow("File types", self.types_edit)
        self.authors_edit = QLineEdit()
        self.authors_edit.setPlaceholderText("any author")
        self.authors_edit.setToolTip("One author, or several separated by commas")
        self.authors_edit.textEdited.connect(lambda _t: self._recount.start())
        cf.addRow("Author", self.authors_edit)
        return cons

    def _build_counts_section(self) -> QGroupBox:
        """The funnel of file counts, how many are admitted, the size with Show more / fewer."""
        funnel_box = QGroupBox("Files admitted at each step")
        fl = QVBoxLayout(funnel_box)
        self.funnel = FunnelWidget()
        fl.addWidget(self.funnel)
        self.admitted_label = QLabel()
        self.admitted_label.setObjectName("countLabel")
        self.admitted_label.setWordWrap(True)
        fl.addWidget(self.admitted_label)
        size_row = QHBoxLayout()
        self.size_label = QLabel()
        self.size_label.setObjectName("workspaceSize")
        self.more_button = QPushButton("Show more")
        self.fewer_button = QPushButton("Show fewer")
        for button, factor in ((self.more_button, 2.0), (self.fewer_button, 0.5)):
            button.setAutoDefault(False)
            button.setVisible(False)
            button.clicked.connect(partial(self.scale_budget, factor))
        size_row.addWidget(self.size_label, 1)
        size_row.addWidget(self.fewer_button)
        size_row.addWidget(self.more_button)
        fl.addLayout(size_row)
        return funnel_box

    def _build_buttons(self) -> QDialogButtonBox:
        """Cancel, Create (Save filter), Create and build (Save and build)."""
        self.buttons = QDialogButtonBox()
        self.cancel_button = self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.cancel_button.setIcon(QIcon())  # the other buttons have none
        self.create_button = QPushButton("Save filter" if self.edit_name else "Create")
        self.build_button = QPushButton("Save and build" if self.edit_name else "Create and build")
        self.build_button.setObjectName("primaryButton")
        self.build_button.setDefault(False)
        self.buttons.addButton(self.create_button, QDialogButtonBox.ButtonRole.ActionRole)
        self.buttons.addButton(self.build_button, QDialogButtonBox.ButtonRole.AcceptRole)
        self.create_button.clicked.connect(lambda: self.create(build=False))
        self.build_button.clicked.connect(lambda: self.create(build=True))
        self.buttons.rejected.connect(self.reject)
        return self.buttons

    def _muted(self, text: str) -> QLabel:
        label = QLabel(text)
        label.setObjectName("muted")
        label.setWordWrap(True)
        return label

    def _date_row(self) -> tuple[QCheckBox, QDateEdit]:
        check = QCheckBox()
        edit = QDateEdit()
        edit.setCalendarPopup(True)
        edit.setDisplayFormat("yyyy-MM-dd")
        edit.setDate(QDate.currentDate())
        edit.setEnabled(False)
        check.toggled.connect(edit.setEnabled)
        check.toggled.connect(lambda _on: self._recount.start())
        edit.dateChanged.connect(lambda _d: self._recount.start())
        return check, edit

    # ------------------------------------------------------------------ preview
    def _request_edited(self, text: str) -> None:
        if not self._name_edited and not self.edit_name:
            self.name_edit.setText(self.name_from_request(text))
        self._auto_preview.start()

    @staticmethod
    def name_from_request(text: str) -> str:
        name = " ".join(text.split())[:60]
        return name[:1].upper() + name[1:]

    def workspace_name(self) -> str:
        """The typed name, or one made from the request."""
        return self.name_edit.text().strip() or self.name_from_request(self.request_edit.text())

    def preview(self) -> None:
        self._auto_preview.stop()
        request = self.request_edit.text().strip()
        if not request or self.controller.service is None or self._closed:
            return
        self._set_busy("Matching keywords to tags… (the first preview loads the embedding model)")
        self._previewing = request
        self._update_buttons()
        self.runner.run(partial(ops.preview, self.controller.service, request),
                        title="Previewing the workspace",
                        key="ws-preview", on_success=self._while_open(self._show_explanation),
                        on_failure=self._while_open(self._preview_failed))

    def _request_entered(self) -> None:
        """Enter in the request field previews what it says now; the same request again keeps the
        tags and constraints edited since its preview."""
        if self.stale() or self.base is None:
            self.preview()

    def _preview_failed(self, err: TaskError) -> None:
        self._previewing = None
        self._failed(err)
        self._update_buttons()

    def stale(self) -> bool:
        """The request field no longer says what the filter on screen was made from (edited since the
        last preview, or a preview is still running): creating now would use the old filter."""
        if self._previewing is not None:
            return True
        if self.base is None:
            return False
        return " ".join(self.request_edit.text().split()) != " ".join((self.base.request or "").split())

    def keyPressEvent(self, event) -> None:
        # Enter in the request (or add-tag) field is that field's own action (preview / add);
        # it must never also press the dialog's default button, which created the workspace
        # from the previous preview while the new request was still being matched.
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and \
                self.focusWidget() in (self.request_edit, self.add_tag_edit):
            event.accept()
            return
        super().keyPressEvent(event)

    def _while_open(self, callback):
        """``callback`` for a task result, dropped once the dialog closed (it is deleted on close:
        touching its widgets then raised 'Internal C++ object already deleted')."""
        def call(value) -> None:
            if not self._closed and shiboken6.isValid(self):
                callback(value)
        return call

    def done(self, result: int) -> None:
        self._closed = True
        self._auto_preview.stop()
        self._recount.stop()
        for key in ("ws-preview", "ws-explain", "ws-find-tag"):
            self.runner.cancel(key)
        super().done(result)

    def _set_busy(self, text: str) -> None:
        self.status_label.setObjectName("muted")
        self.status_label.setStyleSheet("")
        self.status_label.setText(text)

    def _failed(self, err: TaskError) -> None:
        self.status_label.setText(err.message)
        self.status_label.setStyleSheet("color: #b3261e;")

    # ------------------------------------------------------------------ editing
    def scale_budget(self, factor: float) -> None:
        """Show more (×2) or fewer (÷2) of the ranked files: the budget moves from what is admitted now."""
        ranking = self.explanation.ranking if self.explanation is not None else None
        if self.base is None or ranking is None:
            return
        now = len(ranking.admitted)
        self.base = self.base.with_budget(max(now, ranking.budget) * 2 if factor > 1 else max(1, now // 2))
        self._explain_current()

    def add_tag(self) -> None:
        text = self.add_tag_edit.text().strip()
        if not text or self.controller.service is None:
            return

        def found(choices: tuple) -> None:
            if not choices:
                self.status_label.setText(f"No tag is named “{text}”. Tags come from folders, dates and your taxonomy.")
                self.status_label.setStyleSheet("color: #b3261e;")
                return
            from spar_desktop.core.workspaces.selection import TagGroup

            label = f"tag {text}"
            old = self.group_item(label)
            if old is not None:
                self.tree.takeTopLevelItem(self.tree.indexOfTopLevelItem(old))
            self._filling = True
            self._add_group(TagGroup(label, choices))
            self._filling = False
            self.add_tag_edit.clear()
            self._set_busy(f"Added {', '.join(c.value for c in choices)}")
            self._explain_current()

        self.runner.run(partial(ops.find_tags, self.controller.service, text), title="Finding the tag",
                        key="ws-find-tag", visible=False, on_success=self._while_open(found),
                        on_failure=self._while_open(self._failed))

    def _explain_current(self) -> None:
        if self.controller.service is None:
            return
        self.runner.run(partial(ops.explain_filter, self.controller.service, self.current_filter()),
                        title="Counting files", key="ws-explain", visible=False,
                        on_success=self._while_open(self._show_counts), on_failure=self._while_open(self._failed))

    def _update_buttons(self) -> None:
        ok = self.explanation is not None and self.explanation.admitted > 0 and not self.stale()
        named = bool(self.edit_name or self.workspace_name())
        self.create_button.setEnabled(ok and named)
        self.build_button.setEnabled(ok and named)
        tip = "Preview the edited request first (Enter)" if self.stale() and self.explanation is not None else ""
        for b in (self.create_button, self.build_button):
            b.setToolTip(tip)

    # ------------------------------------------------------------------ create
    def create(self, build: bool = False) -> None:
        if self.controller.service is None or self._closed:
            return
        if self.stale():  # never create from a filter the request field no longer describes
            if self._previewing is None:
                self.preview()
            return
        flt = self.current_filter()
        c = self.controller
        for b in (self.create_button, self.build_button):
            b.setEnabled(False)
        if self.edit_name:
            name = self.edit_name

            def saved(explanation) -> None:
                self.created.emit(explanation)
                if build:
                    c.build(name)
                self.accept()

            handle = c.save_filter(name, flt, on_saved=saved)
            if handle is not None:
                handle.finished.connect(self._update_buttons)
            return
        name = self.workspace_name()

        def done(row) -> None:
            c.status.emit(f"Created workspace '{row.name}' ({self.explanation.admitted} files)")
            c.select_later(row.name)
            if build:
                c.build(row.name)
            self.created.emit(row)
            self.accept()

        def failed(err: TaskError) -> None:
            self._failed(err)
            self._update_buttons()

        chunking = self.chunking_combo.value() if self.chunking_combo is not None else None
        self.runner.run(partial(ops.create_workspace, c.service, name, flt, chunking=chunking),
                        title=f"Creating {name}", on_success=done, on_failure=failed, changes=Changes(workspaces=True))

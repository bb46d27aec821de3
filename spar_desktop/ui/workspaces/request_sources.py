"""The workspace dialog's "Read from the request" list (issue 32): each constraint read from the
request — keywords, dates, file types, authors, folders — with where it came from (the rules, the
language model or both) and a button that removes it; shown when a model read the request too.
The dialog keeps only a few lines of hook (``install``, ``show_filter``)."""

from __future__ import annotations

from functools import partial
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QGroupBox, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from spar_desktop.ui.workspaces import ops

SOURCE_TEXT = {"rules": "rules", "model": "language model", "rules+model": "rules and language model", "": "you"}
KIND_TEXT = {"keyword": "Keyword", "dates": "Dates", "type": "File type", "author": "Author", "folder": "Folder"}


class ConstraintSources(QGroupBox):
    """One row per constraint: what it is, where it came from, and Remove."""

    drop_requested = Signal(str)  # 'KIND:VALUE' (request_sources.drop_constraint's spec)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Read from the request", parent)
        self.setObjectName("requestSources")
        self._rows = QVBoxLayout(self)
        self.setVisible(False)

    def show_filter(self, flt: Any) -> None:
        from spar_desktop.core.workspaces.request_sources import constraints

        while self._rows.count():
            item = self._rows.takeAt(0)
            widget = item.widget()
            if widget is not None:
                widget.setParent(None)  # out of findChildren at once, deleted later
                widget.deleteLater()
        rows = constraints(flt) if getattr(flt, "sources", ()) else []
        for kind, value, source in rows:
            self._rows.addWidget(self._row(kind, value, source))
        self.setVisible(bool(rows))

    def _row(self, kind: str, value: str, source: str) -> QWidget:
        row = QWidget()
        h = QHBoxLayout(row)
        h.setContentsMargins(0, 0, 0, 0)
        shown = value.replace("..", " to ") if kind == "dates" else value
        label = QLabel(f"{KIND_TEXT[kind]}: {shown} — from the {SOURCE_TEXT.get(source, source)}"
                       if source else f"{KIND_TEXT[kind]}: {shown} — set by you")
        label.setObjectName("constraintSource")
        label.setWordWrap(True)
        button = QPushButton("Remove")
        button.setAutoDefault(False)
        button.setToolTip(f"Leave this {KIND_TEXT[kind].lower()} out of the filter")
        button.clicked.connect(partial(self.drop_requested.emit, f"{kind}:{value}"))
        h.addWidget(label, 1)
        h.addWidget(button)
        return row

    def row_texts(self) -> list[str]:
        return [w.text() for w in self.findChildren(QLabel, "constraintSource")]


def install(dialog: Any, layout: Any) -> ConstraintSources:
    """Add the list to the dialog's ``layout``; Remove drops the constraint and refreshes the dialog
    from the new filter (as a fresh preview would, keeping the user's other edits)."""
    view = ConstraintSources()
    layout.addWidget(view)
    view.drop_requested.connect(partial(_drop, dialog))
    return view


def _drop(dialog: Any, spec: str) -> None:
    from spar_desktop.core.workspaces.request_sources import drop_constraint

    if dialog.controller.service is None:
        return
    try:
        flt = drop_constraint(dialog.current_filter(), spec)
    except ValueError as exc:  # already gone (edited away since)
        dialog.status_label.setText(str(exc))
        return
    dialog.runner.run(partial(ops.explain_filter, dialog.controller.service, flt), title="Counting files",
                      key="ws-explain", visible=False, on_success=dialog._while_open(dialog._show_explanation),
                      on_failure=dialog._while_open(dialog._failed))

"""The workspace's chunking in the app: the dialog's combo box, and contextual enhancement as a
background task after each build of a contextual workspace (core/workspaces/enhance.py), with
its progress ("contextual: 120/480 passages enhanced") in the workspace panel's info line.

Kept out of dialog.py and panel.py (each calls in here with a line or two).
"""

from __future__ import annotations

import html
import logging
from functools import partial
from typing import Any, Callable, Optional

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QComboBox, QFormLayout

from spar_desktop.core.changes import Changes
from spar_desktop.core.progress import CancelToken, Progress, ProgressCallback
from spar_desktop.core.workspaces.chunkings import CHUNKINGS, CONTEXTUAL, DEFAULT_CHUNKING, DESCRIPTIONS

log = logging.getLogger(__name__)

LABELS = {"hierarchical": "Sections and passages (recommended)", "fixed": "Fixed windows",
          "semantic": "By topic changes", "contextual": "Passages with model-written context"}


class ChunkingCombo(QComboBox):
    """How the new workspace cuts its files into passages."""

    def __init__(self) -> None:
        super().__init__()
        self.setObjectName("chunkingChoice")
        for i, chunking in enumerate(CHUNKINGS):
            self.addItem(LABELS[chunking], chunking)
            self.setItemData(i, DESCRIPTIONS[chunking], Qt.ItemDataRole.ToolTipRole)
        self.setCurrentIndex(CHUNKINGS.index(DEFAULT_CHUNKING))
        self.setToolTip("How files are cut into searchable passages. Contextual asks the language model once "
                        "per passage after the build (slow on a CPU; the workspace is searchable meanwhile).")

    def value(self) -> str:
        return str(self.currentData())


def add_chunking_row(form: QFormLayout) -> ChunkingCombo:
    combo = ChunkingCombo()
    form.addRow("Passages", combo)
    return combo


# -- background enhancement ------------------------------------------------------------------
def enhance_op(service: Any, name: str, progress: ProgressCallback, cancel: CancelToken):
    """Worker: (report or None, why not). The model's reachability is checked here, off the UI."""
    from spar_desktop.core.workspaces.enhance import context_function, enhance_workspace, enhancement_status

    context_fn, why_not = context_function(service.library.settings)
    if context_fn is None:
        return None, why_not, enhancement_status(service.manager, name)
    return enhance_workspace(service.manager, name, context_fn, progress, cancel), None, None


def status_op(service: Any, name: str, progress: ProgressCallback, cancel: CancelToken):
    from spar_desktop.core.workspaces.enhance import enhancement_status

    return enhancement_status(service.manager, name)


class Enhancer(QObject):
    """One per workspace controller: starts the enhancement after a build of a contextual
    workspace and keeps each workspace's enhancement line for the panel."""

    changed = Signal()

    def __init__(self, controller: Any) -> None:
        super().__init__(controller)
        self.controller = controller
        self.lines: dict[str, str] = {}
        controller.build_finished.connect(self._build_finished)
        controller.current_changed.connect(self._current_changed)

    def key(self, name: str) -> str:
        return f"ws-enhance:{name.casefold()}"

    def _set(self, name: str, text: Optional[str]) -> None:
        if text:
            self.lines[name.casefold()] = text
        else:
            self.lines.pop(name.casefold(), None)
        self.changed.emit()

    def _current_changed(self, row: Any) -> None:
        if row is None or getattr(row, "chunking", None) != CONTEXTUAL or row.built_at is None:
            return
        if self.controller.service is None or self.controller.runner.is_running(self.key(row.name)):
            return
        self.controller.runner.run(partial(status_op, self.controller.service, row.name),
                                   title=f"Reading the enhancement of {row.name}", visible=False,
                                   on_success=lambda st: self._set(row.name, st.describe() if st else None))

    def _build_finished(self, name: str, report: Any) -> None:
        row = self.controller.row(name)
        if report is None or report.cancelled or row is None or getattr(row, "chunking", None) != CONTEXTUAL:
            return
        self.start(name)

    def start(self, name: str) -> None:
        c = self.controller
        if c.service is None or c.runner.is_running(self.key(name)):
            return

        def progress(p: Progress) -> None:
            self._set(name, p.message)

        def done(result) -> None:
            report, why_not, status = result
            if report is None:
                self._set(name, f"{status.describe() if status else 'contextual enhancement pending'}: {why_not}")
                c.status.emit(f"Contextual passages of '{name}' are pending: {why_not}. Plain passages are searched.")
                return
            self._set(name, report.status.describe() if report.status else None)
            c.status.emit(report.describe())

        c.runner.run(partial(enhance_op, c.service, name), title=f"Enhancing passages of {name}",
                     key=self.key(name), on_progress=progress, on_success=done,
                     on_failure=lambda err: log.warning("enhancement of %s failed: %s", name, err),
                     changes=Changes(workspaces=True))

    def note(self, row: Any) -> str:
        """' · contextual: 120/480 passages enhanced' for the panel's info line ('' otherwise)."""
        if row is None or getattr(row, "chunking", None) != CONTEXTUAL:
            return ""
        line = self.lines.get(row.name.casefold())
        return f" · {html.escape(line)}" if line else ""


def enhancer_for(controller: Any) -> Enhancer:
    """The controller's Enhancer, made on first use."""
    found = controller.findChild(Enhancer)
    return found if found is not None else Enhancer(controller)


def watch(controller: Any, on_change: Callable[[], None]) -> Enhancer:
    enhancer = enhancer_for(controller)
    enhancer.changed.connect(on_change)
    return enhancer

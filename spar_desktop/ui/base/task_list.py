"""Status-bar list of running tasks: a title, a progress bar and a cancel button per task."""

from __future__ import annotations

from typing import Optional

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QSizePolicy, QStyle, QToolButton, QWidget

from spar_desktop.core.progress import Progress
from spar_desktop.ui.base.progress_view import shown
from spar_desktop.ui.base.tasks import TaskHandle, TaskRunner, TaskState

# Tasks that finish faster than this never appear, so quick reloads do not make the bar flicker.
SHOW_AFTER_MS = 250
MAX_ROWS = 3
LABEL_WIDTH = 260


def fit_label(fm, title: str, message: str, width: int) -> str:
    """'title — message' in ``width`` px: the message (with its numbers) is kept whole when it fits
    and the title shortened with '…' at a word boundary; never a word cut in two without a '…'."""
    full = f"{title} — {message}" if message else title
    if fm.horizontalAdvance(full) <= width:
        return full
    if message and fm.horizontalAdvance(f"… — {message}") <= width:
        words = title.split()
        while words and fm.horizontalAdvance(f"{' '.join(words)}… — {message}") > width:
            words.pop()
        return f"{' '.join(words)}… — {message}" if words else f"… — {message}"
    return fm.elidedText(full, Qt.TextElideMode.ElideRight, width)


class TaskRow(QWidget):
    """One row, reused for many tasks: creating and polishing widgets while a worker holds the
    GIL was measured at 40+ ms of UI stall, binding a new handle to an existing row is not."""

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.handle: Optional[TaskHandle] = None
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 0, 0, 0)
        layout.setSpacing(6)
        self.label = QLabel()
        self.label.setFixedWidth(LABEL_WIDTH)
        self.bar = QProgressBar()
        self.bar.setFixedWidth(150)
        self.bar.setFixedHeight(14)
        self.bar.setTextVisible(False)
        self.cancel_button = QToolButton()
        self.cancel_button.setIcon(self.style().standardIcon(QStyle.StandardPixmap.SP_DialogCancelButton))
        self.cancel_button.setAutoRaise(True)
        self.cancel_button.clicked.connect(self._cancel)
        layout.addWidget(self.label)
        layout.addWidget(self.bar)
        layout.addWidget(self.cancel_button)

    def bind(self, handle: TaskHandle) -> None:
        self.unbind()
        self.handle = handle
        self.cancel_button.setEnabled(True)
        self.cancel_button.setToolTip(f"Cancel “{handle.title}”")
        self.bar.setRange(0, 0)  # busy until the op reports a total
        handle.progress_changed.connect(self._update)
        self._update(handle.progress)

    def unbind(self) -> None:
        if self.handle is not None:
            try:
                self.handle.progress_changed.disconnect(self._update)
            except (RuntimeError, TypeError):
                pass
        self.handle = None

    def _cancel(self) -> None:
        if self.handle is not None:
            self.handle.cancel()

    def _update(self, p: Optional[Progress]) -> None:
        handle = self.handle
        if handle is None:
            return
        if handle.state is TaskState.CANCELLING:
            self.label.setText(f"{handle.title} — cancelling…")
            self.cancel_button.setEnabled(False)
            return
        view = shown(p)  # the bar shows the numbers of the text beside it
        if view.fraction is not None:
            self.bar.setRange(0, 1000)
            self.bar.setValue(int(1000 * view.fraction))
        elif p is not None:
            self.bar.setRange(0, 0)
        text = f"{handle.title} — {view.text}" if view.text else handle.title
        self.label.setText(fit_label(self.label.fontMetrics(), handle.title, view.text, LABEL_WIDTH))
        self.setToolTip(text)


class TaskListWidget(QWidget):
    """Shows the runner's visible tasks; empty (but as tall as a row) when nothing is running."""

    def __init__(self, runner: TaskRunner, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.runner = runner
        self.rows: dict[int, TaskRow] = {}
        self._waiting: list[TaskHandle] = []  # visible tasks beyond MAX_ROWS
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 4, 0)
        layout.setSpacing(8)
        self._free = [TaskRow(self) for _ in range(MAX_ROWS)]
        for row in self._free:
            row.setVisible(False)
            layout.addWidget(row)
        self.more = QLabel()
        self.more.setVisible(False)
        layout.addWidget(self.more)
        self.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Preferred)
        # The list stays in the status bar with a row's height even when no task runs. Hiding it
        # made the status bar 10 px shorter, so every task that started or ended resized the
        # central widget and docks: a repaint of the whole window (some 1,800 item-model calls
        # into Python) which took 240-300 ms while a build kept a worker thread busy.
        self.setMinimumHeight(self._free[0].sizeHint().height())
        runner.task_started.connect(self._started)
        runner.task_finished.connect(self._finished)

    def row_for(self, handle: TaskHandle) -> Optional[TaskRow]:
        return self.rows.get(handle.task_id)

    def show_now(self, handle: TaskHandle) -> Optional[TaskRow]:
        """Show the task at once (tests, and tasks that must be cancellable immediately)."""
        if handle.done or handle.task_id in self.rows:
            return self.rows.get(handle.task_id)
        if not self._free:
            if handle not in self._waiting:
                self._waiting.append(handle)
            self._relayout()
            return None
        row = self._free.pop(0)
        row.bind(handle)
        self.rows[handle.task_id] = row
        row.setVisible(True)
        self._relayout()
        return row

    def _started(self, handle: TaskHandle) -> None:
        if handle.visible:
            QTimer.singleShot(SHOW_AFTER_MS, self, lambda: None if handle.done else self.show_now(handle))

    def _finished(self, handle: TaskHandle) -> None:
        if handle in self._waiting:
            self._waiting.remove(handle)
        row = self.rows.pop(handle.task_id, None)
        if row is not None:
            row.unbind()
            row.setVisible(False)
            self._free.append(row)
            while self._waiting and self._free:
                self.show_now(self._waiting.pop(0))
        self._relayout()

    def _relayout(self) -> None:
        self.more.setText(f"+{len(self._waiting)} more")
        self.more.setVisible(bool(self._waiting))

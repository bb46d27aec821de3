"""The one background-task API of the UI.

Modelled on Anki's ``aqt.operations`` (an op runs off the UI thread; ``on_success`` /
``on_failure`` run on it; ops never touch widgets) plus Orange3's latest-wins restarts:

    runner.run(op, title="Indexing Reports", on_success=show, key="scan:/data/reports")

``op(progress, cancel)`` is a plain function (usually a module-level function bound with
functools.partial) that reports ``Progress`` values and polls the ``CancelToken`` between
batches. Everything crossing back to the UI thread travels through queued Qt signals and is an
immutable value (Progress, frozen dataclasses, tuples); the worker never sees a QObject.

Starting a task with a ``key`` that is already running cancels the older task and drops its
late result, so rapid re-filtering or page flipping only ever shows the newest answer.

Coroutine ops (chat's streamed answers) go through the same runner: ``run_coroutine`` awaits
``op(progress, cancel)`` on the qasync loop as one task with the same handle, task list entry,
cancel, callbacks and shutdown as the pool's.

What changed is announced in one place: when a task ends, ``changed`` carries the ``Changes`` its
result reports (``result.changes``: a scan's summary, a build's report, a tag edit) merged with
the ``changes=`` the caller declared for ops whose result says nothing (archive, delete). Declared
changes are announced however the task ended (a failed or cancelled scan or build has committed
part of its work); a result's only on success. Controllers subscribe and reload what they show.
"""

from __future__ import annotations

import asyncio
import enum
import itertools
import logging
import os
import time
import traceback
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Generic, Optional, TypeVar

from PySide6.QtCore import QObject, QRunnable, Qt, QThreadPool, Signal

from spar_desktop.core.changes import NOTHING, Changes, changes_of
from spar_desktop.core.progress import Cancelled, CancelToken, Progress, ProgressCallback, UserActivity
from spar_desktop.core.storage_errors import storage_failure

log = logging.getLogger(__name__)

T = TypeVar("T")
Op = Callable[[ProgressCallback, CancelToken], T]
AsyncOp = Callable[[ProgressCallback, CancelToken], Awaitable[T]]

# At most this many progress signals per second per task: a scanner reports once per folder,
# which on a share of small folders is thousands per second and would flood the event loop.
PROGRESS_INTERVAL_S = 0.05


class TaskState(enum.Enum):
    RUNNING = "running"
    CANCELLING = "cancelling"  # the user asked; the op stops at its next batch boundary
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"
    SUPERSEDED = "superseded"  # a newer task with the same key replaced it; its result is dropped


@dataclass(frozen=True)
class TaskError:
    """A failed op, as shown to people: the message, plus the traceback for the log/details."""

    title: str
    message: str
    details: str
    exception: BaseException  # raised and finished in the worker; only read on the UI thread

    @classmethod
    def from_exception(cls, title: str, exc: BaseException) -> "TaskError":
        message = storage_failure(exc) or str(exc) or type(exc).__name__  # a full disk in words, not SQL
        details = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        return cls(title, message, details, exc)


@dataclass(frozen=True)
class _Outcome:
    value: Any = None
    error: Optional[TaskError] = None
    cancelled: bool = False


class _WorkerSignals(QObject):
    """Created on the UI thread, so emits from the worker are queued to the UI thread."""

    progress = Signal(object)
    finished = Signal(object)


class _Worker(QRunnable):
    def __init__(self, op: Op, title: str, token: CancelToken, signals: _WorkerSignals) -> None:
        super().__init__()
        self.setAutoDelete(True)
        self._op, self._title, self._token, self._signals = op, title, token, signals

    def run(self) -> None:  # worker thread
        last = 0.0
        signals = self._signals

        def report(p: Progress) -> None:
            nonlocal last
            now = time.monotonic()
            if now - last >= PROGRESS_INTERVAL_S or (p.total is not None and p.done >= p.total):
                last = now
                signals.progress.emit(p)

        try:
            outcome = _Outcome(value=self._op(report, self._token))
        except Cancelled:
            outcome = _Outcome(cancelled=True)
        except BaseException as exc:  # noqa: BLE001 - every failure must reach the UI, never kill the pool
            log.warning("task %r failed", self._title, exc_info=True)
            outcome = _Outcome(error=TaskError.from_exception(self._title, exc))
        signals.finished.emit(outcome)


class TaskHandle(QObject, Generic[T]):
    """One submitted task, owned by the UI thread. Widgets watch ``progress_changed``/``finished``."""

    progress_changed = Signal(object)  # Progress
    finished = Signal()  # after the callbacks ran (or were dropped)

    def __init__(self, task_id: int, title: str, key: Optional[str], visible: bool, parent: QObject,
                 yield_to: Optional[UserActivity] = None) -> None:
        super().__init__(parent)
        self.task_id = task_id
        self.title = title
        self.key = key
        self.visible = visible
        self.token = CancelToken(yield_to)
        self.state = TaskState.RUNNING
        self.progress: Optional[Progress] = None
        self.result: Any = None
        self.error: Optional[TaskError] = None
        self.started_at = time.monotonic()
        self._signals: Optional[_WorkerSignals] = None
        self._future: Optional[asyncio.Future] = None  # a coroutine op's task on the loop

    @property
    def done(self) -> bool:
        return self.state not in (TaskState.RUNNING, TaskState.CANCELLING)

    def cancel(self) -> None:
        """Ask the op to stop at its next batch; its partial result (if it returns one) still arrives."""
        if not self.done:
            self.token.cancel()
            self.state = TaskState.CANCELLING
            self.progress_changed.emit(self.progress)


class TaskRunner(QObject):
    """Runs ops on a worker pool and delivers results on the UI thread."""

    task_started = Signal(object)  # TaskHandle
    task_finished = Signal(object)  # TaskHandle (any final state)
    task_failed = Signal(object)  # TaskError, for failures without their own on_failure
    changed = Signal(object)  # Changes: what a finished task wrote (see the module docstring)

    def __init__(self, parent: Optional[QObject] = None, max_threads: Optional[int] = None) -> None:
        super().__init__(parent)
        self._pool = QThreadPool(self)
        # I/O-bound ops (scans, queries) overlap well even on two cores; more threads only
        # contend for the GIL and the SQLite writer lock.
        self._pool.setMaxThreadCount(max_threads or max(3, min(6, (os.cpu_count() or 2) + 1)))
        self._ids = itertools.count(1)
        self._running: dict[int, TaskHandle] = {}
        self._latest: dict[str, TaskHandle] = {}
        self._closed = False
        # The window touches it while the user scrolls or expands; ``background`` tasks give way.
        self.user_activity = UserActivity()

    # ------------------------------------------------------------------ submitting
    def run(self, op: Op[T], *, title: str,
            on_success: Optional[Callable[[T], None]] = None,
            on_failure: Optional[Callable[[TaskError], None]] = None,
            on_progress: Optional[Callable[[Progress], None]] = None,
            on_cancelled: Optional[Callable[[], None]] = None,
            key: Optional[str] = None, visible: bool = True, changes: Changes = NOTHING,
            background: bool = False) -> TaskHandle[T]:
        """Start ``op(progress, cancel)`` on the pool; see the module docstring.

        ``visible=False`` keeps quick housekeeping (table reloads) out of the task list.
        ``background``: work no one waits for (the tag vocabulary): each of its cancel checks
        first waits while the user works the window (``user_activity``).
        ``changes``: what the op may write, announced on ``changed`` when it ends.
        """
        handle = self._new_handle(title, key, visible, background)
        if handle.done:
            return handle
        signals = _WorkerSignals(handle)
        handle._signals = signals  # keep the QObject alive until the worker's last emit

        progressed = self._progress_relay(handle, on_progress)

        def finished(outcome: _Outcome) -> None:
            self._forget(handle, key)
            handle._signals = None
            signals.deleteLater()
            if handle.state is TaskState.SUPERSEDED or self._closed:
                log.debug("dropping late result of %r", handle.title)
                return  # already announced as finished when superseded
            self._deliver(handle, outcome, on_success, on_failure, on_cancelled, changes)

        signals.progress.connect(progressed, Qt.ConnectionType.QueuedConnection)
        signals.finished.connect(finished, Qt.ConnectionType.QueuedConnection)
        self._running[handle.task_id] = handle
        self._pool.start(_Worker(op, title, handle.token, signals))
        self.task_started.emit(handle)
        return handle

    def _progress_relay(self, handle: TaskHandle, on_progress: Optional[Callable[[Progress], None]]
                        ) -> Callable[[Progress], None]:
        """What a task's progress goes through on the UI thread: kept on the handle, passed to
        ``on_progress`` while the task runs, dropped once it is superseded or the runner closed."""
        def relay(p: Progress) -> None:
            if handle.state is TaskState.SUPERSEDED or self._closed:
                return
            handle.progress = p
            if handle.state is TaskState.RUNNING and on_progress is not None:
                on_progress(p)
            handle.progress_changed.emit(p)

        return relay

    def _forget(self, handle: TaskHandle, key: Optional[str]) -> None:
        """An ended task leaves the running set and, if it is still its key's latest, the key."""
        self._running.pop(handle.task_id, None)
        if key is not None and self._latest.get(key) is handle:
            del self._latest[key]

    def run_coroutine(self, op: AsyncOp[T], *, title: str,
                      on_success: Optional[Callable[[T], None]] = None,
                      on_failure: Optional[Callable[[TaskError], None]] = None,
                      on_progress: Optional[Callable[[Progress], None]] = None,
                      on_cancelled: Optional[Callable[[], None]] = None,
                      key: Optional[str] = None, visible: bool = True, changes: Changes = NOTHING) -> TaskHandle[T]:
        """Await ``op(progress, cancel)`` on the running asyncio (qasync) loop as a task of this
        runner: the op runs on the UI thread between awaits (streaming into widgets is fine, blocking
        is not) and polls ``cancel`` like any op; cancelling the handle sets it, shutdown also
        cancels the asyncio task. Callbacks, ``key`` and ``changes`` work as in ``run``."""
        handle = self._new_handle(title, key, visible)
        if handle.done:
            return handle

        report = self._progress_relay(handle, on_progress)

        async def main() -> None:
            try:
                outcome = _Outcome(value=await op(report, handle.token))
            except (Cancelled, asyncio.CancelledError):
                outcome = _Outcome(cancelled=True)
            except Exception as exc:  # noqa: BLE001 - every failure must reach the UI, never the loop
                log.warning("task %r failed", title, exc_info=True)
                outcome = _Outcome(error=TaskError.from_exception(title, exc))
            self._forget(handle, key)
            if handle.state is TaskState.SUPERSEDED or self._closed:
                return
            self._deliver(handle, outcome, on_success, on_failure, on_cancelled, changes)

        self._running[handle.task_id] = handle
        handle._future = asyncio.ensure_future(main())
        self.task_started.emit(handle)
        return handle

    async def run_async(self, op: Op[T], *, title: str, key: Optional[str] = None,
                        visible: bool = True, on_progress: Optional[Callable[[Progress], None]] = None) -> T:
        """Await an op from a coroutine on the qasync loop; raises the op's exception or Cancelled."""
        future: asyncio.Future = asyncio.get_running_loop().create_future()

        def ok(value: T) -> None:
            if not future.done():
                future.set_result(value)

        def fail(err: TaskError) -> None:
            if not future.done():
                future.set_exception(err.exception)

        handle = self.run(op, title=title, key=key, visible=visible, on_progress=on_progress,
                          on_success=ok, on_failure=fail, on_cancelled=lambda: fail_cancel())

        def fail_cancel() -> None:
            if not future.done():
                future.set_exception(Cancelled())

        # A superseded task never calls back: end the await with Cancelled instead of hanging.
        handle.finished.connect(fail_cancel)
        return await future

    # ------------------------------------------------------------------ state
    @property
    def closed(self) -> bool:
        return self._closed

    def is_idle(self) -> bool:
        return not self._running

    def is_running(self, key: str) -> bool:
        handle = self._latest.get(key)
        return handle is not None and not handle.done

    def cancel(self, key: str) -> None:
        handle = self._latest.get(key)
        if handle is not None:
            handle.cancel()

    def shutdown(self, wait_ms: int = 10000) -> bool:
        """Cancel everything, drop late results and wait for the workers (window close)."""
        for handle in list(self._running.values()):
            handle.token.cancel()
            if handle._future is not None and not handle._future.done():
                handle._future.cancel()  # a coroutine op: its loop may not run again
        self._closed = True
        return self._pool.waitForDone(wait_ms)

    # ------------------------------------------------------------------ internals
    def _new_handle(self, title: str, key: Optional[str], visible: bool, background: bool = False) -> TaskHandle:
        """A handle for a new task, registered under ``key`` (superseding an older one); already
        CANCELLED when the runner is shut down (a timer firing while the window closes)."""
        handle: TaskHandle = TaskHandle(next(self._ids), title, key, visible, self,
                                        self.user_activity if background else None)
        if self._closed:
            log.debug("not starting %r: the runner is shut down", title)
            handle.token.cancel()
            handle.state = TaskState.CANCELLED
            return handle
        if key is not None:
            older = self._latest.get(key)
            if older is not None and not older.done:
                self._supersede(older)
            self._latest[key] = handle
        return handle

    def _supersede(self, handle: TaskHandle) -> None:
        handle.token.cancel()
        handle.state = TaskState.SUPERSEDED
        handle.finished.emit()
        self.task_finished.emit(handle)

    def _deliver(self, handle: TaskHandle, outcome: _Outcome, on_success, on_failure, on_cancelled,
                 changes: Changes = NOTHING) -> None:
        try:
            if outcome.error is not None:
                handle.state, handle.error = TaskState.FAILED, outcome.error
                if on_failure is not None:
                    on_failure(outcome.error)
                else:
                    self.task_failed.emit(outcome.error)
            elif outcome.cancelled:
                handle.state = TaskState.CANCELLED
                if on_cancelled is not None:
                    on_cancelled()
            else:
                # An op that noticed the cancel and returned a partial result still delivers it
                # (a cancelled scan reports what it indexed); it is marked cancelled for the UI.
                handle.state = TaskState.CANCELLED if handle.token.cancelled else TaskState.SUCCEEDED
                handle.result = outcome.value
                if on_success is not None:
                    on_success(outcome.value)
        finally:
            log.debug("task %r %s in %.2fs", handle.title, handle.state.value, time.monotonic() - handle.started_at)
            handle.finished.emit()
            self.task_finished.emit(handle)
            self._announce(changes | (changes_of(outcome.value) if outcome.error is None else NOTHING))

    def _announce(self, changes: Changes) -> None:
        """The one place a finished task's changes reach the views (after its own callbacks)."""
        if changes and not self._closed:
            log.debug("changed: %s", ", ".join(changes.names()))
            self.changed.emit(changes)

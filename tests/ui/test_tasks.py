"""The background-task API: results on the UI thread, progress, failures, cancel, latest-wins."""

from __future__ import annotations

import threading

from PySide6.QtCore import Qt, QThread
from PySide6.QtWidgets import QApplication

from spar_desktop.core.progress import Cancelled, Progress
from spar_desktop.ui.base.task_list import TaskListWidget
from spar_desktop.ui.base.tasks import TaskRunner, TaskState

_RUNNERS: list[TaskRunner] = []


def _runner(qtbot) -> TaskRunner:
    runner = TaskRunner()
    _RUNNERS.append(runner)  # keep the wrapper (and so the QObject) alive for the whole session
    return runner


def test_success_and_progress_arrive_on_the_ui_thread(qtbot):
    runner = _runner(qtbot)
    seen: dict = {"progress": []}
    main = QApplication.instance().thread()

    def op(progress, cancel):
        worker = QThread.currentThread()
        for i in range(3):
            progress(Progress(i + 1, 3, f"step {i + 1}"))
        return ("done", worker is not main)

    def ok(value):
        seen["value"] = value
        seen["thread_ok"] = QThread.currentThread() is main

    handle = runner.run(op, title="three steps", on_success=ok, on_progress=lambda p: seen["progress"].append(p))
    with qtbot.waitSignal(handle.finished, timeout=10_000):
        pass
    assert seen["value"] == ("done", True)  # ran on a worker
    assert seen["thread_ok"]  # delivered on the UI thread
    assert seen["progress"] and seen["progress"][-1] == Progress(3, 3, "step 3")
    assert handle.state is TaskState.SUCCEEDED and handle.result == ("done", True)


def test_failures_go_to_on_failure_or_the_runner_signal(qtbot):
    runner = _runner(qtbot)
    errors = []

    def boom(progress, cancel):
        raise ValueError("the disk is on fire")

    handle = runner.run(boom, title="explode", on_failure=errors.append)
    qtbot.waitUntil(lambda: handle.done, timeout=10_000)
    assert handle.state is TaskState.FAILED
    assert errors[0].message == "the disk is on fire" and "ValueError" in errors[0].details

    with qtbot.waitSignal(runner.task_failed, timeout=10_000) as blocker:
        runner.run(boom, title="explode again")
    assert blocker.args[0].title == "explode again"


def test_cancel_button_in_the_task_list_stops_the_op(qtbot):
    runner = TaskRunner()
    tasks = TaskListWidget(runner)
    qtbot.addWidget(tasks)
    started = threading.Event()
    cancelled = []

    def slow(progress, cancel):
        started.set()
        progress(Progress(0, None, "working"))
        while not cancel.cancelled:
            cancel._event.wait(0.01)
        raise Cancelled()

    handle = runner.run(slow, title="slow job", on_cancelled=lambda: cancelled.append(True))
    row = tasks.show_now(handle)
    assert tasks.row_for(handle) is row and not row.isHidden()
    assert started.wait(5)
    qtbot.mouseClick(row.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: handle.done, timeout=10_000)
    assert handle.state is TaskState.CANCELLED and cancelled == [True]
    qtbot.waitUntil(lambda: tasks.row_for(handle) is None, timeout=5_000)
    runner.shutdown()


def test_latest_wins_cancels_the_older_task_and_drops_its_result(qtbot):
    runner = _runner(qtbot)
    gate = threading.Event()
    results = []
    first_saw_cancel = []

    def old(progress, cancel):
        gate.wait(10)  # still busy when the newer request arrives
        first_saw_cancel.append(cancel.cancelled)
        return "old"

    def new(progress, cancel):
        return "new"

    first = runner.run(old, title="filter v1", key="files", on_success=results.append)
    second = runner.run(new, title="filter v2", key="files", on_success=results.append)
    assert first.state is TaskState.SUPERSEDED and first.token.cancelled
    qtbot.waitUntil(lambda: second.done, timeout=10_000)
    gate.set()
    qtbot.waitUntil(runner.is_idle, timeout=10_000)
    assert results == ["new"]  # the late "old" never reaches the UI
    assert first_saw_cancel == [True]
    assert not runner.is_running("files")


def test_different_keys_run_side_by_side(qtbot):
    runner = _runner(qtbot)
    results = []
    handles = [runner.run(lambda p, c, i=i: i, title=f"t{i}", key=f"k{i}", on_success=results.append) for i in range(4)]
    qtbot.waitUntil(lambda: all(h.done for h in handles), timeout=10_000)
    assert sorted(results) == [0, 1, 2, 3]


def test_a_task_appearing_in_the_status_bar_does_not_move_the_window_contents(qtbot, window):
    """The task list keeps a row's height while idle. When it collapsed, every task that started
    or ended resized the docks and the file table: a whole-window repaint, which took 240-300 ms
    while a build kept a worker busy (benchmarks/ui_stall.py)."""
    central = window.centralWidget()
    idle = (central.geometry(), window.statusBar().height())
    gate = threading.Event()
    handle = window.runner.run(lambda progress, cancel: gate.wait(10), title="a long job")
    row = window.task_list.show_now(handle)
    qtbot.waitUntil(lambda: row.isVisible(), timeout=5_000)
    QApplication.processEvents()
    assert (central.geometry(), window.statusBar().height()) == idle
    gate.set()
    qtbot.waitUntil(lambda: window.task_list.row_for(handle) is None, timeout=10_000)
    QApplication.processEvents()
    assert (central.geometry(), window.statusBar().height()) == idle


def test_a_finished_task_announces_what_it_changed_once(qtbot):
    """The one notification: a result's ``changes`` merged with the declared ones, after the task's
    own callbacks; declared changes also when it fails (a scan or build commits as it goes)."""
    from spar_desktop.core.changes import Changes

    runner = _runner(qtbot)
    seen: list = []
    runner.changed.connect(seen.append)

    class Report:
        changes = Changes(files=True)

    order: list[str] = []
    runner.changed.connect(lambda _c: order.append("changed"))
    handle = runner.run(lambda p, c: Report(), title="scan", changes=Changes(tags=True),
                        on_success=lambda _r: order.append("success"))
    qtbot.waitUntil(lambda: handle.done, timeout=10_000)
    assert seen == [Changes(files=True, tags=True)] and order == ["success", "changed"]

    def boom(progress, cancel):
        raise RuntimeError("half done")

    failed = runner.run(boom, title="build", changes=Changes(workspaces=True), on_failure=lambda _e: None)
    qtbot.waitUntil(lambda: failed.done, timeout=10_000)
    assert seen[-1] == Changes(workspaces=True)
    quiet = runner.run(lambda p, c: 42, title="read")
    qtbot.waitUntil(lambda: quiet.done, timeout=10_000)
    assert len(seen) == 2  # a task that changed nothing says nothing


def test_a_coroutine_op_runs_on_the_loop_with_progress_cancel_and_callbacks(qtbot, aloop):
    """Chat's answers: a coroutine op on the qasync loop, through the same runner (handle, cancel,
    callbacks, idle state)."""
    import asyncio

    runner = _runner(qtbot)
    tokens: list[str] = []
    results: list = []

    async def answer(progress, cancel):
        progress(Progress(0, None, "streaming"))
        for word in ("one", "two", "three", "four"):
            if cancel.cancelled:
                return ("stopped", tuple(tokens))
            tokens.append(word)
            await asyncio.sleep(0.05)
        return ("done", tuple(tokens))

    handle = runner.run_coroutine(answer, title="Answering", on_success=results.append)
    assert not runner.is_idle()
    qtbot.waitUntil(lambda: handle.done, timeout=10_000)
    assert results == [("done", ("one", "two", "three", "four"))] and handle.state is TaskState.SUCCEEDED
    assert handle.progress == Progress(0, None, "streaming") and runner.is_idle()

    tokens.clear()
    stopped = runner.run_coroutine(answer, title="Answering", on_success=results.append)
    qtbot.waitUntil(lambda: len(tokens) >= 2, timeout=10_000)
    stopped.cancel()  # the op sees the token and returns its partial answer
    qtbot.waitUntil(lambda: stopped.done, timeout=10_000)
    assert results[-1][0] == "stopped" and stopped.state is TaskState.CANCELLED

    errors = []

    async def broken(progress, cancel):
        raise ConnectionError("the server went away")

    failed = runner.run_coroutine(broken, title="Answering", on_failure=errors.append)
    qtbot.waitUntil(lambda: failed.done, timeout=10_000)
    assert errors[0].message == "the server went away" and failed.state is TaskState.FAILED

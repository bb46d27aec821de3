"""Issues 29/30: after a scan the app prepares the tag vocabulary in the background (a task with
progress, latest wins), so the next request embeds nothing and only matches."""

from __future__ import annotations

from pathlib import Path

from tests.ui.conftest import UI_TIMEOUT_MS

FOLDERS = ("Engineering/Falcon/2019/reports", "Engineering/Heron/2019/reports", "Finance/Audit/2020/minutes",
           "Safety/Falcon/2019/incident-reports")


def write_share(root: Path) -> Path:
    for n, folder in enumerate(FOLDERS):
        (root / folder).mkdir(parents=True)
        (root / folder / f"doc{n}.txt").write_text(f"document {n} about {folder}", encoding="utf-8")
    return root


def test_a_scan_is_followed_by_the_vocabulary_job_and_the_next_request_embeds_nothing(qtbot, window, tmp_path,
                                                                                     monkeypatch):
    controller = window.workspaces
    qtbot.waitUntil(lambda: controller.service is not None, timeout=UI_TIMEOUT_MS)
    jobs, progress = [], []
    started = controller.prepare_vocabulary

    def spy():
        handle = started()
        jobs.append(handle)
        handle.progress_changed.connect(progress.append)
        return handle

    monkeypatch.setattr(controller, "prepare_vocabulary", spy)
    window.controller.start_scan(str(write_share(tmp_path / "share")))
    qtbot.waitUntil(lambda: bool(jobs) and window.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    assert jobs[-1].title == "Preparing the tag vocabulary"
    assert progress and progress[-1].done == progress[-1].total > 0  # tags embedded, with progress
    manager = controller.service.manager
    encoder = manager.engine.encoder
    encoded = encoder.texts_encoded
    exp = manager.preview("reports from the Falcon project")
    assert encoder.texts_encoded == encoded  # the request embedded nothing
    assert manager.tag_index.last_sync == (0, 0) and manager.tag_index.pending() == 0
    assert any("Falcon" in line for line in exp.lines())


def test_workspaces_and_the_vocabulary_job_start_once_the_library_shows(qtbot, settings, tmp_path):
    """At 1M files the job's Python and the workspaces' imports held the GIL while the table and
    the tag tree were loading: they start after the tags are shown."""
    from spar_desktop.core.library.database import Library
    from spar_desktop.core.library.scanner import Scanner
    from spar_desktop.ui.main_window import MainWindow

    lib = Library.open(settings)
    Scanner(lib).scan([str(write_share(tmp_path / "share"))])  # tags a CLI scan added: the job has work
    window = MainWindow(settings, lib, watch=False, interactive=False)
    qtbot.addWidget(window)
    shown_at_start: dict[str, bool] = {}  # task title → the tag tree had its rows when it started
    window.runner.task_started.connect(lambda h: shown_at_start.setdefault(h.title, window.tag_panel.model.rowCount() > 0))
    window.show()
    qtbot.waitUntil(lambda: "Preparing the tag vocabulary" in shown_at_start and window.runner.is_idle(),
                    timeout=UI_TIMEOUT_MS)
    assert shown_at_start["Opening workspaces"] and shown_at_start["Preparing the tag vocabulary"]
    assert not shown_at_start["Loading tags"]
    assert window.tag_panel.model.rowCount() > 0
    window.close()
    lib.close()


class _Clock:
    """The user-activity gate's clock, moved by the test (nothing depends on the machine's speed)."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def test_the_vocabulary_job_gives_way_while_the_user_expands_tags_and_ends_once_the_window_is_quiet(
        qtbot, window, tmp_path):
    """On two cores the job's encoder took the CPU the UI thread needed while the user scrolled
    (stop 42: 3-5.7 s of run-queue wait in 80 page steps at 1M files): it waits at its checks
    while the user works the window, and a task the user waits for does not."""
    controller = window.workspaces
    qtbot.waitUntil(lambda: controller.service is not None, timeout=UI_TIMEOUT_MS)
    share = write_share(tmp_path / "share")
    window.controller.start_scan(str(share))
    qtbot.waitUntil(lambda: window.runner.is_idle() and window.tag_panel.model.rowCount() > 0, timeout=UI_TIMEOUT_MS)
    clock = _Clock()
    window.runner.user_activity.clock = clock

    view, model = window.tag_panel.tree_view, window.tag_panel.model
    folders = next(model.index(r, 0) for r in range(model.rowCount()) if model.hasChildren(model.index(r, 0)))
    view.collapse(folders)
    view.expand(folders)  # the user opens a tag: the activity is touched through the view's signal
    assert window.runner.user_activity.quiet_left() > 0

    (share / "Legal/Falcon/2021/contracts").mkdir(parents=True)  # new tags: the job has work to do
    (share / "Legal/Falcon/2021/contracts/c.txt").write_text("contract for Falcon", encoding="utf-8")
    jobs = []
    window.runner.task_started.connect(lambda h: jobs.append(h) if h.title == "Preparing the tag vocabulary" else None)
    window.controller.start_scan(str(share))
    qtbot.waitUntil(lambda: bool(jobs), timeout=UI_TIMEOUT_MS)
    foreground = window.runner.run(lambda progress, cancel: cancel.raise_if_cancelled() or "done", title="asked for")
    qtbot.waitUntil(lambda: foreground.done, timeout=UI_TIMEOUT_MS)
    assert foreground.result == "done"  # a task the user waits for never waits for the window
    qtbot.wait(600)
    assert not jobs[-1].done  # the clock has not moved: the user is still at it

    clock.now += 5.0  # the window has been quiet for longer than the gate asks
    qtbot.waitUntil(lambda: jobs[-1].done and window.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    assert jobs[-1].state.value == "succeeded"
    assert controller.service.manager.tag_index.pending() == 0
    assert window.runner.user_activity.waited_s > 0

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

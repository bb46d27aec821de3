"""Cancelling a scan from the task list leaves a consistent index; the next scan completes it."""

from __future__ import annotations

from PySide6.QtCore import Qt
from sqlalchemy import func, select

from spar_desktop.core.library.models import File, Folder
from spar_desktop.ui.base.tasks import TaskState
from tests.support.corpora import write_generated_tree
from tests.ui.conftest import UI_TIMEOUT_MS

N_FILES = 6000


def test_cancel_mid_scan_then_rescan(qtbot, window, tmp_path, library):
    root = tmp_path / "big"
    write_generated_tree(root, N_FILES)
    [handle] = window.controller.index_paths([str(root)])
    row = window.task_list.show_now(handle)
    # Cancel once the first batches are committed, well before the end.
    qtbot.waitUntil(lambda: handle.progress is not None and handle.progress.done >= 600, timeout=UI_TIMEOUT_MS)
    qtbot.mouseClick(row.cancel_button, Qt.MouseButton.LeftButton)
    assert handle.state is TaskState.CANCELLING
    qtbot.waitUntil(lambda: handle.done and window.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    assert handle.state is TaskState.CANCELLED and handle.result.cancelled
    assert "Cancelled indexing" in window.statusBar().currentMessage()

    with library.session() as s:
        indexed = s.scalar(select(func.count(File.id)))
        distinct = s.scalar(select(func.count(func.distinct(File.path))))
        folder = s.scalars(select(Folder)).one()
    assert 0 < indexed < N_FILES and indexed == distinct
    assert not folder.last_scan_complete
    assert window.file_panel.model.total == indexed  # the table shows what was committed

    [again] = window.controller.index_paths([str(root)])
    qtbot.waitUntil(lambda: again.done and window.runner.is_idle(), timeout=120_000)
    assert again.state is TaskState.SUCCEEDED
    assert again.result.new == N_FILES - indexed and again.result.unchanged == indexed
    with library.session() as s:
        assert s.scalar(select(func.count(File.id))) == N_FILES
        assert s.scalar(select(func.count(func.distinct(File.path)))) == N_FILES
        assert s.scalars(select(Folder)).one().last_scan_complete
    assert window.file_panel.model.total == N_FILES

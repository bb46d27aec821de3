"""Issue 14, the GUI half: defects a new user hits in the first hour (one test or more per item)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from tests.ui.conftest import UI_TIMEOUT_MS, write_workspace_share

BUILD_TIMEOUT_MS = 180_000  # the first preview in a process loads the encoder


@pytest.fixture
def indexed_window(qtbot, make_window, tmp_path):
    window = make_window()
    share = write_workspace_share(tmp_path / "share")
    window.controller.index_paths([str(share)])
    qtbot.waitUntil(lambda: window.file_panel.model.total == 5 and window.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    qtbot.waitUntil(lambda: window.workspaces.service is not None, timeout=UI_TIMEOUT_MS)
    return window


# -- 1. the workspace dialog: Enter after editing the request ---------------------------------------
def test_enter_after_editing_the_request_previews_the_new_text_not_the_stale_filter(qtbot, indexed_window):
    w = indexed_window
    dialog = w.features.new_workspace()
    dialog.request_edit.setText("incident reports from 2023")
    with qtbot.waitSignal(dialog.explained, timeout=BUILD_TIMEOUT_MS):
        dialog.preview()
    assert dialog.explanation.admitted == 3
    # The user edits the request and presses Enter at once (before the auto-preview fires).
    dialog.request_edit.setFocus()
    dialog.request_edit.selectAll()
    qtbot.keyClicks(dialog.request_edit, "budget")
    with qtbot.waitSignal(dialog.explained, timeout=UI_TIMEOUT_MS) as shown:
        qtbot.keyClick(dialog.request_edit, Qt.Key.Key_Return)
    assert shown.args[0].filter.request == "budget"
    assert dialog.isVisible() and w.features.dialog is dialog  # nothing was created from the old filter
    qtbot.waitUntil(w.runner.is_idle, timeout=UI_TIMEOUT_MS)
    assert list(w.workspaces.service.manager.list()) == []
    assert dialog.request_edit.text() == "budget" and dialog.explanation.filter.request == "budget"


def test_a_preview_that_finishes_after_the_dialog_closed_is_ignored(qtbot, indexed_window):
    w = indexed_window
    dialog = w.features.new_workspace()
    dialog.request_edit.setText("incident reports from 2023")
    dialog.preview()
    dialog.reject()  # closed (and deleted) while the preview runs
    qtbot.waitUntil(lambda: w.features.dialog is None, timeout=UI_TIMEOUT_MS)
    qtbot.waitUntil(w.runner.is_idle, timeout=BUILD_TIMEOUT_MS)  # its result arrives: nothing raises
    assert list(w.workspaces.service.manager.list()) == []


def test_create_after_an_unpreviewed_edit_previews_first(qtbot, indexed_window):
    w = indexed_window
    dialog = w.features.new_workspace()
    dialog.request_edit.setText("incident reports from 2023")
    with qtbot.waitSignal(dialog.explained, timeout=BUILD_TIMEOUT_MS):
        dialog.preview()
    dialog.name_edit.setText("Budget")
    dialog.request_edit.setText("budget")
    assert not dialog.build_button.isEnabled()  # the filter on screen is not the request's any more
    with qtbot.waitSignal(dialog.explained, timeout=UI_TIMEOUT_MS) as shown:
        dialog.create(build=False)  # e.g. Enter on another field reached the default button
    assert shown.args[0].filter.request == "budget" and dialog.isVisible()
    assert dialog.build_button.isEnabled()
    dialog.create_button.click()
    qtbot.waitUntil(lambda: w.features.dialog is None, timeout=UI_TIMEOUT_MS)
    stored = w.workspaces.service.manager.get("Budget")
    assert stored.filter.request == "budget"

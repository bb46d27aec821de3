"""The workspace dialog's chunking choice, and contextual passages enhanced in the background after
the build, with their progress in the workspace panel (issue 32). Real index and encoder; the
language model is the project's Ollama-protocol test server."""

from __future__ import annotations

from dataclasses import replace

import pytest

from spar_desktop.core.workspaces.chunkings import CHUNKINGS
from tests.ui.conftest import UI_TIMEOUT_MS, app_like_settings, write_workspace_share

BUILD_TIMEOUT_MS = 180_000  # the first build in a process loads the encoder


@pytest.fixture
def indexed(qtbot, window_on, fake, tmp_path):
    fake.set(reply_fn=lambda body: "From an incident report of the wind farm.")
    settings = replace(app_like_settings(tmp_path / "data"), ollama_host=fake.url, ollama_model="llama3.2")
    w = window_on(settings)
    qtbot.waitUntil(w.runner.is_idle, timeout=UI_TIMEOUT_MS)
    w.controller.index_paths([str(write_workspace_share(tmp_path / "share"))])
    qtbot.waitUntil(lambda: w.file_panel.model.total == 5 and w.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    return w


def test_contextual_chosen_in_the_dialog_is_enhanced_after_the_build(qtbot, indexed, fake):
    w = indexed
    dialog = w.features.new_workspace()
    combo = dialog.chunking_combo
    assert [combo.itemData(i) for i in range(combo.count())] == list(CHUNKINGS)
    assert combo.value() == "hierarchical"  # the default, as before the choice existed
    combo.setCurrentIndex(CHUNKINGS.index("contextual"))
    dialog.request_edit.setText("incident reports")
    with qtbot.waitSignal(dialog.explained, timeout=BUILD_TIMEOUT_MS):
        dialog.preview()
    dialog.name_edit.setText("Incidents")
    dialog.build_button.click()  # Create and build
    qtbot.waitUntil(lambda: w.workspaces.row("Incidents") is not None
                    and w.workspaces.row("Incidents").status == "active", timeout=BUILD_TIMEOUT_MS)
    manager = w.workspaces.service.manager
    assert manager.get("Incidents").chunking == "contextual"
    total = manager.get("Incidents").chunk_count
    panel = w.workspace_panel
    # The build is followed by the enhancement; the panel's info line follows its progress.
    qtbot.waitUntil(lambda: f"contextual: {total}/{total} passages enhanced" in panel.info.text(),
                    timeout=BUILD_TIMEOUT_MS)
    # One context line per passage (the preview's reading of the request is a call of its own).
    assert len([c for c in fake.calls("/api/generate") if "<chunk>" in c.body["prompt"]]) == total
    qtbot.waitUntil(w.runner.is_idle, timeout=BUILD_TIMEOUT_MS)  # the swap build ends before teardown

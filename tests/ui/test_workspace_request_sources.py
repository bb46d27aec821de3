"""The workspace dialog with the model reading the request (issue 32): each constraint listed with
where it came from, and Remove taking one out. Real index and encoder, the scripted Ollama server."""

from __future__ import annotations

import json
from dataclasses import replace

from PySide6.QtWidgets import QPushButton

from tests.ui.conftest import UI_TIMEOUT_MS, write_workspace_share

BUILD_TIMEOUT_MS = 180_000  # the first preview in a process loads the encoder


def test_sources_are_shown_and_a_model_constraint_is_removed(qtbot, make_window, tmp_path, fake):
    w = make_window()
    w.controller.index_paths([str(write_workspace_share(tmp_path / "share"))])
    qtbot.waitUntil(lambda: w.file_panel.model.total == 5 and w.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    w.library.settings = replace(w.library.settings, ollama_host=fake.url)
    fake.set(reply=json.dumps({"keywords": ["incident reports"], "types": ["pdf"]}))

    dialog = w.features.new_workspace()
    dialog.request_edit.setText("incident reports about the gearbox")
    with qtbot.waitSignal(dialog.explained, timeout=BUILD_TIMEOUT_MS):
        dialog.preview()
    assert fake.calls("/api/generate")
    assert dialog.explanation.filter.formats == ("pdf",) and dialog.types_edit.text() == "pdf"
    rows = dialog.sources_view.row_texts()
    assert "File type: pdf — from the language model" in rows
    assert "Keyword: incident reports — from the rules and language model" in rows
    assert not dialog.sources_view.isHidden()

    [remove] = [b for b in dialog.sources_view.findChildren(QPushButton)
                if b.toolTip() == "Leave this file type out of the filter"]
    with qtbot.waitSignal(dialog.explained, timeout=UI_TIMEOUT_MS) as recount:
        remove.click()
    flt = recount.args[0].filter
    assert flt.formats == () and dialog.types_edit.text() == ""
    assert "you dropped type 'pdf' (from the model)" in flt.notes
    assert not any(r.startswith("File type") for r in dialog.sources_view.row_texts())
    assert "Keyword: incident reports — from the rules and language model" in dialog.sources_view.row_texts()


def test_without_a_model_the_dialog_reads_as_before(qtbot, make_window, tmp_path):
    w = make_window()
    w.controller.index_paths([str(write_workspace_share(tmp_path / "share"))])
    qtbot.waitUntil(lambda: w.file_panel.model.total == 5 and w.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    w.library.settings = replace(w.library.settings, request_llm=False)
    dialog = w.features.new_workspace()
    dialog.request_edit.setText("incident reports from 2023")
    with qtbot.waitSignal(dialog.explained, timeout=BUILD_TIMEOUT_MS):
        dialog.preview()
    assert dialog.explanation.filter.sources == () and dialog.sources_view.isHidden()
    assert dialog.sources_view.row_texts() == []

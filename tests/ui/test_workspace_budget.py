"""The workspace dialog with ranked admission (issue 16): the size against the index with Show
more / Show fewer, "Count unconfirmed tag suggestions", and the files only suggestions brought in.
Real index, real encoder, the app's task runner."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ui.conftest import UI_TIMEOUT_MS, write_workspace_share

BUILD_TIMEOUT_MS = 180_000  # the first preview in a process loads the encoder


@pytest.fixture
def indexed_window(qtbot, make_window, tmp_path):
    window = make_window()
    share = write_workspace_share(tmp_path / "share")
    window.controller.index_paths([str(share)])
    qtbot.waitUntil(lambda: window.file_panel.model.total == 5 and window.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    assert window.workspaces.service is not None
    return window


def test_show_more_or_fewer_and_count_suggestions(qtbot, indexed_window):
    from spar_desktop.core.library.models import File, Tag, TagSource
    from spar_desktop.core.library.tags import tag_files

    w = indexed_window
    with w.library.session() as s:  # a wrong automatic suggestion nobody reviewed: the budget is an incident
        tag = s.query(Tag.id).filter(Tag.key == "Operations/Incident-Reports").scalar()
        budget_file = s.query(File.id).filter(File.name == "budget.md").scalar()
        tag_files(s, [budget_file], tag, TagSource.AUTO, score=0.4, confirmed=False)
    dialog = w.features.new_workspace()
    dialog.request_edit.setText("incident reports")
    with qtbot.waitSignal(dialog.explained, timeout=BUILD_TIMEOUT_MS):
        dialog.preview()
    exp = dialog.explanation
    assert exp.filter.ranked and exp.admitted == 4 and exp.funnel[-1].label.startswith("ranked: top 4 of 4")
    assert dialog.size_label.text() == "4 files, 80% of the index"
    assert not dialog.match_all_check.isChecked() and not dialog.suggested_check.isChecked()
    assert not dialog.more_button.isEnabled() and dialog.fewer_button.isEnabled()  # all 4 candidates are in

    with qtbot.waitSignal(dialog.explained, timeout=UI_TIMEOUT_MS) as recount:
        dialog.fewer_button.click()
    assert recount.args[0].admitted == 2 and dialog.size_label.text() == "2 files, 40% of the index"
    assert dialog.more_button.isEnabled()
    with qtbot.waitSignal(dialog.explained, timeout=UI_TIMEOUT_MS) as recount:
        dialog.more_button.click()
    assert recount.args[0].admitted == 4 and recount.args[0].filter.budget == 4

    with qtbot.waitSignal(dialog.explained, timeout=UI_TIMEOUT_MS) as recount:
        dialog.suggested_check.setChecked(True)
    exp = recount.args[0]
    # A suggestion weighs its certainty (0.4): with a budget of 4 the confirmed incident files come first.
    assert exp.filter.include_unconfirmed and exp.admitted == 4 and exp.suggested_only == ()
    assert exp.funnel[-1].label.startswith("ranked: top 4 of 5") and dialog.more_button.isEnabled()
    with qtbot.waitSignal(dialog.explained, timeout=UI_TIMEOUT_MS) as recount:
        dialog.more_button.click()
    exp = recount.args[0]
    assert exp.admitted == 5 and [Path(p).name for p in exp.suggested_only] == ["budget.md"]
    assert "1 only through unconfirmed tag suggestions: budget.md" in dialog.notes_label.text()
    assert not dialog.notes_label.isHidden() and dialog.size_label.text() == "5 files, 100% of the index"

    # Create: the budget and the choice are saved with the filter.
    dialog.name_edit.setText("Incidents")
    dialog.create_button.click()
    qtbot.waitUntil(lambda: w.workspaces.row("Incidents") is not None, timeout=UI_TIMEOUT_MS)
    saved = w.workspaces.service.manager.get("Incidents").filter
    assert saved.ranked and saved.budget == 8 and saved.include_unconfirmed

"""Workspaces in the window: a request previewed and edited in the dialog, created, built with
progress, searched, and a hit opened in the viewer at its page; then archive, reactivate,
export and import. Real index, real encoder (loaded once per process), in-process Chroma."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from spar_desktop.core.workspaces.models import QueryLogEntry
from tests.ui.conftest import UI_TIMEOUT_MS, write_workspace_share

BUILD_TIMEOUT_MS = 180_000  # the first preview/build in a process loads the encoder


@pytest.fixture
def indexed_window(qtbot, make_window, tmp_path):
    window = make_window()
    share = write_workspace_share(tmp_path / "share")
    window.controller.index_paths([str(share)])
    qtbot.waitUntil(lambda: window.file_panel.model.total == 5 and window.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    assert window.workspaces.service is not None  # opened in the background at start-up
    return window


def tag_keys(dialog, label: str) -> dict[str, Qt.CheckState]:
    group = dialog.group_item(label)
    return {group.child(i).data(0, Qt.ItemDataRole.UserRole + 2).key: group.child(i).checkState(0)
            for i in range(group.childCount())}


def test_request_preview_edit_create_build_search_and_open_hit(qtbot, indexed_window):
    w = indexed_window
    assert w.workspace_panel.new_button.isEnabled() and not w.workspace_panel.search_box.isEnabled()
    dialog = w.features.new_workspace()
    dialog.request_edit.setText("incident reports from 2023")
    with qtbot.waitSignal(dialog.explained, timeout=BUILD_TIMEOUT_MS):
        dialog.preview()
    exp = dialog.explanation
    # Both folders named Incident-Reports matched the keyword exactly; the year became dates.
    assert set(tag_keys(dialog, "incident reports")) == {"Operations/Incident-Reports", "Safety/Incident-Reports"}
    assert str(exp.filter.since) == "2023-01-01" and str(exp.filter.until) == "2023-12-31"
    assert dialog.since_check.isChecked() and dialog.until_edit.date().year() == 2023
    # Ranked (issue 16): all files, the dates (hard), then the ranking step.
    assert [s.admitted for s in exp.funnel] == [5, 4, 3] and exp.funnel[-1].label.startswith("ranked: top 3 of 3")
    assert "3 files" in dialog.admitted_label.text() and dialog.build_button.isEnabled()

    # Uncheck the Safety tag: the funnel is recounted in the background.
    safety = next(t.tag_id for g in exp.filter.groups for t in g.tags if t.key == "Safety/Incident-Reports")
    with qtbot.waitSignal(dialog.explained, timeout=UI_TIMEOUT_MS) as recount:
        assert dialog.set_tag_checked(safety, False)
    assert recount.args[0].admitted == 2 and [s.admitted for s in recount.args[0].funnel] == [5, 4, 2]
    assert tag_keys(dialog, "incident reports")["Safety/Incident-Reports"] == Qt.CheckState.Unchecked

    dialog.name_edit.setText("Incidents 2023")
    dialog.build_button.click()  # Create and build
    qtbot.waitUntil(lambda: w.workspaces.current is not None and w.workspaces.current.name == "Incidents 2023",
                    timeout=UI_TIMEOUT_MS)
    assert w.features.dialog is None  # closed (and deleted) once created
    stored = w.workspaces.current
    saved_keys = {t.key for g in w.workspaces.service.manager.get("Incidents 2023").filter.groups for t in g.tags}
    assert saved_keys == {"Operations/Incident-Reports"}  # the edited filter, not the raw request's
    qtbot.waitUntil(lambda: w.workspaces.row("Incidents 2023").status == "active"
                    and not w.workspaces.is_building("Incidents 2023"), timeout=BUILD_TIMEOUT_MS)
    row = w.workspaces.row("Incidents 2023")
    assert row.file_count == 2 and row.chunk_count > 0 and stored.request == "incident reports from 2023"
    panel = w.workspace_panel
    assert panel.list.topLevelItem(0).text(1) == "active" and panel.build_button.text() == "Update"
    assert panel.search_box.isEnabled() and not panel.progress_box.isVisible()
    assert "keywords scored on" in panel.info.text()  # the chunking chosen from the files, right after the build

    # Search (latest-wins task) and open the top hit at its page with the passage highlighted.
    panel.search_box.setText("water contamination of the gearbox oil")
    with qtbot.waitSignal(w.workspaces.search_finished, timeout=UI_TIMEOUT_MS):
        panel.search_box.returnPressed.emit()
    assert panel.results.count() > 0 and "passage" in panel.results_label.text()
    hit = panel.hit(0)
    assert Path(hit.path).name == "IR-gearbox-failure.pdf" and hit.page_start == 2, hit
    with qtbot.waitSignal(w.viewer.page_shown, timeout=UI_TIMEOUT_MS) as shown:
        panel.results.itemActivated.emit(panel.results.item(0))
    assert shown.args == [2] and w.viewer.path == hit.path and w.tabs.currentWidget() is w.viewer
    assert w.viewer.highlight_count >= 1

    log_id = w.workspaces.last_results.log_id

    def opened() -> bool:
        with w.library.session() as s:
            return hit.file_id in (s.get(QueryLogEntry, log_id).opened or [])
    qtbot.waitUntil(opened, timeout=UI_TIMEOUT_MS)


def test_archive_reactivate_export_import(qtbot, indexed_window, tmp_path):
    w = indexed_window
    c = w.workspaces
    dialog = w.features.new_workspace("incident reports")
    qtbot.waitUntil(lambda: dialog.explanation is not None, timeout=BUILD_TIMEOUT_MS)
    dialog.name_edit.setText("All incidents")
    dialog.build_button.click()
    qtbot.waitUntil(lambda: c.row("All incidents") is not None and c.row("All incidents").status == "active"
                    and not c.is_building("All incidents"), timeout=BUILD_TIMEOUT_MS)
    assert c.current.name == "All incidents" and c.current.file_count == 4

    # "Filter…" reopens the explained filter of the workspace; saving an edit keeps its vectors.
    dialog = w.features.edit_workspace("All incidents")
    qtbot.waitUntil(lambda: dialog.explanation is not None, timeout=UI_TIMEOUT_MS)
    assert dialog.request_edit.text() == "incident reports" and dialog.explanation.admitted == 4
    safety = next(t.tag_id for g in dialog.explanation.filter.groups for t in g.tags if t.key.startswith("Safety"))
    with qtbot.waitSignal(dialog.explained, timeout=UI_TIMEOUT_MS):
        dialog.set_tag_checked(safety, False)
    with qtbot.waitSignal(dialog.created, timeout=UI_TIMEOUT_MS) as saved:
        dialog.create_button.click()  # Save filter
    assert saved.args[0].admitted == 3
    assert {t.key for g in c.service.manager.get("All incidents").filter.groups for t in g.tags} == \
        {"Operations/Incident-Reports"}

    w.workspace_panel.archive_button.click()
    qtbot.waitUntil(lambda: c.current.status == "archived", timeout=UI_TIMEOUT_MS)
    panel = w.workspace_panel
    assert panel.archive_button.text() == "Reactivate" and not panel.search_box.isEnabled()
    assert panel.list.topLevelItem(0).text(1) == "archived"
    panel.archive_button.click()  # reactivate: rebuilt from cached embeddings
    qtbot.waitUntil(lambda: c.current.status == "active" and not c.is_building("All incidents"),
                    timeout=BUILD_TIMEOUT_MS)
    assert panel.search_box.isEnabled()

    out = tmp_path / "all.sparws"
    handle = c.export("All incidents", str(out))
    qtbot.waitUntil(lambda: handle.done, timeout=UI_TIMEOUT_MS)
    assert out.is_file()
    c.import_file(str(out))
    qtbot.waitUntil(lambda: c.current is not None and c.current.name == "All incidents (2)", timeout=UI_TIMEOUT_MS)
    assert c.current.status == "draft" and panel.build_button.text() == "Build"
    assert {r.name for r in c.rows} == {"All incidents", "All incidents (2)"}

    c.delete("All incidents (2)")
    qtbot.waitUntil(lambda: [r.name for r in c.rows] == ["All incidents"], timeout=UI_TIMEOUT_MS)


def test_a_keyword_group_left_out_by_relaxation_is_shown_and_can_be_added_back(qtbot, indexed_window):
    from dataclasses import replace

    from spar_desktop.core.workspaces.selection import TagGroup, tag_choice

    w = indexed_window
    mgr = w.workspaces.service.manager
    # As relaxation leaves it when no file has both: incident reports required, 'finance' left out.
    kept = mgr.filter_for(tags=["Operations/Incident-Reports"])
    gone = TagGroup("finance", tuple(tag_choice(w.library, "Finance")))
    mgr.create("Incidents", filter=replace(kept, dropped=(gone,), request="finance and incident reports"))
    dialog = w.features.edit_workspace("Incidents")
    qtbot.waitUntil(lambda: dialog.explanation is not None, timeout=BUILD_TIMEOUT_MS)
    assert dialog.explanation.admitted == 3
    item = dialog.group_item("finance")
    assert item is not None and "left out" in item.text(0) and item.checkState(0) == Qt.CheckState.Unchecked
    assert dialog.current_filter().dropped == (gone,)  # still listed (and saved) while left out
    with qtbot.waitSignal(dialog.explained, timeout=UI_TIMEOUT_MS) as recount:
        item.setCheckState(0, Qt.CheckState.Checked)  # require it again
    exp = recount.args[0]
    assert exp.filter.dropped == () and {g.label for g in exp.filter.groups} == {"finance", kept.groups[0].label}
    assert next(g for g in exp.filter.groups if g.label == "finance").required
    assert exp.admitted == 0 and exp.emptied_by and not dialog.build_button.isEnabled()
    dialog.reject()


def test_every_keyword_must_match_can_be_switched_on_and_off(qtbot, indexed_window):
    from spar_desktop.core.workspaces.selection import TagGroup, WorkspaceFilter, tag_choice

    w = indexed_window
    mgr = w.workspaces.service.manager
    # As relaxation leaves it when no file has both keywords: a file may lack one of them.
    finance = TagGroup("finance", tuple(tag_choice(w.library, "Finance")))
    incidents = TagGroup("incident reports", tuple(tag_choice(w.library, "Operations/Incident-Reports")))
    loose = WorkspaceFilter(groups=(finance, incidents), tolerance=1, request="finance and incident reports")
    mgr.create("Either", filter=loose)
    dialog = w.features.edit_workspace("Either")
    qtbot.waitUntil(lambda: dialog.explanation is not None, timeout=BUILD_TIMEOUT_MS)
    either = dialog.explanation.admitted
    assert either >= 3 and not dialog.match_all_check.isChecked()
    with qtbot.waitSignal(dialog.explained, timeout=UI_TIMEOUT_MS) as recount:
        dialog.match_all_check.setChecked(True)
    exp = recount.args[0]
    assert exp.filter.tolerance == 0 and exp.admitted == 0 and exp.emptied_by
    assert not dialog.build_button.isEnabled()
    with qtbot.waitSignal(dialog.explained, timeout=UI_TIMEOUT_MS) as recount:
        dialog.match_all_check.setChecked(False)
    assert recount.args[0].admitted == either
    dialog.reject()

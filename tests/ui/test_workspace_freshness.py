"""Workspaces that follow their files: an edit on disk reaches the index through the folder
watcher, the panel says the built workspace is out of date (paths in the tooltip), and an update
(by the Update button, or by itself with the default setting) makes the next search find the new
text, without restarting the window. Workspaces unused for a month are archived at start and say
so. Real index, watcher, encoder and vector store on three tiny files."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from spar_desktop.core.workspaces.freshness import Freshness
from spar_desktop.ui.workspaces.panel_text import freshness_line, freshness_tooltip
from spar_desktop.ui.workspaces.search_results import CHANGED_MARK, hit_html, hit_tooltip
from tests.ui.conftest import BUILD_TIMEOUT_MS, UI_TIMEOUT_MS

NEW_SENTENCE = " A zeppelin mooring mast was inspected on Tuesday."


def write_notes(root: Path) -> Path:
    notes = root / "Notes"
    notes.mkdir(parents=True)
    (notes / "turbines.txt").write_text("The wind turbine gearbox was serviced in March.", encoding="utf-8")
    (notes / "bridge.txt").write_text("The footbridge railing was repainted green.", encoding="utf-8")
    (notes / "library.txt").write_text("The town library extended its opening hours.", encoding="utf-8")
    return root


def built_window(qtbot, make_window, tmp_path: Path, mode: str):
    """A watched window whose workspace 'notes' (the Notes folder) is built and selected."""
    share = write_notes(tmp_path / "share")
    window = make_window(watch=True, debounce_ms=300)
    window.apply_settings(replace(window.settings, workspace_updates=mode))
    window.controller.index_paths([str(share)])
    qtbot.waitUntil(lambda: window.file_panel.model.total == 3 and window.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    qtbot.waitUntil(lambda: window.controller.watcher.active_roots == [str(share.resolve())], timeout=UI_TIMEOUT_MS)
    c = window.workspaces
    c.service.manager.create("notes", tags=["Notes"])
    c.select_later("notes")
    qtbot.waitUntil(lambda: c.current is not None and c.current.name == "notes", timeout=UI_TIMEOUT_MS)
    c.build("notes")
    qtbot.waitUntil(lambda: c.row("notes").status == "active" and not c.is_building("notes")
                    and window.runner.is_idle(), timeout=BUILD_TIMEOUT_MS)
    assert c.current.file_count == 3 and window.workspace_panel.freshness_bar.isHidden()  # fresh: nothing to say
    return window, share


def search(qtbot, window, query: str):
    panel = window.workspace_panel
    panel.search_box.setText(query)
    with qtbot.waitSignal(window.workspaces.search_finished, timeout=UI_TIMEOUT_MS) as found:
        panel.search_box.returnPressed.emit()
    return found.args[0]


def edit(path: Path) -> None:
    with path.open("a", encoding="utf-8") as f:
        f.write(NEW_SENTENCE)


def test_an_edited_file_makes_the_workspace_out_of_date_until_update_is_clicked(qtbot, make_window, tmp_path):
    window, share = built_window(qtbot, make_window, tmp_path, "ask")
    c, panel = window.workspaces, window.workspace_panel
    assert not any("zeppelin" in h.text.lower() for h in search(qtbot, window, "zeppelin mooring mast").hits)

    edited = share / "Notes" / "turbines.txt"
    edit(edited)  # the watcher rescans; the scan's Changes(files) recompute the freshness
    qtbot.waitUntil(lambda: panel.freshness_bar.isVisible() and window.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    assert panel.freshness_label.text().replace("\xa0", " ") == "Out of date (1 changed)"  # no-break spaces
    assert str(edited) in panel.freshness_label.toolTip()
    assert panel.update_button.isVisible() and panel.update_button.isEnabled()
    assert not c.is_building("notes")  # 'ask': nothing starts by itself

    # Until the update, a hit from the edited file is marked: its passage is the old text.
    hit = next(h for h in search(qtbot, window, "wind turbine gearbox").hits if h.path == str(edited))
    assert hit.file_changed and CHANGED_MARK in hit_html(hit, hit.text) and "edited since" in hit_tooltip(hit)

    panel.update_button.click()
    qtbot.waitUntil(lambda: not c.is_building("notes") and window.runner.is_idle(), timeout=BUILD_TIMEOUT_MS)
    qtbot.waitUntil(lambda: panel.freshness_bar.isHidden(), timeout=UI_TIMEOUT_MS)
    hits = search(qtbot, window, "zeppelin mooring mast").hits
    assert hits and hits[0].path == str(edited) and "zeppelin" in hits[0].text.lower()
    assert not hits[0].file_changed


def test_with_the_default_setting_an_edit_updates_the_workspace_by_itself(qtbot, make_window, tmp_path):
    window, share = built_window(qtbot, make_window, tmp_path, "auto")
    c, panel = window.workspaces, window.workspace_panel
    seen = []  # the panel at the update's first progress: it says so, and search stays usable
    c.build_progress.connect(lambda name, _p: seen.append((panel.freshness_label.text(), panel.search_box.isEnabled(),
                                                           panel.freshness_bar.isVisible())))
    finished = []
    c.build_finished.connect(lambda name, report: finished.append((name, report)))

    edit(share / "Notes" / "bridge.txt")
    qtbot.waitUntil(lambda: bool(finished) and not c.is_building("notes") and window.runner.is_idle()
                    and panel.freshness_bar.isHidden(), timeout=BUILD_TIMEOUT_MS)
    name, report = finished[0]
    assert name == "notes" and report is not None and report.changed_files == 1
    text, searchable, shown = seen[0]
    assert shown and text.startswith("Updating… (answers come from the build of ") and searchable
    hits = search(qtbot, window, "zeppelin mooring mast").hits
    assert hits and hits[0].path == str(share / "Notes" / "bridge.txt") and "zeppelin" in hits[0].text.lower()
    assert len(finished) == 1  # once: the update's own end does not start another


def test_a_workspace_unused_for_a_month_is_archived_and_says_so(qtbot, make_window, tmp_path):
    from spar_desktop.core.workspaces.models import Workspace

    window, _share = built_window(qtbot, make_window, tmp_path, "auto")
    c, panel = window.workspaces, window.workspace_panel
    with window.library.session() as s:
        ws = s.query(Workspace).filter_by(name="notes").one()
        ws.last_used_at -= timedelta(days=40)
    c.archive_idle()  # what the window runs once the workspaces open
    qtbot.waitUntil(lambda: c.current.status == "archived" and window.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    assert panel.freshness_bar.isVisible() and panel.freshness_label.text().startswith("Archived after 30 days unused")
    assert panel.update_button.isHidden() and panel.archive_button.text() == "Reactivate"

    panel.archive_button.click()  # Reactivate: rebuilt from the cache, with the index as it is now
    qtbot.waitUntil(lambda: c.current.status == "active" and not c.is_building("notes") and window.runner.is_idle(),
                    timeout=BUILD_TIMEOUT_MS)
    assert panel.freshness_bar.isHidden()


def test_the_freshness_line_and_its_tooltip():
    from datetime import datetime

    from spar_desktop.core.workspaces.selection import WorkspaceFilter
    from spar_desktop.core.workspaces.manager import WorkspaceInfo

    built = datetime(2024, 5, 3, 12, 2)
    row = WorkspaceInfo(1, "notes", "active", "ws-notes-1", WorkspaceFilter(), built, built, built, None, 3, 3,
                        None, None)
    stale = Freshness(changed=("/a.txt", "/b.txt"), new=("/c.txt",), removed=("/d.txt",))
    assert freshness_line(row, stale, False) == ("Out of date (2\xa0changed, 1\xa0new, 1\xa0removed)", "warn", True)
    assert freshness_line(row, Freshness(), False) is None
    text, tone, update = freshness_line(replace(row, status="building"), stale, True)
    assert text.startswith("Updating… (answers come from the build of 2024-05-03 ") and not update
    assert freshness_line(replace(row, built_at=None, status="building"), None, True) is None  # a first build

    many = Freshness(changed=tuple(f"/c{i}.txt" for i in range(15)), new=tuple(f"/n{i}.txt" for i in range(10)))
    tip = freshness_tooltip(many)
    assert "/c14.txt" in tip and "/n4.txt" in tip and "/n5.txt" not in tip and tip.endswith("… and 5 more")

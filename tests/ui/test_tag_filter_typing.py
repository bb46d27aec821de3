"""Typing in the tag filter (issue 29): the search runs on the task runner (the newest text wins),
matches labels case-insensitively beyond ASCII, opens the way to them, and clearing it gives the
tree back with the selection kept."""

from __future__ import annotations

import threading

from PySide6.QtCore import QModelIndex

from spar_desktop.ui.library import ops
from tests.ui.conftest import UI_TIMEOUT_MS


def shown_labels(proxy, parent=QModelIndex()) -> set[str]:
    out: set[str] = set()
    for r in range(proxy.rowCount(parent)):
        index = proxy.index(r, 0, parent)
        out |= {index.data()} | shown_labels(proxy, index)
    return out


def test_typing_a_filter_finds_tags_off_the_ui_thread_unicode_case_insensitively(qtbot, window, tmp_path,
                                                                                  monkeypatch):
    share = tmp_path / "share"
    for folder in ("Über-Projekt/Entwurf", "ÅRSRAPPORT", "Archiv/ÜBERSICHT", "Other"):
        (share / folder).mkdir(parents=True)
        (share / folder / "a.txt").write_text(folder, encoding="utf-8")
    window.controller.index_paths([str(share)])
    qtbot.waitUntil(lambda: window.file_panel.model.total == 4 and window.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    panel = window.tag_panel

    threads: list[str] = []
    search = ops.search_tags

    def spy(*args, **kwargs):
        threads.append(threading.current_thread().name)
        return search(*args, **kwargs)

    monkeypatch.setattr(ops, "search_tags", spy)
    for ch in "über":  # typed one character at a time (QTest's key clicks abort on non-ASCII offscreen)
        panel.search.insert(ch)
    qtbot.waitUntil(lambda: panel.proxy.filter_text == "über" and not panel.search_pending, timeout=UI_TIMEOUT_MS)
    assert threads and threading.main_thread().name not in threads  # searched on the runner's pool
    shown = shown_labels(panel.proxy)
    assert {"Über-Projekt", "Archiv", "ÜBERSICHT"} <= shown  # Archiv: the way to a match, opened
    assert not shown & {"ÅRSRAPPORT", "Other"}

    # Two texts in quick succession: only the newer one's answer is shown.
    panel.search.setText("entwurf")
    panel._apply_search()
    panel.search.setText("årsrapport")
    panel._apply_search()
    qtbot.waitUntil(lambda: not panel.search_pending and window.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    shown = shown_labels(panel.proxy)
    assert "ÅRSRAPPORT" in shown and not shown & {"Über-Projekt", "Entwurf", "Archiv", "Other"}
    assert panel.proxy.filter_text == "årsrapport"
    report = next(i for i, t in panel.model.infos.items() if t.key == "ÅRSRAPPORT")
    assert panel.select_tag(report)
    qtbot.waitUntil(lambda: window.file_panel.model.total == 1, timeout=UI_TIMEOUT_MS)

    # A tag made while filtering: the new snapshot is searched again, and the new tag shows.
    window.file_panel.table.selectAll()
    window.controller.tag_files(tuple(r.id for r in window.file_panel.selected_records()), None, "ÅRSRAPPORT-Utkast")
    qtbot.waitUntil(lambda: "ÅRSRAPPORT-Utkast" in shown_labels(panel.proxy) and not panel.search_pending
                    and window.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    assert panel.selected_tag_ids() == [report]

    panel.search.clear()  # the whole tree again, the selected tag still selected and in sight
    qtbot.waitUntil(lambda: panel.view.model() is panel.model and not panel.search_pending, timeout=UI_TIMEOUT_MS)
    assert panel.selected_tag_ids() == [report]
    assert window.file_panel.model.total == 1
    assert panel.view.isExpanded(panel.model.first_index_of_tag(report).parent())

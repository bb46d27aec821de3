"""Neighbourhood mode in the main window, on a real indexed folder and real relation builds.

A right-click on a file in the file table offers "Show related files in graph": it switches to the
Relations tab and shows only that file and the files related to it (the stored graph is loaded
first, in the worker pool). With no relations built it computes nothing and says to click Rebuild;
Rebuild shows the whole index's estimate and, once its build button is clicked and the build is
done, the neighbourhood opens by itself. With only another method built, that one is used.
The hops choice widens the neighbourhood without reloading the graph, "Whole graph" goes back with
the file still selected, the view's own Neighbourhood button goes through the same worker path,
and a file outside the current workspace is found in the whole index's graph."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QContextMenuEvent
from PySide6.QtWidgets import QApplication, QMenu

from tests.ui.conftest import UI_TIMEOUT_MS

ACTION = "Show related files in graph"


def file_id(w, name: str) -> int:
    m = w.file_panel.model
    return next(m.record(r).id for r in range(m.rowCount()) if m.record(r).path.endswith(name))


def stored_methods(w, scope: str = "index") -> set[str]:
    d = w.settings.data_dir / "relations"
    return {p.name.split("-")[-1] for p in d.glob(f"{scope}-*") if (p / "meta.json").is_file()} if d.is_dir() else set()


def right_click_action(qtbot, w, name: str):
    """Right-click the file's row in the table as a mouse does (the press selects the row, then
    the context-menu event); returns the popped-up menu and its ACTION."""
    table = w.file_panel.table
    row = w.file_panel.model.row_of(file_id(w, name))
    table.scrollTo(w.file_panel.model.index(row, 0))
    at = table.visualRect(w.file_panel.model.index(row, 0)).center()
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.RightButton, pos=at)
    assert w.file_panel.current_record().path.endswith(name)
    before = {id(m) for m in w.findChildren(QMenu) if m.isVisible()}
    QApplication.sendEvent(table.viewport(), QContextMenuEvent(QContextMenuEvent.Reason.Mouse, at,
                                                               table.viewport().mapToGlobal(at)))
    menu = next(m for m in w.findChildren(QMenu) if m.isVisible() and id(m) not in before)
    return menu, next(a for a in menu.actions() if a.text() == ACTION)


def trigger(qtbot, w, name: str) -> None:
    menu, action = right_click_action(qtbot, w, name)
    assert action.isEnabled()
    action.trigger()
    menu.close()


def wait_around(qtbot, w, fid: int, hops: int = 1) -> None:
    view = w.relations.view
    qtbot.waitUntil(lambda: view.around is not None and view.around.hops == hops
                    and view.payload.file_ids[view.around.center] == fid
                    and not w.runner.is_running("relations-graph"), timeout=UI_TIMEOUT_MS)


def test_show_related_files_from_the_file_table(qtbot, indexed_window):
    w = indexed_window
    view = w.relations.view
    view.set_method("tfidf")  # no encoder needed: the neighbourhood is what this test is about
    assert w.relations.loaded_for is None  # the Relations tab was never shown: nothing is loaded
    space1 = file_id(w, "space1.txt")

    # never built: nothing is computed, the tab and the status bar say what to click
    trigger(qtbot, w, "space1.txt")
    assert w.tabs.currentWidget() is w.relations.page
    qtbot.waitUntil(lambda: not w.runner.is_running("relations-graph"), timeout=UI_TIMEOUT_MS)
    assert stored_methods(w) == set() and view.payload is None and view.around is None
    assert "No relations have been built" in view.status.text() and "click Rebuild" in view.status.text()
    assert "No relations have been built" in w.statusBar().currentMessage()
    assert w.relations.pending_around == (space1, 1)

    # Rebuild shows what building the whole index costs; its button builds, then the neighbourhood
    # asked for opens by itself
    view.rebuild_button.click()
    qtbot.waitUntil(lambda: view.offering and not w.runner.is_running("relations-graph"), timeout=UI_TIMEOUT_MS)
    assert stored_methods(w) == set() and w.relations.pending_around == (space1, 1)
    view.offer_button.click()
    wait_around(qtbot, w, space1)
    assert stored_methods(w) == {"tfidf"} and w.relations.pending_around is None
    p = view.payload
    assert view.whole.n_nodes == 12 and w.relations.loaded_for == (None, "tfidf")
    assert p.file_ids[view.selected] == space1
    assert 1 < p.n_nodes < 12 and {Path(path).parent.name for path in p.paths} == {"Space"}  # TF-IDF: its topic
    assert not view.around_bar.isHidden() and "space1" in view.around_label.text()

    # two hops: extracted from the loaded graph, without loading it again
    whole = view.whole
    view.hops.setCurrentIndex(view.hops.findData(2))
    wait_around(qtbot, w, space1, hops=2)
    assert view.whole is whole and view.payload.n_nodes >= p.n_nodes

    # back to the whole graph, the file still selected
    view.whole_button.click()
    assert view.payload is view.whole and view.payload.file_ids[view.selected] == space1
    assert view.around_bar.isHidden()

    # the view's own Neighbourhood button, around another document: the same worker path
    cooking2 = file_id(w, "cooking2.txt")
    view.select_row(view.payload.file_ids.index(cooking2))
    assert w.file_panel.current_record().id == cooking2  # a click on a node selects its file in the table
    view.hops.setCurrentIndex(view.hops.findData(1))
    view.around_button.click()
    assert w.runner.is_running("relations-graph")
    wait_around(qtbot, w, cooking2)
    assert view.whole is whole and {Path(path).parent.name for path in view.payload.paths} == {"Cooking"}

    # from the file table again, now that the graph is loaded: no reload, straight to the neighbourhood
    w.tabs.setCurrentWidget(w.file_panel)
    trigger(qtbot, w, "cars4.txt")
    wait_around(qtbot, w, file_id(w, "cars4.txt"))
    assert view.whole is whole and {Path(path).parent.name for path in view.payload.paths} == {"Cars"}


def test_the_relations_that_are_built_are_used(qtbot, indexed_window):
    """The view's method is EDR-MQ (the default) but only TF-IDF relations exist: those are shown,
    and nothing is built (EDR-MQ would load the encoder and read every file)."""
    from spar_desktop.core.relations.service import build_relations

    w = indexed_window
    build_relations(w.library, method="tfidf")
    view = w.relations.view
    assert view.method.currentData() == "edrmq"
    trigger(qtbot, w, "cooking3.txt")
    wait_around(qtbot, w, file_id(w, "cooking3.txt"))
    assert stored_methods(w) == {"tfidf"} and w.relations.loaded_for == (None, "tfidf")
    assert view.method.currentData() == "tfidf"  # the combo shows what is drawn
    assert {Path(path).parent.name for path in view.payload.paths} == {"Cooking"}


def test_file_outside_the_workspace_is_found_in_the_whole_index(qtbot, indexed_window):
    from spar_desktop.core.relations.service import build_relations

    w = indexed_window
    manager = w.workspaces.service.manager
    manager.create("space", tags=["Space"])
    manager.build("space")
    build_relations(w.library, workspace="space", method="tfidf")  # the workspace's relations only
    w.workspaces.refresh()
    qtbot.waitUntil(lambda: w.workspaces.row("space") is not None, timeout=UI_TIMEOUT_MS)
    w.workspaces.select("space")
    view = w.relations.view
    view.set_method("tfidf")
    view.set_scope("workspace")

    # a file of the workspace: its graph
    space2 = file_id(w, "space2.txt")
    w.relations.show_around(space2)
    wait_around(qtbot, w, space2)
    assert w.relations.loaded_for == ("space", "tfidf") and view.whole.n_nodes == 4

    # a file outside it, with nothing built for the whole index: said so, nothing built
    cars = file_id(w, "cars3.txt")
    w.relations.show_around(cars)
    qtbot.waitUntil(lambda: not w.runner.is_running("relations-graph"), timeout=UI_TIMEOUT_MS)
    assert "not in workspace “space”" in view.status.text() and "Whole index" in view.status.text()
    assert stored_methods(w) == set() and view.around.payload.file_ids[view.around.center] == space2

    # once the index has relations, the file is found in them
    build_relations(w.library, method="tfidf")
    w.relations.show_around(cars)
    wait_around(qtbot, w, cars)
    assert view.scope.currentData() == "index" and w.relations.loaded_for == (None, "tfidf")
    assert view.whole.n_nodes == 12 and {Path(path).parent.name for path in view.payload.paths} == {"Cars"}

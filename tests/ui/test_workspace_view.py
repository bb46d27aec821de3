"""The workspace view at the centre: the request and its funnel in one line with Edit, search
results with room (why-this-result for the selected hit), the chat beside them; Ctrl+1 / Ctrl+2
switch between the library and the workspace and the choice survives a restart; Esc goes back
from an opened result; Help ▸ Keyboard shortcuts lists the keys the menus show."""

from __future__ import annotations

import shutil
from dataclasses import replace

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence

from spar_desktop.core.config import Settings
from tests.ui.conftest import UI_TIMEOUT_MS, build_ops_workspace


@pytest.fixture(scope="module")
def built_data(tmp_path_factory) -> Settings:
    return build_ops_workspace(tmp_path_factory.mktemp("workspace-view"))


@pytest.fixture
def data_copy(built_data, tmp_path) -> Settings:
    data = tmp_path / "data"
    shutil.copytree(built_data.data_dir, data)
    return replace(built_data, data_dir=data, ollama_host="http://127.0.0.1:9")  # nothing listens there


def open_ops(qtbot, window_on, settings):
    w = window_on(settings)
    qtbot.waitUntil(lambda: w.workspaces.current is not None and w.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    return w


def press(qtbot, w, key: str) -> None:
    """Type a shortcut as a user would (through the window's shortcut map)."""
    seq = QKeySequence(key)
    combo = seq[0]
    qtbot.keyClick(w, combo.key(), combo.keyboardModifiers())


def test_ctrl_1_and_2_switch_views_and_the_choice_is_remembered(qtbot, window_on, data_copy):
    w = open_ops(qtbot, window_on, data_copy)
    assert w.tabs.currentWidget() is w.file_panel and w.tags_dock.isVisible()  # a first start: the library
    w.activateWindow()
    qtbot.waitUntil(w.isActiveWindow, timeout=UI_TIMEOUT_MS)
    press(qtbot, w, "Ctrl+2")
    assert w.tabs.currentWidget() is w.workspace_view
    assert not w.tags_dock.isVisible() and w.workspace_dock.isVisible()  # the results get the room
    view = w.workspace_view
    assert view.title.text() == "ops" and "3 files" in view.funnel.text() and "passages" in view.funnel.text()
    assert view.title.geometry().right() < view.funnel.geometry().left()  # one line, side by side, never overlapping
    press(qtbot, w, "Ctrl+1")
    assert w.tabs.currentWidget() is w.file_panel and w.tags_dock.isVisible()
    press(qtbot, w, "Ctrl+2")
    w.close()
    again = open_ops(qtbot, window_on, data_copy)
    assert again.tabs.currentWidget() is again.workspace_view and again.views.workspace_action.isChecked()


def test_search_in_the_centre_why_on_demand_and_esc_back(qtbot, window_on, data_copy):
    w = open_ops(qtbot, window_on, data_copy)
    w.focus_workspace_search()  # Ctrl+K
    panel = w.workspace_panel
    assert w.tabs.currentWidget() is w.workspace_view and panel.search_box.isVisible()
    assert panel.search_box.window() is w and w.workspace_view.isAncestorOf(panel.results)
    panel.search_box.setText("gearbox oil water contamination")
    with qtbot.waitSignal(w.workspaces.search_finished, timeout=UI_TIMEOUT_MS):
        panel.search_box.returnPressed.emit()
    assert panel.results.count() >= 2
    # The centre gives a hit room: a row is much wider than the old ~270 px dock.
    assert panel.results.viewport().width() > 400
    delegate, model = panel.results.itemDelegate(), panel.results.model()
    option = panel.results.viewOptions() if hasattr(panel.results, "viewOptions") else None
    if option is None:
        from PySide6.QtWidgets import QStyleOptionViewItem

        option = QStyleOptionViewItem()
        option.initFrom(panel.results)
    panel.results.setCurrentRow(1)
    plain = delegate.sizeHint(option, model.index(0, 0)).height()
    panel.results.setCurrentRow(0)
    explained = delegate.sizeHint(option, model.index(0, 0)).height()
    assert explained > plain  # the why line ("keywords 0.31 · meaning 0.52") shows for the selected hit
    panel.hit_activated.emit(panel.hit(0))
    qtbot.waitUntil(lambda: w.tabs.currentWidget() is w.viewer, timeout=UI_TIMEOUT_MS)
    assert w.views.back_action.shortcut() == QKeySequence("Esc")
    w.views.back_action.trigger()
    assert w.tabs.currentWidget() is w.workspace_view  # back to the results


def test_edit_opens_the_request_of_the_workspace_shown(qtbot, window_on, data_copy):
    w = open_ops(qtbot, window_on, data_copy)
    w.views.show_workspace()
    w.workspace_view.edit_button.click()
    dialog = w.features.dialog
    assert dialog is not None and dialog.isVisible() and getattr(dialog, "edit_name", "ops") == "ops"
    dialog.reject()


def test_ctrl_enter_sends_the_question(qtbot, aloop, window_on, data_copy):
    w = open_ops(qtbot, window_on, data_copy)
    qtbot.waitUntil(lambda: w.chat.session is not None, timeout=UI_TIMEOUT_MS)
    w.chat_features.focus_chat()
    box = w.chat_pane.input
    assert w.workspace_view.isAncestorOf(box)
    box.setPlainText("What caused the gearbox failure?")
    qtbot.keyClick(box, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: len(w.chat_pane.messages.bubbles) >= 2, timeout=UI_TIMEOUT_MS)
    assert w.chat_pane.messages.bubbles[0].raw_text == "What caused the gearbox failure?"
    qtbot.waitUntil(lambda: not w.chat.answering, timeout=UI_TIMEOUT_MS)


def test_shortcuts_are_in_the_menus_and_in_help(qtbot, window):
    expected = {"Search the workspace": "Ctrl+K", "New workspace…": "Ctrl+N", "Library": "Ctrl+1",
                "Workspace": "Ctrl+2", "Back": "Esc"}
    in_menus = {}
    for top in window.menuBar().actions():
        for act in top.menu().actions():
            if act.text() in expected:
                in_menus[act.text()] = act.shortcut().toString()
    assert in_menus == expected
    dialog = window.show_shortcuts()
    shown = {(key, what) for _menu, key, what in dialog.rows}
    for what, key in expected.items():
        assert (QKeySequence(key).toString(QKeySequence.SequenceFormat.NativeText), what.rstrip("…")) in shown
    assert any("Ctrl+Enter" in key for _m, key, _w in dialog.rows)
    dialog.close()


def test_a_hit_shows_its_document_title_and_a_long_name_cut_in_the_middle(qtbot):
    from PySide6.QtWidgets import QListWidget, QListWidgetItem

    from spar_desktop.core.workspaces.search import WorkspaceHit
    from spar_desktop.ui.workspaces.search_results import HIT_ROLE, HitDelegate, hit_html, hit_tooltip

    name = "IR-2023-011-gearbox-oil-water-contamination-root-cause-analysis-site-CM-T04-final-v3.pdf"
    hit = WorkspaceHit(1, 7, f"/share/Operations/{name}", "Gearbox oil contamination", 3, 3, 0.9, None, None,
                       "The breather was saturated.", None, "c1")
    row = hit_html(hit, "The breather was saturated.")
    assert "<b>Gearbox oil contamination</b>" in row and name in row and "p. 3" in row
    assert hit_tooltip(hit).startswith(f"/share/Operations/{name}")  # the full path on hover
    view = QListWidget()
    qtbot.addWidget(view)
    view.setItemDelegate(HitDelegate(view))
    item = QListWidgetItem()
    item.setData(HIT_ROLE, hit)
    view.addItem(item)
    view.resize(360, 200)
    view.show()
    from PySide6.QtWidgets import QStyleOptionViewItem

    option = QStyleOptionViewItem()
    option.initFrom(view)
    doc = view.itemDelegate()._doc(option, hit, 360)
    shown = doc.toPlainText()
    assert name not in shown and "…" in shown and shown.split("…")[1].split()[0] in name  # both ends kept

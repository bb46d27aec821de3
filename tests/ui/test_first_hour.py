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


# -- 4. the Relations tab: a long path must not widen the window ---------------------------------
LONG = "Quarterly-operations-and-maintenance-reports-for-the-northern-wind-farm-cluster-{n}-archive"


@pytest.fixture
def long_path_window(qtbot, make_window, tmp_path):
    root = tmp_path / "share"
    deep = root.joinpath(*(LONG.format(n=n) for n in range(4)))
    deep.mkdir(parents=True)
    for i, text in enumerate(("Gearbox oil contamination and bearing wear on turbine {i}.",
                              "Blade leading edge erosion survey of turbine {i}, resin repair planned.",
                              "Gearbox bearing replaced after oil analysis on turbine {i}.",
                              "Blade crack found during the erosion survey of turbine {i}.")):
        (deep / f"report-{i}.txt").write_text(text.format(i=i), encoding="utf-8")
    window = make_window()
    window.resize(1200, 800)
    window.controller.index_paths([str(root)])
    qtbot.waitUntil(lambda: window.file_panel.model.total == 4 and window.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    return window


def test_clicking_a_node_with_a_long_path_keeps_the_window_layout(qtbot, long_path_window):
    w = long_path_window
    view = w.relations.view
    view.set_method("tfidf")
    w.relations.show()
    qtbot.waitUntil(lambda: view.offering, timeout=UI_TIMEOUT_MS)  # the whole index: built only when asked
    view.offer_button.click()
    qtbot.waitUntil(lambda: view.payload is not None and not w.runner.is_running("relations-graph"),
                    timeout=UI_TIMEOUT_MS)
    qtbot.wait(50)
    width, tags, workspace = w.width(), w.tags_dock.width(), w.details_dock.width()
    assert len(view.payload.paths[0]) > 300
    view.select_row(0)  # what a click on a node does
    qtbot.wait(50)
    assert view.payload.paths[0] in view.status.text() or view.payload.paths[0] in view.status.toolTip()
    assert w.centralWidget().minimumSizeHint().width() < width
    assert (w.width(), w.tags_dock.width(), w.details_dock.width()) == (width, tags, workspace)


def test_a_layout_wider_than_the_screen_or_with_squeezed_docks_is_not_kept(qtbot, make_window, settings):
    from spar_desktop.ui.base import window_state

    ini = settings.data_dir / "ui-state.ini"
    good = make_window()
    good.resize(760, 560)  # fits the offscreen screen
    qtbot.wait(20)
    good.close()
    saved = ini.read_bytes()

    too_wide = make_window()
    assert (too_wide.width(), too_wide.height()) == (760, 560)
    room = window_state.available(too_wide)
    too_wide.resize(room.width() + 900, 560)
    qtbot.wait(20)
    too_wide.close()
    assert ini.read_bytes() == saved  # the broken layout was not saved over the good one

    # A broken layout already on disk (saved by an older version) is not restored either.
    squeezed = make_window()
    squeezed.resize(room.width() + 900, 560)
    squeezed.resizeDocks([squeezed.tags_dock], [10], Qt.Orientation.Horizontal)
    qtbot.wait(20)
    squeezed_tags = squeezed.tags_dock.width()
    qs = squeezed.state_settings()
    qs.setValue("window/geometry", squeezed.saveGeometry())
    qs.setValue("window/state", squeezed.saveState())
    qs.sync()
    squeezed.close()
    again = make_window()
    qtbot.wait(20)
    fresh = make_window()  # no layout restored: the defaults at the screen's width
    fresh.resize(again.size())
    qtbot.wait(20)
    assert again.width() <= room.width()
    assert again.tags_dock.width() == fresh.tags_dock.width() > squeezed_tags


# -- 5. a new Ollama host applies without a restart --------------------------------------------------
def test_a_saved_ollama_host_applies_at_once(qtbot, aloop, settings, window_on, fake):
    from dataclasses import replace

    from PySide6.QtWidgets import QDialogButtonBox

    w = window_on(replace(settings, ollama_host="http://127.0.0.1:9"))  # nothing listens there
    chat = w.chat
    chat.watch_interval = 60.0  # only the check a new host triggers can notice the change
    qtbot.waitUntil(lambda: chat.session is not None, timeout=UI_TIMEOUT_MS)
    chat.start_watching()
    qtbot.waitUntil(lambda: chat.server_ok is False, timeout=UI_TIMEOUT_MS)
    w.chat_features.focus_chat()  # the chat sits in the workspace view
    assert "127.0.0.1:9" in w.chat_pane.banner_label.text()

    dialog = w.open_settings()
    dialog.ollama_host.setText(fake.url)
    dialog.buttons.button(QDialogButtonBox.StandardButton.Save).click()
    assert chat.session.ollama.host == fake.url and w.settings.ollama_host == fake.url
    qtbot.waitUntil(lambda: chat.server_ok is True and w.chat_pane.model_combo.count() >= 2, timeout=UI_TIMEOUT_MS)
    assert not w.chat_pane.banner.isVisible() and "Ollama connected" in w.chat_pane.server_label.text()
    assert "restart" not in w.statusBar().currentMessage() and fake.url in w.statusBar().currentMessage()
    assert fake.calls("/api/tags")  # the new host was asked, not the old one


# -- 7. the Issues view: grouped by kind, real errors first ------------------------------------------
def test_issues_are_grouped_by_kind_with_real_errors_first_and_formats_as_a_summary(qtbot):
    from spar_desktop.core.library.models import FileStatus
    from spar_desktop.ui.library.issues import IssuesPanel
    from spar_desktop.ui.library.ops import IssueRow, Issues

    archives = [IssueRow(FileStatus.UNSUPPORTED, f"/share/Backups/dump-{i:04}.gz",
                         ".gz: no text extraction for archive files yet", 100 + i) for i in range(2053)]
    images = [IssueRow(FileStatus.UNSUPPORTED, f"/share/Photos/p{i}.jpg", ".jpg: no text extraction for image files yet",
                       5000 + i) for i in range(30)]
    errors = [IssueRow(FileStatus.ERROR, f"/share/Reports/broken-{i}.pdf", "cannot open PDF: damaged xref", i)
              for i in range(3)]
    rows = archives + images + [IssueRow("scan", "/share/Locked", "permission denied", None)] + errors
    panel = IssuesPanel()
    qtbot.addWidget(panel)
    panel.show()
    panel.set_issues(Issues(tuple(rows), len(rows)))
    tree = panel.tree
    tops = [tree.topLevelItem(i).text(0) for i in range(tree.topLevelItemCount())]
    assert len(tops) == 3, tops  # one line per kind, not one per file
    assert tops[0].startswith("Unreadable — 3 files") and tops[1].startswith("Folders not scanned — 1 folder")
    assert tops[2].startswith("Formats without text — 2,083 files")
    errors_item, formats = tree.topLevelItem(0), tree.topLevelItem(2)
    assert errors_item.isExpanded() and errors_item.childCount() == 3 and not formats.isExpanded()
    # The unsupported formats: one summary line per reason, largest first; files only when expanded.
    assert [formats.child(i).text(0) for i in range(formats.childCount())] == [
        ".gz: no text extraction for archive files yet — 2,053 files",
        ".jpg: no text extraction for image files yet — 30 files"]
    archive_line = formats.child(0)
    assert archive_line.childCount() == 0
    formats.setExpanded(True)
    archive_line.setExpanded(True)
    # A page at a time: 200 files and a "Show more" line, which lists the next page.
    assert archive_line.childCount() == 201 and archive_line.child(0).text(1) == "/share/Backups/dump-0000.gz"
    assert archive_line.child(200).text(0) == "Show 200 more of 1,853…"
    tree.itemDoubleClicked.emit(archive_line.child(200), 0)
    assert archive_line.childCount() == 401 and archive_line.child(200).text(1) == "/share/Backups/dump-0200.gz"
    with qtbot.waitSignal(panel.file_activated) as activated:
        tree.itemDoubleClicked.emit(errors_item.child(0), 0)
    assert activated.args == [0]
    assert panel.total == len(rows)


# -- 10. one progress reading: the bar, the percentage and the text agree ----------------------------
def test_progress_numbers_agree_in_the_task_list_and_the_workspace_panel(qtbot, window, small_tree):
    import threading

    from spar_desktop.core.progress import Progress
    from spar_desktop.ui.base.progress_view import shown

    # A build reports documents in done/total and chunks in its message.
    report = Progress(3, 100, "embedding chunks 256/1082")
    fraction = 256 / 1082
    assert shown(report).percent == 23 and shown(Progress(1, 4, "reusing cached vectors")).text == \
        "reusing cached vectors (1/4)"

    release = threading.Event()

    def op(progress, cancel):
        progress(report)
        release.wait(30)

    handle = window.runner.run(op, title="Building Incidents 2023")
    row = window.task_list.show_now(handle)
    qtbot.waitUntil(lambda: handle.progress is not None, timeout=UI_TIMEOUT_MS)
    assert "256/1082" in row.label.text()  # the message's numbers are never elided away ...
    assert row.bar.value() == int(1000 * fraction)  # ... and the bar shows them, not 3/100
    release.set()
    qtbot.waitUntil(window.runner.is_idle, timeout=UI_TIMEOUT_MS)

    # The workspace list's "building N%" and its progress bar read the same numbers.
    window.controller.index_paths([str(small_tree)])
    qtbot.waitUntil(lambda: window.file_panel.model.total == 5 and window.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    qtbot.waitUntil(lambda: window.workspaces.service is not None, timeout=UI_TIMEOUT_MS)
    window.workspaces.service.manager.create("Finance", tags=["Finance"])
    window.workspaces.refresh()
    panel = window.workspace_panel
    qtbot.waitUntil(lambda: panel.item_for("Finance") is not None, timeout=UI_TIMEOUT_MS)
    panel.select_workspace("Finance")
    window.workspaces.is_building = lambda name: True  # as during a build
    window.workspaces.build_progress.emit("Finance", report)
    assert panel.item_for("Finance").text(1).endswith(" 23%")
    assert panel.progress_bar.value() == int(1000 * fraction) and "256/1082" in panel.progress_label.text()


# -- 13. texts ---------------------------------------------------------------------------------------
def test_relations_tab_says_what_to_click_not_what_to_run(qtbot, window):
    window.relations.show()  # an empty index: nothing to relate yet
    view = window.relations.view
    qtbot.waitUntil(lambda: not window.runner.is_running("relations-graph") and "no documents" in view.status.text().lower(),
                    timeout=UI_TIMEOUT_MS)
    assert "spar " not in view.status.text() and "Add folder" in view.status.text()
    from spar_desktop.ui.relations.features import gui_hint

    assert gui_hint("no documents to relate in this workspace (build it first: spar ws build NAME)") == \
        "No documents to relate in this workspace (build it first: select it in the Workspace panel and click Build)"
    assert "click Rebuild" in gui_hint("no relations built for the index yet: run `spar relations build` first")


def test_status_bar_texts_end_at_a_word_with_an_ellipsis(qtbot, window):
    window.resize(760, 560)
    qtbot.wait(20)
    bar = window.statusBar()
    text = ("Created workspace 'Incident reports for the northern wind farm cluster' (1,204 files); "
            "building starts as soon as the embedding model has loaded in the background")
    bar.showMessage(text)
    shown = bar.shown_message()
    assert shown.endswith("…") and text.startswith(shown[:-1]) and text[len(shown) - 1] in " ,;"
    assert bar.fontMetrics().horizontalAdvance(shown) <= bar.message_rect().width()
    assert bar.toolTip() == text
    summary = window.summary_label
    summary.setText("12,345 files in 3 folders (2.1 GB); 2,138 problems (see Issues); last scan 2 minutes ago")
    summary.resize(200, summary.height())
    part = summary.shown_text()
    assert part.endswith("…") and summary.text().startswith(part[:-1]) and summary.text()[len(part) - 1] == " "


def test_the_format_column_shows_readable_formats_in_full(qtbot, window):
    from spar_desktop.ui.library.file_panel import FORMAT_COLUMN
    from spar_desktop.ui.library.file_table import KNOWN_FORMATS, format_label

    assert [format_label(f) for f in ("archive", "pdf", "docx", "image")] == ["Archive", "PDF", "DOCX", "Image"]
    table = window.file_panel.table
    width = table.horizontalHeader().sectionSize(FORMAT_COLUMN)
    margin = 2 * (table.style().pixelMetric(table.style().PixelMetric.PM_FocusFrameHMargin, None, table) + 1)
    for f in KNOWN_FORMATS:
        label = format_label(f)
        assert table.fontMetrics().horizontalAdvance(label) + margin <= width, (label, width)


def test_learning_line_is_in_plain_words():
    from spar_desktop.core.memory import ERMConfig
    from spar_desktop.core.memory.feedback import MemoryStats
    from spar_desktop.ui.workspaces.panel_text import describe_learning

    waiting = MemoryStats("ops", "m", 0, 3, 6, 0, 2, 0, 2, 0, None)
    assert describe_learning(waiting, ERMConfig(batch_size=4, max_batches_per_round=1)) == \
        "Learning: 2 helpful answers so far; 2 more before results change"
    assert describe_learning(waiting, ERMConfig()) == \
        "Learning: 2 helpful answers so far; at least 6 more before results change"
    learned = MemoryStats("ops", "m", 14, 3, 6, 0, 1, 1, 9, 0, None)
    text = describe_learning(learned, ERMConfig())
    assert text == "Learning: 9 helpful answers changed the ranking of 14 passages; 1 more count at the next update"
    assert "key" not in text and "evolved" not in text and "confirmed" not in text


def test_the_chroma_setting_says_where_chroma_runs(qtbot, settings):
    from dataclasses import replace

    from spar_desktop.ui.base.settings_dialog import SettingsDialog

    assert settings.chroma_process  # as the app runs it (runtime.app_settings)
    dialog = SettingsDialog(settings)
    qtbot.addWidget(dialog)
    assert "helper process" in dialog.chroma_url.placeholderText()
    assert "in-process" not in dialog.chroma_url.placeholderText().lower()
    inside = SettingsDialog(replace(settings, chroma_process=False))
    qtbot.addWidget(inside)
    assert "inside the app" in inside.chroma_url.placeholderText()


def test_funnel_rows_wrap_instead_of_being_cut(qtbot):
    from types import SimpleNamespace

    from PySide6.QtCore import QRect
    from PySide6.QtWidgets import QVBoxLayout, QWidget

    from spar_desktop.ui.workspaces.filter_widgets import FunnelWidget

    steps = (SimpleNamespace(label="all indexed files", admitted=40),
             SimpleNamespace(label="tag group 'gearbox'", admitted=12),
             SimpleNamespace(label="or lacking at most 1 of the 2 groups not marked required", admitted=9))
    box = QWidget()
    qtbot.addWidget(box)
    funnel = FunnelWidget()
    QVBoxLayout(box).addWidget(funnel)
    box.resize(260, 400)
    box.show()
    funnel.set_explanation(SimpleNamespace(funnel=steps, emptied_by=None))
    qtbot.wait(20)
    heights = funnel.row_heights(funnel.width())
    fm = funnel.fontMetrics()
    wrap = int(Qt.TextFlag.TextWordWrap)
    for step, h in zip(steps, heights, strict=True):
        needed = fm.boundingRect(QRect(0, 0, funnel._text_width(funnel.width()), 10_000), wrap, step.label).height()
        assert needed <= h - 4, step.label
    assert heights[2] > heights[0]  # the long row took two lines
    assert funnel.height() >= sum(heights)


def test_the_relaxation_note_names_the_checkbox_on_screen(qtbot, indexed_window):
    from spar_desktop.ui.workspaces.dialog_explanation import gui_words

    dialog = indexed_window.features.new_workspace()
    note = gui_words("no file has tags of every group; admitting files that lack at most 1 of the 2 groups not "
                     "marked required — choose 'match every group' to require all")
    assert f"“{dialog.match_all_check.text()}”" in note and "match every group" not in note


def test_the_model_picker_defaults_to_an_installed_model(qtbot, aloop, settings, window_on):
    from dataclasses import replace

    from tests.support.fake_ollama import FakeOllama

    server = FakeOllama(models=("qwen2.5:0.5b", "mistral:7b")).start()
    try:
        w = window_on(replace(settings, ollama_host=server.url, ollama_model="llama3.2"))
        qtbot.waitUntil(lambda: w.chat.session is not None, timeout=UI_TIMEOUT_MS)
        w.chat_features.focus_chat()  # the chat sits in the workspace view
        w.chat.start_watching()
        pane = w.chat_pane
        qtbot.waitUntil(lambda: pane.model_combo.count() == 2, timeout=UI_TIMEOUT_MS)
        assert pane.current_model() in ("qwen2.5:0.5b", "mistral:7b")
        assert not any("not installed" in pane.model_combo.itemText(i) for i in range(pane.model_combo.count()))
        assert "llama3.2 is not installed" in pane.model_combo.toolTip()
    finally:
        server.stop()

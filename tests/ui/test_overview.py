"""The share at a glance: View ▸ Overview draws files by year, by kind and by top folder and
problems by kind as bar charts from the index's counts; clicking a year's bar lists its files in
the library view, and so does a folder's."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt

from tests.ui.conftest import UI_TIMEOUT_MS


def click_bar(qtbot, chart, i: int) -> None:
    vb = chart.plot.getViewBox()
    pt = chart.plot.mapFromScene(vb.mapViewToScene(chart.bar_at(i)))
    qtbot.mouseClick(chart.plot.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(int(pt.x()), int(pt.y())))


def test_overview_counts_and_a_year_bar_filters_the_table(qtbot, window, small_tree):
    (small_tree / "HR" / "empty.txt").write_bytes(b"")  # one problem
    window.controller.index_paths([str(small_tree)])
    qtbot.waitUntil(lambda: window.file_panel.model.total == 6 and window.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    window.overview_action.trigger()
    assert window.tabs.currentWidget() is window.overview
    ov = window.overview.panel  # built when first shown (pyqtgraph is not imported before)
    qtbot.waitUntil(lambda: bool(ov.kinds.bars.counts) and window.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    years = dict(zip(ov.years.bars.labels, ov.years.bars.counts))
    assert years["2020"] == 3 and years["2021"] == 2  # the tree's dates (empty.txt: today's)
    assert dict(zip(ov.folders.bars.labels, ov.folders.bars.counts)) == {"Finance": 3, "HR": 3}
    kinds = dict(zip(ov.kinds.bars.labels, ov.kinds.bars.counts))
    assert sum(kinds.values()) == 6 and kinds.get("txt", 0) >= 3
    assert dict(zip(ov.problems.bars.labels, ov.problems.bars.counts)) == {"Empty": 1}
    qtbot.wait(100)  # the charts are laid out
    click_bar(qtbot, ov.folders, ov.folders.bars.labels.index("HR"))  # a category: a horizontal bar
    qtbot.waitUntil(lambda: window.file_panel.model.total == 3 and window.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    assert window.tabs.currentWidget() is window.file_panel
    window.overview_action.trigger()
    click_bar(qtbot, ov.years, ov.years.bars.labels.index("2021"))
    qtbot.waitUntil(lambda: window.file_panel.model.total == 2 and window.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    assert window.tabs.currentWidget() is window.file_panel  # the library, filtered by the year
    names = {window.file_panel.model.record(r).name for r in range(window.file_panel.model.rowCount())}
    assert names == {"q1-2021.txt", "handbook.txt"}


def shown_names(window) -> set[str]:
    return {window.file_panel.model.record(r).name for r in range(window.file_panel.model.rowCount())}


def indexed_overview(qtbot, window, tree):
    window.controller.index_paths([str(tree)])
    qtbot.waitUntil(lambda: window.file_panel.model.total == 5 and window.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    window.overview_action.trigger()
    ov = window.overview.panel
    qtbot.waitUntil(lambda: bool(ov.kinds.bars.counts) and window.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    qtbot.wait(100)  # the charts are laid out
    return ov


def test_a_kind_bar_lists_the_files_of_that_format(qtbot, window, small_tree):
    ov = indexed_overview(qtbot, window, small_tree)
    assert ov.library_button.isHidden() and ov.workspace_button.isHidden()  # no workspace: no switch
    click_bar(qtbot, ov.kinds, ov.kinds.bars.labels.index("md"))
    qtbot.waitUntil(lambda: shown_names(window) == {"forecast.md", "policy.md"} and window.runner.is_idle(),
                    timeout=UI_TIMEOUT_MS)
    assert window.tabs.currentWidget() is window.file_panel
    assert "Kind: md" in window.file_panel.filter_label.text() and window.file_panel.clear_button.isVisible()
    # A year bar afterwards lists the year's files of every kind (the kind does not stick) ...
    window.overview_action.trigger()
    click_bar(qtbot, ov.years, ov.years.bars.labels.index("2021"))
    qtbot.waitUntil(lambda: shown_names(window) == {"q1-2021.txt", "handbook.txt"} and window.runner.is_idle(),
                    timeout=UI_TIMEOUT_MS)
    # ... and "Clear filter" after a kind brings every file back.
    window.overview_action.trigger()
    click_bar(qtbot, ov.kinds, ov.kinds.bars.labels.index("txt"))
    qtbot.waitUntil(lambda: window.file_panel.model.total == 3 and window.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    window.file_panel.clear_button.click()
    qtbot.waitUntil(lambda: window.file_panel.model.total == 5 and window.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    assert not window.file_panel.clear_button.isVisible()


def test_the_workspace_overview_counts_its_files_and_its_bars_narrow_the_table(qtbot, window, small_tree):
    ov = indexed_overview(qtbot, window, small_tree)
    c = window.workspaces
    qtbot.waitUntil(lambda: c.service is not None, timeout=UI_TIMEOUT_MS)
    c.service.manager.create("Finance", tags=["Finance"])  # budget-2020.txt, forecast.md, Reports/q1-2021.txt
    c.select_later("Finance")
    qtbot.waitUntil(lambda: window.overview.workspace_counts is not None and window.runner.is_idle(),
                    timeout=UI_TIMEOUT_MS)
    assert ov.workspace_button.isVisible() and "Finance" in ov.workspace_button.text()
    ov.workspace_button.click()
    assert dict(zip(ov.years.bars.labels, ov.years.bars.counts)) == {"2020": 2, "2021": 1}
    assert dict(zip(ov.kinds.bars.labels, ov.kinds.bars.counts)) == {"txt": 2, "md": 1}
    assert dict(zip(ov.folders.bars.labels, ov.folders.bars.counts)) == {"Finance": 3}
    qtbot.wait(100)
    click_bar(qtbot, ov.kinds, ov.kinds.bars.labels.index("txt"))  # the library's txt would add handbook.txt
    qtbot.waitUntil(lambda: shown_names(window) == {"budget-2020.txt", "q1-2021.txt"} and window.runner.is_idle(),
                    timeout=UI_TIMEOUT_MS)
    assert window.tabs.currentWidget() is window.file_panel
    assert "Workspace: Finance" in window.file_panel.filter_label.text()
    window.overview_action.trigger()
    click_bar(qtbot, ov.years, ov.years.bars.labels.index("2020"))  # the library's 2020 would add policy.md
    qtbot.waitUntil(lambda: shown_names(window) == {"budget-2020.txt", "forecast.md"} and window.runner.is_idle(),
                    timeout=UI_TIMEOUT_MS)
    # Back on the library's charts, a bar is the whole library's again.
    window.overview_action.trigger()
    ov.library_button.click()
    assert dict(zip(ov.years.bars.labels, ov.years.bars.counts)) == {"2020": 3, "2021": 2}
    click_bar(qtbot, ov.years, ov.years.bars.labels.index("2020"))
    qtbot.waitUntil(lambda: shown_names(window) == {"budget-2020.txt", "forecast.md", "policy.md"}
                    and window.runner.is_idle(), timeout=UI_TIMEOUT_MS)

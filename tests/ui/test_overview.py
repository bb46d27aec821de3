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

"""The share at a glance (View ▸ Overview, built on first show by overview_page.py): files by
year, by kind and by top folder, problems by kind, as bar charts (pyqtgraph) instead of tables.
Clicking a year or a folder bar filters the file table by its tag, a kind bar by its format;
clicking the problems chart opens the Issues dock. When a workspace is active, a "Library |
Workspace" switch shows the same charts for the files the workspace admits.

The counts are SQL aggregates the index already keeps: the tag snapshot's per-tag file counts
(years are date tags, folders are folder tags) and the library's counts by format, so drawing
costs the same at 1,000 files as at 1,000,000. A workspace's are GROUP BYs over the files it
admits (ops.load_workspace_counts).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import partial
from typing import Mapping, Optional

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, Signal
from PySide6.QtWidgets import QButtonGroup, QGridLayout, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from spar_desktop.core.library.tag_view import as_tag_infos
from spar_desktop.ui.base.style import colours

YEAR_KEY = re.compile(r"^date:(\d{4})$")
TOP_FOLDERS = 12
TOP_KINDS = 10
LABEL_CHARS = 16  # a category's name on the axis; longer ones are cut (the tag tree has them whole)


@dataclass(frozen=True)
class Bars:
    labels: tuple[str, ...]
    counts: tuple[int, ...]
    tag_ids: tuple[Optional[int], ...] = ()  # the tag a click filters by, per bar


def year_bars(infos: Mapping) -> Bars:
    """The year tags (top-level date tags: only the tree's roots are read, not every tag)."""
    infos = as_tag_infos(infos)
    top = infos.root_ids()
    infos.load(top)
    rows = [r for i in top if (r := infos.row(i)) is not None]
    years = sorted((int(m.group(1)), r) for r in rows if (m := YEAR_KEY.match(r.key)))
    return Bars(tuple(str(y) for y, _ in years), tuple(i.file_count for _, i in years), tuple(i.id for _, i in years))


def folder_bars(infos: Mapping, roots) -> Bars:
    counts: dict[int, int] = {}
    for root in roots:
        for tag_id, n in root.tag_files.items():
            counts[tag_id] = counts.get(tag_id, 0) + n
    top = sorted(counts.items(), key=lambda kv: -kv[1])[:TOP_FOLDERS]
    infos = as_tag_infos(infos)
    names = {t: r.value for t, _ in top if (r := infos.row(t)) is not None}
    return Bars(tuple(names.get(t, "?") for t, _ in top), tuple(n for _, n in top),
                tuple(t for t, _ in top))


def counted_bars(rows) -> Bars:
    """(label, files, tag id) rows, as the workspace's counts come (core/workspaces/admitted_counts.WorkspaceCounts)."""
    return Bars(tuple(r[0] for r in rows), tuple(r[1] for r in rows), tuple(r[2] for r in rows))


def ranked_bars(counts: Mapping[str, int], limit: int) -> Bars:
    top = sorted(((k, v) for k, v in counts.items() if v), key=lambda kv: -kv[1])[:limit]
    return Bars(tuple(k for k, _ in top), tuple(v for _, v in top))


class BarChart(QWidget):
    """One titled bar chart; ``bar_clicked`` carries the bar's index."""

    bar_clicked = Signal(int)

    def __init__(self, title: str, hint: str, horizontal: bool = False, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.horizontal = horizontal
        self.bars = Bars((), ())
        self.title = QLabel(title)
        self.title.setObjectName("sectionTitle")
        self.title.setToolTip(hint)
        self.plot = pg.PlotWidget()
        self.plot.setMenuEnabled(False)
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.hideButtons()
        self.plot.setToolTip(hint)
        self.plot.scene().sigMouseClicked.connect(self._clicked)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.title)
        layout.addWidget(self.plot, 1)

    def set_bars(self, bars: Bars) -> None:
        c = colours()
        self.bars = bars
        self.plot.clear()
        self.plot.setBackground(c["base"])
        for axis in ("left", "bottom"):
            self.plot.getAxis(axis).setTextPen(c["text"])
            self.plot.getAxis(axis).setPen(c["border"])
        n, top = len(bars.counts), max(bars.counts, default=1)
        heights = np.array(bars.counts, dtype=float)
        # Names read along a row: categories are horizontal bars, the first on top; years stand.
        if self.horizontal:
            rows = n - 1 - np.arange(n)
            if n:
                self.plot.addItem(pg.BarGraphItem(x0=0, y=rows, width=heights, height=0.7, brush=c["accent"]))
            names = [(int(r), lbl if len(lbl) <= LABEL_CHARS else lbl[:LABEL_CHARS - 1] + "…")
                     for r, lbl in zip(rows, bars.labels)]
            self.plot.getAxis("left").setTicks([names])
            self.plot.getAxis("left").setWidth(118)
            self.plot.setYRange(-0.6, max(n - 0.4, 0.6), padding=0)
            self.plot.setXRange(0, top * 1.1, padding=0)
            self._whole_ticks("bottom", top)
        else:
            if n:
                self.plot.addItem(pg.BarGraphItem(x=np.arange(n), height=heights, width=0.7, brush=c["accent"]))
            step = max(1, n // 10)
            self.plot.getAxis("bottom").setTicks([[(i, lbl) for i, lbl in enumerate(bars.labels) if i % step == 0]])
            self.plot.setXRange(-0.6, max(n - 0.4, 0.6), padding=0)
            self.plot.setYRange(0, top * 1.1, padding=0)
            self._whole_ticks("left", top)

    def _whole_ticks(self, axis: str, top: int) -> None:
        """Counts are whole numbers: no '0.2' ticks on a chart of three files."""
        if top <= 10:
            self.plot.getAxis(axis).setTickSpacing(major=max(1, top // 5), minor=1)
        else:
            self.plot.getAxis(axis).setTickSpacing()

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:  # the theme switched: redraw in its colours
            self.set_bars(self.bars)

    def bar_at(self, i: int):
        """The view point in the middle of bar ``i`` (tests click it)."""
        from PySide6.QtCore import QPointF

        half = self.bars.counts[i] / 2
        return QPointF(half, len(self.bars.counts) - 1 - i) if self.horizontal else QPointF(i, half)

    def _clicked(self, event) -> None:
        point = self.plot.getViewBox().mapSceneToView(event.scenePos())
        n = len(self.bars.counts)
        along, value = (point.y(), point.x()) if self.horizontal else (point.x(), point.y())
        i = int(round(along))
        if self.horizontal:
            i = n - 1 - i
        if 0 <= i < n and 0 <= value <= self.bars.counts[i]:
            self.bar_clicked.emit(i)


LIBRARY, WORKSPACE = "library", "workspace"


class OverviewPanel(QWidget):
    tag_clicked = Signal(int)  # filter the file table by this tag
    kind_clicked = Signal(str)  # ... by this format
    problems_clicked = Signal()

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.years = BarChart("Files by year", "Click a year to list its files")
        self.kinds = BarChart("Files by kind", "Click a kind to list its files", horizontal=True)
        self.folders = BarChart("Files by top folder", "Click a folder to list its files", horizontal=True)
        self.problems = BarChart("Problems by kind", "Click to see the files in the Issues panel", horizontal=True)
        # Bars per scope, so switching redraws without asking the index again.
        self._bars: dict[str, dict[str, Bars]] = {LIBRARY: {}, WORKSPACE: {}}
        self.scope = LIBRARY
        self.workspace_name: Optional[str] = None
        self.library_button, self.workspace_button = QPushButton("Library"), QPushButton("Workspace")
        self.scope_group = QButtonGroup(self)
        for b, scope in ((self.library_button, LIBRARY), (self.workspace_button, WORKSPACE)):
            b.setCheckable(True)
            self.scope_group.addButton(b)
            b.clicked.connect(partial(self.set_scope, scope))
        self.library_button.setChecked(True)
        switch = QHBoxLayout()
        switch.setContentsMargins(4, 4, 4, 0)
        switch.addWidget(self.library_button)
        switch.addWidget(self.workspace_button)
        switch.addStretch(1)
        self.workspace_button.setVisible(False)
        self.library_button.setVisible(False)  # a switch of one is noise: shown with a workspace
        grid = QGridLayout()
        for i, chart in enumerate((self.years, self.kinds, self.folders, self.problems)):
            grid.addWidget(chart, i // 2, i % 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(switch)
        layout.addLayout(grid, 1)
        self.years.bar_clicked.connect(lambda i: self._tag(self.years, i))
        self.folders.bar_clicked.connect(lambda i: self._tag(self.folders, i))
        self.kinds.bar_clicked.connect(self._kind)
        self.problems.bar_clicked.connect(lambda _i: self.problems_clicked.emit())

    def _tag(self, chart: BarChart, i: int) -> None:
        tag_id = chart.bars.tag_ids[i] if i < len(chart.bars.tag_ids) else None
        if tag_id is not None:
            self.tag_clicked.emit(tag_id)

    def _kind(self, i: int) -> None:
        label = self.kinds.bars.labels[i]
        if label != "other":  # files without a format: nothing to filter by
            self.kind_clicked.emit(label)

    def _put(self, scope: str, **bars: Bars) -> None:
        self._bars[scope].update(bars)
        if scope == self.scope:
            for name, b in bars.items():
                getattr(self, name).set_bars(b)

    def set_scope(self, scope: str) -> None:
        if scope == WORKSPACE and self.workspace_name is None:
            scope = LIBRARY
        (self.workspace_button if scope == WORKSPACE else self.library_button).setChecked(True)
        if scope == self.scope:
            return
        self.scope = scope
        for name in ("years", "kinds", "folders"):
            getattr(self, name).set_bars(self._bars[scope].get(name, Bars((), ())))

    def set_tags(self, snapshot) -> None:
        self._put(LIBRARY, years=year_bars(snapshot.infos), folders=folder_bars(snapshot.infos, snapshot.folder_roots))

    def set_formats(self, counts: Mapping[str, int]) -> None:
        self._put(LIBRARY, kinds=ranked_bars(counts, TOP_KINDS))

    def set_workspace(self, name: Optional[str], counts=None) -> None:
        """The active workspace (None: none, the switch goes) and its WorkspaceCounts (core/workspaces/admitted_counts.py), once counted."""
        if name != self.workspace_name:  # another workspace: never show the previous one's bars
            self._bars[WORKSPACE] = {}
            if self.scope == WORKSPACE:
                for chart in (self.years, self.kinds, self.folders):
                    chart.set_bars(Bars((), ()))
        self.workspace_name = name
        short = name if name is None or len(name) <= 32 else name[:31] + "…"  # the whole name on hover
        self.workspace_button.setText(f"Workspace “{short}”" if name else "Workspace")
        self.workspace_button.setToolTip(f"The same charts for the files workspace “{name}” admits")
        self.workspace_button.setVisible(name is not None)
        self.library_button.setVisible(name is not None)
        if name is None:
            self._bars[WORKSPACE] = {}
            self.set_scope(LIBRARY)
        elif counts is not None:
            self._put(WORKSPACE, years=counted_bars(counts.years), kinds=ranked_bars(counts.formats, TOP_KINDS),
                      folders=counted_bars(counts.folders[:TOP_FOLDERS]))

    def set_problems(self, counts: Mapping[str, int]) -> None:
        from spar_desktop.ui.library.issues import KIND_LABELS

        self.problems.set_bars(ranked_bars({KIND_LABELS.get(k, k): n for k, n in counts.items()}, 8))

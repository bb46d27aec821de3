"""The relation graph view: a self-contained widget that draws a GraphPayload with pyqtgraph.

It never computes anything heavy. Switching method (EDR-MQ / co-occurrence / TF-IDF) or scope
only emits a signal; the owner recomputes in a worker and calls ``set_payload`` with the result.
Drawing stays smooth at 5,000+ nodes because all nodes are one ScatterPlotItem and all edges one
PlotCurveItem with connect='pairs' (a single path), redrawn only when the threshold changes.
"""

from __future__ import annotations

from typing import Optional

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtWidgets import (
    QComboBox, QHBoxLayout, QLabel, QLineEdit, QPushButton, QSlider, QVBoxLayout, QWidget,
)

from spar_desktop.core.relations.payload import GROUPINGS, GraphPayload
from spar_desktop.ui.small_widgets import ElidedLabel

METHODS = (("edrmq", "EDR-MQ"), ("cooc", "Co-occurrence"), ("tfidf", "TF-IDF"))
SCOPES = (("workspace", "Current workspace"), ("index", "Whole index"))
COLOR_BY = (("community", "Community"), ("cluster", "Cluster"), ("tag", "Tag"))
NODE_SIZE = 7
# Painting cost grows with the number (and length) of edge segments: beyond this many visible
# relations only the strongest are drawn (the status line says so); raising the threshold or
# expanding a node shows the rest. ~12k segments repaint in well under 100 ms on a laptop CPU.
MAX_DRAWN_EDGES = 12_000
EDGE_PEN = (120, 120, 130, 70)
FOCUS_PEN = (230, 120, 20, 220)


def node_size(n: int) -> int:
    """Pixels per node: bigger dots while there is room for them (a folder of 50 documents), the
    small default at thousands, where overlap would hide the edges."""
    return 12 if n <= 300 else 9 if n <= 2000 else NODE_SIZE


class GraphView(QWidget):
    fileActivated = Signal(int)  # a node was clicked (its library file id)
    openRequested = Signal(int)  # the user chose Open for the selected node
    methodChanged = Signal(str)  # edrmq | cooc | tfidf: the owner should recompute
    scopeChanged = Signal(str)  # workspace | index: the owner should recompute
    rebuildRequested = Signal()  # recompute the relations themselves (files or queries changed)
    nodeHovered = Signal(str)  # title under the cursor ('' when leaving a node)

    def __init__(self, parent: Optional[QWidget] = None, max_edges: int = MAX_DRAWN_EDGES) -> None:
        super().__init__(parent)
        self.payload: Optional[GraphPayload] = None
        self.max_edges = max_edges
        self._order = np.zeros(0, dtype=np.int64)  # edge rows, strongest first
        self._sorted = np.zeros(0)  # their weights, descending
        self.selected: Optional[int] = None
        self.focus: set[int] = set()  # expanded nodes: their edges are drawn whatever the threshold
        self.threshold = -np.inf
        self._drawn = 0
        self._brush_cache: dict[tuple[int, int, int], object] = {}

        self.method = QComboBox()
        for key, label in METHODS:
            self.method.addItem(label, key)
        self.scope = QComboBox()
        for key, label in SCOPES:
            self.scope.addItem(label, key)
        self.color_by = QComboBox()
        for key, label in COLOR_BY:
            self.color_by.addItem(label, key)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Find a document…")
        self.search.setClearButtonEnabled(True)
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setRange(0, 100)
        self.slider.setToolTip("Hide weaker relations (percentile of edge weights)")
        self.slider_label = QLabel("all edges")
        self.expand_button = QPushButton("Expand")
        self.expand_button.setToolTip("Show the selected document's neighbours and their relations")
        self.open_button = QPushButton("Open")
        self.open_button.setToolTip("Show the selected document in the viewer")
        self.reset_button = QPushButton("Fit")
        self.rebuild_button = QPushButton("Rebuild")
        self.rebuild_button.setToolTip("Recompute the relations (after adding files, or to include new searches)")
        for b in (self.expand_button, self.open_button):
            b.setEnabled(False)

        top = QHBoxLayout()
        for w in (QLabel("Relations:"), self.method, QLabel("Scope:"), self.scope, QLabel("Colour:"), self.color_by):
            top.addWidget(w)
        top.addWidget(self.search, 1)
        bottom = QHBoxLayout()
        bottom.addWidget(QLabel("Min. weight:"))
        bottom.addWidget(self.slider, 1)
        bottom.addWidget(self.slider_label)
        for b in (self.expand_button, self.open_button, self.reset_button, self.rebuild_button):
            bottom.addWidget(b)

        self.plot = pg.PlotWidget()
        self.plot.setBackground("w")
        self.plot.hideAxis("left")
        self.plot.hideAxis("bottom")
        self.plot.setAspectLocked(True)
        self.plot.setMenuEnabled(False)
        self.edges_item = pg.PlotCurveItem(connect="pairs", pen=pg.mkPen(EDGE_PEN, width=1), antialias=False)
        self.focus_item = pg.PlotCurveItem(connect="pairs", pen=pg.mkPen(FOCUS_PEN, width=1.5), antialias=False)
        self.nodes_item = pg.ScatterPlotItem(size=NODE_SIZE, pxMode=True, hoverable=True, antialias=False,
                                             pen=None, tip=self._tip)
        self.marks_item = pg.ScatterPlotItem(size=NODE_SIZE + 6, pxMode=True, brush=None,
                                             pen=pg.mkPen((20, 20, 20), width=2))
        for item in (self.edges_item, self.focus_item, self.nodes_item, self.marks_item):
            self.plot.addItem(item)
        # Elided, never wider than the tab: a node's full path in a plain QLabel widened the
        # central widget past the screen, squeezing the docks (and that layout was saved).
        self.status = ElidedLabel("No graph yet", mode=Qt.TextElideMode.ElideMiddle, full_tip=True)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.plot, 1)
        layout.addLayout(bottom)
        layout.addWidget(self.status)

        self.method.currentIndexChanged.connect(lambda _: self._ask("method"))
        self.scope.currentIndexChanged.connect(lambda _: self._ask("scope"))
        self.color_by.currentIndexChanged.connect(lambda _: self._apply_colors())
        self.slider.valueChanged.connect(self._on_slider)
        self.search.returnPressed.connect(self._on_search)
        self.nodes_item.sigClicked.connect(self._on_clicked)
        self.nodes_item.sigHovered.connect(self._on_hovered)
        self.expand_button.clicked.connect(self.expand_selected)
        self.open_button.clicked.connect(self._on_open)
        self.reset_button.clicked.connect(self.fit)
        self.rebuild_button.clicked.connect(self._on_rebuild)

    # -- owner API -------------------------------------------------------------------------------
    def set_payload(self, payload: Optional[GraphPayload]) -> None:
        """Show a new graph (None clears). Keeps the user's method/scope/colour choices."""
        self.payload = payload
        self.selected, self.focus = None, set()
        self.expand_button.setEnabled(False)
        self.open_button.setEnabled(False)
        if payload is None or payload.n_nodes == 0:
            self.nodes_item.setData(pos=np.zeros((0, 2)))
            self.edges_item.setData(x=np.zeros(0), y=np.zeros(0))
            self.focus_item.setData(x=np.zeros(0), y=np.zeros(0))
            self.marks_item.setData(pos=np.zeros((0, 2)))
            self._drawn = 0
            self.status.setText("No relations to show yet: click Rebuild to compute them")
            return
        self._order = np.argsort(-payload.weights, kind="stable")
        self._sorted = payload.weights[self._order]
        self.nodes_item.setData(pos=payload.positions, data=np.arange(payload.n_nodes),
                                size=node_size(payload.n_nodes))
        self.marks_item.setSize(node_size(payload.n_nodes) + 6)
        self._apply_colors()
        self._on_slider(self.slider.value())
        self._update_marks()
        self.fit()
        self._set_combo(self.method, payload.method)

    def set_method(self, method: str) -> None:
        self._set_combo(self.method, method)

    def set_scope(self, scope: str) -> None:
        self._set_combo(self.scope, scope)

    def set_busy(self, message: str) -> None:
        self.status.setText(message)

    @property
    def drawn_edges(self) -> int:
        """How many edges the base curve currently draws (tests and the status line use it)."""
        return self._drawn

    # -- drawing ---------------------------------------------------------------------------------
    def _visible_edges(self) -> tuple[np.ndarray, int]:
        """(rows to draw, how many pass the threshold): the strongest first, at most max_edges."""
        if self.payload is None:
            return np.zeros(0, dtype=np.int64), 0
        passing = int(np.searchsorted(-self._sorted, -self.threshold, side="right"))
        return self._order[:min(passing, self.max_edges)], passing

    def _draw_edges(self) -> None:
        p = self.payload
        if p is None:
            return
        rows, passing = self._visible_edges()
        self._drawn = int(rows.size)
        pts = p.positions[p.edges[rows].reshape(-1)]
        self.edges_item.setData(x=pts[:, 0], y=pts[:, 1], connect="pairs")
        if self.focus:
            f = np.fromiter(self.focus, dtype=np.int64)
            hit = np.isin(p.edges[:, 0], f) | np.isin(p.edges[:, 1], f)
            fp = p.positions[p.edges[hit].reshape(-1)]
            self.focus_item.setData(x=fp[:, 0], y=fp[:, 1], connect="pairs")
        else:
            self.focus_item.setData(x=np.zeros(0), y=np.zeros(0))
        capped = f" (the strongest {self._drawn} of {passing} above the threshold)" if passing > self._drawn else ""
        chosen = f" — selected: {p.labels[self.selected]}" if self.selected is not None else ""
        self.status.setText(f"{p.n_nodes} documents, {self._drawn} of {p.n_edges} relations shown{capped}"
                            + (f" — {p.method}" if p.method else "") + chosen)

    def _apply_colors(self) -> None:
        p = self.payload
        if p is None:
            return
        key = self.color_by.currentData() or GROUPINGS[0]
        colors = p.colors.get(key)
        if colors is None:
            return
        brushes = []
        for c in map(tuple, colors.tolist()):
            b = self._brush_cache.get(c)
            if b is None:
                b = self._brush_cache[c] = pg.mkBrush(*c)
            brushes.append(b)
        self.nodes_item.setBrush(brushes)

    def _update_marks(self) -> None:
        p = self.payload
        rows = sorted(self.focus | ({self.selected} if self.selected is not None else set()))
        if p is None or not rows:
            self.marks_item.setData(pos=np.zeros((0, 2)))
            return
        self.marks_item.setData(pos=p.positions[rows])

    def fit(self) -> None:
        p = self.payload
        if p is None or p.n_nodes == 0:
            return
        lo, hi = p.positions.min(axis=0), p.positions.max(axis=0)
        pad = max(float((hi - lo).max()) * 0.05, 1.0)
        self.plot.getViewBox().setRange(QRectF(lo[0] - pad, lo[1] - pad, hi[0] - lo[0] + 2 * pad,
                                               hi[1] - lo[1] + 2 * pad), padding=0)

    # -- interaction -----------------------------------------------------------------------------
    def _on_slider(self, value: int) -> None:
        p = self.payload
        if p is None or p.n_edges == 0 or value <= 0:
            self.threshold = -np.inf
            self.slider_label.setText("all edges")
        else:
            self.threshold = float(np.quantile(p.weights, value / 100.0))
            self.slider_label.setText(f"≥ {self.threshold:.3g}")
        self._draw_edges()

    def _tip(self, x: float, y: float, data: object) -> str:
        return self.hover_text(int(data)) if data is not None else ""

    def hover_text(self, row: int) -> str:
        p = self.payload
        if p is None or not 0 <= row < p.n_nodes:
            return ""
        return p.labels[row] + (f"\n{p.paths[row]}" if p.paths[row] else "")

    def _on_hovered(self, _item, points, _ev) -> None:
        rows = [int(pt.data()) for pt in points] if len(points) else []
        self.nodeHovered.emit(self.payload.labels[rows[0]] if rows and self.payload else "")

    def _on_clicked(self, _item, points, _ev) -> None:
        if len(points):
            self.select_row(int(points[0].data()))

    def select_row(self, row: int) -> None:
        """Select a node (as a click does): mark it, offer Open/Expand, emit fileActivated."""
        p = self.payload
        if p is None or not 0 <= row < p.n_nodes:
            return
        self.selected = row
        fid = p.file_ids[row]
        self.open_button.setEnabled(fid >= 0)
        self.expand_button.setEnabled(True)
        self._update_marks()
        self.status.setText(f"{p.labels[row]} — {p.paths[row]}" if p.paths[row] else p.labels[row])
        if fid >= 0:
            self.fileActivated.emit(fid)

    def expand_selected(self) -> None:
        p = self.payload
        if p is None or self.selected is None:
            return
        self.focus |= {self.selected, *p.neighbors(self.selected).tolist()}
        self._update_marks()
        self._draw_edges()

    def _on_open(self) -> None:
        p = self.payload
        if p is not None and self.selected is not None and p.file_ids[self.selected] >= 0:
            self.openRequested.emit(p.file_ids[self.selected])

    def find(self, text: str) -> list[int]:
        """Rows whose title or path contains ``text`` (case-insensitive), title matches first."""
        p = self.payload
        t = text.strip().lower()
        if p is None or not t:
            return []
        by_title = [i for i, s in enumerate(p.labels) if t in s.lower()]
        seen = set(by_title)
        return by_title + [i for i, s in enumerate(p.paths) if t in s.lower() and i not in seen]

    def _on_search(self) -> None:
        rows = self.find(self.search.text())
        if not rows:
            self.status.setText(f"No document matches “{self.search.text()}”")
            return
        self.select_row(rows[0])
        x, y = self.payload.positions[rows[0]]
        vb = self.plot.getViewBox()
        (x0, x1), (y0, y1) = vb.viewRange()
        w, h = (x1 - x0) / 4, (y1 - y0) / 4  # zoom in on the match
        vb.setRange(QRectF(x - w / 2, y - h / 2, w, h), padding=0)

    def _on_rebuild(self) -> None:
        self.status.setText("Rebuilding relations…")
        self.rebuildRequested.emit()

    def _ask(self, which: str) -> None:
        if which == "method":
            self.status.setText("Recomputing relations…")
            self.methodChanged.emit(self.method.currentData())
        else:
            self.status.setText("Recomputing relations…")
            self.scopeChanged.emit(self.scope.currentData())

    @staticmethod
    def _set_combo(combo: QComboBox, key: str) -> None:
        i = combo.findData(key)
        if i >= 0 and i != combo.currentIndex():
            combo.blockSignals(True)
            combo.setCurrentIndex(i)
            combo.blockSignals(False)

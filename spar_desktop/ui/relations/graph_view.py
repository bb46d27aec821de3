"""The relation graph view: a self-contained widget that draws a GraphPayload with pyqtgraph.

It never computes anything heavy. Switching method (EDR-MQ / co-occurrence / TF-IDF) or scope
only emits a signal; the owner recomputes in a worker and calls ``set_payload`` with the result.
A document's neighbourhood (its k-hop subgraph) is asked for with ``neighbourhoodRequested``;
the owner extracts and lays it out in a worker and calls ``set_neighbourhood``; "Whole graph"
goes back without recomputing anything. When the owner would have to build the whole index's
relations first, it shows the estimate instead (``show_offer``) and builds on ``buildConfirmed``.

It stays interactive at 20,000 nodes (benchmarks/graph_view.py): all nodes are one NodeLayer and
all edges one EdgeLayer (graph_items.py), so a payload costs a few numpy passes, a threshold is a
prefix of the edges sorted once, and a repaint draws only what meets the view, edges up to a
budget (the strongest first).
"""

from __future__ import annotations

from typing import Optional

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QRectF, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QComboBox, QHBoxLayout, QLabel, QLineEdit, QPushButton, QSlider, QToolButton, QVBoxLayout, QWidget,
)

from spar_desktop.core.relations.neighbourhood import MAX_HOPS, Neighbourhood
from spar_desktop.core.relations.payload import GROUPINGS, GraphPayload
from spar_desktop.ui.base.elided_label import ElidedLabel
from spar_desktop.ui.base.style import colours
from spar_desktop.ui.relations.graph_interaction import GraphInteraction
from spar_desktop.ui.relations.graph_items import EdgeLayer, NodeLayer, pixel_size, view_rect
from spar_desktop.ui.relations.ops import METHODS
from spar_desktop.ui.relations.readable import readable_keep, slider_value

SCOPES = (("workspace", "Current workspace"), ("index", "Whole index"))
COLOR_BY = (("community", "Community"), ("cluster", "Cluster"), ("tag", "Tag"))
NODE_SIZE = 7
# Painting cost grows with the number and the length of the segments drawn: at most this many
# segments and pixels of line per repaint (~10 ms of a 2-core VM's CPU), the strongest among the
# edges that meet the view, those of the documents in view first; the status line says when some
# are left out, zooming in or raising the threshold shows them. Measured by benchmarks/graph_view.py.
MAX_DRAWN_EDGES = 20_000
MAX_EDGE_PIXELS = 2_000_000
SETTLE_MS = 150  # the view counts as still after this long without a pan or zoom
EDGE_PEN = (120, 120, 130, 70)
FOCUS_PEN = (230, 120, 20, 220)
FADED_EDGE_PEN = (120, 120, 130, 28)  # the other edges while a document is selected
SELECTED_PEN = (47, 111, 222, 235)  # the selected document's edges
CENTER_PEN = (230, 90, 0)


def node_size(n: int) -> int:
    """Pixels per node: bigger dots while there is room for them (a folder of 50 documents), the
    small default at thousands, where overlap would hide the edges."""
    return 12 if n <= 300 else 9 if n <= 2000 else NODE_SIZE


class GraphView(GraphInteraction, QWidget):
    fileActivated = Signal(int)  # a node was clicked (its library file id)
    openRequested = Signal(int)  # the user chose Open for the selected node
    methodChanged = Signal(str)  # edrmq | cooc | tfidf: the owner should recompute
    scopeChanged = Signal(str)  # workspace | index: the owner should recompute
    rebuildRequested = Signal()  # recompute the relations themselves (files or queries changed)
    nodeHovered = Signal(str)  # title under the cursor ('' when leaving a node)
    neighbourhoodRequested = Signal(int, int)  # (file id, hops): the owner extracts it in a worker
    buildConfirmed = Signal()  # the user said yes to the build the offer described (show_offer)

    def __init__(self, parent: Optional[QWidget] = None, max_edges: int = MAX_DRAWN_EDGES,
                 max_edge_pixels: float = MAX_EDGE_PIXELS) -> None:
        super().__init__(parent)
        self.payload: Optional[GraphPayload] = None  # what is drawn: the whole graph or a neighbourhood
        self.whole: Optional[GraphPayload] = None  # the whole graph the owner set last
        self.around: Optional[Neighbourhood] = None  # set while a neighbourhood is shown
        self._sorted = np.zeros(0)  # edge weights, descending
        self._ascending = np.zeros(0)
        self._order = np.zeros(0, dtype=np.int64)
        self.selected: Optional[int] = None
        self.focus: set[int] = set()  # expanded nodes: their edges are drawn whatever the threshold
        self.threshold = -np.inf
        self._build_controls()
        self._build_plot(max_edges, max_edge_pixels)
        self._build_layout()
        self._connect()

    # -- construction ----------------------------------------------------------------------------
    def _build_controls(self) -> None:
        self.method = self._combo(METHODS)
        self.method.setToolTip("EDR-MQ (words + meaning): documents related through the queries that retrieve them "
                               "together, retrieval scoring shared words and meaning (the default; it beats a plain "
                               "TF-IDF graph on reply threads). Co-occurrence: clusters of documents used together. "
                               "TF-IDF: the plain shared-words baseline.")
        self.scope = self._combo(SCOPES)
        self.color_by = self._combo(COLOR_BY)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Find a document…")
        self.search.setClearButtonEnabled(True)
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setRange(0, 100)
        self.slider.setToolTip("Hide weaker relations (percentile of edge weights)")
        self.slider.setMinimumWidth(100)
        self.slider_label = QLabel("all edges")
        # Tool buttons: as wide as their text (a push button is at least 80 px), so the row fits
        # a narrow tab without squeezing the slider away.
        self.expand_button = self._button("Expand", "Show the selected document's neighbours and their relations")
        self.around_button = self._button("Neighbourhood", "Show only the selected document and the documents "
                                          "within the chosen number of relations of it")
        self.hops = self._combo(tuple((k, f"{k} hop{'s' if k > 1 else ''}") for k in range(1, MAX_HOPS + 1)))
        self.hops.setToolTip("How many relations away a document may be to be part of a neighbourhood")
        self.open_button = self._button("Open", "Show the selected document in the viewer")
        self.reset_button = self._button("Fit", "Show the whole graph")
        self.rebuild_button = self._button("Rebuild", "Recompute the relations (after adding files, or to include "
                                           "new searches)")
        for b in (self.expand_button, self.open_button, self.around_button):
            b.setEnabled(False)
        self.around_label = ElidedLabel("", mode=Qt.TextElideMode.ElideMiddle, full_tip=True)
        self.whole_button = QPushButton("Whole graph")
        self.whole_button.setToolTip("Back to every document of the scope")
        # A build nobody asked for yet (the whole index): what it costs, and the button that starts it.
        self.offer_label = QLabel("")
        self.offer_label.setWordWrap(True)
        self.offer_button = QPushButton("")
        self.offer_button.setToolTip("Relating the whole index reads every file in it (and embeds those not "
                                     "embedded yet); Scope ▸ Current workspace relates only a workspace's files")

    @staticmethod
    def _button(text: str, tip: str) -> QToolButton:
        button = QToolButton()
        button.setText(text)
        button.setToolTip(tip)
        return button

    @staticmethod
    def _combo(items: tuple) -> QComboBox:
        combo = QComboBox()
        for key, label in items:
            combo.addItem(label, key)
        return combo

    def _build_plot(self, max_edges: int, max_edge_pixels: float) -> None:
        self.plot = pg.PlotWidget()
        self.plot.setBackground(colours()["graph_bg"])  # the theme's (the labels' boxes too: graph_items.label_colours)
        self.plot.hideAxis("left")
        self.plot.hideAxis("bottom")
        self.plot.setAspectLocked(True)
        self.plot.setMenuEnabled(False)
        self.edges_item = EdgeLayer(pg.mkPen(EDGE_PEN, width=1), max_edges, max_edge_pixels,
                                    on_selected=self._update_status)  # a pan or zoom shows other edges
        self.focus_item = pg.PlotCurveItem(connect="pairs", pen=pg.mkPen(FOCUS_PEN, width=1.5), antialias=False)
        self.selected_item = pg.PlotCurveItem(connect="pairs", pen=pg.mkPen(SELECTED_PEN, width=2), antialias=True)
        self.nodes_item = NodeLayer(self._on_hovered, self.select_row, self.hover_text)
        self.marks_item = pg.ScatterPlotItem(size=NODE_SIZE + 6, pxMode=True, brush=None,
                                             pen=pg.mkPen((20, 20, 20), width=2))
        self.center_item = pg.ScatterPlotItem(size=NODE_SIZE + 10, pxMode=True, brush=None,
                                              pen=pg.mkPen(CENTER_PEN, width=3))
        for item in (self.edges_item, self.focus_item, self.selected_item, self.nodes_item, self.marks_item,
                     self.center_item):
            self.plot.addItem(item)
        for item in (self.focus_item, self.selected_item, self.marks_item, self.center_item):
            item.setVisible(False)  # overlays: shown only while they have something to draw
        # Elided, never wider than the tab: a node's full path in a plain QLabel widened the
        # central widget past the screen, squeezing the docks (and that layout was saved).
        self.status = ElidedLabel("No graph yet", mode=Qt.TextElideMode.ElideMiddle, full_tip=True)

    def _build_layout(self) -> None:
        top = QHBoxLayout()
        for w in (QLabel("Relations:"), self.method, QLabel("Scope:"), self.scope, QLabel("Colour:"), self.color_by):
            top.addWidget(w)
        top.addWidget(self.search, 1)
        self.around_bar = QWidget()
        bar = QHBoxLayout(self.around_bar)
        bar.setContentsMargins(0, 0, 0, 0)
        bar.addWidget(self.around_label, 1)
        bar.addWidget(self.whole_button)
        self.around_bar.hide()
        self.offer = QWidget()
        offer = QHBoxLayout(self.offer)
        offer.setContentsMargins(0, 0, 0, 0)
        offer.addWidget(self.offer_label, 1)
        offer.addWidget(self.offer_button)
        self.offer.hide()
        bottom = QHBoxLayout()
        bottom.addWidget(QLabel("Min. weight:"))
        bottom.addWidget(self.slider, 1)
        bottom.addWidget(self.slider_label)
        for b in (self.expand_button, self.around_button, self.hops, self.open_button, self.reset_button,
                  self.rebuild_button):
            bottom.addWidget(b)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.around_bar)
        layout.addWidget(self.offer)
        layout.addWidget(self.plot, 1)
        layout.addLayout(bottom)
        layout.addWidget(self.status)

    def _connect(self) -> None:
        self.method.currentIndexChanged.connect(lambda _: self._ask("method"))
        self.scope.currentIndexChanged.connect(lambda _: self._ask("scope"))
        self.color_by.currentIndexChanged.connect(lambda _: self._apply_colors())
        self.slider.valueChanged.connect(self._on_slider)
        self.search.returnPressed.connect(self._on_search)
        self.expand_button.clicked.connect(self.expand_selected)
        self.around_button.clicked.connect(self.request_neighbourhood)
        self.hops.currentIndexChanged.connect(lambda _: self._hops_changed())
        self.whole_button.clicked.connect(self.show_whole)
        self.open_button.clicked.connect(self._on_open)
        self.reset_button.clicked.connect(self.fit)
        self.rebuild_button.clicked.connect(self._on_rebuild)
        self.offer_button.clicked.connect(self._on_offer)
        self._settle = QTimer(self, singleShot=True, interval=SETTLE_MS)
        self._settle.timeout.connect(self.settle)
        # A drag or a wheel turn (not a range we set): lighter frames until the view is still.
        self.plot.getViewBox().sigRangeChangedManually.connect(lambda *_: self._moved())

    def _moved(self) -> None:
        self.edges_item.moving = True
        self._settle.start()

    def settle(self) -> None:
        """Paint the full picture now (the view has stopped moving)."""
        self._settle.stop()
        if self.edges_item.moving:
            self.edges_item.moving = False
            self.edges_item.update()
            self._update_status()

    # -- owner API -------------------------------------------------------------------------------
    def set_payload(self, payload: Optional[GraphPayload]) -> None:
        """Show a new whole graph (None clears), leaving any neighbourhood. Keeps the user's
        method/scope/colour choices."""
        self.whole, self.around = payload, None
        self.around_bar.hide()
        self.offer.hide()
        self._show(payload)
        if payload is not None:
            self._set_combo(self.method, payload.method)

    def set_neighbourhood(self, around: Neighbourhood) -> None:
        """Show a neighbourhood (from core.relations.neighbourhood) with its centre selected."""
        self.around = around
        p = around.payload
        self._set_combo(self.hops, around.hops)
        self._show(p)
        self._overlay(self.center_item, p.positions[[around.center]])
        self._select(around.center, emit=False)
        self.around_label.setText(f"Neighbourhood of “{p.labels[around.center]}”: {p.n_nodes - 1} related "
                                  f"document{'s' if p.n_nodes != 2 else ''} within {around.hops} "
                                  f"hop{'s' if around.hops > 1 else ''}")
        self.around_bar.show()
        self._update_status()

    def show_whole(self) -> None:
        """Back from a neighbourhood to the whole graph, the centre selected and in view."""
        around, self.around = self.around, None
        self.around_bar.hide()
        self._show(self.whole)
        if around is not None and self.whole is not None:
            node = around.payload.node_ids[around.center]
            if node in self.whole.node_ids:
                row = self.whole.node_ids.index(node)
                self._select(row, emit=False)
                self._zoom_to(row)

    def show_offer(self, text: str, button: str) -> None:
        """Instead of building: what the build would cost (``text``) and the button that starts
        it ('Build relations for the whole index (about 30 min)'); buildConfirmed on a click."""
        self.offer_label.setText(text)
        self.offer_button.setText(button)
        self.offer.show()
        self.status.setText(text)

    def hide_offer(self) -> None:
        self.offer.hide()

    @property
    def offering(self) -> bool:
        return not self.offer.isHidden()

    def _on_offer(self) -> None:
        self.offer.hide()
        self.buildConfirmed.emit()

    def set_method(self, method: str) -> None:
        self._set_combo(self.method, method)

    def set_scope(self, scope: str) -> None:
        self._set_combo(self.scope, scope)

    def set_busy(self, message: str) -> None:
        self.status.setText(message)

    @property
    def max_edges(self) -> int:
        return self.edges_item.budget

    @max_edges.setter
    def max_edges(self, value: int) -> None:
        self.edges_item.budget = int(value)
        self.edges_item.update()
        self._update_status()

    @property
    def drawn_edges(self) -> int:
        """How many edges a repaint of the current view draws (tests and the status line use it)."""
        self.edges_item.select(view_rect(self.edges_item), pixel_size(self.edges_item))
        return self.edges_item.drawn

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and hasattr(self, "plot"):  # the theme switched
            self.plot.setBackground(colours()["graph_bg"])
            if hasattr(self, "nodes_item"):
                self.nodes_item.update()  # its labels repaint in the new colours

    # -- drawing ---------------------------------------------------------------------------------
    def _show(self, payload: Optional[GraphPayload]) -> None:
        self.payload = payload
        self.selected, self.focus = None, set()
        self._draw_selected()
        for b in (self.expand_button, self.open_button, self.around_button):
            b.setEnabled(False)
        self._overlay(self.center_item, np.zeros((0, 2)))
        self._draw_focus()
        self._overlay(self.marks_item, np.zeros((0, 2)))
        if payload is None or payload.n_nodes == 0:
            self.nodes_item.set_nodes(np.zeros((0, 2)), np.zeros((0, 3), np.uint8), (), np.zeros(0), NODE_SIZE)
            self.edges_item.set_segments(np.zeros((0, 4)))
            self.status.setText("No relations to show yet: click Rebuild to compute them")
            return
        self._order = np.argsort(-payload.weights, kind="stable")
        self._sorted = payload.weights[self._order]
        self._ascending = self._sorted[::-1]
        e = payload.edges[self._order]
        self.edges_item.set_segments(np.hstack([payload.positions[e[:, 0]], payload.positions[e[:, 1]]]))
        importance = np.bincount(payload.edges.reshape(-1), weights=np.repeat(payload.weights, 2),
                                 minlength=payload.n_nodes)
        size = node_size(payload.n_nodes)
        self.nodes_item.set_nodes(payload.positions, self._colors(payload), payload.labels, importance, size)
        self.marks_item.setSize(size + 6)
        self.center_item.setSize(size + 10)
        self.fit()
        # Readable by default: the strongest edges up to a median of 5 per document (readable.py).
        value = slider_value(payload.weights, readable_keep(payload.edges, payload.weights, payload.n_nodes))
        if value != self.slider.value():
            self.slider.setValue(value)  # _on_slider follows
        else:
            self._on_slider(value)

    def _colors(self, p: GraphPayload) -> np.ndarray:
        colors = p.colors.get(self.color_by.currentData() or GROUPINGS[0])
        return colors if colors is not None else p.colors[GROUPINGS[0]]

    def _apply_colors(self) -> None:
        if self.payload is not None and self.payload.n_nodes:
            self.nodes_item.set_colors(self._colors(self.payload))

    def _draw_focus(self) -> None:
        p = self.payload
        if p is None or not self.focus:
            self.focus_item.setData(x=np.zeros(0), y=np.zeros(0))
            self.focus_item.setVisible(False)
            return
        f = np.fromiter(self.focus, dtype=np.int64)
        hit = np.isin(p.edges[:, 0], f) | np.isin(p.edges[:, 1], f)
        fp = p.positions[p.edges[hit].reshape(-1)]
        self.focus_item.setData(x=fp[:, 0], y=fp[:, 1], connect="pairs")
        self.focus_item.setVisible(bool(len(fp)))

    def _draw_selected(self) -> None:
        """The selected document's edges stand out; the others fade (restored without a selection)."""
        p, row = self.payload, self.selected
        if p is None or row is None:
            self.selected_item.setData(x=np.zeros(0), y=np.zeros(0))
            self.selected_item.setVisible(False)
            self.edges_item.pen = pg.mkPen(EDGE_PEN, width=1)
            self.edges_item.update()
            return
        mine = p.positions[p.edges[(p.edges[:, 0] == row) | (p.edges[:, 1] == row)].reshape(-1)]
        self.selected_item.setData(x=mine[:, 0], y=mine[:, 1], connect="pairs")
        self.selected_item.setVisible(bool(len(mine)))
        self.edges_item.pen = pg.mkPen(FADED_EDGE_PEN, width=1)
        self.edges_item.update()

    @staticmethod
    def _overlay(item: pg.ScatterPlotItem, pos: np.ndarray) -> None:
        """Set a ring overlay (selection, centre); hidden while empty, so a frame of 20,000 nodes
        does not pay for painting an empty item."""
        item.setData(pos=pos)
        item.setVisible(len(pos) > 0)

    def _update_status(self) -> None:
        p = self.payload
        if p is None or p.n_nodes == 0:
            return
        drawn = self.drawn_edges
        passing, in_view = self._passing(), self.edges_item.in_view
        parts = [f"{p.n_nodes:,} documents, {drawn:,} of {p.n_edges:,} relations shown"]
        if in_view > drawn:
            parts.append(f" ({drawn:,} of the {in_view:,} in view above the threshold, strongest first: zoom in or "
                         "raise the minimum weight to see the rest)")
        elif passing > in_view:
            parts.append(f" ({passing - in_view:,} more outside the view)")
        if p.method:
            parts.append(f" — {dict(METHODS).get(p.method, p.method)}")
        if self.selected is not None:
            parts.append(f" — selected: {p.labels[self.selected]}")
        self.status.setText("".join(parts))

    def _update_marks(self) -> None:
        p = self.payload
        rows = sorted(self.focus | ({self.selected} if self.selected is not None else set()))
        self._overlay(self.marks_item, p.positions[rows] if p is not None and rows else np.zeros((0, 2)))
        center = [self.around.center] if self.around is not None and self.around.payload is p else []
        self.nodes_item.pinned = center + ([self.selected] if self.selected is not None else [])
        self.nodes_item.update()

    def fit(self) -> None:
        p = self.payload
        if p is None or p.n_nodes == 0:
            return
        lo, hi = p.positions.min(axis=0), p.positions.max(axis=0)
        pad = max(float((hi - lo).max()) * 0.05, 1.0)
        self.plot.getViewBox().setRange(QRectF(lo[0] - pad, lo[1] - pad, hi[0] - lo[0] + 2 * pad,
                                               hi[1] - lo[1] + 2 * pad), padding=0)

    @staticmethod
    def _set_combo(combo: QComboBox, key) -> None:
        i = combo.findData(key)
        if i >= 0 and i != combo.currentIndex():
            combo.blockSignals(True)
            combo.setCurrentIndex(i)
            combo.blockSignals(False)

"""The relation graph's two pyqtgraph items: every node in one, every edge in the other.

Why not ScatterPlotItem + PlotCurveItem (the first version): at 20,000 nodes ScatterPlotItem
spends ~0.4 s per payload making a brush and a symbol key per point in Python, and a
connect='pairs' curve rebuilds a QPainterPath on every threshold change, then strokes every
segment, on screen or not. Here:

- nodes: one pre-rendered dot per distinct colour in an atlas pixmap; a paint keeps the nodes
  inside the view (numpy), maps them to pixels and draws them with one drawPixmapFragments
  call; labels only for the most connected visible nodes (all of them once few are visible);
- edges: segments sorted strongest first once per payload, so a threshold is a prefix length;
  a paint keeps the prefix's segments whose bounding box meets the view (the relations of the
  documents in view first), strongest first within a count and a line-length budget (a quarter
  of them while the user drags or turns the wheel), and draws them with one drawLines over a
  QLineF array filled from numpy;
- hit-testing: a KD-tree (scipy) over the positions, built on the first hover or click.
"""

from __future__ import annotations

import math
from typing import Callable, Optional

import numpy as np
import pyqtgraph as pg
from pyqtgraph.Qt import internals
from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPen, QPixmap

from spar_desktop.ui.base.style import colours
from spar_desktop.ui.relations.readable import labels_wanted

# Labels: the most connected tenth of the visible nodes, at most LABELS; every one of a handful
# in view (zoomed in); the others on hover (readable.py). Label boxes that would overlap an earlier
# one are skipped.
LABELS = 12
LABEL_CHARS = 32
LABEL_CELL = 40  # px: the occupancy grid's cell width (its height is a text line)
LABEL_ALPHA = 190  # the label's box: the canvas colour, a little see-through over dots and edges


def label_colours() -> tuple[QColor, QColor]:
    """(text, box) in the theme's colours: fixed light boxes stood out on the dark canvas."""
    c = colours()
    box = QColor(c["graph_bg"])
    box.setAlpha(LABEL_ALPHA)
    return QColor(c["text"]), box


# While the view moves (drag, wheel) edges get 1/MOVING_SHARE of their budgets, so each frame of
# the motion costs a few ms; the full picture is painted once the view has been still a moment.
MOVING_SHARE = 4


def view_rect(item: pg.GraphicsObject) -> Optional[QRectF]:
    """The visible area in data coordinates (the items sit untransformed in the ViewBox); None
    before the view has a size. The ViewBox's own rect, not GraphicsItem.viewRect(): that one is
    cached and can lag a range change, and the view's status line must count what a paint draws."""
    vb = item.getViewBox()
    r = vb.viewRect() if vb is not None else None
    return r if r is not None and r.width() > 0 and r.height() > 0 else None


def pixel_size(item: pg.GraphicsObject) -> Optional[tuple[float, float]]:
    """Data units per screen pixel along x and y; None before the view has a size."""
    vb = item.getViewBox()
    try:
        pw, ph = vb.viewPixelSize() if vb is not None else (0.0, 0.0)
    except (ZeroDivisionError, OverflowError, TypeError):
        return None
    return (abs(pw), abs(ph)) if pw and ph and math.isfinite(pw) and math.isfinite(ph) else None


class EdgeLayer(pg.GraphicsObject):
    """Edges as one drawLines call. ``set_segments`` takes them strongest first; ``set_limit``
    is the threshold (how many of the strongest pass). A paint draws the strongest of those
    that meet the view (those with an end in view first), at most ``budget`` of them and at most
    ``pixel_budget`` pixels of line:
    aliased cosmetic lines cost ~0.2 µs each plus ~2 ns per pixel (benchmarks/graph_view.py),
    so zoomed in, where every edge crosses much of the screen, length is what bounds the time.
    While ``moving``, a quarter of both budgets."""

    def __init__(self, pen: QPen, budget: int, pixel_budget: float,
                 on_selected: Callable[[], None] = lambda: None) -> None:
        super().__init__()
        self.pen = pen
        self.on_selected = on_selected  # a paint chose other segments (the view's status line follows)
        self.moving = False  # while the user pans or zooms: a share of the budgets (see MOVING_SHARE)
        self.budget = budget
        self.pixel_budget = pixel_budget
        self._seg = np.zeros((0, 4))
        self._lo = np.zeros((0, 2), np.float32)
        self._hi = np.zeros((0, 2), np.float32)
        self._a = self._b = np.zeros((0, 2), np.float32)
        self._delta = np.zeros((0, 2), np.float32)
        self._limit = 0
        self._lines = internals.PrimitiveArray(QLineF, 4)
        self._key: Optional[tuple] = None
        self._bounds = QRectF()
        self.drawn = 0  # segments in the line array
        self.in_view = 0  # segments above the threshold that meet the view

    def set_segments(self, seg: np.ndarray) -> None:
        """(m, 4) x0, y0, x1, y1 per edge, strongest first."""
        self.prepareGeometryChange()
        self._seg = np.ascontiguousarray(seg, dtype=np.float64).reshape(-1, 4)
        a, b = self._seg[:, :2], self._seg[:, 2:]
        self._lo, self._hi = np.minimum(a, b).astype(np.float32), np.maximum(a, b).astype(np.float32)
        self._a, self._b = a.astype(np.float32), b.astype(np.float32)
        self._delta = (self._hi - self._lo)
        self._limit = len(self._seg)
        if len(self._seg):
            lo, hi = self._lo.min(axis=0), self._hi.max(axis=0)
            self._bounds = QRectF(float(lo[0]), float(lo[1]), float(hi[0] - lo[0]), float(hi[1] - lo[1]))
        else:
            self._bounds = QRectF()
        self._key = None
        self.update()

    def set_limit(self, passing: int) -> None:
        if passing != self._limit:
            self._limit = passing
            self._key = None
            self.update()

    def select(self, rect: Optional[QRectF], pixel: Optional[tuple[float, float]]) -> None:
        """Fill the line array for the view ``rect`` seen at ``pixel`` data units per pixel
        (None: as if everything were in view, with no length budget)."""
        share = MOVING_SHARE if self.moving else 1
        budget, pixel_budget = max(self.budget // share, 1), self.pixel_budget / share
        key = (self._limit, budget, pixel_budget, None if rect is None else rect.getRect(), pixel)
        if key == self._key:
            return
        self._key = key
        lim = self._limit
        if rect is None:
            rows = np.arange(min(lim, budget))
            self.in_view = lim
        else:
            lo, hi = self._lo[:lim], self._hi[:lim]
            meets = ((hi[:, 0] >= rect.left()) & (lo[:, 0] <= rect.right())
                     & (hi[:, 1] >= rect.top()) & (lo[:, 1] <= rect.bottom()))
            # Zoomed in, the budget goes first to the relations of the documents in view; edges
            # that only pass through come after them (each group strongest first).
            end_in = self._inside(self._a[:lim], rect) | self._inside(self._b[:lim], rect)
            local = np.flatnonzero(end_in)
            rows = np.concatenate([local, np.flatnonzero(meets & ~end_in)])
            self.in_view = int(rows.size)
            rows = rows[:budget]
        if pixel is not None and rect is not None and rows.size:
            d = self._delta[rows]
            length = np.hypot(d[:, 0] / pixel[0], d[:, 1] / pixel[1])
            # A line is clipped to the view: it never costs more than the view's diagonal.
            np.minimum(length, math.hypot(rect.width() / pixel[0], rect.height() / pixel[1]), out=length)
            rows = rows[:max(int(np.searchsorted(np.cumsum(length), pixel_budget, side="right")), 1)]
        self.drawn = int(rows.size)
        self._lines.resize(self.drawn)
        if self.drawn:
            self._lines.ndarray()[:] = self._seg[rows]

    def segments(self) -> np.ndarray:
        """(drawn, 4) the segments the next paint draws, in drawing order (a copy)."""
        return self._lines.ndarray()[:self.drawn].copy()

    @staticmethod
    def _inside(xy: np.ndarray, rect: QRectF) -> np.ndarray:
        x, y = xy[:, 0], xy[:, 1]
        return (x >= rect.left()) & (x <= rect.right()) & (y >= rect.top()) & (y <= rect.bottom())

    def boundingRect(self) -> QRectF:
        return self._bounds

    def paint(self, p: QPainter, *_args) -> None:
        before = self._key
        self.select(view_rect(self), pixel_size(self))
        if self._key != before and not self.moving:
            self.on_selected()
        if not self.drawn:
            return
        p.setRenderHint(QPainter.RenderHint.Antialiasing, False)  # aliased cosmetic lines: the fast path
        p.setPen(self.pen)
        p.drawLines(*self._lines.drawargs())


class NodeLayer(pg.GraphicsObject):
    """Nodes as fixed-size dots (pixel mode), with labels and KD-tree hit-testing. ``on_hover``
    gets the row under the cursor (-1 when none), ``on_click`` the clicked row, ``tip`` a row's
    tooltip text."""

    def __init__(self, on_hover: Callable[[int], None], on_click: Callable[[int], None],
                 tip: Callable[[int], str]) -> None:
        super().__init__()
        self.on_hover, self.on_click, self.tip = on_hover, on_click, tip
        self.size = 7
        self._pos = np.zeros((0, 2))
        self._colors = np.zeros((0, 3), np.uint8)
        self._labels: tuple[str, ...] = ()
        self._rank = np.zeros(0, np.int64)  # rows, most connected first
        self._src = np.zeros((0, 2))  # each node's dot in the atlas (physical pixels)
        self._atlas = QPixmap()
        self._dpr = 1.0
        self._frags = internals.PrimitiveArray(QPainter.PixmapFragment, 10)
        self._tree = None
        self._bounds = QRectF()
        self.hovered = -1
        self.drawn = 0  # dots drawn by the last paint
        self.labelled: list[int] = []  # rows labelled by the last paint
        self.pinned: list[int] = []  # rows labelled first whenever they are in view
        self.font = QFont()
        self.font.setPointSizeF(max(self.font.pointSizeF() - 1.5, 7.0))
        self._metrics = QFontMetricsF(self.font)
        self._elided: dict[int, tuple[str, float]] = {}  # row -> (label as drawn, its width in px)

    # -- data ------------------------------------------------------------------------------------
    def set_nodes(self, positions: np.ndarray, colors: np.ndarray, labels: tuple[str, ...],
                  importance: np.ndarray, size: int) -> None:
        self.prepareGeometryChange()
        self._pos = np.ascontiguousarray(positions, dtype=np.float64).reshape(-1, 2)
        self._labels, self._elided, self._tree, self.hovered, self.pinned = labels, {}, None, -1, []
        self._rank = np.argsort(-np.asarray(importance, dtype=np.float64), kind="stable")
        self.size = size
        if len(self._pos):
            lo, hi = self._pos.min(axis=0), self._pos.max(axis=0)
            self._bounds = QRectF(float(lo[0]), float(lo[1]), float(hi[0] - lo[0]), float(hi[1] - lo[1]))
        else:
            self._bounds = QRectF()
        self.set_colors(colors)

    def set_colors(self, colors: np.ndarray) -> None:
        self._colors = np.asarray(colors, dtype=np.uint8).reshape(-1, 3)
        self._build_atlas()
        self.update()

    @property
    def colors(self) -> np.ndarray:
        """(n, 3) RGB of each dot as drawn."""
        return self._colors

    @property
    def data(self) -> np.ndarray:
        """ScatterPlotItem's per-point records (x, y, brush), made on demand for callers that
        inspect what is drawn; the layer itself keeps no per-point Python objects."""
        out = np.empty(len(self._pos), dtype=[("x", float), ("y", float), ("brush", object)])
        if len(self._pos):
            out["x"], out["y"] = self._pos[:, 0], self._pos[:, 1]
            keys, inverse = np.unique(self._colors, axis=0, return_inverse=True)
            brushes = np.empty(len(keys), dtype=object)
            brushes[:] = [pg.mkBrush(*map(int, k)) for k in keys]
            out["brush"] = brushes[inverse.reshape(-1)]
        return out

    def _build_atlas(self) -> None:
        """One antialiased dot per distinct colour, laid out on a square grid."""
        c = self._colors.astype(np.int64)
        keys, inverse = np.unique((c[:, 0] << 16) | (c[:, 1] << 8) | c[:, 2], return_inverse=True)
        cols = max(1, math.ceil(math.sqrt(len(keys))))
        cell = math.ceil(self._dpr * (self.size + 1))
        pm = QPixmap(max(cols * cell, 1), max(math.ceil(len(keys) / cols) * cell, 1))
        pm.fill(Qt.GlobalColor.transparent)
        painter = QPainter(pm)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        painter.setPen(Qt.PenStyle.NoPen)
        d = self._dpr * self.size
        for k, key in enumerate(keys.tolist()):
            painter.setBrush(QColor((key >> 16) & 255, (key >> 8) & 255, key & 255))
            x, y = (k % cols) * cell, (k // cols) * cell
            painter.drawEllipse(QRectF(x + (cell - d) / 2, y + (cell - d) / 2, d, d))
        painter.end()
        self._atlas, self._cell = pm, cell
        inverse = inverse.reshape(-1)
        self._src = np.stack([(inverse % cols) * cell, (inverse // cols) * cell], axis=1).astype(np.float64)

    # -- geometry --------------------------------------------------------------------------------
    def _pixel(self) -> float:
        """Data units per screen pixel (the view's aspect is locked); 0 before the view is sized."""
        try:
            px = self.pixelVectors()[0]
            return 0.0 if px is None else float(px.length())
        except (OverflowError, TypeError):
            return 0.0

    def boundingRect(self) -> QRectF:
        pad = self._pixel() * (self.size + 2)
        return self._bounds.adjusted(-pad, -pad, pad, pad) if not self._bounds.isNull() else QRectF()

    def viewTransformChanged(self) -> None:
        self.prepareGeometryChange()  # the padding is in pixels: it changes with the zoom
        super().viewTransformChanged()

    def visible_rows(self, rect: Optional[QRectF]) -> np.ndarray:
        if rect is None:
            return np.arange(len(self._pos))
        pad = self._pixel() * self.size
        x, y = self._pos[:, 0], self._pos[:, 1]
        inside = ((x >= rect.left() - pad) & (x <= rect.right() + pad)
                  & (y >= rect.top() - pad) & (y <= rect.bottom() + pad))
        return np.flatnonzero(inside)

    def row_at(self, pos: QPointF, slack_px: float = 3.0) -> int:
        """The node nearest ``pos`` (data coordinates) within its dot plus ``slack_px``, or -1."""
        if not len(self._pos):
            return -1
        if self._tree is None:
            from scipy.spatial import cKDTree

            self._tree = cKDTree(self._pos)
        px = self._pixel()
        radius = (self.size / 2 + slack_px) * px if px > 0 else 0.0
        dist, row = self._tree.query((pos.x(), pos.y()), k=1, distance_upper_bound=radius)
        return int(row) if np.isfinite(dist) else -1

    # -- painting --------------------------------------------------------------------------------
    def paint(self, p: QPainter, _option, widget=None) -> None:
        if widget is not None and (dpr := widget.devicePixelRatioF()) != self._dpr:
            self._dpr = dpr  # a screen with another scale: re-render the dots at its resolution
            self._build_atlas()
        rows = self.visible_rows(view_rect(self))
        self.drawn = int(rows.size)
        if not rows.size:
            self.labelled = []
            return
        t = p.transform()
        every = rows.size == len(self._pos)  # zoomed out: no copies
        x, y = (self._pos[:, 0], self._pos[:, 1]) if every else (self._pos[rows, 0], self._pos[rows, 1])
        self._frags.resize(rows.size)
        f = self._frags.ndarray()
        f[:, 0] = x * t.m11() + y * t.m21() + t.dx()
        f[:, 1] = x * t.m12() + y * t.m22() + t.dy()
        f[:, 2:4] = self._src if every else self._src[rows]
        f[:, 4:6] = self._cell
        f[:, 6:10] = (1 / self._dpr, 1 / self._dpr, 0.0, 1.0)
        p.resetTransform()
        p.drawPixmapFragments(*self._frags.drawargs(), self._atlas)
        self._paint_labels(p, rows, f[:, :2])

    def _paint_labels(self, p: QPainter, rows: np.ndarray, xy: np.ndarray) -> None:
        """Labels right of their dots, most connected first; a label whose box would touch a
        grid cell an earlier one took is skipped (a coarse test, but no pairwise loop)."""
        where = np.full(len(self._pos), -1, np.int64)
        where[rows] = np.arange(rows.size)
        ranked = self._rank[where[self._rank] >= 0]
        pinned = [r for r in self.pinned if 0 <= r < len(where) and where[r] >= 0]
        if pinned:  # the selected document (and a neighbourhood's centre) are always named
            ranked = np.concatenate([pinned, ranked[~np.isin(ranked, pinned)]])
        want = labels_wanted(int(rows.size), LABELS)  # the most central only; the others on hover
        p.setFont(self.font)
        text_colour, box_colour = label_colours()  # read at each paint: the theme may have switched
        p.setPen(text_colour)
        self.labelled = []
        h = self._metrics.height()
        taken: set[tuple[int, int]] = set()
        ringed = set(pinned)
        for row in ranked[:want * 3].tolist():  # a few spares for the ones that would overlap
            if len(self.labelled) >= want:
                break
            cached = self._elided.get(row)
            if cached is None:
                text = self._metrics.elidedText(self._labels[row], Qt.TextElideMode.ElideRight,
                                                self._metrics.averageCharWidth() * LABEL_CHARS)
                cached = self._elided[row] = (text, self._metrics.horizontalAdvance(text))
            text, width = cached
            if not text:
                continue
            cx, cy = xy[where[row]]
            gap = self.size / 2 + (9 if row in ringed else 3)  # clear of a selection ring
            box = QRectF(cx + gap, cy - h / 2, width, h)
            cells = {(i, j) for i in range(int(box.left() // LABEL_CELL), int(box.right() // LABEL_CELL) + 1)
                     for j in range(int(box.top() // h), int(box.bottom() // h) + 1)}
            if cells & taken:
                continue
            taken |= cells
            self.labelled.append(row)
            p.fillRect(box.adjusted(-1, 0, 1, 0), box_colour)  # readable over dots and edges
            p.drawText(box, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, text)

    # -- mouse -----------------------------------------------------------------------------------
    def hoverEvent(self, ev) -> None:
        row = -1 if ev.isExit() else self.row_at(ev.pos())
        if row >= 0:
            ev.acceptClicks(Qt.MouseButton.LeftButton)
        if row != self.hovered:
            self.hovered = row
            vb = self.getViewBox()
            if vb is not None:
                vb.setToolTip(self.tip(row) if row >= 0 else "")
            self.on_hover(row)

    def mouseClickEvent(self, ev) -> None:
        row = self.row_at(ev.pos()) if ev.button() == Qt.MouseButton.LeftButton else -1
        if row < 0:
            ev.ignore()
            return
        ev.accept()
        self.on_click(row)

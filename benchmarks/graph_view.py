"""The relation graph view at share scale: first paint, threshold repaint, pan and zoom repaint
at 5,000 and 20,000 nodes, the previous implementation beside the current one in one run.

    python benchmarks/graph_view.py [--sizes 5000,20000] [--repeats 3] [--out FILE]

Graph: planted communities (100 nodes each), every node linked to 4 members of its community
and to one random node (~4.8 edges per node after duplicates), weights uniform; laid out by our
ForceAtlas2 (core/relations/layout.py, 100 iterations; its time is reported). Offscreen Qt, a
1200 × 800 view; every repaint is ``plot.grab()``, which paints the whole plot synchronously.
"first paint" = set_payload + the first grab, i.e. what the UI thread does once the worker has
laid the graph out ("payload_ms" is building the immutable payload from the arrays, in the worker).
Zoom = wheel clicks and pan = a mouse drag, sent as Qt events: "zoom_repaint"/"pan_repaint" are
frames of the motion, "still_repaint" the full frame the current view paints once the motion
stops (the legacy view has one kind of frame). "neighbourhood": a document's 1-, 2- and 3-hop
subgraph (core/relations/neighbourhood.py: extraction and its own ForceAtlas2, in the worker, as
``extract_layout_ms``) and the current view's ``set_neighbourhood`` + first grab (``first_paint``).

"legacy" is the previous GraphView drawing path, copied below (one ScatterPlotItem with a brush
per point, one connect='pairs' PlotCurveItem rebuilt per threshold, the strongest 12,000 edges);
"current" is spar_desktop/ui/relations/graph_view.py. They alternate, so both see the same machine load.
Times are wall clock and this thread's CPU time (``*_cpu``): on a shared, loaded machine the CPU
time is the steadier figure. Medians and p95 over the repaints of all repeats.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Callable

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

SEED = 42
SLIDER = (20, 50, 80, 0, 35, 60, 90, 10, 45, 70)
VIEW = (1200, 800)
TIMES = ("first_paint", "threshold_repaint", "zoom_repaint", "pan_repaint", "still_repaint")


def planted_graph(n: int, per_node: int = 5, community_size: int = 100, seed: int = SEED):
    """(edges (m, 2) i < j, weights (m,), community (n,)): each node picks per_node - 1 partners
    in its own community and one anywhere."""
    rng = np.random.default_rng(seed)
    k = max(2, n // community_size)
    comm = np.arange(n) % k
    a = np.repeat(np.arange(n), per_node)
    inside = np.tile(np.arange(per_node) < per_node - 1, n)
    partner = (rng.integers(0, n // k, a.size) * k + comm[a]) % n
    b = np.where(inside, partner, rng.integers(0, n, a.size))
    keep = a != b
    e = np.unique(np.sort(np.stack([a[keep], b[keep]], axis=1), axis=1), axis=0)
    return e, rng.random(len(e)) * 0.1 + 0.001, comm


# -- the previous drawing path (spar_desktop/ui/graph_view.py before issue 18; now ui/relations/), kept for the ratio
def legacy_view_class():
    import pyqtgraph as pg
    from PySide6.QtCore import QRectF, Qt
    from PySide6.QtWidgets import QLabel, QSlider, QVBoxLayout, QWidget

    from spar_desktop.core.relations.payload import GROUPINGS

    class LegacyGraphView(QWidget):
        def __init__(self, max_edges: int = 12_000) -> None:
            super().__init__()
            self.payload, self.max_edges, self.threshold = None, max_edges, -np.inf
            self._order, self._sorted, self._drawn = np.zeros(0, np.int64), np.zeros(0), 0
            self._brush_cache: dict = {}
            self.slider = QSlider(Qt.Orientation.Horizontal)
            self.slider.setRange(0, 100)
            self.status = QLabel()
            self.plot = pg.PlotWidget()
            self.plot.setBackground("w")
            self.plot.hideAxis("left")
            self.plot.hideAxis("bottom")
            self.plot.setAspectLocked(True)
            self.plot.setMenuEnabled(False)
            self.edges_item = pg.PlotCurveItem(connect="pairs", pen=pg.mkPen((120, 120, 130, 70), width=1),
                                               antialias=False)
            self.focus_item = pg.PlotCurveItem(connect="pairs", pen=pg.mkPen((230, 120, 20, 220), width=1.5),
                                               antialias=False)
            self.nodes_item = pg.ScatterPlotItem(size=7, pxMode=True, hoverable=True, antialias=False, pen=None,
                                                 tip=lambda x, y, data: "")
            self.marks_item = pg.ScatterPlotItem(size=13, pxMode=True, brush=None, pen=pg.mkPen((20, 20, 20), width=2))
            for item in (self.edges_item, self.focus_item, self.nodes_item, self.marks_item):
                self.plot.addItem(item)
            layout = QVBoxLayout(self)
            layout.addWidget(self.plot, 1)
            layout.addWidget(self.slider)
            layout.addWidget(self.status)
            self.slider.valueChanged.connect(self._on_slider)

        def set_payload(self, payload) -> None:
            self.payload = payload
            self._order = np.argsort(-payload.weights, kind="stable")
            self._sorted = payload.weights[self._order]
            n = payload.n_nodes
            self.nodes_item.setData(pos=payload.positions, data=np.arange(n), size=12 if n <= 300 else 9 if n <= 2000 else 7)
            self._apply_colors()
            self._on_slider(self.slider.value())
            self.marks_item.setData(pos=np.zeros((0, 2)))
            lo, hi = payload.positions.min(axis=0), payload.positions.max(axis=0)
            pad = max(float((hi - lo).max()) * 0.05, 1.0)
            self.plot.getViewBox().setRange(QRectF(lo[0] - pad, lo[1] - pad, hi[0] - lo[0] + 2 * pad,
                                                   hi[1] - lo[1] + 2 * pad), padding=0)

        def _apply_colors(self) -> None:
            brushes = []
            for c in map(tuple, self.payload.colors[GROUPINGS[0]].tolist()):
                b = self._brush_cache.get(c)
                if b is None:
                    b = self._brush_cache[c] = pg.mkBrush(*c)
                brushes.append(b)
            self.nodes_item.setBrush(brushes)

        def _on_slider(self, value: int) -> None:
            p = self.payload
            self.threshold = -np.inf if value <= 0 else float(np.quantile(p.weights, value / 100.0))
            passing = int(np.searchsorted(-self._sorted, -self.threshold, side="right"))
            rows = self._order[:min(passing, self.max_edges)]
            self._drawn = int(rows.size)
            pts = p.positions[p.edges[rows].reshape(-1)]
            self.edges_item.setData(x=pts[:, 0], y=pts[:, 1], connect="pairs")
            self.focus_item.setData(x=np.zeros(0), y=np.zeros(0))
            self.status.setText(f"{p.n_nodes} documents, {self._drawn} of {p.n_edges} relations shown")

        @property
        def drawn_edges(self) -> int:
            return self._drawn

    return LegacyGraphView


# -- measuring ------------------------------------------------------------------------------------
def timed(fn: Callable[[], object]) -> tuple[float, float]:
    """(wall ms, this thread's CPU ms)."""
    w, c = time.perf_counter(), time.thread_time()
    fn()
    return (time.perf_counter() - w) * 1000, (time.thread_time() - c) * 1000


def summary(samples: list[tuple[float, float]]) -> dict:
    wall = np.array([s[0] for s in samples])
    cpu = np.array([s[1] for s in samples])
    return {"median_ms": round(float(np.median(wall)), 1), "p95_ms": round(float(np.percentile(wall, 95)), 1),
            "median_ms_cpu": round(float(np.median(cpu)), 1), "p95_ms_cpu": round(float(np.percentile(cpu, 95)), 1),
            "samples": len(samples)}


def wheel(viewport, clicks: int) -> None:
    """One wheel turn at the middle of the plot, as a mouse sends it (pyqtgraph zooms ~26% a click)."""
    from PySide6.QtCore import QPoint, QPointF, Qt
    from PySide6.QtGui import QWheelEvent
    from PySide6.QtWidgets import QApplication

    at = QPointF(viewport.width() / 2, viewport.height() / 2)
    QApplication.sendEvent(viewport, QWheelEvent(at, viewport.mapToGlobal(at), QPoint(0, 0), QPoint(0, 120 * clicks),
                                                 Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier,
                                                 Qt.ScrollPhase.NoScrollPhase, False))


def measure_once(app, cls, payload, out: dict) -> None:
    """One view: first paint; the slider at 10 positions; 8 wheel clicks in and 8 out (each a
    frame of the motion; every second click deep in, also the still frame that follows); a drag
    of 8 mouse moves. Input goes through Qt events, as a user's does, to both implementations."""
    from PySide6.QtCore import QPoint, Qt
    from PySide6.QtTest import QTest

    view = cls()
    view.resize(*VIEW)
    view.show()
    app.processEvents()
    view.plot.grab()  # the empty plot's first paint (fonts, backing store) is not the graph's
    settle = getattr(view, "settle", lambda: None)  # legacy: every frame is already its full picture
    out["first_paint"].append(timed(lambda: (view.set_payload(payload), view.plot.grab())))
    for v in SLIDER:
        out["threshold_repaint"].append(timed(lambda: (view.slider.setValue(v), view.plot.grab())))
        out["edges_drawn_at_threshold"].append(view.drawn_edges)
    view.slider.setValue(0)
    vp = view.plot.viewport()
    for i, clicks in enumerate([1] * 8 + [-1] * 8):  # in, then out
        out["zoom_repaint"].append(timed(lambda: (wheel(vp, clicks), view.plot.grab())))
        out["edges_drawn_while_zooming"].append(view.drawn_edges)
        if i % 2 == 1 and i < 8:
            out["still_repaint"].append(timed(lambda: (settle(), view.plot.grab())))
            out["edges_drawn_when_still"].append(view.drawn_edges)
    settle()
    start = QPoint(vp.width() // 2, vp.height() // 2)
    QTest.mousePress(vp, Qt.MouseButton.LeftButton, pos=start)
    for i in range(1, 9):
        out["pan_repaint"].append(timed(lambda: (QTest.mouseMove(vp, start + QPoint(30 * i, 15 * i)), view.plot.grab())))
    QTest.mouseRelease(vp, Qt.MouseButton.LeftButton, pos=start + QPoint(240, 120))
    out["still_repaint"].append(timed(lambda: (settle(), view.plot.grab())))
    view.close()
    view.deleteLater()
    app.processEvents()


def hit_test_ms(app, payload, P: np.ndarray) -> dict:
    """Hover lookups: the current view's KD-tree vs the legacy ScatterPlotItem.pointsAt."""
    from PySide6.QtCore import QPointF

    from spar_desktop.ui.relations.graph_view import GraphView

    rng = np.random.default_rng(SEED)
    pts = [QPointF(float(x), float(y)) for x, y in P[rng.integers(0, len(P), 200)]]
    out = {}
    for name, cls in (("legacy", legacy_view_class()), ("current", GraphView)):
        view = cls()
        view.resize(*VIEW)
        view.show()
        view.set_payload(payload)
        view.plot.grab()
        look = (lambda q: view.nodes_item.pointsAt(q)) if name == "legacy" else view.nodes_item.row_at
        look(pts[0])  # the KD-tree is built on the first lookup
        _, cpu = timed(lambda: [look(q) for q in pts])
        out[f"{name}_per_lookup_us_cpu"] = round(cpu * 1000 / len(pts), 1)
        view.close()
    return out


def neighbourhood_ms(app, payload, hops_list=(1, 2, 3)) -> dict:
    """Neighbourhood mode around the most connected document: worker time and the view's paint."""
    from spar_desktop.core.relations.neighbourhood import neighbourhood
    from spar_desktop.ui.relations.graph_view import GraphView

    row = int(np.argmax(np.bincount(payload.edges.reshape(-1), minlength=payload.n_nodes)))
    view = GraphView()
    view.resize(*VIEW)
    view.show()
    view.set_payload(payload)
    view.plot.grab()
    out = {"center_degree": int(len(payload.neighbors(row)))}
    for hops in hops_list:
        holder: list = []
        extract = timed(lambda: holder.append(neighbourhood(payload, row, hops)))
        paint = timed(lambda: (view.set_neighbourhood(holder[0]), view.plot.grab()))
        sub = holder[0].payload
        out[f"{hops}_hops"] = {"nodes": sub.n_nodes, "edges": sub.n_edges, "extract_layout_ms": round(extract[0], 1),
                               "extract_layout_ms_cpu": round(extract[1], 1), "first_paint_ms": round(paint[0], 1),
                               "first_paint_ms_cpu": round(paint[1], 1)}
    view.close()
    return out


def layout(n: int, edges: np.ndarray, weights: np.ndarray, iterations: int, cache: str | None) -> tuple[np.ndarray, float]:
    """(positions, seconds); ``cache``: a folder keeping positions between runs (seconds then
    come from the run that computed them)."""
    from spar_desktop.core.relations.layout import forceatlas2

    path = Path(cache) / f"graph_view_layout_{n}_{iterations}_{SEED}.npz" if cache else None
    if path is not None and path.is_file():
        with np.load(path) as f:
            return f["P"], float(f["seconds"])
    t = time.perf_counter()
    P = forceatlas2(n, edges, weights, iterations=iterations, seed=SEED)
    seconds = time.perf_counter() - t
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(path, P=P, seconds=seconds)
    return P, seconds


def run_size(app, n: int, repeats: int, iterations: int, cache: str | None = None) -> dict:
    from spar_desktop.core.relations.payload import make_payload
    from spar_desktop.ui.relations.graph_view import GraphView

    edges, weights, comm = planted_graph(n)
    P, layout_s = layout(n, edges, weights, iterations, cache)
    holder: list = []
    payload_ms = timed(lambda: holder.append(make_payload(
        [str(i) for i in range(n)], [f"Document {i}: a title of a realistic length" for i in range(n)], P, edges,
        weights, file_ids=list(range(n)), paths=[f"/share/folder{i % 50}/document-{i}.pdf" for i in range(n)],
        groups={"community": comm, "cluster": np.arange(n) // 5, "tag": comm % 7}, method="edrmq")))
    payload = holder[0]
    impls = {"legacy": legacy_view_class(), "current": GraphView}
    raw = {name: {k: [] for k in TIMES + ("edges_drawn_at_threshold", "edges_drawn_while_zooming",
                                         "edges_drawn_when_still")} for name in impls}
    for _ in range(repeats):
        for name, cls in impls.items():
            measure_once(app, cls, payload, raw[name])
    report: dict = {"nodes": n, "edges": int(len(edges)), "layout_s": round(layout_s, 2),
                    "layout_iterations": iterations, "payload_ms": round(payload_ms[0], 1)}
    for name, r in raw.items():
        report[name] = {k: summary(r[k]) for k in TIMES}
        report[name]["edges_drawn_at_threshold"] = r["edges_drawn_at_threshold"][:len(SLIDER)]
        report[name]["edges_drawn_while_zooming"] = r["edges_drawn_while_zooming"][:16]
        report[name]["edges_drawn_when_still"] = r["edges_drawn_when_still"][:4]
    report["ratio_legacy_over_current_cpu_median"] = {
        k: round(report["legacy"][k]["median_ms_cpu"] / max(report["current"][k]["median_ms_cpu"], 1e-3), 2)
        for k in TIMES}
    report["hover_hit_test"] = hit_test_ms(app, payload, P)
    report["neighbourhood"] = neighbourhood_ms(app, payload)
    return report


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="5000,20000")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--iterations", type=int, default=100, help="ForceAtlas2 iterations")
    ap.add_argument("--out", help="also write the JSON here")
    ap.add_argument("--layout-cache", metavar="DIR", help="keep the layouts here between runs")
    args = ap.parse_args()
    from PySide6.QtWidgets import QApplication

    import scipy.spatial  # noqa: F401 - the app imports it in the graph's loading task (relations_ops.load_graph)

    app = QApplication.instance() or QApplication([])
    report = {"machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                          "load_average_at_start": [round(x, 2) for x in os.getloadavg()]},
              "view": list(VIEW), "targets_ms": {"first_paint": 1000, "repaint": 50}, "sizes": []}
    for n in (int(s) for s in args.sizes.split(",")):
        print(f"{time.strftime('%X')} {n} nodes…", file=sys.stderr, flush=True)
        report["sizes"].append(run_size(app, n, args.repeats, args.iterations, args.layout_cache))
    report["machine"]["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    text = json.dumps(report, indent=1)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The relation graph view (pyqtgraph, offscreen): a 5,000-node payload renders with labels on
the most connected documents, the threshold slider thins the drawn edges, zooming in draws what
is in view (the relations of the documents in view first) within the drawing budgets, a click
or a hover on a node finds it, switching the method only asks the owner to recompute, and a
neighbourhood is asked for, shown and left for the whole graph."""

from __future__ import annotations

import math

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, QRectF, Qt

from spar_desktop.core.relations.neighbourhood import neighbourhood
from spar_desktop.core.relations.payload import make_payload
from spar_desktop.ui.relations.graph_items import LABELS
from spar_desktop.ui.relations.graph_view import GraphView


def payload(n: int = 5000, m: int = 15000, seed: int = 0):
    rng = np.random.default_rng(seed)
    pos = rng.normal(size=(n, 2)) * 100
    a = rng.integers(0, n, m)
    b = (a + rng.integers(1, n, m)) % n
    edges = np.stack([np.minimum(a, b), np.maximum(a, b)], axis=1)
    return make_payload([str(i + 1) for i in range(n)], [f"Document {i + 1}" for i in range(n)], pos, edges,
                        rng.random(m), file_ids=list(range(1, n + 1)), paths=[f"/share/d{i + 1}.txt" for i in range(n)],
                        groups={"community": rng.integers(0, 12, n), "cluster": np.arange(n) // 5,
                                "tag": rng.integers(-1, 4, n)}, method="edrmq", scope="index")


def small():
    """Alpha-Beta-Gamma-Delta in a chain, Epsilon apart."""
    return make_payload(["7", "8", "9", "10", "11"], ["Alpha", "Beta", "Gamma", "Delta", "Epsilon"],
                        np.array([[0, 0], [10, 0], [0, 10], [10, 10], [30, 30]]),
                        np.array([[0, 1], [0, 2], [2, 3]]), np.array([0.5, 0.2, 0.1]), file_ids=[7, 8, 9, 10, 11],
                        paths=["/a.txt", "/b.txt", "/c.txt", "/d.txt", "/e.txt"], method="tfidf")


@pytest.fixture
def make_view(qtbot):
    def make(**kwargs) -> GraphView:
        w = GraphView(**kwargs)
        qtbot.addWidget(w)
        w.resize(900, 650)
        w.show()
        qtbot.waitExposed(w)
        return w
    return make


@pytest.fixture
def view(make_view):
    return make_view()


def widget_point(view: GraphView, x: float, y: float) -> QPoint:
    pt = view.plot.mapFromScene(view.plot.getViewBox().mapViewToScene(QPointF(x, y)))
    return QPoint(int(pt.x()), int(pt.y()))


def test_five_thousand_nodes_render_and_slider_thins_edges(make_view):
    view = make_view(max_edges=12000, max_edge_pixels=math.inf)
    p = payload()
    view.set_payload(p)
    image = view.plot.grab()  # a full paint of nodes and edges (its time: benchmarks/graph_view.py)
    assert not image.isNull()
    assert len(view.nodes_item.data) == 5000 and view.nodes_item.drawn == 5000
    strength = np.bincount(p.edges.ravel(), weights=np.repeat(p.weights, 2), minlength=p.n_nodes)
    assert len(view.nodes_item.labelled) == LABELS and int(strength.argmax()) in view.nodes_item.labelled
    assert view.slider.value() > 0  # a readable default threshold (test_graph_readable.py)
    view.slider.setValue(0)  # the user asks for all edges
    assert view.drawn_edges == 12000  # the drawing budget: the strongest 12,000 of 15,000
    assert "12,000 of the 15,000 in view" in view.status.text()
    drawn = view.edges_item.segments()
    strongest = p.edges[np.argsort(-p.weights, kind="stable")[:12000]]
    assert np.allclose(drawn, np.hstack([p.positions[strongest[:, 0]], p.positions[strongest[:, 1]]]))
    for colour in ("cluster", "tag", "community"):
        view.color_by.setCurrentIndex(view.color_by.findData(colour))
        assert (view.nodes_item.colors == p.colors[colour]).all()
    view.slider.setValue(50)
    half = view.drawn_edges
    view.slider.setValue(90)
    assert 0 < view.drawn_edges < half < 15000
    assert abs(half - 7500) < 200 and abs(view.drawn_edges - 1500) < 100
    assert (view.edges_item.segments() == view.edges_item.segments()[:view.drawn_edges]).all()
    view.plot.grab()
    view.slider.setValue(0)
    assert view.drawn_edges == 12000
    view.max_edges = 20000
    view.slider.setValue(1)
    assert 14700 < view.drawn_edges < 15000
    weakest = int(strength.argmin())
    view.select_row(weakest)
    view.plot.grab()
    assert view.nodes_item.labelled[0] == weakest  # the selected document is always named


def test_zoomed_in_only_what_is_in_view_is_drawn_within_the_budgets(make_view):
    p = payload()
    view = make_view(max_edges=500, max_edge_pixels=math.inf)
    view.set_payload(p)
    vb = view.plot.getViewBox()
    vb.setRange(QRectF(-40, -40, 80, 80), padding=0)
    view.plot.grab()
    r = vb.viewRect()
    x, y = p.positions[:, 0], p.positions[:, 1]
    inside = (x >= r.left()) & (x <= r.right()) & (y >= r.top()) & (y <= r.bottom())
    assert 0 < inside.sum() <= view.nodes_item.drawn < 5000  # off-screen dots are not drawn
    assert set(view.nodes_item.labelled) <= set(np.flatnonzero(inside).tolist())
    s = view.edges_item.segments()
    assert view.drawn_edges == 500 < view.edges_item.in_view < 15000
    meets = (np.maximum(s[:, 0], s[:, 2]) >= r.left()) & (np.minimum(s[:, 0], s[:, 2]) <= r.right())
    assert meets.all()
    # the relations of the documents in view come first: an edge only passing through never
    # precedes one with an end in view
    end_in = ((s[:, 0] >= r.left()) & (s[:, 0] <= r.right()) & (s[:, 1] >= r.top()) & (s[:, 1] <= r.bottom())) | (
        (s[:, 2] >= r.left()) & (s[:, 2] <= r.right()) & (s[:, 3] >= r.top()) & (s[:, 3] <= r.bottom()))
    assert end_in[0] and not (np.diff(end_in.astype(int)) > 0).any()
    assert "500 of the" in view.status.text() and "zoom in" in view.status.text()
    vb.setRange(QRectF(-5, -5, 10, 10), padding=0)  # a few documents: every one labelled unless they overlap
    view.plot.grab()
    assert 0 < len(view.nodes_item.labelled) <= view.nodes_item.drawn <= 60


def wheel(view: GraphView, clicks: int) -> None:
    from PySide6.QtGui import QWheelEvent
    from PySide6.QtWidgets import QApplication

    vp = view.plot.viewport()
    at = QPointF(vp.width() / 2, vp.height() / 2)
    QApplication.sendEvent(vp, QWheelEvent(at, vp.mapToGlobal(at), QPoint(0, 0), QPoint(0, 120 * clicks),
                                           Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier,
                                           Qt.ScrollPhase.NoScrollPhase, False))


def test_frames_while_zooming_and_dragging_are_lighter_then_the_full_picture_follows(make_view, qtbot):
    view = make_view(max_edges=8000, max_edge_pixels=math.inf)
    view.set_payload(payload())
    view.plot.grab()
    assert view.drawn_edges == 8000  # fitting the graph is not a motion
    before = view.plot.getViewBox().viewRange()
    for _ in range(3):  # turning the wheel: a quarter of the budget per frame
        wheel(view, -1)
        view.plot.grab()
        assert view.drawn_edges == 2000
    assert view.plot.getViewBox().viewRange() != before
    qtbot.waitUntil(lambda: view.drawn_edges == 8000, timeout=3000)  # still for a moment: everything again
    assert "8,000 of the" in view.status.text()
    vp = view.plot.viewport()
    start = QPoint(vp.width() // 2, vp.height() // 2)
    qtbot.mousePress(vp, Qt.MouseButton.LeftButton, pos=start)
    for dx in (10, 20, 40):  # a drag
        qtbot.mouseMove(vp, start + QPoint(dx, 0))
    view.plot.grab()
    assert view.drawn_edges == 2000
    qtbot.mouseRelease(vp, Qt.MouseButton.LeftButton, pos=start + QPoint(40, 0))
    qtbot.waitUntil(lambda: view.drawn_edges == 8000, timeout=3000)


def test_line_length_budget_bounds_what_a_repaint_draws(make_view):
    p = payload()
    view = make_view(max_edges=100_000, max_edge_pixels=60_000)
    view.set_payload(p)
    view.plot.grab()
    s = view.edges_item.segments()
    pw, ph = view.plot.getViewBox().viewPixelSize()
    lengths = np.hypot((s[:, 2] - s[:, 0]) / pw, (s[:, 3] - s[:, 1]) / ph)
    assert 0 < view.drawn_edges < 15000 and 0.99 * 60_000 < lengths.sum() <= 60_000  # the strongest that fit


def test_click_and_hover_find_the_node(view, qtbot):
    view.set_payload(small())
    qtbot.wait(50)
    with qtbot.waitSignal(view.fileActivated, timeout=3000) as sig:
        qtbot.mouseClick(view.plot.viewport(), Qt.MouseButton.LeftButton, pos=widget_point(view, 10, 0))
    assert sig.args == [8]
    assert view.open_button.isEnabled() and view.around_button.isEnabled() and view.selected == 1
    with qtbot.waitSignal(view.openRequested, timeout=1000) as opened:
        view.open_button.click()
    assert opened.args == [8]
    with qtbot.assertNotEmitted(view.fileActivated):  # a click on empty space selects nothing
        qtbot.mouseClick(view.plot.viewport(), Qt.MouseButton.LeftButton, pos=widget_point(view, 20, 20))
    with qtbot.waitSignal(view.nodeHovered, timeout=3000) as hovered:
        qtbot.mouseMove(view.plot.viewport(), widget_point(view, 0, 10))
    assert hovered.args == ["Gamma"] and view.plot.getViewBox().toolTip() == "Gamma\n/c.txt"
    assert view.hover_text(1) == "Beta\n/b.txt"
    view.expand_selected()
    assert view.focus == {0, 1}


def test_search_method_and_scope_only_emit(view, qtbot):
    view.set_payload(payload(200, 400))
    assert view.find("document 17")[:1] == [16]
    view.search.setText("Document 17")
    with qtbot.waitSignal(view.fileActivated, timeout=1000) as sig:
        view.search.returnPressed.emit()
    assert sig.args == [17]
    before = view.payload
    with qtbot.waitSignal(view.methodChanged, timeout=1000) as m:
        view.method.setCurrentIndex(view.method.findData("tfidf"))
    assert m.args == ["tfidf"] and view.payload is before  # the owner recomputes, not the view
    with qtbot.waitSignal(view.scopeChanged, timeout=1000) as s:
        view.scope.setCurrentIndex(view.scope.findData("index"))
    assert s.args == ["index"]
    view.set_payload(None)
    assert view.drawn_edges == 0 and view.payload is None


def test_neighbourhood_is_requested_shown_and_left(view, qtbot):
    whole = small()
    view.set_payload(whole)
    assert not view.around_bar.isVisible() and not view.around_button.isEnabled()
    assert not view.marks_item.isVisible() and not view.center_item.isVisible()  # nothing selected yet
    view.select_row(2)  # Gamma
    view.hops.setCurrentIndex(view.hops.findData(2))
    with qtbot.waitSignal(view.neighbourhoodRequested, timeout=1000) as asked:
        view.around_button.click()
    assert asked.args == [9, 2]  # Gamma's file id, 2 hops: the owner extracts it in a worker
    view.set_neighbourhood(neighbourhood(whole, 2, 2, iterations=20))
    p = view.payload
    assert view.whole is whole and p is not whole and view.around_bar.isVisible()
    assert set(p.labels) == {"Alpha", "Beta", "Gamma", "Delta"} and p.labels[view.selected] == "Gamma"
    assert "Gamma" in view.around_label.text() and "3 related documents within 2 hops" in view.around_label.text()
    assert len(view.center_item.data) == 1 and view.drawn_edges == 3
    assert view.center_item.isVisible() and view.marks_item.isVisible()  # the centre ringed, and selected
    view.plot.grab()
    assert view.nodes_item.labelled[0] == view.around.center
    with qtbot.waitSignal(view.neighbourhoodRequested, timeout=1000) as again:  # other hops: the same centre
        view.hops.setCurrentIndex(view.hops.findData(1))
    assert again.args == [9, 1]
    view.whole_button.click()
    assert view.payload is whole and view.around is None and not view.around_bar.isVisible()
    assert view.selected == 2 and len(view.center_item.data) == 0  # back, the centre still selected
    assert not view.center_item.isVisible() and view.marks_item.isVisible()  # empty overlays are not painted
    view.set_neighbourhood(neighbourhood(whole, 4, 1, layout=False))  # Epsilon has no relation
    assert view.payload.labels == ("Epsilon",) and "0 related documents within 1 hop" in view.around_label.text()
    view.set_payload(small())  # a new whole graph (a reload) leaves the neighbourhood
    assert view.around is None and not view.around_bar.isVisible()

"""The relation graph view (pyqtgraph, offscreen): a 5,000-node payload renders, the
threshold slider thins the drawn edges, a click on a node emits fileActivated, and switching the
method only asks the owner to recompute."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt

from spar_desktop.core.relations.payload import make_payload
from spar_desktop.ui.graph_view import GraphView


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


@pytest.fixture
def view(qtbot):
    w = GraphView()
    qtbot.addWidget(w)
    w.resize(900, 650)
    w.show()
    qtbot.waitExposed(w)
    return w


def test_five_thousand_nodes_render_and_slider_thins_edges(view):
    p = payload()
    view.set_payload(p)
    image = view.plot.grab()  # forces a full paint of nodes and edges (its time: benchmarks/relations.py view)
    assert not image.isNull()
    assert len(view.nodes_item.data) == 5000
    assert view.drawn_edges == 12000  # the drawing budget: the strongest 12,000 of 15,000
    assert "strongest 12000 of 15000" in view.status.text()
    for colour in ("cluster", "tag", "community"):  # recolouring reuses cached brushes
        view.color_by.setCurrentIndex(view.color_by.findData(colour))
    view.slider.setValue(50)
    half = view.drawn_edges
    view.slider.setValue(90)
    assert 0 < view.drawn_edges < half < 15000
    assert abs(half - 7500) < 200 and abs(view.drawn_edges - 1500) < 100
    view.plot.grab()
    view.slider.setValue(0)
    assert view.drawn_edges == 12000
    view.max_edges = 20000
    view.slider.setValue(1)
    assert 14700 < view.drawn_edges < 15000


def test_click_on_node_emits_file_activated_and_offers_open(view, qtbot):
    p = make_payload(["7", "8", "9"], ["Alpha", "Beta", "Gamma"], np.array([[0, 0], [10, 0], [0, 10]]),
                     np.array([[0, 1], [0, 2]]), np.array([0.5, 0.2]), file_ids=[7, 8, 9],
                     paths=["/a.txt", "/b.txt", "/c.txt"])
    view.set_payload(p)
    qtbot.wait(50)
    vb = view.plot.getViewBox()
    scene_pt = vb.mapViewToScene(pg_point(10, 0))
    widget_pt = view.plot.mapFromScene(scene_pt)
    with qtbot.waitSignal(view.fileActivated, timeout=3000) as sig:
        qtbot.mouseClick(view.plot.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(int(widget_pt.x()), int(widget_pt.y())))
    assert sig.args == [8]
    assert view.open_button.isEnabled() and view.selected == 1
    with qtbot.waitSignal(view.openRequested, timeout=1000) as opened:
        view.open_button.click()
    assert opened.args == [8]
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


def pg_point(x: float, y: float):
    from PySide6.QtCore import QPointF

    return QPointF(x, y)

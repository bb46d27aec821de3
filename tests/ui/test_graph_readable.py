"""A readable relation graph by default: the threshold keeps the strongest edges up to a median
of 5 per document, only the most central documents are named (the others on hover), and the
selected document's edges stand out while the rest fade. Looked at on 200- and 2,000-node graphs
(the sample's 67 are in the smoke run's screenshot)."""

from __future__ import annotations

import numpy as np
import pytest

from spar_desktop.core.relations.payload import make_payload
from spar_desktop.ui.relations.graph_view import EDGE_PEN, FADED_EDGE_PEN, GraphView
from spar_desktop.ui.relations.readable import labels_wanted, median_degree, readable_keep, slider_value


def dense_payload(n: int, degree: int, seed: int = 1):
    """n documents with about ``degree`` relations each (a hairball at "all edges")."""
    rng = np.random.default_rng(seed)
    m = n * degree // 2
    a = rng.integers(0, n, m)
    b = (a + rng.integers(1, n, m)) % n
    edges = np.unique(np.stack([np.minimum(a, b), np.maximum(a, b)], axis=1), axis=0)
    weights = rng.random(len(edges))
    return make_payload([str(i) for i in range(n)], [f"Document {i}" for i in range(n)], rng.normal(size=(n, 2)) * 50,
                        edges, weights, file_ids=list(range(1, n + 1)), paths=[f"/s/d{i}.txt" for i in range(n)],
                        method="edrmq", scope="index")


def test_keep_is_the_most_edges_with_a_median_of_five():
    p = dense_payload(300, 16)
    keep = readable_keep(p.edges, p.weights, p.n_nodes)
    strongest = p.edges[np.argsort(-p.weights, kind="stable")]
    assert median_degree(strongest[:keep], p.n_nodes) <= 5 < median_degree(strongest[:keep + 1], p.n_nodes)
    sparse = dense_payload(300, 3)
    assert readable_keep(sparse.edges, sparse.weights, sparse.n_nodes) == sparse.n_edges  # already readable
    assert slider_value(sparse.weights, sparse.n_edges) == 0
    assert labels_wanted(5, 12) == 5 and labels_wanted(67, 12) == 6 and labels_wanted(5000, 12) == 12


@pytest.mark.parametrize("n", [200, 2000])
def test_a_dense_graph_opens_readable(qtbot, n):
    view = GraphView()
    qtbot.addWidget(view)
    view.resize(900, 650)
    view.show()
    qtbot.waitExposed(view)
    p = dense_payload(n, 20)
    assert median_degree(p.edges, n) > 15
    view.set_payload(p)
    view.plot.grab()
    shown = p.edges[np.argsort(-p.weights, kind="stable")][:view.edges_item._limit]
    assert 0 < len(shown) < p.n_edges and median_degree(shown, n) <= 5
    assert view.slider.value() > 0 and view.slider_label.text().startswith("≥")
    # only the most central are named
    assert 0 < len(view.nodes_item.labelled) <= max(5, min(12, n // 10))
    strength = np.bincount(p.edges.ravel(), weights=np.repeat(p.weights, 2), minlength=n)
    assert int(strength.argmax()) in view.nodes_item.labelled
    assert view.hover_text(3).startswith("Document 3")  # the others: on hover
    # selecting a document highlights its edges and fades the rest
    row = int(np.argsort(strength)[n // 2])
    view.select_row(row)
    mine = int(((p.edges[:, 0] == row) | (p.edges[:, 1] == row)).sum())
    assert view.selected_item.isVisible() and len(view.selected_item.xData) == 2 * mine
    assert view.edges_item.pen.color().alpha() == FADED_EDGE_PEN[3] < EDGE_PEN[3]
    view.set_payload(p)  # a reload clears the selection: the edges are drawn as before
    assert not view.selected_item.isVisible() and view.edges_item.pen.color().alpha() == EDGE_PEN[3]

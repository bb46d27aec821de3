"""The relation graph: edges from R, Louvain communities, GEXF/GraphML read back, ForceAtlas2."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse

from spar_desktop.core.progress import CancelToken, Cancelled
from spar_desktop.core.relations.doc_vectors import DocSet
from spar_desktop.core.relations.graph import add_communities, build_graph, edge_list, export_graph, set_positions
from spar_desktop.core.relations.layout import (
    PAPER_TABLE1, ForceAtlas2Settings, _repulsion_exact, _repulsion_tree, forceatlas2, layout_graph, prepare_weights,
)
from spar_desktop.core.relations.payload import payload_from_graph


def two_cliques(n: int = 6):
    """Two n-cliques joined by one weak edge; R is asymmetric like an EDR-MQ matrix."""
    rows, cols, vals = [], [], []
    for base in (0, n):
        for i in range(n):
            for j in range(n):
                if i != j:
                    rows.append(base + i)
                    cols.append(base + j)
                    vals.append(0.5 + 0.01 * i)
    rows.append(0)
    cols.append(n)
    vals.append(0.05)
    R = sparse.coo_matrix((vals, (rows, cols)), shape=(2 * n, 2 * n)).tocsr()
    ids = tuple(str(100 + i) for i in range(2 * n))
    docs = DocSet(ids, tuple(f"Doc {i}" for i in range(2 * n)), tuple("" for _ in ids), None,
                  tuple({"path": f"/share/{'A' if i < n else 'B'}/d{i}.txt", "folder": "A" if i < n else "B",
                         "tags": ("A" if i < n else "B", "2020"), "file_id": 100 + i} for i in range(2 * n)))
    return R, docs


def test_edge_list_symmetrises_and_keeps_top_per_node():
    R = sparse.csr_matrix(np.array([[0, 0.3, 0.1], [0.1, 0, 0], [0.2, 0, 0.9]]))
    e, w = edge_list(R)
    assert e.tolist() == [[0, 1], [0, 2]] and w.tolist() == pytest.approx([0.4, 0.3])  # sum, no diagonal
    e, w = edge_list(R, combine="max")
    assert w.tolist() == pytest.approx([0.3, 0.2])
    e, w = edge_list(R, top_per_node=1)
    assert e.tolist() == [[0, 1], [0, 2]]  # node 2's best (0) and node 0's best (1) both survive


def test_communities_and_exports_read_back(tmp_path):
    import networkx as nx

    R, docs = two_cliques()
    e, w = edge_list(R)
    G = build_graph(docs, e, w, clusters=[0] * 6 + [1] * 6, method="edrmq")
    assert add_communities(G) == 2
    comm = nx.get_node_attributes(G, "community")
    assert len({comm[d] for d in docs.ids[:6]}) == 1 and comm[docs.ids[0]] != comm[docs.ids[6]]
    assert add_communities(G) == 2 and nx.get_node_attributes(G, "community") == comm  # seeded: stable
    set_positions(G, layout_graph(G, iterations=50))
    for fmt in ("gexf", "graphml"):
        out = export_graph(G, tmp_path / f"g.{fmt}")
        H = nx.read_gexf(out) if fmt == "gexf" else nx.read_graphml(out)
        assert H.number_of_nodes() == 12 and H.number_of_edges() == G.number_of_edges()
        node = H.nodes["100"]
        assert node["path"] == "/share/A/d0.txt" and node["title"] == "Doc 0"
        assert int(node["cluster"]) == 0 and int(node["community"]) == comm["100"] and int(node["file_id"]) == 100
        a, b = "100", "106"
        assert float(H.edges[a, b]["weight"]) == pytest.approx(0.05)
        assert float(H.edges["100", "101"]["weight"]) == pytest.approx(1.01)
    with pytest.raises(ValueError):
        export_graph(G, tmp_path / "g.dot")
    p = payload_from_graph(G, "edrmq", "index")
    assert p.n_nodes == 12 and p.file_ids[0] == 100 and p.positions.shape == (12, 2)
    assert not p.positions.flags.writeable and set(p.groups) == {"community", "cluster", "tag"}
    assert p.group_names["tag"] == ("A", "B") and p.colors["tag"].shape == (12, 3)
    assert set(p.neighbors(0).tolist()) == set(range(1, 7))


def test_forceatlas2_separates_communities_deterministically():
    R, docs = two_cliques(8)
    e, w = edge_list(R)
    # Table 1 inverts and normalises weights, so the strongest relations pull *least*; with
    # plain weights the two communities must come apart.
    plain = ForceAtlas2Settings(invert_edge_weights=False)
    P = forceatlas2(16, e, w, plain, iterations=150, seed=1)
    np.testing.assert_array_equal(P, forceatlas2(16, e, w, plain, iterations=150, seed=1))
    assert np.isfinite(P).all()
    ca, cb = P[:8].mean(axis=0), P[8:].mean(axis=0)
    spread = max(np.linalg.norm(P[:8] - ca, axis=1).mean(), np.linalg.norm(P[8:] - cb, axis=1).mean())
    assert np.linalg.norm(ca - cb) > 1.5 * spread
    paper = forceatlas2(16, e, w, iterations=150, seed=1)
    assert np.isfinite(paper).all() and not np.allclose(paper, P)
    rand = forceatlas2(16, e, w, plain, iterations=150, seed=1, start="random")
    np.testing.assert_array_equal(rand, forceatlas2(16, e, w, plain, iterations=150, seed=1, start="random"))
    assert not np.allclose(rand, P)


def test_spectral_start_keeps_planted_communities_apart():
    rng = np.random.default_rng(4)
    n, groups = 300, 6
    comm = np.arange(n) % groups
    edges = set()
    for i in range(n):
        for j in rng.choice(np.flatnonzero(comm == comm[i]), 4, replace=False):
            if i != j:
                edges.add((min(i, int(j)), max(i, int(j))))
    e = np.array(sorted(edges))
    P = forceatlas2(n, e, np.full(len(e), 0.05), iterations=60)  # Table 1 settings
    a, b = rng.integers(0, n, 5000), rng.integers(0, n, 5000)
    d = np.linalg.norm(P[a] - P[b], axis=1)
    same = comm[a] == comm[b]
    assert d[same].mean() < 0.6 * d[~same].mean()


def test_paper_settings_and_weight_preparation():
    s = PAPER_TABLE1
    assert (s.scaling_ratio, s.gravity, s.barnes_hut_theta, s.jitter_tolerance, s.edge_weight_influence) == \
        (2.0, 1.0, 1.2, 1.0, 1.0)
    assert s.linlog and s.dissuade_hubs and s.prevent_overlap and s.barnes_hut and not s.strong_gravity
    assert s.normalize_edge_weights and s.invert_edge_weights
    # invert (1/w) then min-max normalise, as Gephi does
    np.testing.assert_allclose(prepare_weights(np.array([1.0, 0.5, 0.25]), s), [0.0, 1 / 3, 1.0])
    np.testing.assert_allclose(prepare_weights(np.array([2.0, 2.0]), s), [1.0, 1.0])
    plain = ForceAtlas2Settings(invert_edge_weights=False, normalize_edge_weights=False)
    np.testing.assert_allclose(prepare_weights(np.array([1.0, 0.5]), plain), [1.0, 0.5])


def test_approximate_repulsion_matches_exact():
    rng = np.random.default_rng(0)
    n = 1500
    P = (rng.random((n, 2)) - 0.5) * 400
    P[: n // 3] *= 0.05  # a dense clump forces deeper cells
    mass = rng.integers(1, 10, n).astype(float)
    exact, approx = np.zeros((n, 2)), np.zeros((n, 2))
    _repulsion_exact(P, mass, np.ones(n), 2.0, False, exact)
    _repulsion_tree(P, mass, np.ones(n), 2.0, False, 1.2, approx)
    err = np.linalg.norm(exact - approx, axis=1) / np.linalg.norm(exact, axis=1)
    assert np.median(err) < 0.01 and np.quantile(err, 0.95) < 0.05


def test_layout_cancel_and_progress():
    token = CancelToken()
    seen = []

    def progress(p):
        seen.append(p.done)
        if p.done >= 6:
            token.cancel()

    with pytest.raises(Cancelled):
        forceatlas2(50, np.array([[0, 1]]), np.array([1.0]), iterations=100, progress=progress, cancel=token)
    assert seen[-1] < 100
    assert forceatlas2(0, np.zeros((0, 2)), np.zeros(0)).shape == (0, 2)

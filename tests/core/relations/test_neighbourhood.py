"""A document's k-hop neighbourhood: the files within k relations of it (the same set networkx's
ego_graph finds), with the edges among them, their colours and file ids, laid out on their own;
and `spar relations export --around FILE --hops K`."""

from __future__ import annotations

import json
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

import spar_desktop.cli as cli
from spar_desktop.core.relations.neighbourhood import hop_distances, neighbourhood, neighbourhood_graph
from spar_desktop.core.relations.payload import make_payload


def chain_payload():
    """0-1-2-3-4 in a chain, 1-5 a branch, 6-7 apart; weights tell the edges apart."""
    edges = np.array([[0, 1], [1, 2], [2, 3], [3, 4], [1, 5], [6, 7]])
    n = 8
    return make_payload([f"n{i}" for i in range(n)], [f"Doc {i}" for i in range(n)], np.arange(2 * n).reshape(n, 2),
                        edges, np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6]), file_ids=[100 + i for i in range(n)],
                        paths=[f"/d/{i}.txt" for i in range(n)], groups={"community": [0, 0, 1, 1, 2, 0, 3, 3]},
                        method="tfidf", scope="index")


def test_hop_distances_count_relations_from_the_start():
    p = chain_payload()
    assert hop_distances(p.n_nodes, p.edges, 2, 1).tolist() == [-1, 1, 0, 1, -1, -1, -1, -1]
    assert hop_distances(p.n_nodes, p.edges, 2, 2).tolist() == [2, 1, 0, 1, 2, 2, -1, -1]
    assert hop_distances(p.n_nodes, p.edges, 0, 3).tolist() == [0, 1, 2, 3, -1, 2, -1, -1]
    assert hop_distances(p.n_nodes, p.edges, 6, 3).tolist() == [-1] * 6 + [0, 1]
    with pytest.raises(IndexError):
        hop_distances(p.n_nodes, p.edges, 8, 1)


def test_neighbourhood_payload_keeps_the_subgraph_its_colours_and_ids():
    p = chain_payload()
    a = neighbourhood(p, 2, 2, layout=False)
    sub = a.payload
    assert sub.node_ids == ("n2", "n1", "n3", "n0", "n4", "n5")  # the centre first, then by distance
    assert a.center == 0 and a.hops == 2 and a.distance.tolist() == [0, 1, 1, 2, 2, 2]
    assert sub.file_ids == (102, 101, 103, 100, 104, 105) and sub.paths[0] == "/d/2.txt"
    pairs = {tuple(sorted((sub.node_ids[i], sub.node_ids[j]))): w for (i, j), w in zip(sub.edges.tolist(), sub.weights)}
    assert set(pairs) == {("n0", "n1"), ("n1", "n2"), ("n2", "n3"), ("n3", "n4"), ("n1", "n5")}
    assert pairs[("n1", "n5")] == pytest.approx(0.5) and (sub.edges[:, 0] < sub.edges[:, 1]).all()
    rows = [int(x[1:]) for x in sub.node_ids]
    assert (sub.colors["community"] == p.colors["community"][rows]).all()  # a node keeps its colour
    assert (sub.positions == p.positions[rows]).all()  # layout=False: the whole graph's places
    assert neighbourhood(p, 6, 3, layout=False).payload.node_ids == ("n6", "n7")
    for bad in (0, 4):
        with pytest.raises(ValueError):
            neighbourhood(p, 2, bad)


def test_neighbourhood_is_laid_out_on_its_own_and_matches_networkx():
    rng = np.random.default_rng(3)
    n = 400
    a, b = rng.integers(0, n, 900), rng.integers(0, n, 900)
    keep = a != b
    edges = np.unique(np.sort(np.stack([a[keep], b[keep]], axis=1), axis=1), axis=0)
    p = make_payload([str(i) for i in range(n)], [f"d{i}" for i in range(n)], rng.normal(size=(n, 2)) * 100, edges,
                     rng.random(len(edges)))
    G = nx.Graph()
    G.add_nodes_from(str(i) for i in range(n))
    G.add_edges_from((str(i), str(j)) for i, j in edges.tolist())
    for hops in (1, 2, 3):
        a = neighbourhood(p, 17, hops, iterations=30)
        ego = nx.ego_graph(G, "17", radius=hops)
        assert set(a.payload.node_ids) == set(ego.nodes) and a.payload.n_edges == ego.number_of_edges()
        assert np.isfinite(a.payload.positions).all()
        assert not np.allclose(a.payload.positions, p.positions[[int(x) for x in a.payload.node_ids]])
        H = neighbourhood_graph(G, "17", hops)
        assert set(H.nodes) == set(ego.nodes) and H.graph["around"] == "17" and H.graph["hops"] == hops


# -- the CLI --------------------------------------------------------------------------------------
def spar(capsys, data: Path, *args: str) -> tuple[int, str, str]:
    code = cli.main(["--data-dir", str(data), *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_export_around_a_file_writes_its_neighbourhood(tmp_path: Path, capsys):
    root, data = tmp_path / "share", tmp_path / "data"
    topics = {"Space": "Orbit and launch of the rocket {i} to the space station: fuel and thrust of stage {i}.",
              "Cooking": "Recipe {i}: bake the bread dough with flour, yeast and butter in a hot oven."}
    for folder, text in topics.items():
        (root / folder).mkdir(parents=True)
        for i in range(1, 5):
            (root / folder / f"{folder.lower()}{i}.txt").write_text(text.format(i=i), encoding="utf-8")
    space1 = root / "Space" / "space1.txt"
    assert spar(capsys, data, "index", str(root), "--quiet")[0] == 0
    assert spar(capsys, data, "relations", "build", "--method", "tfidf", "--yes")[0] == 0
    whole, around = tmp_path / "whole.graphml", tmp_path / "around.graphml"
    assert spar(capsys, data, "relations", "export", str(whole), "--no-layout")[0] == 0
    code, out, _ = spar(capsys, data, "relations", "export", str(around), "--around", str(space1), "--hops", "1",
                        "--iterations", "20")
    assert code == 0 and "within 1 hop of" in out
    G, H = nx.read_graphml(whole), nx.read_graphml(around)
    center = next(v for v, d in G.nodes(data=True) if d["path"] == str(space1))
    assert set(H.nodes) == set(nx.ego_graph(G, center, radius=1).nodes) and len(H) < len(G)
    assert {Path(d["path"]).parent.name for _, d in H.nodes(data=True)} == {"Space"}
    assert all("x" in d for _, d in H.nodes(data=True)) and H.graph["around"] == center and H.graph["hops"] == 1
    code, _, err = spar(capsys, data, "relations", "export", str(around), "--around", str(root / "nope.txt"))
    assert code == 1 and "not a file in the index" in err
    with pytest.raises(SystemExit) as bad:
        spar(capsys, data, "relations", "export", str(around), "--around", str(space1), "--hops", "4")
    assert bad.value.code == 2 and "--hops" in capsys.readouterr().err
    json.dumps(dict(H.graph))  # plain values only

"""GEXF and GraphML exports read back in networkx as the graph that was written: the same nodes,
edges, attribute names, types and values (titles and paths with awkward characters included),
for a graph built here and for `export_relations` on an indexed folder."""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import pytest
from scipy import sparse

from spar_desktop.core.relations.doc_vectors import DocSet
from spar_desktop.core.relations.graph import add_communities, build_graph, edge_list, export_graph, palette, set_positions
from spar_desktop.core.relations.layout import layout_graph

TITLES = ["Plain title", "Quarterly report: Q3 <draft> & \"final\"", "Tab\tand\nnewline, CR\r\n", "  padded  ",
          "Ünïcödé — 日本語 🚀", "", "ctl\x0cform\x00feed", "x"]
PATHS = ["/share/a.pdf", "/share/b & c.docx", "/share/d'e.txt", "/share/ünï/f.md", "/share/g\udcff.txt",
         "/share/h.pdf", "/share/i.pdf", "/share/j.pdf"]


def awkward_graph():
    """8 documents, two related groups and an isolated one, with titles and paths that strain XML."""
    n = len(TITLES)
    R = sparse.lil_matrix((n, n))
    for a, b, w in ((0, 1, 0.9), (1, 2, 0.25), (0, 2, 1e-9), (3, 4, 12.5), (4, 5, 0.3333333333333333), (5, 6, 2.0)):
        R[a, b] = w
    ids = tuple(str(10 + i) for i in range(n))
    docs = DocSet(ids, tuple(TITLES), tuple("" for _ in ids), None,
                  tuple({"path": PATHS[i], "folder": "ünï" if i == 3 else "share",
                         "tags": ("Finance; 2023", "Q3") if i == 1 else (), "file_id": 10 + i} for i in range(n)))
    e, w = edge_list(R.tocsr())
    G = build_graph(docs, e, w, clusters=[0, 0, 0, 1, 1, 1, 1, -1], method="edrmq")
    add_communities(G)
    set_positions(G, layout_graph(G, iterations=20))
    return G


def xml_expected(value):
    """What XML 1.0 can carry of ``value``: control characters and lone surrogates become U+FFFD."""
    if not isinstance(value, str):
        return value
    return "".join("\ufffd" if (ord(c) < 32 and c not in "\t\n\r") or 0xD800 <= ord(c) <= 0xDFFF else c for c in value)


def read_back(path: Path, fmt: str):
    return nx.read_gexf(path) if fmt == "gexf" else nx.read_graphml(path)


def assert_same_graph(G, H, fmt: str) -> None:
    """H (read back) equals G (written) node for node, edge for edge, attribute for attribute."""
    expected_nodes = {xml_expected(n): {k: xml_expected(v) for k, v in d.items()} for n, d in G.nodes(data=True)}
    assert set(H.nodes) == set(expected_nodes)
    for node, data in H.nodes(data=True):
        data = dict(data)
        want = expected_nodes[node]
        if fmt == "gexf":  # Gephi's presentation: the layout position and the community colour
            viz = data.pop("viz")
            assert (viz["position"]["x"], viz["position"]["y"]) == (want["x"], want["y"])
            assert (viz["color"]["r"], viz["color"]["g"], viz["color"]["b"]) == palette(max(want["community"], 0))
        assert data == want, node
        assert {k: type(v) for k, v in data.items()} == {k: type(v) for k, v in want.items()}, node
    assert {frozenset(e) for e in H.edges} == {frozenset(e) for e in G.edges}
    for a, b, data in H.edges(data=True):
        data = dict(data)
        if fmt == "gexf":
            data.pop("id")  # GEXF's own edge id, not an attribute of ours
        assert data == G.edges[a, b] and type(data["weight"]) is float
    if fmt == "graphml":
        assert {k: H.graph[k] for k in G.graph} == G.graph
    else:  # GEXF's only graph attribute is its name
        assert H.graph["name"] == G.graph["name"] == f"SPAR relations ({G.graph['method']})"


@pytest.mark.parametrize("fmt", ["gexf", "graphml"])
def test_export_reads_back_exactly(tmp_path: Path, fmt: str):
    G = awkward_graph()
    assert G.nodes["17"]["community"] >= 0 and G.degree("17") == 0  # the isolated document is kept
    out = export_graph(G, tmp_path / f"relations.{fmt}")
    H = read_back(out, fmt)
    assert_same_graph(G, H, fmt)
    assert H.nodes["11"]["title"] == "Quarterly report: Q3 <draft> & \"final\"" and H.nodes["11"]["tags"] == "Finance; 2023; Q3"
    assert H.nodes["12"]["title"] == "Tab\tand\nnewline, CR\r\n" and H.nodes["15"]["title"] == ""
    assert H.nodes["16"]["title"] == "ctl\ufffdform\ufffdfeed" and H.nodes["14"]["path"] == "/share/g\ufffd.txt"
    assert H.edges["10", "12"]["weight"] == 1e-9 and H.edges["14", "15"]["weight"] == 0.3333333333333333
    assert isinstance(H.nodes["10"]["file_id"], int) and isinstance(H.nodes["10"]["x"], float)


def test_export_leaves_out_values_neither_format_has(tmp_path: Path):
    G = awkward_graph()
    G.nodes["10"]["note"] = None  # no null in GEXF or GraphML: the value is left out, not "None"
    G.graph["layout"] = {"iterations": 20}  # not a scalar
    for fmt in ("gexf", "graphml"):
        H = read_back(export_graph(G, tmp_path / f"g.{fmt}"), fmt)
        assert "note" not in H.nodes["10"] and "layout" not in H.graph
    with pytest.raises(ValueError, match="gexf, graphml"):
        export_graph(G, tmp_path / "g.dot")


def test_service_export_reads_back_as_the_app_graph(tmp_path: Path):
    """`spar relations export` on an indexed folder: the file read back is the graph the app lays out."""
    from spar_desktop.core.config import Settings
    from spar_desktop.core.library.database import Library
    from spar_desktop.core.library.scanner import Scanner
    from spar_desktop.core.relations.service import build_relations, export_relations, relations_graph

    root = tmp_path / "share"
    texts = {"Space & rockets": "Orbit and launch of the rocket {i} to the space station with fuel and thrust.",
             "Cooking – ünï": "Recipe {i}: bake the bread dough with flour, yeast and butter in a hot oven."}
    for folder, text in texts.items():
        (root / folder).mkdir(parents=True)
        for i in range(1, 4):
            (root / folder / f"note \"{i}\".txt").write_text(text.format(i=i), encoding="utf-8")
    lib = Library.open(Settings(data_dir=tmp_path / "data"))
    try:
        Scanner(lib).scan([str(root)])
        build_relations(lib, method="tfidf")
        G = relations_graph(lib, method="tfidf", iterations=20)
        assert G.number_of_nodes() == 6 and G.number_of_edges() > 0
        for fmt in ("gexf", "graphml"):
            out = export_relations(lib, tmp_path / f"rel.{fmt}", method="tfidf", iterations=20)
            assert_same_graph(G, read_back(out, fmt), fmt)
        assert {d["folder"] for _, d in G.nodes(data=True)} == set(texts)
    finally:
        lib.engine.dispose()


@pytest.mark.parametrize("fmt", ["gexf", "graphml"])
def test_cli_export_reads_back_as_the_app_graph(tmp_path: Path, capsys, fmt: str):
    """`spar relations export OUT` (and `--around FILE --hops K`) as a user runs it: the file read
    back is the graph the app builds from the same stored relations, node, edge and attribute alike."""
    import spar_desktop.cli as cli
    from spar_desktop.core.config import Settings
    from spar_desktop.core.library.database import Library
    from spar_desktop.core.relations.neighbourhood import stored_neighbourhood_graph
    from spar_desktop.core.relations.service import relations_graph

    root, data = tmp_path / "share", tmp_path / "data"
    texts = {"Space": "Orbit and launch of the rocket {i} to the space station with fuel and thrust.",
             "Cooking – ünï": "Recipe {i}: bake the bread dough with flour, yeast and butter in a hot oven.",
             "Cars & vans": "The car engine {i} needs oil, new brakes and tyres; the mechanic checks the clutch."}
    for folder, text in texts.items():
        (root / folder).mkdir(parents=True)
        for i in range(1, 4):
            (root / folder / f"note <{i}>.txt").write_text(text.format(i=i), encoding="utf-8")

    def spar(*args: str) -> str:
        code = cli.main(["--data-dir", str(data), *args])
        out, err = capsys.readouterr()
        assert code == 0, err
        return out

    spar("index", str(root), "--quiet")
    spar("relations", "build", "--method", "tfidf", "--yes")
    whole, around = tmp_path / f"whole.{fmt}", tmp_path / f"around.{fmt}"
    spar("relations", "export", str(whole), "--iterations", "20")
    center = root / "Space" / "note <2>.txt"
    assert "within 2 hops of" in spar("relations", "export", str(around), "--around", str(center), "--hops", "2",
                                      "--iterations", "20")
    lib = Library.open(Settings(data_dir=data))
    try:
        G = relations_graph(lib, method="tfidf", iterations=20)
        N = stored_neighbourhood_graph(lib, str(center), 2, method="tfidf", iterations=20)
    finally:
        lib.engine.dispose()
    assert G.number_of_nodes() == 9 and G.number_of_edges() > 0 and all("x" in d for _, d in G.nodes(data=True))
    assert_same_graph(G, read_back(whole, fmt), fmt)
    assert 1 < N.number_of_nodes() < 9 and N.graph["hops"] == 2
    assert_same_graph(N, read_back(around, fmt), fmt)
    assert {d["folder"] for _, d in G.nodes(data=True)} == set(texts)

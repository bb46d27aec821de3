"""`spar relations` end to end on a small folder: build (EDR-MQ, TF-IDF, co-occurrence), top,
export, incremental update from the query log, and clear errors for bad input."""

from __future__ import annotations

import json
from pathlib import Path

import networkx as nx
import numpy as np
import pytest

import spar_desktop.cli as cli

TOPICS = {
    "Space": "Orbit and launch of the rocket {i} to the space station. The astronauts planned the mission, the fuel "
             "and the thrust of the {i}th stage.",
    "Cooking": "Recipe {i}: bake the bread dough with flour, yeast and butter in a hot oven until the crust is golden.",
    "Cars": "The car engine {i} needs oil, new brakes and tyres; the mechanic checks the gearbox and the clutch.",
}


class HashEncoder:
    """A deterministic bag-of-words encoder (hashed words → 256 dims): the same interface as the
    MiniLM encoder without loading it, so this test checks the command's plumbing in seconds.
    The real model is exercised by benchmarks/relations.py on newsgroups20 and SciFact."""

    model_id = "test-hash-bow@1"
    dim = 256
    texts_encoded = 0

    def encode(self, texts, batch_size=64, progress=None, cancel=None):
        import re
        import zlib

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in re.findall(r"[a-z]{3,}", t.lower()):
                out[i, zlib.crc32(w.encode()) % self.dim] += 1.0
        self.texts_encoded += len(texts)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms > 0, norms, 1.0)

    def encode_query(self, text):
        return self.encode([text])[0]


@pytest.fixture(autouse=True)
def relations_command(monkeypatch):
    """Registers the command for these tests whether or not cli.COMMAND_MODULES lists it yet,
    and swaps the sentence encoder for HashEncoder."""
    name = "spar_desktop.commands.relations_cmd"
    if name not in cli.COMMAND_MODULES:
        monkeypatch.setattr(cli, "COMMAND_MODULES", [*cli.COMMAND_MODULES, name])
    import spar_desktop.core.embedding.encoder as enc

    fake = HashEncoder()
    monkeypatch.setattr(enc, "get_encoder", lambda device="auto", **_: fake)


def spar(capsys, data: Path, *args: str) -> tuple[int, str, str]:
    code = cli.main(["--data-dir", str(data), *args])
    out, err = capsys.readouterr()
    return code, out, err


def share(tmp_path: Path) -> Path:
    root = tmp_path / "share"
    for folder, text in TOPICS.items():
        (root / folder).mkdir(parents=True)
        for i in range(1, 5):
            (root / folder / f"{folder.lower()}{i}.txt").write_text(text.format(i=i), encoding="utf-8")
    return root


def add_log_entry(data: Path, query: str, result_paths: list[Path], session: str) -> None:
    from sqlalchemy import select

    from spar_desktop.core.config import Settings
    from spar_desktop.core.library.database import Library
    from spar_desktop.core.library.models import File
    from spar_desktop.core.workspaces.models import QueryLogEntry

    lib = Library.open(Settings(data_dir=data))
    with lib.session() as s:
        ids = [s.scalar(select(File.id).where(File.path == str(p))) for p in result_paths]
        s.add(QueryLogEntry(workspace_id=None, session_key=session, query=query, source="search",
                            results=[[i, 1.0] for i in ids], opened=ids[:1]))
    lib.engine.dispose()


def test_relations_commands(tmp_path, capsys):
    root, data = share(tmp_path), tmp_path / "data"
    space1 = root / "Space" / "space1.txt"

    code, _, err = spar(capsys, data, "relations", "build", "--yes")
    assert code == 1 and "no documents to relate" in err and "spar index" in err  # empty index
    code, _, err = spar(capsys, data, "relations", "top", str(space1))
    assert code == 1 and "not a file in the index" in err

    assert spar(capsys, data, "index", str(root), "--quiet")[0] == 0
    code, _, err = spar(capsys, data, "relations", "top", str(space1))
    assert code == 1 and "relations build" in err  # nothing built yet
    add_log_entry(data, "rocket fuel for the launch", [root / "Space" / "space2.txt", root / "Space" / "space3.txt"],
                  "thread-1")

    code, out, _ = spar(capsys, data, "relations", "build", "--json", "--yes")
    report = json.loads(out)
    assert code == 0 and report["method"] == "edrmq" and report["documents"] == 12
    # file-name titles ('space1') are single words, too vague to be queries: sentences carry it
    assert report["queries"]["log"] == 1 and "title" not in report["queries"] and report["pairs"] > 0
    assert report["queries"]["sentence"] >= 12
    assert not report["incremental"]
    code, out, _ = spar(capsys, data, "relations", "top", str(space1), "--k", "3", "--json")
    top = json.loads(out)
    assert code == 0 and top["method"] == "edrmq" and len(top["related"]) == 3
    assert all("/Space/" in r["path"] for r in top["related"])  # its own topic first
    assert top["related"][0]["weight"] >= top["related"][-1]["weight"] > 0

    # a new logged query is added incrementally and gives what a full rebuild gives
    add_log_entry(data, "bread and butter in the oven", [root / "Cooking" / "cooking1.txt"], "thread-2")
    code, out, _ = spar(capsys, data, "relations", "build", "--json", "--yes")
    inc = json.loads(out)
    assert code == 0 and inc["incremental"] and inc["queries"]["log"] == 2
    from spar_desktop.core.relations import persist

    R_inc = persist.load(Path(inc["path"])).matrix().toarray()
    code, out, _ = spar(capsys, data, "relations", "build", "--full", "--json", "--yes")
    full = json.loads(out)
    R_full = persist.load(Path(full["path"])).matrix().toarray()
    assert not full["incremental"] and full["queries"] == inc["queries"]
    np.testing.assert_allclose(R_inc, R_full, atol=1e-6)

    queries = tmp_path / "q.txt"
    queries.write_text("engine oil\n\nclutch and gearbox\n", encoding="utf-8")
    code, out, _ = spar(capsys, data, "relations", "build", "--method", "tfidf", "--yes")
    assert code == 0 and "tfidf relations for index: 12 documents" in out
    code, out, _ = spar(capsys, data, "relations", "build", "--method", "cooc", "--json", "--yes")
    cooc = json.loads(out)
    # ceil(12 / 5) clusters; the second logged session has a single file, so no co-occurrence
    assert code == 0 and cooc["clusters"] == 3 and cooc["queries"]["sessions"] == 1
    code, out, _ = spar(capsys, data, "relations", "top", str(space1), "--method", "tfidf", "--k", "3")
    assert code == 0 and out.count("/Space/") == 3

    gexf, graphml = tmp_path / "rel.gexf", tmp_path / "rel.graphml"
    assert spar(capsys, data, "relations", "export", str(gexf), "--method", "edrmq", "--iterations", "30")[0] == 0
    assert spar(capsys, data, "relations", "export", "--format", "graphml", str(graphml), "--no-layout")[0] == 0
    G, H = nx.read_gexf(gexf), nx.read_graphml(graphml)
    assert G.number_of_nodes() == H.number_of_nodes() == 12 and G.number_of_edges() > 0
    node = next(iter(G.nodes(data=True)))[1]
    assert {"path", "title", "cluster", "community"} <= set(node)
    assert int(node["cluster"]) >= 0  # clusters come from the cooc build of the same scope
    assert all(float(d["weight"]) > 0 for _, _, d in H.edges(data=True))

    # a workspace scope relates only the workspace's files and is stored separately
    assert spar(capsys, data, "ws", "create", "space", "--tag", "Space", "--build", "--json")[0] == 0
    code, out, _ = spar(capsys, data, "relations", "build", "--workspace", "space", "--json")
    ws = json.loads(out)
    assert code == 0 and ws["documents"] == 4 and ws["scope"].startswith("workspace-")
    code, out, _ = spar(capsys, data, "relations", "top", str(space1), "--workspace", "space", "--json")
    assert code == 0 and {Path(r["path"]).parent.name for r in json.loads(out)["related"]} == {"Space"}

    code, out, _ = spar(capsys, data, "relations", "build", "--queries", str(queries), "--no-synthetic", "--json", "--yes")
    assert code == 0 and json.loads(out)["queries"].get("file") == 2
    # bad input
    code, _, err = spar(capsys, data, "relations", "top", str(root / "nope.txt"))
    assert code == 1 and "not a file in the index" in err
    code, _, err = spar(capsys, data, "relations", "build", "--queries", str(tmp_path / "missing.txt"), "--yes")
    assert code == 1 and "cannot read queries file" in err
    code, _, err = spar(capsys, data, "relations", "build", "--workspace", "nope")
    assert code == 1 and "no workspace named 'nope'" in err
    code, _, err = spar(capsys, data, "relations", "export", str(tmp_path / "x.dot"))
    assert code == 1 and "gexf" in err
    code, _, err = spar(capsys, data, "relations", "top", str(space1), "--k", "0")
    assert code == 1 and "--k" in err


def test_graph_payload_builds_missing_relations(tmp_path, capsys):
    """What the UI owner calls in a worker: builds the method for the scope when absent, then
    lays out and returns the immutable payload the graph view draws."""
    from spar_desktop.core.config import Settings
    from spar_desktop.core.library.database import Library
    from spar_desktop.core.relations.service import graph_payload

    root, data = share(tmp_path), tmp_path / "data"
    assert spar(capsys, data, "index", str(root), "--quiet")[0] == 0
    lib = Library.open(Settings(data_dir=data))
    seen = []
    payload = graph_payload(lib, None, "tfidf", iterations=20, progress=lambda p: seen.append(p.message))
    assert payload.n_nodes == 12 and payload.method == "tfidf" and payload.scope == "whole index"
    assert sorted(payload.file_ids) == sorted(set(payload.file_ids)) and min(payload.file_ids) > 0
    assert payload.group_names["tag"] and any("ForceAtlas2" in m for m in seen)
    assert not payload.positions.flags.writeable
    lib.engine.dispose()

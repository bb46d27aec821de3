"""`spar relations build` follows SPAR's premise: without --workspace it is a whole-index build,
which prints its estimate and goes ahead only with --yes or a "y" on a terminal; a script without
--yes gets exit code 1 and both ways out. --workspace W builds without asking. --json stays pure
JSON (the estimate is on stderr). `relations top` / `export` read stored relations and never
start a build. The progress line says the time left (the message carries it) without repeating
its count.

Words-only EDR-MQ (--alpha 0) and TF-IDF need no embedding model; the workspace is built with a
hashed bag-of-words encoder in place of MiniLM, so the file runs in seconds."""

from __future__ import annotations

import io
import json
import re
import zlib
from pathlib import Path

import numpy as np
import pytest

from spar_desktop.cli import main

TEXTS = {
    "Space": "Orbit and launch of the rocket {i} to the space station. The astronauts planned the mission and the "
             "fuel of stage {i}.",
    "Cooking": "Recipe {i}: bake the bread dough with flour, yeast and butter in a hot oven until the crust is "
               "golden brown.",
}


class HashEncoder:
    model_id = "test-hash-bow@1"
    dim = 64

    def encode(self, texts, batch_size=64, progress=None, cancel=None):
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in re.findall(r"[a-z]{3,}", t.lower()):
                out[i, zlib.crc32(w.encode()) % self.dim] += 1.0
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)

    def encode_query(self, text):
        return self.encode([text])[0]


class Terminal(io.StringIO):
    """stdin of an interactive session: a TTY holding what the user types."""

    def isatty(self) -> bool:
        return True


class Pipe(io.StringIO):
    def isatty(self) -> bool:
        return False


@pytest.fixture
def indexed(tmp_path, capsys, monkeypatch):
    import spar_desktop.core.embedding.encoder as enc

    fake = HashEncoder()
    monkeypatch.setattr(enc, "get_encoder", lambda device="auto", **_: fake)
    monkeypatch.setattr("sys.stdin", Pipe(""))  # a script: no terminal to ask on
    root, data = tmp_path / "share", tmp_path / "data"
    for folder, text in TEXTS.items():
        (root / folder).mkdir(parents=True)
        for i in range(1, 4):
            (root / folder / f"{folder.lower()}{i}.txt").write_text(text.format(i=i), encoding="utf-8")
    assert spar(capsys, data, "index", str(root), "--quiet")[0] == 0
    return root, data


def spar(capsys, data: Path, *args: str) -> tuple[int, str, str]:
    code = main(["--data-dir", str(data), *args])
    out, err = capsys.readouterr()
    return code, out, err


def stored(data: Path) -> set[str]:
    d = data / "relations"
    return {p.name for p in d.iterdir() if (p / "meta.json").is_file()} if d.is_dir() else set()


def test_a_whole_index_build_states_its_estimate_and_needs_a_yes(indexed, capsys, monkeypatch):
    root, data = indexed
    code, out, err = spar(capsys, data, "relations", "build", "--alpha", "0")
    assert code == 1 and out == ""
    assert re.search(r"whole index: 6 documents, ~16 queries to run, (under a minute|about [\d–]+ min) on this machine",
                     err), err
    assert "--workspace W" in err and "--yes" in err  # both ways out
    assert stored(data) == set()  # nothing was built

    code, out, err = spar(capsys, data, "relations", "build", "--alpha", "0", "--yes", "--json")
    report = json.loads(out)  # pure JSON on stdout: the estimate went to stderr
    assert code == 0 and report["documents"] == 6 and report["scope"] == "index" and "whole index: 6" in err
    assert stored(data) == {"index-edrmq"}

    # stored: the next build is an update, estimated as such, and still asks
    code, _, err = spar(capsys, data, "relations", "build", "--alpha", "0")
    assert code == 1 and "0 changed since the last build" in err

    # on a terminal it asks; anything but y/yes builds nothing
    monkeypatch.setattr("sys.stdin", Terminal("\n"))
    code, out, err = spar(capsys, data, "relations", "build", "--method", "tfidf")
    assert code == 1 and "Build relations for the whole index? [y/N]" in err and "nothing built" in err
    assert "index-tfidf" not in stored(data)
    monkeypatch.setattr("sys.stdin", Terminal("y\n"))
    code, out, err = spar(capsys, data, "relations", "build", "--method", "tfidf")
    assert code == 0 and "tfidf relations for index: 6 documents" in out and "index-tfidf" in stored(data)


def test_a_workspace_build_does_not_ask(indexed, capsys):
    root, data = indexed
    assert spar(capsys, data, "ws", "create", "space", "--tag", "Space", "--build")[0] == 0
    code, out, err = spar(capsys, data, "relations", "build", "--workspace", "space", "--json")
    report = json.loads(out)
    assert code == 0 and report["documents"] == 3 and report["scope"].startswith("workspace-")
    assert "workspace “space”: 3 documents" in err and "[y/N]" not in err
    assert stored(data) == {report["scope"] + "-edrmq"}


def test_top_and_export_read_stored_relations_and_never_build(indexed, capsys, tmp_path):
    root, data = indexed
    space1 = root / "Space" / "space1.txt"
    code, _, err = spar(capsys, data, "relations", "top", str(space1))
    assert code == 1 and "relations build" in err
    code, _, err = spar(capsys, data, "relations", "export", str(tmp_path / "g.graphml"), "--no-layout")
    assert code == 1 and "relations build" in err
    assert stored(data) == set() and not (tmp_path / "g.graphml").exists()
    assert spar(capsys, data, "relations", "build", "--method", "tfidf", "--yes")[0] == 0
    code, out, _ = spar(capsys, data, "relations", "top", str(space1), "--k", "2")
    assert code == 0 and out.count("/Space/") == 2
    assert spar(capsys, data, "relations", "export", str(tmp_path / "g.graphml"), "--no-layout")[0] == 0


def test_the_progress_line_shows_the_time_left_once():
    from spar_desktop.commands.common import StderrProgress
    from spar_desktop.core.progress import Progress

    stream = Pipe()
    progress = StderrProgress("relations (edrmq)", stream)
    progress(Progress(1240, 20430, "running queries 1,240/20,430, about 12 min left"))
    progress(Progress(20430, 20430, "reading documents"))
    assert stream.getvalue().splitlines() == ["relations (edrmq): running queries 1,240/20,430, about 12 min left",
                                              "relations (edrmq): 20430/20430 reading documents"]


def test_an_export_that_outgrows_its_memory_budget_stops_with_a_message(indexed, capsys, tmp_path, monkeypatch):
    """A layout that would run for minutes under a budget below what the process already holds:
    stopped at the first check after the watcher sees it, a message and no file, not an OOM kill."""
    root, data = indexed
    assert spar(capsys, data, "relations", "build", "--method", "tfidf", "--yes")[0] == 0
    monkeypatch.setenv("SPAR_MEMORY_LIMIT_MB", "64")
    out_file = tmp_path / "g.gexf"
    code, out, err = spar(capsys, data, "relations", "export", str(out_file), "--iterations", "10000000")
    assert code != 0 and "The graph export stopped: it needed more than" in err and "--no-layout" in err
    assert "Traceback" not in err and not out_file.exists()
    monkeypatch.delenv("SPAR_MEMORY_LIMIT_MB")
    assert spar(capsys, data, "relations", "export", str(out_file), "--no-layout")[0] == 0 and out_file.exists()

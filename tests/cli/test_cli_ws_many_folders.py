"""Issue 29 through the CLI: a keyword that matches many same-named folders ('reports' under every
project and year) is one readable line in `spar ws create` and `spar ws explain` ("6 folders named
'reports', 1.00 exact"), `--all-tags` lists them all, the funnel counts stay exact, and create
keeps its closing line ("N files, X% of the index") that scripts read. A second request in a new
process embeds nothing again."""

from __future__ import annotations

import json
import re
from pathlib import Path

from spar_desktop.cli import main

PROJECTS = ("Falcon", "Heron", "Osprey")
YEARS = ("2018", "2019")


def spar(capsys, data: Path, *args: str) -> tuple[int, str, str]:
    code = main(["--data-dir", str(data), *args])
    out, err = capsys.readouterr()
    return code, out, err


def make_share(root: Path) -> int:
    n = 0
    for project in PROJECTS:
        for year in YEARS:
            for kind in ("reports", "minutes"):
                folder = root / "Engineering" / project / year / kind
                folder.mkdir(parents=True)
                for i in range(2):
                    (folder / f"{kind}-{i}.txt").write_text(f"{project} {kind} {year} {i}", encoding="utf-8")
                    n += 1
    return n


def test_same_named_folders_are_one_line_and_the_counts_stay_exact(tmp_path, capsys):
    share, data = tmp_path / "share", tmp_path / "data"
    total = make_share(share)
    assert spar(capsys, data, "index", str(share), "--quiet")[0] == 0

    code, out, err = spar(capsys, data, "ws", "create", "reports", "--prompt", "reports", "--budget", "100")
    assert code == 0, err
    assert "tag vocabulary" in err  # the first request embeds the vocabulary, with progress
    folders = len(PROJECTS) * len(YEARS)
    line = next(x for x in out.splitlines() if x.startswith("  'reports'"))
    assert f"{folders} folders named 'reports', 1.00 exact" in line
    assert "Engineering/Falcon/2018/reports" not in out  # not every path on one line
    admitted = folders * 2
    assert out.splitlines()[-2] == f"{admitted} files, {round(100 * admitted / total)}% of the index"

    code, out, _ = spar(capsys, data, "ws", "explain", "reports", "--all-tags")
    assert code == 0 and all(f"Engineering/{p}/{y}/reports" in out for p in PROJECTS for y in YEARS)

    code, out, _ = spar(capsys, data, "ws", "explain", "reports", "--json")
    exp = json.loads(out)
    assert len(exp["filter"]["groups"][0]["tags"]) == folders  # the filter keeps every tag
    assert exp["funnel"][0] == {"label": "all indexed files", "admitted": total}
    assert exp["funnel"][-1]["admitted"] == admitted == exp["admitted"]

    code, out, err = spar(capsys, data, "ws", "create", "falcon-minutes", "--prompt", "Falcon minutes")
    assert code == 0 and "tag vocabulary" not in err  # nothing left to embed
    assert re.search(r"^\d+ files, \d+% of the index$", out, re.M)


def test_a_later_request_neither_imports_chromadb_nor_loads_the_encoder(tmp_path, capsys):
    """Issue 30: the vocabulary is a vector file of its own and a folder's name has its vector
    there: a later request in a new process (as a user runs it) needs neither the vector store's
    library nor a vocabulary pass, which cost 1.4 s and minutes before. The request itself is
    encoded to rank by file summaries (issue 29) - once: asked again, it loads no model. Nor does
    a request load what only a build, a search or a summary needs (issue 30: the builder, the
    searcher and the document readers were 0.6 s of every request's imports)."""
    import os
    import subprocess
    import sys

    share, data = tmp_path / "share", tmp_path / "data"
    make_share(share)
    assert spar(capsys, data, "index", str(share), "--quiet")[0] == 0
    assert spar(capsys, data, "ws", "create", "first", "--prompt", "reports from 2019")[0] == 0
    probe = ("import sys; from spar_desktop.cli import main; code = main(sys.argv[1:]); "
             "print('loaded:', sorted(m for m in ('chromadb', 'onnxruntime', 'torch') if m in sys.modules)); "
             f"print('build or search:', sorted(m for m in {BUILD_OR_SEARCH!r} if m in sys.modules)); "
             "sys.exit(code)")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p), HF_HUB_OFFLINE="1")

    def create(name: str, prompt: str) -> subprocess.CompletedProcess:
        proc = subprocess.run([sys.executable, "-c", probe, "--data-dir", str(data), "ws", "create", name, "--prompt",
                               prompt], capture_output=True, text=True, env=env, timeout=300)
        assert proc.returncode == 0, proc.stderr
        assert "tag vocabulary" not in proc.stderr
        assert re.search(r"^\d+ files, \d+% of the index$", proc.stdout, re.M)
        return proc

    new_words = create("later", "minutes from 2018")
    assert "chromadb" not in new_words.stdout and "torch" not in new_words.stdout
    assert "build or search: []" in new_words.stdout
    again = create("again", "reports from 2019").stdout
    assert "loaded: []" in again and "build or search: []" in again


# Modules only a build, a search or a file summary needs (a request that summarises nothing).
BUILD_OR_SEARCH = ("spar_desktop.core.workspaces.builder", "spar_desktop.core.workspaces.search",
                   "spar_desktop.core.retrieval.searcher", "spar_desktop.core.embedding.pipeline",
                   "spar_desktop.core.documents.reading", "spar_desktop.core.documents.chunking", "bm25s")

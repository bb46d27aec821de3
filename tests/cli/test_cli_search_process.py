"""`spar ws search` in a new process opens what the last build saved: no rebuild, and none of the
heavy libraries a search does not need (torch, transformers, chromadb)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from spar_desktop.cli import main

HEAVY = ("torch", "transformers", "sentence_transformers", "chromadb")


def test_a_cli_search_loads_the_saved_workspace_without_the_heavy_libraries(tmp_path, capsys):
    share, data = tmp_path / "share", tmp_path / "data"
    (share / "Engineering").mkdir(parents=True)
    (share / "Engineering" / "turbine.md").write_text("Turbine T7 blade inspection found leading edge erosion.",
                                                      encoding="utf-8")
    (share / "Engineering" / "gearbox.md").write_text("Gearbox oil was contaminated with water.", encoding="utf-8")
    for args in (["index", str(share), "--quiet"], ["ws", "create", "eng", "--tag", "Engineering"],
                 ["ws", "build", "eng"]):
        assert main(["--data-dir", str(data), *args]) == 0
    capsys.readouterr()
    built = [(w["built_at"], w["chunks"]) for w in json.loads(_run(data, "ws", "list", "--json").stdout)]
    script = (
        "import sys\n"
        "from spar_desktop.cli import main\n"
        "code = main(sys.argv[1:])\n"
        f"print('HEAVY', sorted(m for m in {HEAVY!r} if m in sys.modules), file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    done = subprocess.run([sys.executable, "-c", script, "--data-dir", str(data), "ws", "search", "eng",
                           "blade erosion", "--json"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    hits = json.loads(done.stdout)["hits"]
    assert Path(hits[0]["path"]).name == "turbine.md"
    assert "HEAVY []" in done.stderr, done.stderr
    after = [(w["built_at"], w["chunks"]) for w in json.loads(_run(data, "ws", "list", "--json").stdout)]
    assert after == built  # nothing was rebuilt


def _run(data: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "spar_desktop.cli", "--data-dir", str(data), *args],
                          capture_output=True, text=True, timeout=300, check=True)

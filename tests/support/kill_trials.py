"""kill -9 at a random point of a real `spar` process, then resume, and compare with a run that was
never interrupted (issue 17 item 3). Shared by tests/cli/test_kill_resume.py (a few trials) and
benchmarks/kill_trials.py (many).

What "resumed exactly" means here: every SQLite file passes ``PRAGMA integrity_check``; the index
holds the same files, hashes, tags and assignments (no row lost or doubled); a workspace search
gives the same hits in the same order; relations and evolved keys give the same answers.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

ROOT = Path(__file__).resolve().parents[2]
QUERIES = ("gearbox oil contamination", "blade crack repair", "budget overrun approval", "site inspection report")
# Resumes the key-evolution feedback stream from what the memory says it already accepted, so
# a kill between two feedback items (or inside one) loses or doubles nothing.
FEEDBACK_CHILD = r"""
import sys
from spar_desktop.core.config import load_settings
from spar_desktop.core.library.database import Library
from spar_desktop.core.memory.feedback import memory_stats, record_feedback
from spar_desktop.core.workspaces.manager import Workspaces

lib = Library.open(load_settings(sys.argv[1]))
mgr = Workspaces(lib)
done = memory_stats(mgr, "all").accepted or 0
for i, query in enumerate(sys.argv[2:]):
    if i < done:
        continue
    hits = mgr.search("all", query, k=3).hits
    record_feedback(mgr, "all", query, [f"{h.file_id}#{h.chunk_id}" for h in hits[:1]], True)
lib.close()
"""


def write_share(root: Path, n_files: int = 120, seed: int = 7) -> Path:
    """A small share: notes in folders, a CSV and a zip with members (children in the index)."""
    rng = random.Random(seed)
    words = ("gearbox oil contamination bearing blade crack resin repair inspection site budget overrun "
             "approval turbine tower cable vibration sensor report audit safety notice schedule").split()
    for i in range(n_files):
        folder = root / ("Operations", "Finance", "Safety")[i % 3] / f"{2018 + i % 4}"
        folder.mkdir(parents=True, exist_ok=True)
        body = "\n\n".join(" ".join(rng.choice(words) for _ in range(40)) + "." for _ in range(3))
        (folder / f"note-{i:04d}.md").write_text(f"# Note {i}\n\n{body}\n", encoding="utf-8")
    (root / "Finance" / "ledger.csv").write_text("item,amount\n" + "".join(f"{w},{k}\n" for k, w in enumerate(words)),
                                                 encoding="utf-8")
    with zipfile.ZipFile(root / "Safety" / "audit.zip", "w") as zf:
        for k in range(4):
            zf.writestr(f"audit/finding-{k}.txt", f"Audit finding {k}: " + " ".join(rng.choice(words) for _ in range(30)))
    return root


def child_env(model_cache: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(SPAR_MODEL_CACHE=str(model_cache), OLLAMA_HOST="http://127.0.0.1:9", SPAR_CHROMA_PROCESS="0",
               PYTHONPATH=str(ROOT))
    return env


def spar_cmd(data: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "spar_desktop", "--cli", "--data-dir", str(data), *args]


def run(cmd: list[str], env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def run_killed(cmd: list[str], env: dict[str, str], after_s: float) -> Optional[int]:
    """Start ``cmd``, SIGKILL it after ``after_s`` seconds; its exit code when it finished first."""
    proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        return proc.wait(timeout=after_s)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        return None


def integrity_problems(data: Path) -> list[str]:
    """Every SQLite file of the data dir (index, embedding cache, OCR cache, Chroma's own)."""
    problems = []
    for path in sorted(data.rglob("*.sqlite3")):
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            result = con.execute("PRAGMA integrity_check").fetchall()
        finally:
            con.close()
        if result != [("ok",)]:
            problems.append(f"{path.relative_to(data)}: {result[:3]}")
    return problems


def index_state(data: Path) -> dict[str, list]:
    """The index as a user sees it, without ids and timestamps."""
    con = sqlite3.connect(f"file:{data / 'library.sqlite3'}?mode=ro", uri=True)
    try:
        q = con.execute
        return {
            "files": sorted(q("SELECT path, size, content_hash, status, format, title FROM files").fetchall()),
            "children": sorted(q("SELECT c.path, p.path FROM files c JOIN files p ON c.parent_id = p.id").fetchall()),
            "tags": sorted(q("SELECT key, value, source FROM tags").fetchall()),
            "edges": sorted(q("SELECT p.key, c.key FROM tag_edges e JOIN tags p ON p.id = e.parent_id "
                              "JOIN tags c ON c.id = e.child_id").fetchall()),
            "file_tags": sorted(q("SELECT f.path, t.key, ft.source, ft.confirmed FROM file_tags ft "
                                  "JOIN files f ON f.id = ft.file_id JOIN tags t ON t.id = ft.tag_id").fetchall()),
        }
    finally:
        con.close()


def search_state(data: Path, env: dict[str, str], workspace: str = "all") -> list:
    out = []
    for query in QUERIES:
        r = run(spar_cmd(data, "ws", "search", workspace, query, "--json", "--k", "8"), env)
        assert r.returncode == 0, r.stderr
        hits = json.loads(r.stdout)["hits"]
        out.append([(h["path"], h["chunk_id"], h["page_start"], round(float(h["score"]), 5)) for h in hits])
    return out


def relations_state(data: Path, env: dict[str, str], files: list[str]) -> list:
    out = []
    for f in files:
        r = run(spar_cmd(data, "relations", "top", f, "--workspace", "all", "--json", "--k", "5"), env)
        assert r.returncode == 0, r.stderr
        out.append([(x["path"], round(float(x["weight"]), 5)) for x in json.loads(r.stdout)["related"]])
    return out


@dataclass
class TrialResult:
    operation: str
    kill_after_s: float
    killed: bool
    resumed_exactly: bool
    integrity: list[str] = field(default_factory=list)
    difference: str = ""


@dataclass
class Scenario:
    """One operation: how to prepare a data dir, run the operation, and read the state to compare."""

    name: str
    prepare: Callable[[Path, dict], None]
    command: Callable[[Path], list[str]]
    state: Callable[[Path, dict], object]


def scenarios(share: Path, sample_files: list[str], feedback: list[str]) -> dict[str, Scenario]:
    def nothing(data: Path, env: dict) -> None:
        data.mkdir(parents=True, exist_ok=True)

    def indexed(data: Path, env: dict) -> None:
        for cmd in (spar_cmd(data, "index", str(share), "--quiet"), spar_cmd(data, "ws", "create", "all", "--all-files")):
            r = run(cmd, env)
            assert r.returncode == 0, r.stderr

    def built(data: Path, env: dict) -> None:
        indexed(data, env)
        r = run(spar_cmd(data, "ws", "build", "all"), env)
        assert r.returncode == 0, r.stderr

    def memory_state(data: Path, env: dict) -> object:
        r = run(spar_cmd(data, "memory", "stats", "all", "--json"), env)
        assert r.returncode == 0, r.stderr
        stats = json.loads(r.stdout)
        keep = ("evolved_keys", "chunks_with_memory", "units", "pending", "rounds", "accepted")
        return {k: stats.get(k) for k in keep}, search_state(data, env)

    return {
        "index": Scenario("index", nothing, lambda d: spar_cmd(d, "index", str(share), "--quiet"),
                          lambda d, env: index_state(d)),
        "build": Scenario("build", indexed, lambda d: spar_cmd(d, "ws", "build", "all"), search_state),
        "relations": Scenario("relations", built,
                              lambda d: spar_cmd(d, "relations", "build", "--workspace", "all", "--full"),
                              lambda d, env: relations_state(d, env, sample_files)),
        "evolution": Scenario("evolution", built,
                              lambda d: [sys.executable, "-c", FEEDBACK_CHILD, str(d), *feedback], memory_state),
    }


_TEMPLATES: dict[tuple[str, str], Path] = {}


def prepared(scenario: Scenario, data: Path, env: dict) -> None:
    """``data`` in the state the operation starts from: prepared once per scenario, then copied
    (an index and a built workspace cost far more than the operation under test)."""
    key = (scenario.name, str(data.parent))
    template = _TEMPLATES.get(key)
    if template is None:
        template = data.parent / f"{scenario.name}-start"
        scenario.prepare(template, env)
        _TEMPLATES[key] = template
    shutil.copytree(template, data)


def reference(scenario: Scenario, data: Path, env: dict) -> tuple[object, float]:
    """The uninterrupted run: its final state and how long the operation took."""
    prepared(scenario, data, env)
    t0 = time.perf_counter()
    r = run(scenario.command(data), env)
    took = time.perf_counter() - t0
    assert r.returncode == 0, r.stderr
    return scenario.state(data, env), took


def trial(scenario: Scenario, data: Path, env: dict, expected: object, kill_after_s: float) -> TrialResult:
    prepared(scenario, data, env)
    code = run_killed(scenario.command(data), env, kill_after_s)
    integrity = integrity_problems(data)
    r = run(scenario.command(data), env)  # the resume: the same command again
    if r.returncode != 0:
        return TrialResult(scenario.name, kill_after_s, code is None, False, integrity, f"resume failed: {r.stderr[-500:]}")
    integrity += integrity_problems(data)
    got = scenario.state(data, env)
    diff = "" if got == expected else _first_difference(expected, got)
    return TrialResult(scenario.name, kill_after_s, code is None, got == expected and not integrity, integrity, diff)


def _first_difference(expected: object, got: object) -> str:
    if isinstance(expected, dict) and isinstance(got, dict):
        for k in expected:
            if expected[k] != got.get(k):
                return f"{k}: expected {str(expected[k])[:300]} got {str(got.get(k))[:300]}"
    return f"expected {str(expected)[:300]} got {str(got)[:300]}"

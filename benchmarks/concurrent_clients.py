"""Two processes on one data dir's local vector store: the desktop app and a CLI build, together.

An "app" process (Chroma in its helper process, as SPAR Desktop runs it; driven over stdin) keeps
the store open while `spar ws build` processes (Chroma in-process, as the CLI runs it) work on the
same data dir:

  s1  the app has built workspace A and holds the store; the CLI builds workspace B
  s2  the CLI updates A (a new file) while the app has A open; then the app updates A (another file)
  s3  the app reactivates C while the CLI reactivates D, at the same moment (writes only: the
      embeddings are cached; the app starts when the CLI says it is loading vectors), then each
      archives its own; a few rounds
  s5  both write to one collection at once (as the tag vocabulary is shared): N vectors each,
      the app through its helper process, the other through the CLI's in-process client
  s4  the app has quit: the CLI builds whatever is left

Then, in a fresh process: PRAGMA integrity_check of chroma.sqlite3, and for every workspace the
collection's count against the index's chunk count and a nearest-neighbour query of every stored
vector (a vector the HNSW index lost is not found; on s5's random vectors HNSW misses ~1% even with
one writer), plus any store set aside as broken.

``--code DIR`` runs another checkout's spar_desktop (e.g. ``git archive HEAD spar_desktop | tar -x
-C /tmp/before``) so that one script measures before and after. Results go under ``--label`` in
benchmarks/results/concurrent_clients.json.
Usage: nice -n 10 python benchmarks/concurrent_clients.py [--code DIR] [--label after] [--files 40]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[1]
RESULTS = HERE / "benchmarks" / "results" / "concurrent_clients.json"
FOLDERS = {"A": "Alpha", "B": "Beta", "C": "Gamma", "D": "Delta"}  # workspace -> its folder (tag)
# `python -m spar_desktop.cli` would run cli.py twice (as __main__ and as spar_desktop.cli), and
# its CommandError would escape as a traceback: run main() as the `spar` entry point does.
CLI = "import sys; from spar_desktop.cli import main; sys.exit(main())"

APP = r"""
import json, sys
from dataclasses import replace
from spar_desktop.core.config import load_settings
from spar_desktop.core.library.database import Library
from spar_desktop.core.workspaces.manager import Workspaces
try:
    from spar_desktop.core import store_lock
    store_lock.set_program("SPAR Desktop")  # as ui/app.py names itself
except ImportError:  # a checkout from before the lock
    pass
settings = replace(load_settings(sys.argv[1]), chroma_process=True)  # as the desktop app runs
lib = Library.open(settings)
mgr = Workspaces(lib)
print(json.dumps({"ok": True, "ready": True}), flush=True)
for line in sys.stdin:
    cmd, _, arg = line.strip().partition(" ")
    if cmd == "quit":
        break
    try:
        if cmd == "build":
            r = mgr.build(arg)
            out = {"ok": True, "chunks": r.chunks, "embedded": r.embedded_chunks}
        elif cmd == "archive":
            mgr.archive(arg)
            out = {"ok": True}
        elif cmd == "stress":
            import numpy as np
            col = mgr.engine.chroma.get_or_create_collection("stress", embedding_function=None)
            n = int(arg)
            vecs = np.random.default_rng(1).standard_normal((n, 384)).astype("float32")
            for i in range(0, n, 64):
                col.upsert(ids=[f"app-{j}" for j in range(i, min(n, i + 64))], embeddings=vecs[i:i + 64])
            out = {"ok": True}
        elif cmd == "probe":  # the app's own view: is each stored vector found by a query?
            if arg == "stress":
                col = mgr.engine.chroma.get_collection("stress")
            else:
                with lib.session() as s:
                    col = mgr.engine.chroma.get_collection(mgr.workspace_row(s, arg).collection)
            got = col.get(include=["embeddings"])
            ids, vecs, missing = got["ids"], list(got["embeddings"]), 0
            for a in range(0, len(ids), 256):
                found = col.query(query_embeddings=vecs[a:a + 256], n_results=1, include=[])["ids"]
                missing += sum(f != [i] for f, i in zip(found, ids[a:a + 256]))
            out = {"ok": True, "vectors": len(ids), "not_found_by_query": missing}
        elif cmd == "search":
            name, _, query = arg.partition(" ")
            out = {"ok": True, "hits": [h.path.rsplit("/", 1)[-1] for h in mgr.search(name, query, k=3).hits]}
        else:
            out = {"ok": False, "error": "unknown command " + cmd}
    except Exception as exc:
        out = {"ok": False, "error": (type(exc).__name__ + ": " + str(exc))[:400]}
    print(json.dumps(out), flush=True)
mgr.engine.close()
lib.close()
"""

STRESS = r"""
import sys, time
import numpy as np
from spar_desktop.core.config import load_settings
from spar_desktop.core.workspaces.engine import Engine
try:
    client = Engine(load_settings(sys.argv[1])).chroma  # in this process, as a CLI command opens it
    col = client.get_or_create_collection("stress", embedding_function=None)
except Exception as exc:
    print(type(exc).__name__ + ": " + str(exc), file=sys.stderr)
    sys.exit(1)
print("ready", flush=True)
sys.stdin.readline()
n = int(sys.argv[2])
vecs = np.random.default_rng(2).standard_normal((n, 384)).astype("float32")
for i in range(0, n, 64):
    col.upsert(ids=[f"cli-{j}" for j in range(i, min(n, i + 64))], embeddings=vecs[i:i + 64])
"""

CHECK = r"""
import json, sqlite3, sys
from pathlib import Path
import chromadb
from chromadb.config import Settings
data = Path(sys.argv[1])

def not_found(col, got):
    # each stored vector's nearest neighbour must be itself: one the index lost is not found
    ids, vecs, missing = got["ids"], list(got["embeddings"]), 0
    for a in range(0, len(ids), 256):
        found = col.query(query_embeddings=vecs[a:a + 256], n_results=1, include=[])["ids"]
        missing += sum(f != [i] for f, i in zip(found, ids[a:a + 256]))
    return missing

out = {"integrity": None, "workspaces": {}, "broken_dirs": sorted(p.name for p in data.glob("chroma.broken-*"))}
db = data / "chroma" / "chroma.sqlite3"
if db.exists():
    with sqlite3.connect(db) as c:
        out["integrity"] = c.execute("PRAGMA integrity_check").fetchone()[0]
with sqlite3.connect(data / "library.sqlite3") as c:
    rows = c.execute("SELECT name, collection, status, chunk_count FROM workspaces ORDER BY name").fetchall()
client = chromadb.PersistentClient(path=str(data / "chroma"), settings=Settings(anonymized_telemetry=False))
for name, collection, status, chunks in rows:
    w = {"status": status, "chunks_in_index": chunks}
    try:
        col = client.get_collection(collection, embedding_function=None)
        got = col.get(include=["embeddings"])
        w["vectors"] = len(got["ids"])
        w["not_found_by_query"] = not_found(col, got)
    except Exception as exc:
        w["error"] = (type(exc).__name__ + ": " + str(exc))[:300]
    out["workspaces"][name] = w
try:
    col = client.get_collection("stress", embedding_function=None)
    got = col.get(include=["embeddings"])
    ids = got["ids"]
    missing = not_found(col, got)
    out["stress"] = {"app_vectors": sum(i.startswith("app-") for i in ids),
                     "cli_vectors": sum(i.startswith("cli-") for i in ids), "not_found_by_query": missing}
except Exception as exc:
    out["stress"] = {"error": (type(exc).__name__ + ": " + str(exc))[:300]}
print(json.dumps(out))
"""


def env_for(code: Path) -> dict[str, str]:
    # Every child runs with cwd = the work dir: python -c puts the cwd first on sys.path, which
    # would shadow --code with the checkout the script was started from.
    env = dict(os.environ, PYTHONPATH=str(code), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               ANONYMIZED_TELEMETRY="False")
    env.pop("SPAR_DATA_DIR", None)
    env.pop("SPAR_CHROMA_URL", None)
    return env


def write_files(share: Path, folder: str, n: int, first: int = 0) -> None:
    (share / folder).mkdir(parents=True, exist_ok=True)
    for i in range(first, first + n):
        body = " ".join(f"{folder.lower()} report {i} paragraph {p} covers maintenance, budget and safety."
                        for p in range(12))
        (share / folder / f"{folder.lower()}-{i:03d}.md").write_text(
            f"# {folder} {i}\n\nunique{folder.lower()}{i}x\n\n{body}", encoding="utf-8")


class Cli:
    def __init__(self, code: Path, data: Path) -> None:
        self.code, self.data = code, data

    def start(self, *args: str) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-c", CLI, "--data-dir", str(self.data), *args],
                                env=env_for(self.code), cwd=self.data.parent, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

    def run(self, *args: str) -> dict[str, Any]:
        t0 = time.perf_counter()
        p = self.start(*args)
        out, err = p.communicate(timeout=1800)
        return outcome(p.returncode, err, time.perf_counter() - t0)


def outcome(rc: int, stderr: str, seconds: float) -> dict[str, Any]:
    lines = [ln for ln in stderr.splitlines() if ln.strip() and "\r" not in ln and not ln.startswith("building")]
    return {"rc": rc, "seconds": round(seconds, 1), "traceback": "Traceback" in stderr,
            "stderr_tail": lines[-3:]}


class App:
    def __init__(self, code: Path, data: Path, log: Path) -> None:
        self._err = open(log, "w")
        self.p = subprocess.Popen([sys.executable, "-c", APP, str(data)], env=env_for(code), cwd=data.parent,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._err, text=True)
        assert self.read().get("ready")

    def send(self, line: str) -> None:
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()

    def read(self) -> dict[str, Any]:
        line = self.p.stdout.readline()
        return json.loads(line) if line else {"ok": False, "error": "app process ended"}

    def ask(self, line: str) -> dict[str, Any]:
        t0 = time.perf_counter()
        self.send(line)
        return dict(self.read(), seconds=round(time.perf_counter() - t0, 1))

    def quit(self) -> int:
        try:
            self.send("quit")
        except OSError:
            pass
        rc = self.p.wait(120)
        self._err.close()
        return rc


def experiment(code: Path, files: int, rounds: int, stress: int, work: Path) -> dict[str, Any]:
    share, data = work / "share", work / "data"
    data.mkdir(parents=True)
    for ws, folder in FOLDERS.items():
        write_files(share, folder, files * (2 if ws in "CD" else 1))
    cli = Cli(code, data)
    res: dict[str, Any] = {"files_per_workspace": files, "code": str(code), "stress_vectors": stress}
    assert cli.run("index", str(share), "--quiet")["rc"] == 0
    for ws, folder in FOLDERS.items():
        assert cli.run("ws", "create", ws, "--tag", folder)["rc"] == 0, ws
    for ws in "CD":  # embeddings cached: s3's reactivations only write vectors
        assert cli.run("ws", "build", ws)["rc"] == 0 and cli.run("ws", "archive", ws)["rc"] == 0

    app = App(code, data, work / "app.log")
    res["s0_app_builds_A"] = app.ask("build A")
    # s1: the app holds the store; the CLI builds another workspace.
    res["s1_cli_builds_B"] = cli.run("ws", "build", "B")
    res["s1_app_searches_B"] = app.ask("search B uniquebeta1x")
    res["s1_app_searches_A"] = app.ask("search A uniquealpha1x")
    res["s1_app_probes_B"] = app.ask("probe B")
    # s2: the CLI updates A under the app's open collection; then the app updates A.
    write_files(share, "Alpha", 1, first=files)
    cli.run("index", str(share), "--quiet")
    res["s2_cli_updates_A"] = cli.run("ws", "build", "A")
    res["s2_app_searches_new_file"] = app.ask(f"search A uniquealpha{files}x")
    res["s2_app_probes_A"] = app.ask("probe A")
    write_files(share, "Alpha", 1, first=files + 1)
    cli.run("index", str(share), "--quiet")
    res["s2_app_updates_A"] = app.ask("build A")
    # s3: both write at the same moment, a few times.
    res["s3_rounds"] = []
    for r in range(rounds):
        t0 = time.perf_counter()
        cli_d = cli.start("ws", "build", "D")
        err_lines = []
        for line in cli_d.stderr:  # progress lines: start the app's writes with the CLI's
            err_lines.append(line)
            if "loading vectors" in line:
                break
        app.send("build C")
        _, rest = cli_d.communicate(timeout=1800)
        err = "".join(err_lines) + rest
        one = {"cli_reactivates_D": outcome(cli_d.returncode, err, time.perf_counter() - t0),
               "app_reactivates_C": dict(app.read(), seconds=round(time.perf_counter() - t0, 1))}
        if r < rounds - 1:
            one["app_archives_C"] = app.ask("archive C")
            one["cli_archives_D"] = cli.run("ws", "archive", "D")
        res["s3_rounds"].append(one)
    res["status_while_app_open"] = {w["name"]: w["status"] for w in json.loads(
        cli.start("ws", "list", "--json").communicate(timeout=600)[0] or "[]")}
    # s5: one collection, two writers at once.
    t0 = time.perf_counter()
    other = subprocess.Popen([sys.executable, "-c", STRESS, str(data), str(stress)], env=env_for(code), cwd=work,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ready = other.stdout.readline().strip() == "ready"
    app.send(f"stress {stress}")
    if ready:
        other.stdin.write("go\n")
        other.stdin.flush()
    _, err = other.communicate(timeout=1800)
    res["s5_cli_writes"] = outcome(other.returncode, err, time.perf_counter() - t0)
    res["s5_app_writes"] = dict(app.read(), seconds=round(time.perf_counter() - t0, 1))
    res["s5_app_probes"] = app.ask("probe stress")
    res["app_exit_code"] = app.quit()
    # s4: the app is gone; the CLI finishes what was refused.
    res["s4_cli_after_app_quit"] = {ws: cli.run("ws", "build", ws) for ws in FOLDERS}
    check = subprocess.run([sys.executable, "-c", CHECK, str(data)], env=env_for(code), cwd=work,
                           capture_output=True, text=True, timeout=600)
    res["final_check"] = json.loads(check.stdout) if check.returncode == 0 else {"error": check.stderr[-800:]}
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--code", type=Path, default=HERE, help="the checkout whose spar_desktop runs")
    ap.add_argument("--label", default="after")
    ap.add_argument("--files", type=int, default=40, help="files per workspace (twice that in C and D)")
    ap.add_argument("--rounds", type=int, default=3, help="s3's simultaneous reactivations")
    ap.add_argument("--stress", type=int, default=3000, help="s5's vectors per writer")
    ap.add_argument("--keep", action="store_true", help="keep the temporary data dir")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="spar-concurrent-"))
    t0 = time.perf_counter()
    res = experiment(args.code.resolve(), args.files, args.rounds, args.stress, work)
    res["total_seconds"] = round(time.perf_counter() - t0, 1)
    res["when"] = time.strftime("%Y-%m-%d %H:%M")
    print(json.dumps(res, indent=2))
    results: dict[str, Any] = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    results[args.label] = res
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    if not args.keep:
        import shutil

        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"kept {work}", file=sys.stderr)


if __name__ == "__main__":
    main()

"""Memory of the desktop app with a 50k-chunk workspace open and searched.

Writes a share of notes (about four child chunks each), indexes it and builds one workspace over
all of it. The build chunks the real files with the real chunker but embeds with random unit
vectors under the real model's id (RSS does not depend on vector values, and embedding 50k chunks
for real would take most of this benchmark's time); the app then opens that data dir as a user
would, selects the workspace and runs searches with the real encoder. Prints JSON with the app
process's RSS (current and peak) and its child processes' (the Chroma helper, the scan worker), at each step.
Goal: app ≤ 1 GB with a 50k-chunk workspace open.
Usage: QT_QPA_PLATFORM=offscreen python benchmarks/app_rss.py [--chunks 50000]
With ``--index-files N``: the window's time and RSS over an index of N files written by SQL
(benchmarks/app_at_scale.py, before/after trees side by side).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

WORDS = ("turbine gearbox bearing oil blade inspection budget contract policy safety height harness maintenance "
         "outage forecast invoice board minutes project design review audit erosion crack vibration alarm "
         "repair resin survey capital contingency climber rescue plan trained pounds million energy site").split()


class RandomVectors:
    """Stands in for the encoder at build time only: same id and dimension, random unit vectors."""

    def __init__(self, model_id: str, dim: int) -> None:
        self.model_id, self.dim = model_id, dim
        self.texts_encoded = 0
        self._rng = np.random.default_rng(5)

    def encode(self, texts, batch_size=64, progress=None, cancel=None) -> np.ndarray:
        v = self._rng.standard_normal((len(texts), self.dim)).astype(np.float32)
        self.texts_encoded += len(texts)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    def encode_query(self, text: str) -> np.ndarray:
        return self.encode([text])[0]


def rss_mb(pid: int | str = "self") -> tuple[float, float]:
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    kb = lambda k: float(fields.get(k, "0 kB").split()[0])  # noqa: E731
    return round(kb("VmRSS") / 1024, 1), round(kb("VmHWM") / 1024, 1)


def write_share(root: Path, files: int) -> None:
    rng = random.Random(3)
    for i in range(files):
        folder = root / f"area-{i % 50:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        paras = ["\n".join(" ".join(rng.choice(WORDS) for _ in range(rng.randint(14, 22))) + "." for _ in range(6))
                 for _ in range(4)]
        (folder / f"note-{i:06d}.md").write_text(f"# Note {i}\n\n" + "\n\n".join(paras), encoding="utf-8")


def prepare(work: Path, chunks: int) -> tuple[Path, int]:
    from spar_desktop.core.config import load_settings
    from spar_desktop.core.embedding.encoder import get_encoder
    from spar_desktop.core.library.database import Library
    from spar_desktop.core.library.scanner import Scanner
    from spar_desktop.core.workspaces.engine import Engine
    from spar_desktop.core.workspaces.manager import Workspaces

    real = get_encoder("cpu")
    settings = replace(load_settings(work / "data"), chroma_process=False)
    lib = Library.open(settings)
    files = max(1, chunks // 8)  # the default hierarchical chunker makes about 8 children of such a note
    write_share(work / "share", files)
    Scanner(lib).scan([str(work / "share")])
    mgr = Workspaces(lib, Engine(settings, RandomVectors(real.model_id, real.dim)))
    mgr.create("everything", types=["md"])
    report = mgr.build("everything")
    mgr.engine.close()
    lib.close()
    return work / "data", report.chunks


def measure(data: Path, queries: int) -> dict:
    from PySide6.QtWidgets import QApplication

    from spar_desktop.core.config import load_settings
    from spar_desktop.core.library.database import Library
    from spar_desktop.ui.main_window import MainWindow
    from spar_desktop.ui.base.runtime import tune_for_ui

    app = QApplication.instance() or QApplication([])
    settings = load_settings(data, app=True)
    lib = Library.open(settings)
    steps = {"before_window": rss_mb()}
    window = MainWindow(settings, lib, watch=False, interactive=False)
    window.show()
    tune_for_ui()

    def wait(cond, timeout=600.0) -> None:
        end = time.time() + timeout
        while not cond() and time.time() < end:
            app.processEvents()
            time.sleep(0.01)
        if not cond():
            raise TimeoutError("the app did not get there in time")

    wait(lambda: window.workspaces.service is not None and window.workspaces.row("everything") is not None)
    steps["window_idle"] = rss_mb()
    window.workspaces.select("everything")
    latencies = []
    for i in range(queries):
        done: list = []
        window.workspaces.search_finished.connect(done.append)
        window.workspaces.search(f"{WORDS[i % len(WORDS)]} {WORDS[(i * 7) % len(WORDS)]} inspection")
        wait(lambda: bool(done))
        window.workspaces.search_finished.disconnect(done.append)
        latencies.append(done[0].latency_ms)
        if i == 0:
            steps["after_first_search"] = rss_mb()
    wait(window.runner.is_idle)
    steps["after_searches"] = rss_mb()
    helper = [p for p in Path("/proc").iterdir() if p.name.isdigit() and _is_child(p.name)]
    out = {"app_rss_mb": steps, "search_latency_ms": latencies,
           "child_processes_rss_mb": {p.name: rss_mb(p.name) for p in helper}}
    window.close()
    window.runner.shutdown()
    lib.close()
    return out


def _is_child(pid: str) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1] == str(os.getpid())
    except (OSError, IndexError):
        return False


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunks", type=int, default=50_000)
    ap.add_argument("--queries", type=int, default=20)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="spar-app-rss-"))
    try:
        t0 = time.perf_counter()
        data, chunks = prepare(work, args.chunks)
        prepared = time.perf_counter() - t0
        # The app is measured in a fresh interpreter, as a user would start it.
        import subprocess

        done = subprocess.run([sys.executable, __file__, "--measure", str(data), "--queries", str(args.queries)],
                              capture_output=True, text=True, timeout=1800)
        if done.returncode != 0:
            raise SystemExit(done.stderr[-3000:])
        result = json.loads(done.stdout.strip().splitlines()[-1])
        result.update({"benchmark": "app_rss", "workspace_chunks": chunks, "prepare_s": round(prepared, 1),
                       "load_avg": os.getloadavg()})
        print(json.dumps(result, indent=2))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__" and "--index-files" in sys.argv:
    _i = sys.argv.index("--index-files")
    subprocess_args = [sys.executable, str(Path(__file__).with_name("app_at_scale.py")), "--files", sys.argv[_i + 1],
                       *sys.argv[1:_i], *sys.argv[_i + 2:]]
    raise SystemExit(__import__("subprocess").call(subprocess_args))
if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--measure":
        queries = int(sys.argv[sys.argv.index("--queries") + 1]) if "--queries" in sys.argv else 20
        print(json.dumps(measure(Path(sys.argv[2]), queries)))
    else:
        main()

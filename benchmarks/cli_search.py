"""A CLI search on a built workspace, process start to JSON printed, beside `python -c "import torch"`.

Generates a share of N short notes, indexes it and builds one workspace with this checkout's CLI
(and with ``--against DIR``'s, e.g. a worktree of the previous release, in its own data dir), then
times fresh `spar ws search` processes, alternating versions and the torch import so that all see
the same machine load. Prints JSON with medians and the ratios the issue asks for.
Usage: python benchmarks/cli_search.py [--files 200] [--runs 7] [--against /path/to/old/checkout]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
WORDS = ("turbine gearbox bearing oil blade inspection budget contract policy safety height harness "
         "maintenance outage forecast invoice board minutes project design review audit").split()
QUERY = "turbine blade inspection"


def write_share(root: Path, n: int) -> None:
    rng = random.Random(11)
    for i in range(n):
        folder = root / ("Engineering" if i % 2 else "Finance")
        folder.mkdir(parents=True, exist_ok=True)
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(60, 140)))
        (folder / f"note-{i:05d}.md").write_text(f"# Note {i}\n\n{text}", encoding="utf-8")


def spar(src: Path, data: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(src), HF_HUB_OFFLINE="1", ANONYMIZED_TELEMETRY="False")
    env.pop("SPAR_DATA_DIR", None)
    return subprocess.run([sys.executable, "-m", "spar_desktop.cli", "--data-dir", str(data), *args], env=env,
                          cwd=src, capture_output=True, text=True, check=check, timeout=1800)


def timed(fn) -> tuple[float, object]:
    t0 = time.perf_counter()
    value = fn()
    return time.perf_counter() - t0, value


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=200)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--against", type=Path)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="spar-cli-search-"))
    versions = {"this": HERE}
    if args.against:
        versions["against"] = args.against.resolve()
    try:
        share = work / "share"
        write_share(share, args.files)
        build_s = {}
        for label, src in versions.items():
            data = work / label
            spar(src, data, "index", str(share))
            spar(src, data, "ws", "create", "eng", "--tag", "Engineering")
            build_s[label] = round(timed(lambda: spar(src, data, "ws", "build", "eng"))[0], 2)
        walls: dict[str, list[float]] = {label: [] for label in versions}
        latency: dict[str, list[float]] = {label: [] for label in versions}
        torch_s = []
        for _ in range(args.runs):
            for label, src in versions.items():
                wall, done = timed(lambda: spar(src, work / label, "ws", "search", "eng", QUERY, "--json"))
                walls[label].append(wall)
                latency[label].append(json.loads(done.stdout)["latency_ms"])
            torch_s.append(timed(lambda: subprocess.run([sys.executable, "-c", "import torch"], check=True))[0])
        med = {label: statistics.median(v) for label, v in walls.items()}
        torch_med = statistics.median(torch_s)
        out = {
            "benchmark": "cli_search", "files": args.files, "runs": args.runs, "load_avg": os.getloadavg(),
            "import_torch_s_median": round(torch_med, 3),
            "versions": {label: {"source": str(versions[label]), "build_s": build_s[label],
                                 "search_wall_s_median": round(med[label], 3),
                                 "search_wall_s": [round(w, 3) for w in walls[label]],
                                 "reported_latency_ms_median": round(statistics.median(latency[label]), 1)}
                         for label in versions},
            "search_wall_over_import_torch": round(med["this"] / torch_med, 3),
        }
        if args.against:
            out["speedup_vs_against"] = round(med["against"] / med["this"], 2)
        print(json.dumps(out, indent=2))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

"""Cost scales with the filtered set, not the share.

On a generated share of N files (default 20,000) in 100 project folders, builds workspaces that
admit about 1%, 5% and 20% of the files, and a global index of everything, all from a cold
embedding cache, then archives and reactivates each (warm: everything from the cache). Prints JSON
with build times, the ratio global / workspace, and cold / warm rebuild.
With ``--against DIR`` the same measurement runs on another checkout too (this script's code with
that checkout's package on the path), alternating, and the ratio of their cold build times is printed.
Usage: python benchmarks/workspace_build.py [--files 20000] [--only 5%] [--no-global] [--against DIR] [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.environ.get("SPAR_SRC") or str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from spar_desktop.core.config import load_settings  # noqa: E402
from spar_desktop.core.library.database import Library  # noqa: E402
from spar_desktop.core.library.scanner import Scanner  # noqa: E402
from spar_desktop.core.workspaces.manager import Workspaces  # noqa: E402

WORDS = ("turbine gearbox bearing oil blade inspection budget contract policy safety height harness "
         "maintenance outage forecast invoice board minutes project design review audit").split()


def write_share(root: Path, n: int, folders: int = 100) -> None:
    import random

    rng = random.Random(7)
    for i in range(n):
        folder = root / f"project-{i % folders:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(60, 140)))
        (folder / f"note-{i:06d}.md").write_text(f"# Note {i}\n\n{text}", encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=20_000)
    ap.add_argument("--only", help="one workspace size: 1%%, 5%% or 20%%")
    ap.add_argument("--no-global", action="store_true", help="skip the global index build")
    ap.add_argument("--against", type=Path, help="another checkout to measure side by side")
    ap.add_argument("--rounds", type=int, default=2, help="alternating rounds with --against")
    args = ap.parse_args()
    if args.against:
        return side_by_side(args)
    work = Path(tempfile.mkdtemp(prefix="spar-ws-bench-"))
    try:
        share = work / "share"
        write_share(share, args.files)
        lib = Library.open(load_settings(work / "data"))
        Scanner(lib).scan([str(share)])
        mgr = Workspaces(lib)
        mgr.engine.encoder  # load the model outside the timings
        # Disjoint folder ranges, so each cold build starts with none of its files cached.
        shares = {"1%": range(0, 1), "5%": range(1, 6), "20%": range(6, 26)}
        out: dict = {"benchmark": "workspace_build", "files": args.files, "workspaces": {}}
        for label, folders in shares.items():
            if args.only and label != args.only:
                continue
            tags = "|".join(f"project-{i:03d}" for i in folders)
            name = f"ws-{label}"
            mgr.create(name, tags=[tags])
            t0 = time.perf_counter()
            cold = mgr.build(name)
            cold_s = time.perf_counter() - t0
            mgr.archive(name)
            t0 = time.perf_counter()
            warm = mgr.reactivate(name)
            warm_s = time.perf_counter() - t0
            out["workspaces"][label] = {"files": cold.ready, "chunks": cold.chunks, "cold_build_s": round(cold_s, 2),
                                        "warm_rebuild_s": round(warm_s, 2), "warm_embedded_chunks": warm.embedded_chunks,
                                        "cold_over_warm": round(cold_s / warm_s, 1)}
            print(f"{label}: {cold.ready} files cold {cold_s:.1f}s warm {warm_s:.1f}s", file=sys.stderr)
        if args.no_global:
            print(json.dumps(out, indent=2))
            return
        # The global index: every file, embedding only what the cache lacks (the 20% above is
        # cached, so time the global build on a fresh cache for a fair cold comparison).
        mgr.engine.cache.close()
        for f in (work / "data").glob("embeddings.sqlite3*"):
            f.unlink()
        mgr.engine._cache = None
        mgr.create("global", tags=["|".join(f"project-{i:03d}" for i in range(100))])
        t0 = time.perf_counter()
        g = mgr.build("global")
        global_s = time.perf_counter() - t0
        out["global"] = {"files": g.ready, "chunks": g.chunks, "cold_build_s": round(global_s, 2)}
        out["ratio_global_over_workspace_cold"] = {k: round(global_s / v["cold_build_s"], 1)
                                                   for k, v in out["workspaces"].items()}
        print(json.dumps(out, indent=2))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def side_by_side(args) -> None:
    """This checkout and ``--against``, one fresh process each per round, alternating."""
    import statistics
    import subprocess

    only = args.only or "5%"
    versions = {"this": Path(__file__).resolve().parents[1], "against": args.against.resolve()}
    runs: dict[str, list[dict]] = {k: [] for k in versions}
    for _ in range(args.rounds):
        for label, src in versions.items():
            env = dict(os.environ, SPAR_SRC=str(src), PYTHONPATH=str(src))
            done = subprocess.run([sys.executable, __file__, "--files", str(args.files), "--only", only, "--no-global"],
                                  env=env, capture_output=True, text=True, check=True, timeout=3600)
            runs[label].append(json.loads(done.stdout)["workspaces"][only])
    cold = {k: statistics.median(r["cold_build_s"] for r in v) for k, v in runs.items()}
    print(json.dumps({"benchmark": "workspace_build_side_by_side", "files": args.files, "workspace": only,
                      "load_avg": os.getloadavg(), "versions": {k: {"source": str(versions[k]), "runs": runs[k],
                                                                    "cold_build_s_median": cold[k]} for k in versions},
                      "cold_speedup": round(cold["against"] / cold["this"], 2)}, indent=2))


if __name__ == "__main__":
    main()

"""Scan speed, before/after side by side: `spar index` of one share as a user runs it.

Each round runs every labelled source (a checkout of the package: `git archive <commit>
spar_desktop resources | tar -x -C DIR`) as a CLI subprocess under /usr/bin/time -v on a fresh
data dir, alternating the labels, then re-scans the unchanged share once with the data dir
just built. Prints JSON (wall, CPU = user+system, peak RSS per run, medians and after/before
ratios) and writes it to --out.
Usage: python benchmarks/scan_speed.py --share DIR --source before=DIR --source after=DIR
       [--rounds 2] [--out benchmarks/results/scan_speed.json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

_FIELDS = {"wall": r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)",
           "user": r"User time \(seconds\): (\S+)", "sys": r"System time \(seconds\): (\S+)",
           "rss_kb": r"Maximum resident set size \(kbytes\): (\d+)"}


def _seconds(clock: str) -> float:
    parts = [float(p) for p in clock.split(":")]
    return sum(p * 60 ** i for i, p in enumerate(reversed(parts)))


def run_index(source: str, data_dir: Path, share: str) -> dict:
    env = dict(os.environ, PYTHONPATH=source, QT_QPA_PLATFORM="offscreen", HF_HUB_OFFLINE="1")
    cmd = ["/usr/bin/time", "-v", sys.executable, "-m", "spar_desktop.cli", "--data-dir", str(data_dir),
           "index", share, "--quiet"]
    # Run outside any checkout: `python -m` puts the working directory first on sys.path, so run
    # from a repository both labels would import that repository's package, not their source.
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True, cwd=data_dir.parent)
    found = {k: re.search(p, done.stderr).group(1) for k, p in _FIELDS.items()}
    return {"wall_s": round(_seconds(found["wall"]), 2),
            "cpu_s": round(float(found["user"]) + float(found["sys"]), 2),
            "rss_mb": round(int(found["rss_kb"]) / 1024), "summary": done.stdout.strip().splitlines()[-1],
            "load_avg_1m": round(os.getloadavg()[0], 2)}


def resolved_package(source: str, cwd: Path) -> str:
    """Where a run with this source imports spar_desktop from (recorded: proves which code ran)."""
    env = dict(os.environ, PYTHONPATH=source)
    return subprocess.run([sys.executable, "-c", "import spar_desktop; print(spar_desktop.__file__)"], env=env,
                          capture_output=True, text=True, check=True, cwd=cwd).stdout.strip()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--share", required=True)
    ap.add_argument("--source", action="append", required=True, help="label=DIR")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--out")
    args = ap.parse_args()
    sources = dict(s.split("=", 1) for s in args.source)
    n_files = sum(len(f) for _, _, f in os.walk(args.share))
    runs: dict[str, dict[str, list]] = {label: {"first": [], "rescan": []} for label in sources}
    work = Path(tempfile.mkdtemp(prefix="spar-scan-speed-"))
    resolved = {label: resolved_package(src, work) for label, src in sources.items()}
    try:
        for r in range(args.rounds):
            for label in (list(sources) if r % 2 == 0 else list(reversed(sources))):
                data = work / f"{label}-{r}"
                runs[label]["first"].append(run_index(sources[label], data, args.share))
                runs[label]["rescan"].append(run_index(sources[label], data, args.share))
                shutil.rmtree(data)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    med = {label: {kind: {k: statistics.median(x[k] for x in xs) for k in ("wall_s", "cpu_s", "rss_mb")}
                   for kind, xs in kinds.items()} for label, kinds in runs.items()}
    for m in med.values():
        m["first"]["files_per_s_wall"] = round(n_files / m["first"]["wall_s"])
        m["first"]["files_per_s_cpu"] = round(n_files / m["first"]["cpu_s"])
    out = {"benchmark": "scan_speed", "share": args.share, "files": n_files, "rounds": args.rounds,
           "sources": sources, "imported_from": resolved, "runs": runs, "median": med}
    labels = list(sources)
    if len(labels) == 2:
        a, b = labels
        out[f"ratio_{b}_over_{a}"] = {kind: {k: round(med[b][kind][k] / med[a][kind][k], 3)
                                             for k in ("wall_s", "cpu_s", "rss_mb")} for kind in ("first", "rescan")}
    text = json.dumps(out, indent=1)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()

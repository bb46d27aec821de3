"""Scan speed, before/after side by side: `spar index` of one share as a user runs it.

Each round runs every labelled source (a checkout of the package: `git archive <commit>
spar_desktop resources | tar -x -C DIR`) as a CLI subprocess under /usr/bin/time -v on a fresh
data dir, alternating the labels, then re-scans the unchanged share once with the data dir
just built. Prints JSON (wall, CPU = user+system, peak RSS per run, medians and after/before
ratios) and writes it to --out. Each first scan's index is also summarised as a digest of what it
stored (files without ids and times, links, tags, edges: `table_digest`), so the runs show the
codes stored the same rows; and, once per round, a bare listing + lstat of the whole share
(`bare_walk`, the floor of a re-scan) runs in the same way, for comparison.
`--index DATA_DIR` skips the first scans: every label re-scans the share into that data dir (an index of
the unchanged share, built before; an unchanged re-scan writes no file row), alternated, with the bare walk.
Usage: python benchmarks/scan_speed.py --share DIR --source before=DIR --source after=DIR
       [--rounds 2] [--cold] [--index DATA_DIR] [--out benchmarks/results/scan_speed.json]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import sqlite3
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


_BARE_WALK = """
import os, sys
n, stack = 0, [sys.argv[1]]
while stack:
    with os.scandir(stack.pop()) as it:
        for e in it:
            if e.is_dir(follow_symlinks=False):
                stack.append(e.path)
            else:
                e.stat(follow_symlinks=False)
                n += 1
print(n)
"""

_DIGESTS = {
    "files": "SELECT f.path, f.raw_path, f.rel_path, f.name, f.size, f.mtime_ns, f.content_hash, f.content_version, "
             "f.format, f.title, f.author, f.created_at, f.modified_at, f.page_count, f.status, f.error, f.extra, "
             "p.path FROM files f LEFT JOIN files p ON p.id = f.parent_id ORDER BY f.path",
    "links": "SELECT f.path, t.key, l.source, l.score, l.confirmed FROM file_tags l JOIN files f ON f.id = l.file_id "
             "JOIN tags t ON t.id = l.tag_id ORDER BY f.path, t.key, l.source",
    "tags": "SELECT key, value, source, description FROM tags ORDER BY key",
    "edges": "SELECT a.key, b.key FROM tag_edges e JOIN tags a ON a.id = e.parent_id JOIN tags b ON b.id = e.child_id "
             "ORDER BY a.key, b.key",
}


def table_digest(data_dir: Path) -> dict:
    """Row counts and a SHA-256 per table of what a scan stored (no ids, no times of the run)."""
    con = sqlite3.connect(f"file:{data_dir / 'library.sqlite3'}?mode=ro", uri=True)
    out = {}
    try:
        for name, sql in _DIGESTS.items():
            h, n = hashlib.sha256(), 0
            for row in con.execute(sql):
                h.update(repr(row).encode())
                n += 1
            out[name] = f"{n} {h.hexdigest()[:16]}"
    finally:
        con.close()
    return out


def bare_walk(share: str, cwd: Path) -> dict:
    done = subprocess.run(["/usr/bin/time", "-v", sys.executable, "-c", _BARE_WALK, share],
                          capture_output=True, text=True, check=True, cwd=cwd)
    found = {k: re.search(p, done.stderr).group(1) for k, p in _FIELDS.items()}
    return {"wall_s": round(_seconds(found["wall"]), 2),
            "cpu_s": round(float(found["user"]) + float(found["sys"]), 2),
            "files": int(done.stdout), "load_avg_1m": round(os.getloadavg()[0], 2)}


def drop_page_cache() -> None:
    os.sync()
    Path("/proc/sys/vm/drop_caches").write_text("1\n")


def resolved_package(source: str, cwd: Path) -> str:
    """Where a run with this source imports spar_desktop from (recorded: proves which code ran)."""
    env = dict(os.environ, PYTHONPATH=source)
    return subprocess.run([sys.executable, "-c", "import spar_desktop; print(spar_desktop.__file__)"], env=env,
                          capture_output=True, text=True, check=True, cwd=cwd).stdout.strip()


def rescan_only(args) -> None:
    sources = dict(s.split("=", 1) for s in args.source)
    runs: dict[str, list] = {label: [] for label in sources}
    walks = []
    work = Path(tempfile.mkdtemp(prefix="spar-rescan-"))
    try:
        for r in range(args.rounds):
            for label in (list(sources) if r % 2 == 0 else list(reversed(sources))):
                runs[label].append(run_index(sources[label], Path(args.index), args.share))
            walks.append(bare_walk(args.share, work))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    med = {label: {k: statistics.median(x[k] for x in xs) for k in ("wall_s", "cpu_s", "rss_mb")}
           for label, xs in runs.items()}
    out = {"benchmark": "scan_speed_rescan", "share": args.share, "index": args.index, "rounds": args.rounds,
           "sources": sources, "runs": runs, "median": med, "bare_walk": walks,
           "bare_walk_median": {k: statistics.median(w[k] for w in walks) for k in ("wall_s", "cpu_s")}}
    text = json.dumps(out, indent=1)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--share", required=True)
    ap.add_argument("--source", action="append", required=True, help="label=DIR")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--out")
    ap.add_argument("--index", help="only re-scan, into this data dir (an index of the share)")
    ap.add_argument("--cold", action="store_true",
                    help="drop the page cache before each first scan (root): a share scanned for the first time is "
                         "not in memory; without it, whoever scans first reads the disk for the others")
    args = ap.parse_args()
    if args.index:
        rescan_only(args)
        return
    sources = dict(s.split("=", 1) for s in args.source)
    n_files = sum(len(f) for _, _, f in os.walk(args.share))
    runs: dict[str, dict[str, list]] = {label: {"first": [], "rescan": []} for label in sources}
    walks, digests = [], {label: [] for label in sources}
    work = Path(tempfile.mkdtemp(prefix="spar-scan-speed-"))
    resolved = {label: resolved_package(src, work) for label, src in sources.items()}
    try:
        for r in range(args.rounds):
            for label in (list(sources) if r % 2 == 0 else list(reversed(sources))):
                data = work / f"{label}-{r}"
                if args.cold:
                    drop_page_cache()
                runs[label]["first"].append(run_index(sources[label], data, args.share))
                digests[label].append(table_digest(data))
                runs[label]["rescan"].append(run_index(sources[label], data, args.share))
                shutil.rmtree(data)
            walks.append(bare_walk(args.share, work))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    med = {label: {kind: {k: statistics.median(x[k] for x in xs) for k in ("wall_s", "cpu_s", "rss_mb")}
                   for kind, xs in kinds.items()} for label, kinds in runs.items()}
    for m in med.values():
        m["first"]["files_per_s_wall"] = round(n_files / m["first"]["wall_s"])
        m["first"]["files_per_s_cpu"] = round(n_files / m["first"]["cpu_s"])
    out = {"benchmark": "scan_speed", "share": args.share, "files": n_files, "rounds": args.rounds, "cold": args.cold,
           "sources": sources, "imported_from": resolved, "runs": runs, "median": med, "bare_walk": walks,
           "table_digest": digests,
           "same_tables": len({json.dumps(d, sort_keys=True) for ds in digests.values() for d in ds}) == 1}
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

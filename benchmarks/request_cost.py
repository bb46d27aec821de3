"""What a later `spar ws create --prompt` costs, before/after side by side (issues 29, 30).

One index of the share (`spar index SHARE`, made with the first source) is copied once per source;
each source then runs, as CLI subprocesses under /usr/bin/time -v on its own copy: the first
request (it embeds the tag vocabulary), then rounds of the later requests, alternating the sources
request by request. Round 1 asks prompts the data dir has not seen (their words' and the request's
vectors are not cached: the encoder loads), round 2 asks the same prompts again (cached). Each
request is a new workspace. The closing line ("N files, X% of the index") and the funnel must be
the same for every source, or the run says so. Sources are byte-compiled first, as an install is.

Prints JSON (wall, CPU = user + system, peak RSS per run; medians per source and round; after /
before ratios of the CPU medians, the figure that survives a shared machine) and writes it to --out.
Usage: python benchmarks/request_cost.py --share DIR --source before=DIR --source after=DIR
       [--work /tmp/request-cost] [--out benchmarks/results/request_cost.json]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

PROMPTS = ("minutes of the Falcon project", "safety incident reports for Heron", "reports from 2019")
_FIELDS = {"user": r"User time \(seconds\): (\S+)", "sys": r"System time \(seconds\): (\S+)",
           "rss_kb": r"Maximum resident set size \(kbytes\): (\d+)"}


def spar(source: Path, data: Path, *args: str) -> dict:
    """One CLI run: wall/CPU seconds, peak RSS (MB), the closing line and the funnel lines."""
    env = dict(os.environ, PYTHONPATH=str(source), HF_HUB_OFFLINE="1", ANONYMIZED_TELEMETRY="False")
    cmd = ["/usr/bin/time", "-v", sys.executable, "-m", "spar_desktop.cli", "--data-dir", str(data), *args]
    # cwd outside any checkout: ``python -m`` puts the working directory first on sys.path, ahead of
    # PYTHONPATH, so run from a checkout every source would run that checkout's code.
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=data.parent)
    if done.returncode:
        raise SystemExit(f"{' '.join(args)} failed with {source}:\n{done.stderr[-2000:]}")
    found = {k: float(re.search(p, done.stderr).group(1)) for k, p in _FIELDS.items()}
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", done.stderr).group(1)
    lines = done.stdout.splitlines()
    funnel = [x.strip() for x in lines if re.match(r"^\s+\d+\s{2}", x)]
    closing = next((x for x in reversed(lines) if re.search(r"\d+ files, \d+% of the index", x)), "")
    return {"wall_s": round(sum(float(p) * 60 ** i for i, p in enumerate(reversed(wall.split(":")))), 2),
            "cpu_s": round(found["user"] + found["sys"], 2), "peak_rss_mb": round(found["rss_kb"] / 1024),
            "closing_line": closing, "funnel": funnel}


def _median(runs: list[dict], key: str) -> float:
    return round(statistics.median(r[key] for r in runs), 2)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--share", required=True)
    ap.add_argument("--source", action="append", required=True, help="label=DIR (a checkout holding spar_desktop)")
    ap.add_argument("--work", default="/tmp/request-cost", help="data dirs go here (never inside the share)")
    ap.add_argument("--out")
    args = ap.parse_args()
    sources = {label: Path(d).resolve() for label, d in (s.split("=", 1) for s in args.source)}
    for path in sources.values():
        compileall.compile_dir(str(path / "spar_desktop"), quiet=1)
    work = Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    base = work / "index"
    scan = spar(next(iter(sources.values())), base, "index", str(Path(args.share).resolve()), "--quiet")
    result: dict = {"benchmark": "request_cost", "share": args.share, "scan": scan, "sources": {}, "load_average": []}
    for label, src in sources.items():
        shutil.copytree(base, work / label)
        first = spar(src, work / label, "ws", "create", "first", "--prompt", PROMPTS[-1])
        result["sources"][label] = {"source": str(src), "first_request": first, "later": {"1": [], "2": []}}
    for rnd in ("1", "2"):
        for i, prompt in enumerate(PROMPTS):
            result["load_average"].append(round(os.getloadavg()[0], 2))
            for label, src in sources.items():
                run = spar(src, work / label, "ws", "create", f"r{rnd}-{i}", "--prompt", prompt)
                result["sources"][label]["later"][rnd].append({"prompt": prompt, **run})
    labels = list(sources)
    for label in labels:
        entry = result["sources"][label]
        entry["median"] = {f"round {r}": {k: _median(entry["later"][r], k) for k in ("wall_s", "cpu_s", "peak_rss_mb")}
                           for r in ("1", "2")}
    if len(labels) == 2:
        a, b = (result["sources"][x] for x in labels)
        result["ratio_cpu"] = {r: round(b["median"][r]["cpu_s"] / a["median"][r]["cpu_s"], 2) for r in a["median"]}
        result["ratio_cpu"]["first request"] = round(b["first_request"]["cpu_s"] / a["first_request"]["cpu_s"], 2)
        result["same_answers"] = all(x["closing_line"] == y["closing_line"] and x["funnel"] == y["funnel"]
                                     for r in ("1", "2") for x, y in zip(a["later"][r], b["later"][r]))
    text = json.dumps(result, indent=1)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

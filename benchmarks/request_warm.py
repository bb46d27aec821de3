"""A request in a process that has made one before (issue 29: "later requests"): what the app pays
for a new request once it is open, without the CLI's start (imports, opening the index and the
encoder). Runs the CLI's steps in this process — sync the tag index, request → filter, summaries of
candidates, create (which explains) — first once to warm up, then the prompts `--rounds` times, and
prints wall and CPU seconds per request and per step as JSON. On a copy of a data dir made by
`spar index` (it saves workspaces):

    SPAR_DATA_DIR=/tmp/copy python benchmarks/request_warm.py --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import time
import uuid

PROMPTS = ("reports from 2019", "minutes of the Falcon project", "safety incident reports for Heron")


def timed(steps: dict[str, list[float]], name: str, fn, *args, **kwargs):
    w, c = time.perf_counter(), time.process_time()
    out = fn(*args, **kwargs)
    steps.setdefault(f"{name}_wall", []).append(round(time.perf_counter() - w, 3))
    steps.setdefault(f"{name}_cpu", []).append(round(time.process_time() - c, 3))
    return out


def one_request(mgr, prompt: str, steps: dict[str, list[float]]) -> float:
    from spar_desktop.core.workspaces.request_merge import read_request

    start = time.perf_counter()
    timed(steps, "sync_tag_index", mgr.sync_tag_index)
    reading = read_request(prompt, mgr.library.settings, use_model=False)
    flt = timed(steps, "filter_for", mgr.filter_for, prompt, reading=reading)
    timed(steps, "summarise_candidates", mgr.summarise_candidates, flt)
    timed(steps, "create", mgr.create, f"warm-{uuid.uuid4().hex[:8]}", filter=flt, summarised=True)
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", help="also write the result here")
    args = ap.parse_args()
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    from spar_desktop.core.library.database import Library
    from spar_desktop.commands.common import load_settings
    from spar_desktop.core.workspaces.manager import Workspaces

    mgr = Workspaces(Library.open(load_settings(None)))
    warm: dict[str, list[float]] = {}
    first = one_request(mgr, PROMPTS[0], warm)
    steps: dict[str, list[float]] = {}
    walls: dict[str, list[float]] = {p: [] for p in PROMPTS}
    for _ in range(args.rounds):
        for prompt in PROMPTS:
            walls[prompt].append(round(one_request(mgr, prompt, steps), 3))
    every = [w for ws in walls.values() for w in ws]
    result = {"benchmark": "request_warm", "data_dir": os.environ.get("SPAR_DATA_DIR"),
              "load_avg": os.getloadavg(), "warm_up_s": round(first, 3), "per_prompt_wall_s": walls,
              "median_wall_s": statistics.median(every), "max_wall_s": max(every),
              "steps_median": {k: statistics.median(v) for k, v in steps.items()},
              "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}
    print(json.dumps(result, indent=1))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(result, fh, indent=1)


if __name__ == "__main__":
    main()

"""kill -9 trials: `spar index`, `spar ws build`, `spar relations build` and key evolution, each
killed at random points and resumed; every resume is compared with an uninterrupted run.

For each operation: one uninterrupted reference run (its duration sets the kill window), then N
trials killed after uniform(0.05, 1.0) × that duration (the interpreter's start included, so
some kills land before any work and a few after it ended). Prints JSON: per operation, trials,
killed before the end, resumed exactly, SQLite files failing ``PRAGMA integrity_check``, and the
first difference of any inexact resume. The machinery is tests/support/kill_trials.py, which
tests/cli/test_kill_resume.py runs with a few trials.
Usage: python benchmarks/kill_trials.py [--trials 10] [--files 200] [--ops index,build,relations,evolution]
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
from pathlib import Path

sys.path.insert(0, os.environ.get("SPAR_SRC") or str(Path(__file__).resolve().parents[1]))

from tests.support import kill_trials as kt  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=10, help="trials per operation")
    ap.add_argument("--files", type=int, default=200)
    ap.add_argument("--ops", default="index,build,relations,evolution")
    ap.add_argument("--seed", type=int, default=17)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="spar-kill-trials-"))
    rng = random.Random(args.seed)
    started = time.perf_counter()
    try:
        share = kt.write_share(work / "share", n_files=args.files)
        env = kt.child_env(work / "model-cache")
        samples = [str(p) for p in sorted(share.rglob("note-000*.md"))[:3]]
        scenarios = kt.scenarios(share, samples, list(kt.QUERIES) * 3)
        report = {}
        for op in args.ops.split(","):
            scenario = scenarios[op]
            expected, took = kt.reference(scenario, work / f"{op}-reference", env)
            results = []
            for n in range(args.trials):
                after = rng.uniform(0.05, 1.0) * took
                results.append(kt.trial(scenario, work / f"{op}-{n}", env, expected, after))
                shutil.rmtree(work / f"{op}-{n}", ignore_errors=True)
                print(f"{op}: {n + 1}/{args.trials}", file=sys.stderr)
            report[op] = {
                "reference_s": round(took, 2), "trials": len(results),
                "killed_before_the_end": sum(r.killed for r in results),
                "resumed_exactly": sum(r.resumed_exactly for r in results),
                "corrupt": sum(bool(r.integrity) for r in results),
                "inexact": [{"kill_after_s": round(r.kill_after_s, 2), "difference": r.difference, "integrity": r.integrity}
                            for r in results if not r.resumed_exactly],
            }
        print(json.dumps({"benchmark": "kill_trials", "files": args.files, "operations": report,
                          "load_average": os.getloadavg(), "wall_s": round(time.perf_counter() - started, 1)}, indent=1))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

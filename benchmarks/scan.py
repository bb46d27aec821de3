"""Scan benchmark: first metadata-only scan of a generated tree, and an unchanged re-scan.

Prints JSON: files/s of the first scan (target ≥ 15,000 on the 2-core reference machine), files/s
of the best of ``--rescans`` unchanged re-scans, and the ratio first-scan / re-scan time (target
≥ 20), measured side by side in one process on the same tree and index. Wall and CPU seconds
(this process) are both reported, with the load average before and after: on a shared machine
the wall time stretches with the load while the CPU time mostly does not.
Usage: python benchmarks/scan.py [--files 50000] [--rescans 3]
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from spar_desktop.core.config import load_settings  # noqa: E402
from spar_desktop.core.library.database import Library  # noqa: E402
from spar_desktop.core.library.scanner import Scanner  # noqa: E402
from tests.support.corpora import write_generated_tree  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=50_000)
    ap.add_argument("--rescans", type=int, default=3)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="spar-scan-bench-"))
    try:
        root = work / "share"
        t0 = time.perf_counter()
        n = write_generated_tree(root, args.files)
        gen_s = time.perf_counter() - t0
        lib = Library.open(load_settings(work / "data"))
        scanner = Scanner(lib)
        load_before = os.getloadavg()[0]
        c0, t0 = time.process_time(), time.perf_counter()
        [first] = scanner.scan([str(root)])
        first_s, first_cpu = time.perf_counter() - t0, time.process_time() - c0
        rescans, rescan_cpus = [], []
        for _ in range(args.rescans):
            c0, t0 = time.process_time(), time.perf_counter()
            [again] = scanner.scan([str(root)])
            rescans.append(time.perf_counter() - t0)
            rescan_cpus.append(time.process_time() - c0)
            assert again.unchanged == n and again.new == 0, again
        rescan_s = min(rescans)
        rescan_cpu = min(rescan_cpus)
        print(json.dumps({
            "benchmark": "scan",
            "files": n,
            "generate_tree_s": round(gen_s, 2),
            "first_scan_s": round(first_s, 3),
            "first_scan_files_per_s": round(n / first_s),
            "unchanged_rescan_s": round(rescan_s, 3),
            "unchanged_rescan_files_per_s": round(n / rescan_s),
            "ratio_first_over_rescan": round(first_s / rescan_s, 2),
            "first_scan_cpu_s": round(first_cpu, 3),
            "unchanged_rescan_cpu_s": round(rescan_cpu, 3),
            "ratio_cpu": round(first_cpu / rescan_cpu, 2),
            "rescans_s": [round(x, 3) for x in rescans],
            "targets": {"first_scan_files_per_s": 15000, "ratio_first_over_rescan": 20},
            "new_recorded": first.new,
            "load_average_1min": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        }, indent=2))
        lib.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

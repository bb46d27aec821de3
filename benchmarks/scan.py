"""Scan benchmark: first metadata-only scan of a generated tree, and an unchanged re-scan.

Prints JSON: files/s of the first scan (target ≥ 5,000 on the 2-core reference machine) and the
ratio first-scan / unchanged-re-scan time (target ≥ 10), measured side by side in one run.
Usage: python benchmarks/scan.py [--files 50000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
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
        t0 = time.perf_counter()
        [first] = scanner.scan([str(root)])
        first_s = time.perf_counter() - t0
        rescans = []
        for _ in range(args.rescans):
            t0 = time.perf_counter()
            [again] = scanner.scan([str(root)])
            rescans.append(time.perf_counter() - t0)
            assert again.unchanged == n and again.new == 0, again
        rescan_s = min(rescans)
        print(json.dumps({
            "benchmark": "scan",
            "files": n,
            "generate_tree_s": round(gen_s, 2),
            "first_scan_s": round(first_s, 3),
            "first_scan_files_per_s": round(n / first_s),
            "unchanged_rescan_s": round(rescan_s, 3),
            "unchanged_rescan_files_per_s": round(n / rescan_s),
            "ratio_first_over_rescan": round(first_s / rescan_s, 2),
            "targets": {"first_scan_files_per_s": 5000, "ratio_first_over_rescan": 10},
            "new_recorded": first.new,
        }, indent=2))
        lib.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

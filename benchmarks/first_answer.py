"""Time to the first answer after "Build" (issue 30), in-process as the app does it.

On a generated share (default 2,000 Markdown notes, cold embedding cache) the encoder is loaded
first (the app's warm-up), then the build starts on a worker thread while the main thread
searches the workspace every 50 ms until it answers, then every 2 s. Prints JSON: build start
→ first search with hits (its dense coverage), the first hybrid search whose meaning side covers
half the passages, and the full build time beside it, with the ratio first answer / full build
(before issue 30 the first answer came at the end of the build: ratio 1).
Usage: python benchmarks/first_answer.py [--files 2000] [--out benchmarks/results/first_answer.json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, os.environ.get("SPAR_SRC") or str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from benchmarks.workspace_build import write_share  # noqa: E402
from spar_desktop.core.config import load_settings  # noqa: E402
from spar_desktop.core.library.database import Library  # noqa: E402
from spar_desktop.core.library.scanner import Scanner  # noqa: E402
from spar_desktop.core.workspaces.errors import WorkspaceError  # noqa: E402
from spar_desktop.core.workspaces.manager import Workspaces  # noqa: E402
from spar_desktop.core.workspaces.selection import WorkspaceFilter  # noqa: E402

QUERY = "turbine gearbox inspection"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="spar-first-answer-"))
    try:
        share = work / "share"
        write_share(share, args.files, folders=20)
        lib = Library.open(load_settings(work / "data"))
        Scanner(lib).scan([str(share)])
        mgr = Workspaces(lib)
        mgr.engine.encoder.encode_query("warm up")  # the app loads the model at start-up
        mgr.create("bench", filter=WorkspaceFilter(all_files=True))
        out = measure(mgr, args.files)
        mgr.engine.close()
        lib.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    text = json.dumps(out, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")


def measure(mgr: Workspaces, files: int) -> dict:
    result: dict = {}
    load_before = os.getloadavg()[0]  # the machine is shared: say how busy it was
    t0 = time.perf_counter()

    def build() -> None:
        result["report"] = mgr.build("bench")
        result["build_s"] = time.perf_counter() - t0

    worker = threading.Thread(target=build)
    worker.start()
    first = half = None
    searches = 0
    timeline = []  # (seconds, dense coverage) of the searches after the first answer
    while worker.is_alive():
        try:
            res = mgr.search("bench", QUERY, k=10, build_if_needed=False)
            searches += 1
        except WorkspaceError:
            res = None  # not searchable yet (no snapshot published)
        now = time.perf_counter() - t0
        if res is not None and res.hits and first is None:
            first = {"seconds": round(now, 3), "dense_coverage": round(res.dense_coverage, 4),
                     "keyword_coverage": round(res.keyword_coverage, 4), "building": res.building,
                     "hits": len(res.hits), "latency_ms": round(res.latency_ms, 1)}
        elif res is not None and res.hits:
            point = (round(now, 1), round(res.dense_coverage, 3), round(res.keyword_coverage, 3))
            if not timeline or timeline[-1][1:] != point[1:]:  # when the coverage changed
                timeline.append(point)
            if half is None and res.dense_coverage >= 0.5:
                half = {"seconds": round(now, 3), "dense_coverage": round(res.dense_coverage, 4)}
        # Until the first answer, as fast as a user could retype; then every 2 s (a search costs
        # the build CPU: the query is encoded).
        worker.join(0.05 if first is None else 2.0)
    worker.join()
    report = result["report"]
    build_s = result["build_s"]
    final = mgr.search("bench", QUERY, k=10)
    return {
        "benchmark": "first_answer", "files": files, "ready_files": report.ready, "chunks": report.chunks,
        "first_answer": first, "half_meaning_coverage": half, "searches_during_build": searches,
        "coverage_changes [s, dense, keyword]": timeline,
        "keyword_searchable_s (build report)": round(report.searchable_seconds or 0.0, 3),
        "full_build_s": round(build_s, 2),
        "first_answer_over_full_build": round(first["seconds"] / build_s, 4) if first else None,
        "after_build": {"dense_coverage": final.dense_coverage, "building": final.building},
        "load_average_1min": {"start": round(load_before, 1), "end": round(os.getloadavg()[0], 1),
                              "cpus": os.cpu_count()},
    }


if __name__ == "__main__":
    main()

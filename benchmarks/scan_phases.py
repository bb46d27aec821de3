"""`spar ...` run in this process with timers around a first scan's main steps (issue 29).

    PYTHONPATH=TREE python benchmarks/scan_phases.py --data-dir DIR index SHARE --quiet

At exit it prints to stderr, per step, [wall s, CPU s of the calling thread, calls], and this process's
user + sys and peak RSS (the probe helper's CPU is not in them: `/usr/bin/time` around it counts both).
NOAHEAD=1 keeps the probe helper from starting; XPRAGMAS="name=value;..." adds PRAGMAs to every SQLite
connection (for trying settings, not what the app does).
"""

from __future__ import annotations

import atexit
import os
import resource
import runpy
import sys
import time

from phase_timer import Phases  # benchmarks/, beside this script

from spar_desktop.core.library import database, scan_walk, scan_write, scanner

PHASES = Phases(time.perf_counter, time.thread_time)
STEPS = ((scan_walk.TreeWalk, "_list_dir", "list_dir"), (scan_walk.TreeWalk, "_sort_entries", "sort_entries"),
         (scan_write.BatchWriter, "flush", "flush"), (scan_write.BatchWriter, "_write_new", "write_new"),
         (scan_write, "insert_rows", "insert_rows"), (scan_write, "insert_tuples", "insert_links"),
         (scan_write.BatchWriter, "_tag_links", "tag_links"), (scanner, "ensure_query_indexes", "index_build"),
         (scanner.Scanner, "_refresh_counts", "refresh_counts"),
         (scanner.planner_stats, "refresh_after_scan", "stats"), (scanner.Scanner, "scan_one", "scan_one"))


def _with_pragmas(tune):
    def tuned(dbapi_conn, record) -> None:
        tune(dbapi_conn, record)
        for pragma in filter(None, os.environ.get("XPRAGMAS", "").split(";")):
            dbapi_conn.execute("PRAGMA " + pragma)
    return tuned


def _without_probe_helper(init):
    def scanner_init(self, *args, **kwargs) -> None:
        kwargs["probe_ahead_after"] = 10**12  # never reached: every file probed in line
        init(self, *args, **kwargs)
    return scanner_init


def report() -> None:
    r = resource.getrusage(resource.RUSAGE_SELF)
    steps = {label: [round(row[0], 2), round(row[1], 2), row[2]] for label, row in PHASES.totals.items()}
    print("PHASES", steps, "self user+sys", round(r.ru_utime, 1), round(r.ru_stime, 1),
          "maxrss MB", r.ru_maxrss // 1024, file=sys.stderr)


if __name__ == "__main__":
    database._tune_sqlite = _with_pragmas(database._tune_sqlite)
    if os.environ.get("NOAHEAD"):
        scanner.Scanner.__init__ = _without_probe_helper(scanner.Scanner.__init__)
    for owner, name, label in STEPS:
        PHASES.wrap(owner, name, label)
    atexit.register(report)
    sys.argv = ["spar"] + sys.argv[1:]
    runpy.run_module("spar_desktop.cli", run_name="__main__")

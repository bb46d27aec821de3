"""`spar ...` run in this process with timers around the first scan's main steps (issue 29).

    PYTHONPATH=TREE python benchmarks/scan_phases.py --data-dir DIR index SHARE --quiet

At exit it prints to stderr, per step, [wall s, CPU s of the calling thread, calls], and this process's
user + sys and peak RSS (the probe helper's CPU is not in them: `/usr/bin/time` around it counts both).
NOAHEAD=1 keeps the probe helper from starting; XPRAGMAS="name=value;..." adds PRAGMAs to every SQLite
connection (for trying settings, not what the app does).
"""

import sys, time, resource, functools, runpy, atexit
from spar_desktop.core.library import scan_walk, scan_write, query_indexes, scanner, bulk
T = {}
import os
from spar_desktop.core.library import database
_orig_tune = database._tune_sqlite
def _tune(dbapi_conn, rec):
    _orig_tune(dbapi_conn, rec)
    for p in filter(None, os.environ.get("XPRAGMAS", "").split(";")):
        dbapi_conn.execute("PRAGMA " + p)
database._tune_sqlite = _tune
def wrap(obj, name, label):
    f = getattr(obj, name)
    @functools.wraps(f)
    def w(*a, **k):
        t0 = time.perf_counter(); c0 = time.thread_time()
        try: return f(*a, **k)
        finally:
            d = T.setdefault(label, [0.0, 0.0, 0]); d[0] += time.perf_counter() - t0; d[1] += time.thread_time() - c0; d[2] += 1
    setattr(obj, name, w)
wrap(scan_walk.TreeWalk, "_list_dir", "list_dir")
wrap(scan_walk.TreeWalk, "_sort_entries", "sort_entries")
wrap(scan_write.BatchWriter, "flush", "flush")
wrap(scan_write.BatchWriter, "_write_new", "write_new")
wrap(scan_write, "insert_rows", "insert_rows")
wrap(scan_write, "insert_tuples", "insert_links")
wrap(scan_write.BatchWriter, "_tag_links", "tag_links")
wrap(scanner, "ensure_query_indexes", "index_build")
wrap(scanner.Scanner, "_refresh_counts", "refresh_counts")
wrap(scanner.planner_stats, "refresh_after_scan", "stats")
wrap(scanner.Scanner, "scan_one", "scan_one")
if os.environ.get("NOAHEAD"):
    d = list(scanner.Scanner.__init__.__defaults__); d[-1] = 10**9; scanner.Scanner.__init__.__defaults__ = tuple(d)
def report():
    r = resource.getrusage(resource.RUSAGE_SELF)
    print("PHASES", {k: [round(v[0], 2), round(v[1], 2), v[2]] for k, v in T.items()}, "self user+sys", round(r.ru_utime, 1), round(r.ru_stime, 1), "maxrss MB", r.ru_maxrss // 1024, file=sys.stderr)
atexit.register(report)
sys.argv = ["spar"] + sys.argv[1:]
runpy.run_module("spar_desktop.cli", run_name="__main__")

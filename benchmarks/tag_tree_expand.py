"""The tag tree alone at N files: its snapshot and its expands, for two source trees side by side.

    python benchmarks/tag_tree_expand.py DATA_DIR [--before /work/main]

app_at_scale.py measures the whole window, where the start-up's background jobs (the tag
vocabulary: minutes at 1M) share the CPU and the GIL with the tree, so its gaps are mostly theirs.
Here each tree, in a fresh interpreter on a copy of DATA_DIR (an index by big_index.py), builds
only a TagPanel (offscreen, shown, 360x800): ``snapshot``: the tag snapshot load (wall s, CPU s),
``shown``: set_snapshot until the top level is laid out, ``expand``: Folders ▸ its root ▸ 6
divisions ▸ their first department ▸ its first project, each expand and its layout timed (wall and
this thread's CPU ms), the same nodes as app_at_scale's; ``filter N: '…'``: each of FILTERS put in
the filter box in turn until its matches show ('' : emptied until the whole tree is back): wall, the
UI thread's longest stall (gaps of a 5 ms timer), its CPU and the process's; peak RSS. The app's
collector settings (runtime.tune_for_ui) apply, as in the app.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
# "project-0001": 288 matches under 48 departments; cleared; "2019": 5,000 (the cap) of ~20,000;
# "2018" typed over it (one filter for another); cleared.
FILTERS = ("project-0001", "", "2019", "2018", "")
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def _timed(app, fn) -> tuple[float, float]:
    w, c = time.perf_counter(), time.thread_time()
    fn()
    app.processEvents()  # the view lays out (and so fetches) what was expanded
    return round((time.perf_counter() - w) * 1000, 1), round((time.thread_time() - c) * 1000, 1)


def _runner():
    """The app's task runner, when this tree's TagPanel takes one (it searches on it)."""
    import inspect

    from spar_desktop.ui.base.tasks import TaskRunner
    from spar_desktop.ui.library.tag_panel import TagPanel

    return TaskRunner() if "runner" in inspect.signature(TagPanel).parameters else None


def _typed(app, panel, text: str, timeout: float = 60.0) -> dict:
    """``text`` put in the filter box as a paste (or a last keystroke) would, then the event loop
    runs (the 200 ms debounce, the search, the opening of the way) until the tree shows that text's
    matches: wall s until then, the UI thread's longest stall (the gaps of a 5 ms timer) and its
    CPU, the process's CPU (the worker's search included), rows shown."""
    from PySide6.QtCore import QElapsedTimer, QEventLoop, Qt, QTimer

    clock, gaps = QElapsedTimer(), []
    clock.start()
    last = [clock.nsecsElapsed()]

    def tick() -> None:
        now = clock.nsecsElapsed()
        gaps.append((now - last[0]) / 1e6)
        last[0] = now

    beat = QTimer()
    beat.setTimerType(Qt.TimerType.PreciseTimer)
    beat.timeout.connect(tick)
    beat.start(5)
    want = text.strip().casefold()
    filtering = lambda: panel.view.model() is panel.proxy  # noqa: E731

    def shown() -> bool:
        pending = getattr(panel, "search_pending", panel._debounce.isActive())
        return not pending and panel.proxy.filter_text == want and filtering() == bool(want)

    w, c, t = time.perf_counter(), time.process_time(), time.thread_time()
    last[0] = clock.nsecsElapsed()
    panel.search.setText(text)
    while not shown() and time.perf_counter() - w < timeout:
        app.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents)
    out = {"shown_s": round(time.perf_counter() - w, 3), "ui_thread_cpu_ms": round((time.thread_time() - t) * 1000, 1),
           "process_cpu_ms": round((time.process_time() - c) * 1000, 1)}
    beat.stop()
    tick()
    g = sorted(gaps)
    out.update({"max_gap_ms": round(g[-1], 1), "median_gap_ms": round(g[len(g) // 2], 1), "ticks": len(g),
                "top_rows": panel.view.model().rowCount(), "done": shown()})
    return out


def _stats(rows: list[tuple[float, float]]) -> dict:
    wall, cpu = sorted(r[0] for r in rows), sorted(r[1] for r in rows)
    return {"n": len(rows), "wall_ms_max": wall[-1], "wall_ms_median": wall[len(wall) // 2],
            "cpu_ms_max": cpu[-1], "cpu_ms_median": cpu[len(cpu) // 2], "cpu_ms_total": round(sum(cpu), 1)}


def measure(data: Path) -> dict:
    from PySide6.QtWidgets import QApplication

    from spar_desktop.core.config import load_settings
    from spar_desktop.core.library import overview
    from spar_desktop.core.library.database import Library
    from spar_desktop.ui.library.tag_panel import TagPanel

    app = QApplication.instance() or QApplication([])
    lib = Library.open(load_settings(data, app=True))
    runner = _runner()
    w, c = time.perf_counter(), time.process_time()
    snapshot = overview.load_tags(lib)
    out: dict = {"snapshot": {"wall_s": round(time.perf_counter() - w, 2), "cpu_s": round(time.process_time() - c, 2)}}
    panel = TagPanel(runner=runner) if runner is not None else TagPanel()
    panel.resize(360, 800)
    panel.show()
    app.processEvents()
    from spar_desktop.ui.base.runtime import tune_for_ui

    tune_for_ui()  # the app's collector settings (app.py calls it once the window exists)
    out["shown_ms"] = _timed(app, lambda: panel.set_snapshot(snapshot))
    view = panel.view
    model = view.model()
    folders = next(model.index(r, 0) for r in range(model.rowCount()) if model.index(r, 0).data() == "Folders")
    rows = [_timed(app, lambda: view.expand(folders))]
    level = [folders]
    for width in (1, 6, 1, 1):
        nxt = []
        for parent in level:
            for r in range(min(width, model.rowCount(parent))):
                child = model.index(r, 0, parent)
                rows.append(_timed(app, lambda: view.expand(child)))
                nxt.append(child)
        level = nxt
    out["expand"] = _stats(rows)
    out["expand_ms"] = rows
    for step, text in enumerate(FILTERS, 1):
        out[f"filter {step}: {text!r}"] = _typed(app, panel, text)
    out["peak_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    lib.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data_dir", type=Path)
    ap.add_argument("--before", type=Path, default=Path("/work/main"))
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="spar-tag-tree-"))
    result: dict = {"benchmark": "tag_tree_expand", "index": str(args.data_dir), "load_avg_start": os.getloadavg()}
    try:
        for name, tree in (("before", args.before), ("after", HERE.parent)):
            data = work / name
            shutil.copytree(args.data_dir, data)
            env = dict(os.environ, PYTHONPATH=str(tree), QT_QPA_PLATFORM="offscreen")
            # The schema upgrade (if any) first, apart from the timings.
            subprocess.run([sys.executable, "-c", "from spar_desktop.core.config import load_settings; "
                            "from spar_desktop.core.library.database import Library; "
                            f"Library.open(load_settings({str(data)!r}, app=True)).close()"], env=env, cwd=tree, check=True)
            proc = subprocess.run([sys.executable, __file__, "--measure", str(data)], capture_output=True, text=True,
                                  env=env, cwd=tree)
            result[name] = json.loads(proc.stdout.strip().splitlines()[-1]) if proc.returncode == 0 \
                else {"error": proc.stderr[-3000:]}
            shutil.rmtree(data, ignore_errors=True)
        b, a = result["before"], result["after"]
        if "expand" in a and "expand" in b:
            result["ratios_before_over_after"] = {
                "snapshot_cpu": round(b["snapshot"]["cpu_s"] / max(a["snapshot"]["cpu_s"], 1e-9), 2),
                "expand_cpu_total": round(b["expand"]["cpu_ms_total"] / max(a["expand"]["cpu_ms_total"], 1e-9), 2),
                "expand_wall_max": round(b["expand"]["wall_ms_max"] / max(a["expand"]["wall_ms_max"], 1e-9), 2),
                **{f"{k} max_gap": round(b[k]["max_gap_ms"] / max(a[k]["max_gap_ms"], 1e-9), 2)
                   for k in a if k.startswith("filter") and k in b}}
        result["load_avg_end"] = os.getloadavg()
        print(json.dumps(result, indent=2))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--measure":
        print(json.dumps(measure(Path(sys.argv[2]))))
    else:
        main()

"""The app at N files: window time and memory, and the UI stalls while scrolling the file table,
sorting it and expanding tags, for two source trees side by side in one run.

    python benchmarks/app_at_scale.py --files 1000000 [--index DATA_DIR] [--before /work/main]

An index of N files is written by SQL (benchmarks/big_index.py, with the *before* tree's schema,
so both trees open it; the after tree upgrades its copy first, timed apart as ``upgrade_s``).
Each tree then opens its own copy in a fresh interpreter as a user starts the app (MainWindow
offscreen, no watcher, the engine preload as app.py starts it) and reports:
- ``table_s``: from creating the window to the file table showing its rows (``cpu_s``: the
  process's CPU seconds, all threads, until the table, the tags and the window were ready); ``tags_s``: to the tag
  tree getting its snapshot; ``window_s``: to the table, tags and issues all shown and every
  start-up task done (runner idle; ``tasks``: each finished task's title and time); RSS then and its
  peak (VmHWM);
- ``scroll``: a 10 ms heartbeat's gaps while the table is scrolled a page at a time (150 steps)
  and then dragged to 40 random places, 15 ms apart (target: max ≤ 50 ms);
- ``expand``: the gaps while Folders, its root, 6 divisions, their first departments and
  projects are expanded one by one, 15 ms apart;
- ``sort``: clicking the Size header: time until the table shows that order, and the gaps;
- with ``--early``, ``scroll_early``: 60 pages and 20 drags as soon as the table and the tags show,
  while the start-up's background work (the rest of the listing, workspaces, the engine preload, the
  vocabulary job) runs; the phases above come after it, once the runner is idle;
- with ``--mid``, ``scroll_mid``: the same once the vocabulary job has encoded its first batch (its
  ``job_waited_s``: how long background work gave way to the scrolling).
``--probe`` (benchmarks/stall_probe.py) splits each gap over 50 ms into the UI thread's CPU, its
run-queue wait, the rest (blocked: the GIL), collections, other threads' CPU and the host's steal;
``call_ms``: the synchronous part of each step (the scroll bar's setValue, the view's expand).
Gaps are reported for all ticks and for those the host stole no CPU in (ui_stall.py's rule), with
``idle``: 3 s of the same heartbeat with nothing to do, the loaded machine's own floor.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def _rss() -> dict:
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    kb = lambda k: round(float(fields.get(k, "0 kB").split()[0]) / 1024, 1)  # noqa: E731
    return {"rss_mb": kb("VmRSS"), "peak_mb": kb("VmHWM")}


class Heartbeat:
    def __init__(self) -> None:
        from PySide6.QtCore import QElapsedTimer, Qt, QTimer

        from ui_stall import _steal_jiffies

        self.steal = _steal_jiffies
        self.ticks: list[tuple[float, bool]] = []
        self.clock = QElapsedTimer()
        self.clock.start()
        self.last, self.last_steal = self.clock.nsecsElapsed(), self.steal()
        self.timer = QTimer()
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.timeout.connect(self.tick)
        self.probe = None
        if os.environ.get("SPAR_STALL_PROBE"):  # --probe: what each gap over 50 ms was made of
            from stall_probe import StallProbe

            self.probe = StallProbe()
        self.timer.start(10)

    def tick(self) -> None:
        now, steal = self.clock.nsecsElapsed(), self.steal()
        stolen = steal is not None and self.last_steal is not None and steal > self.last_steal
        self.ticks.append(((now - self.last) / 1e6, stolen))
        if self.probe is not None:
            self.probe.tick((now - self.last) / 1e6, (steal or 0) - (self.last_steal or 0))
        self.last, self.last_steal = now, steal

    def take(self) -> dict:
        from ui_stall import _stats

        out, self.ticks = _stats(self.ticks), []
        if self.probe is not None:
            out["probe"] = self.probe.take()
        return out


def _pump(app, seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        app.processEvents()
        time.sleep(0.002)


def _wait(app, cond, timeout: float) -> bool:
    end = time.perf_counter() + timeout
    while not cond() and time.perf_counter() < end:
        _pump(app, 0.01)
    return bool(cond())


def _expand(app, panel, beat: Heartbeat) -> dict:
    """Folders ▸ its root ▸ 6 divisions ▸ their first department ▸ its first project."""
    view, model = panel.view, panel.view.model()
    expanded = 0

    calls: list[float] = []

    def expand(index) -> None:
        nonlocal expanded
        t = time.perf_counter()
        view.expand(index)
        calls.append((time.perf_counter() - t) * 1000)
        expanded += 1
        _pump(app, 0.015)

    beat.take()
    folders = next((model.index(r, 0) for r in range(model.rowCount()) if model.index(r, 0).data() == "Folders"), None)
    if folders is None:
        return {"expanded": 0}
    expand(folders)
    level = [folders]
    for width in (1, 6, 1, 1):
        nxt = []
        for parent in level:
            for r in range(min(width, model.rowCount(parent))):
                child = model.index(r, 0, parent)
                expand(child)
                nxt.append(child)
        level = nxt
    return {"expanded": expanded, "call_ms": _call_stats(calls), **beat.take()}


def _call_stats(ms: list[float]) -> dict:
    """The synchronous part of each step (the view's call itself, before the event loop runs)."""
    ordered = sorted(ms) or [0.0]
    return {"max": round(ordered[-1], 1), "median": round(ordered[len(ordered) // 2], 1)}


def _scroll(app, fp, beat: Heartbeat, pages: int, drags: int, seed: int) -> dict:
    """``pages`` page-down steps, then ``drags`` drags of the scroll bar to random places, 15 ms apart."""
    bar = fp.table.verticalScrollBar()
    rng = random.Random(seed)
    calls: list[float] = []

    def scroll_to(value: int) -> None:
        t = time.perf_counter()
        bar.setValue(value)
        calls.append((time.perf_counter() - t) * 1000)
        _pump(app, 0.015)

    beat.take()
    for _ in range(pages):
        scroll_to(bar.value() + bar.pageStep())
    for _ in range(drags):
        scroll_to(rng.randrange(max(1, bar.maximum())))
    return {"rows_at_end": fp.model.rowCount(), "page_reads": getattr(fp.model, "page_reads", None),
            "call_ms": _call_stats(calls), "load": os.getloadavg()[0], **beat.take()}


def measure(data: Path, files: int, timeout: float) -> dict:
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication

    from spar_desktop.core.config import load_settings
    from spar_desktop.core.library.database import Library
    from spar_desktop.ui.base.runtime import tune_for_ui
    from spar_desktop.ui.main_window import MainWindow

    app = QApplication.instance() or QApplication([])
    out: dict = {"tree": str(Path(sys.modules["spar_desktop"].__file__).parents[1])}
    t0 = time.perf_counter()
    settings = load_settings(data, app=True)
    lib = Library.open(settings)
    window = MainWindow(settings, lib, watch=False, interactive=False)
    window.show()
    tune_for_ui()
    if settings.preload:  # as app.py does: the engine's imports and the encoder, on a worker
        from spar_desktop.ui.base.runtime import preload_in_background

        when_shown = getattr(window, "when_library_shown", lambda fn: fn())  # the before tree: at once
        when_shown(lambda: preload_in_background(window.runner, settings))
    out["window_shown_s"] = round(time.perf_counter() - t0, 2)
    beat = Heartbeat()
    fp = window.file_panel
    table_at: list[float] = []
    # When the tag tree got its snapshot, and what else the runner did before it went idle (the
    # encoder's preload and background jobs count in window_s, not in the tree's time).
    tags_at: list[float] = []
    cpu0 = time.process_time()  # the process's CPU seconds (all threads) from creating the window
    cpu_at: dict[str, float] = {}
    window.controller.tags_loaded.connect(lambda _s: (tags_at.append(time.perf_counter() - t0),
                                                      cpu_at.setdefault("tags", time.process_time() - cpu0)))
    tasks: list[tuple[str, float]] = []
    window.runner.task_finished.connect(lambda h: tasks.append((h.title, round(time.perf_counter() - t0, 2))))
    encoding: list[bool] = []  # the vocabulary job has encoded a batch (--mid)

    def watch_job(handle) -> None:
        if handle.title == "Preparing the tag vocabulary":
            handle.progress_changed.connect(lambda p: encoding.append(True) if p.done and "embedded" in p.message else None)

    window.runner.task_started.connect(watch_job)

    def ready_now() -> bool:
        if not table_at and fp.model.total > 0:
            table_at.append(time.perf_counter() - t0)
            cpu_at.setdefault("table", time.process_time() - cpu0)
        return window.runner.is_idle() and fp.model.total > 0 and window.tag_panel.model.rowCount() > 0

    if os.environ.get("SPAR_EARLY_SCROLL"):  # --early: scroll as soon as the table and the tags show
        _wait(app, lambda: ready_now() or bool(table_at and tags_at), timeout)
        out["until_shown"] = beat.take()
        out["scroll_early"] = {"at_s": round(time.perf_counter() - t0, 2), **_scroll(app, fp, beat, 60, 20, seed=11),
                               "tasks_running": [h.title for h in window.runner._running.values()]}
        fp.table.verticalScrollBar().setValue(0)
    if os.environ.get("SPAR_MID_SCROLL"):  # --mid: scroll while the vocabulary job encodes
        _wait(app, lambda: bool(encoding) or window.runner.is_idle(), timeout)
        out["scroll_mid"] = {"at_s": round(time.perf_counter() - t0, 2), **_scroll(app, fp, beat, 60, 20, seed=13),
                             "tasks_running": [h.title for h in window.runner._running.values()],
                             "job_waited_s": round(getattr(getattr(window.runner, "user_activity", None), "waited_s", 0.0), 2)}
        fp.table.verticalScrollBar().setValue(0)
    ready = _wait(app, ready_now, timeout)
    out.update(tags_s=round(tags_at[0], 2) if tags_at else None, tasks=tasks[:40],
               cpu_s={k: round(v, 2) for k, v in {**cpu_at, "window": time.process_time() - cpu0}.items()})
    out.update(table_s=round(table_at[0], 2) if table_at else None, window_s=round(time.perf_counter() - t0, 2), ready=ready, table_total=fp.model.total,
               table_rows=fp.model.rowCount(), count_label=fp.count_label.text(), issues=window.issues.total,
               at_window=_rss(), window_phase=beat.take())
    _pump(app, 3.0)  # the control: the same heartbeat with nothing to do (the machine's own floor)
    out["idle"] = beat.take()
    out["scroll"] = _scroll(app, fp, beat, 150, 40, seed=7)
    out["expand"] = _expand(app, window.tag_panel, beat)
    t1 = time.perf_counter()
    fp.table.sortByColumn(3, Qt.SortOrder.DescendingOrder)
    sizes = lambda: [fp.model.record(r).size for r in range(min(50, fp.model.rowCount()))]  # noqa: E731
    sorted_ok = _wait(app, lambda: window.runner.is_idle() and sizes() == sorted(sizes(), reverse=True), timeout)
    out["sort"] = {"sorted": sorted_ok, "s": round(time.perf_counter() - t1, 2), **beat.take()}
    out["after"] = _rss()
    window.close()
    window.runner.shutdown()
    lib.close()
    return out


def _run(tree: Path, *args: str, timeout: float) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree), SPAR_TREE=str(tree), QT_QPA_PLATFORM="offscreen")
    # cwd: `python -c` puts the working directory first on sys.path, which must not be another tree.
    proc = subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, timeout=timeout, cwd=tree)
    if proc.returncode != 0:
        return {"error": proc.stderr[-3000:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=100_000)
    ap.add_argument("--index", type=Path, help="a data dir made by big_index.py (at the before tree's schema)")
    ap.add_argument("--before", type=Path, default=Path("/work/main"), help="the source tree to compare with")
    ap.add_argument("--timeout", type=float, default=900.0)
    ap.add_argument("--probe", action="store_true", help="split each gap over 50 ms (benchmarks/stall_probe.py)")
    ap.add_argument("--early", action="store_true",
                    help="also scroll as soon as the table and tags show, while the start-up's background work runs")
    ap.add_argument("--mid", action="store_true",
                    help="also scroll once the tag vocabulary job is encoding (it gives way to the user since stop 44)")
    args = ap.parse_args()
    if args.probe:
        os.environ["SPAR_STALL_PROBE"] = "1"
    if args.early:
        os.environ["SPAR_EARLY_SCROLL"] = "1"
    if args.mid:
        os.environ["SPAR_MID_SCROLL"] = "1"
    work = Path(tempfile.mkdtemp(prefix="spar-app-scale-"))
    result: dict = {"benchmark": "app_at_scale", "files": args.files, "load_avg_start": os.getloadavg()}
    try:
        source = args.index
        if source is None:
            source = work / "index" / "data"
            result["index"] = _run(args.before, str(HERE / "big_index.py"), str(source), "--files", str(args.files),
                                   timeout=3 * args.timeout)
        for name, tree in (("before", args.before), ("after", ROOT)):
            data = work / name / "data"
            shutil.copytree(source, data)
            t0 = time.perf_counter()
            opened = _run(tree, "-c", "import sys; from spar_desktop.core.config import load_settings; "
                                      "from spar_desktop.core.library.database import Library; "
                                      f"Library.open(load_settings({str(data)!r})).close(); print('{{}}')",
                          timeout=args.timeout)
            result[name] = {"upgrade_s": round(time.perf_counter() - t0, 1), **opened,
                            **_run(tree, __file__, "--measure", str(data), str(args.files), str(args.timeout),
                                   timeout=2 * args.timeout)}
            shutil.rmtree(work / name, ignore_errors=True)
        b, a = result["before"], result["after"]
        if "window_s" in a and "window_s" in b:
            result["ratios_before_over_after"] = {
                "window_s": round(b["window_s"] / max(a["window_s"], 1e-9), 2),
                "tags_s": round((b.get("tags_s") or 0) / max(a.get("tags_s") or 1e-9, 1e-9), 2),
                "table_s": round((b["table_s"] or 0) / max(a["table_s"] or 1e-9, 1e-9), 2),
                "rss_at_window": round(b["at_window"]["rss_mb"] / max(a["at_window"]["rss_mb"], 1e-9), 2),
                "peak_rss": round(b["after"]["peak_mb"] / max(a["after"]["peak_mb"], 1e-9), 2)}
        result["load_avg_end"] = os.getloadavg()
        print(json.dumps(result, indent=2))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--measure":
        sys.path.insert(0, os.environ.get("SPAR_TREE", str(ROOT)))
        print(json.dumps(measure(Path(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]))))
    else:
        main()

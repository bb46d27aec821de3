"""What a UI stall was made of: for each heartbeat gap over the target, the UI thread's own CPU,
its run-queue wait, the garbage collector, the host's steal and every other thread's CPU.

Used by benchmarks/app_at_scale.py (``--probe``). Linux only (``/proc/self/task/*/schedstat``:
nanoseconds a thread ran and waited runnable for a CPU). A gap is then split into
- ``ui_run_ms``: the UI thread on a CPU (Python or Qt work: painting, layout, our model);
- ``ui_queue_ms``: the UI thread runnable but no CPU free (other processes, or our own threads);
- ``ui_blocked_ms``: the rest: the thread asleep, i.e. waiting for the GIL (or a lock, or I/O);
- ``gc_ms``: collections run during the gap (any thread: they hold the GIL), with their generation;
- ``others_ms``: the process's other threads' CPU in the gap, by name (who may have held the GIL),
  and ``others_queue_ms``: their run-queue waits (a thread that holds the GIL and waits for a CPU
  keeps the UI thread waiting too: a nice thread under load);
- ``steal``: jiffies the host took from this VM in the gap.
A sampler thread records the UI thread's innermost Python frames every ~4 ms (it needs the GIL:
its own longest silence in a gap, ``sampler_silent_ms``, is a stretch no thread released the GIL
to it). faulthandler's GIL-free dump was tried first and crashed the process (it reads the thread
states while Qt's pool threads come and go).
"""

from __future__ import annotations

import collections
import gc
import sys
import os
import threading
import time
from pathlib import Path

TARGET_MS = 50.0


def _schedstat(tid: int | str) -> tuple[int, int]:
    try:
        with open(f"/proc/self/task/{tid}/schedstat", "rb") as f:
            run, wait, _ = f.read().split()
        return int(run), int(wait)
    except (OSError, ValueError):
        return 0, 0


def _tasks() -> dict[int, tuple[int, int]]:
    out = {}
    for tid in os.listdir("/proc/self/task"):
        out[int(tid)] = _schedstat(tid)
    return out


def _names() -> dict[int, str]:
    names = {t.native_id: t.name for t in threading.enumerate() if t.native_id is not None}
    for tid in os.listdir("/proc/self/task"):
        if int(tid) not in names:
            try:
                names[int(tid)] = Path(f"/proc/self/task/{tid}/comm").read_text().strip()
            except OSError:
                pass
    return names


def _frames(frame, root: str, depth: int) -> tuple[str, ...]:
    out = []
    while frame is not None and len(out) < depth:
        code = frame.f_code
        out.append(f"{code.co_filename.replace(root, '.').split('site-packages/')[-1]}:{frame.f_lineno} {code.co_name}")
        frame = frame.f_back
    return tuple(out)


class StallProbe:
    """Call ``tick(gap_ms, stolen_jiffies)`` from the heartbeat; ``take()`` returns the gaps over the target."""

    def __init__(self, target_ms: float = TARGET_MS, tick_ms: float = 10.0) -> None:
        self.target_ms, self.tick_ms = target_ms, tick_ms
        self.main = threading.get_native_id()
        self.last_main = _schedstat(self.main)
        self.last_tasks = _tasks()
        self.gc_ns = 0
        self.gc_events: list[tuple[int, float, str]] = []  # (generation, ms, thread)
        self._gc_start: dict[int, int] = {}
        gc.callbacks.append(self._gc)
        self.samples: collections.deque = collections.deque(maxlen=2000)  # (perf_counter, main's frames)
        self.stalls: list[dict] = []
        self.totals = {"gaps": 0, "ui_run_ms": 0.0, "ui_queue_ms": 0.0, "gc_ms": 0.0}
        self._stop = threading.Event()
        self.main_ident = threading.get_ident()
        threading.Thread(target=self._sample, name="stall-sampler", daemon=True).start()

    def _sample(self) -> None:
        root = str(Path(__file__).resolve().parents[1])
        me, names = threading.get_ident(), {t.ident: t.name for t in threading.enumerate()}
        while not self._stop.wait(0.004):
            frames = sys._current_frames()
            stack = _frames(frames.get(self.main_ident), root, 5)
            others = tuple(sorted((names.get(ident, str(ident)), _frames(f, root, 3)) for ident, f in frames.items()
                                  if ident not in (self.main_ident, me)))
            self.samples.append((time.perf_counter(), stack, others))
            if len(self.samples) % 50 == 0:
                names = {t.ident: t.name for t in threading.enumerate()}

    def _gc(self, phase: str, info: dict) -> None:
        tid = threading.get_native_id()
        if phase == "start":
            self._gc_start[tid] = time.perf_counter_ns()
        elif tid in self._gc_start:
            ns = time.perf_counter_ns() - self._gc_start.pop(tid)
            self.gc_ns += ns
            self.gc_events.append((info.get("generation", -1), ns / 1e6, "ui" if tid == self.main else str(tid)))

    def tick(self, gap_ms: float, steal: int) -> None:
        main = _schedstat(self.main)
        run_ms, queue_ms = (main[0] - self.last_main[0]) / 1e6, (main[1] - self.last_main[1]) / 1e6
        self.last_main = main
        gc_ms, gcs = self.gc_ns / 1e6, self.gc_events
        self.gc_ns, self.gc_events = 0, []
        self.totals["gaps"] += 1
        self.totals["ui_run_ms"] += run_ms
        self.totals["ui_queue_ms"] += queue_ms
        self.totals["gc_ms"] += gc_ms
        if gap_ms > self.target_ms:
            tasks = _tasks()
            names = _names()
            others = {}
            queued = {}
            for tid, (run, wait) in tasks.items():
                if tid == self.main:
                    continue
                last = self.last_tasks.get(tid, (0, 0))
                ms, wait_ms = (run - last[0]) / 1e6, (wait - last[1]) / 1e6
                name = f"{names.get(tid, '?')}[{tid}]"
                if ms >= 1.0:
                    others[name] = round(ms, 1)
                if wait_ms >= 5.0:  # runnable, but no CPU for it (a thread holding the GIL so waits too)
                    queued[name] = round(wait_ms, 1)
            self.last_tasks = tasks
            now = time.perf_counter()
            inside = [s for s in list(self.samples) if s[0] >= now - gap_ms / 1000]
            times = [now - gap_ms / 1000, *(s[0] for s in inside), now]
            silent = max(b - a for a, b in zip(times, times[1:], strict=False)) * 1000
            stacks = collections.Counter(s[1] for s in inside).most_common(3)
            # Each other thread's commonest innermost frames in the gap (a thread in a long C call
            # shows the Python line that made it).
            other_stacks = collections.Counter(o for s in inside for o in s[2]).most_common(4)
            self.stalls.append({
                "gap_ms": round(gap_ms, 1), "ui_run_ms": round(run_ms, 1), "ui_queue_ms": round(queue_ms, 1),
                "ui_blocked_ms": round(max(0.0, gap_ms - run_ms - queue_ms), 1), "gc_ms": round(gc_ms, 1),
                "gcs": [(g, round(ms, 1), t) for g, ms, t in gcs if ms >= 1.0], "steal": steal,
                "others_ms": others, "others_queue_ms": queued, "load": os.getloadavg()[0], "sampler_silent_ms": round(silent, 1),
                "ui_stacks": [{"samples": n, "frames": list(st)} for st, n in stacks],
                "other_stacks": [{"samples": n, "thread": name, "frames": list(st)} for (name, st), n in other_stacks]})
        else:  # the other threads' baseline at every tick (~15 small reads: ~0.2 ms)
            self.last_tasks = _tasks()

    def take(self) -> dict:
        out = {"stalls": self.stalls, "totals": {k: round(v, 1) for k, v in self.totals.items()}}
        self.stalls, self.totals = [], {"gaps": 0, "ui_run_ms": 0.0, "ui_queue_ms": 0.0, "gc_ms": 0.0}
        self.last_tasks = _tasks()
        return out

    def close(self) -> None:
        self._stop.set()
        if self._gc in gc.callbacks:
            gc.callbacks.remove(self._gc)


"""Time left of a long phase, from its elapsed time and its done/total, and how durations read.

Qt-free and stdlib only: the CLI's progress line and the app's task list show the same words
because ``with_eta`` puts them in the progress message itself ("running queries 1,240/20,430,
about 12 min left"); both already show a Progress's message.

The rate is the phase's average since its first report (not since 0: a resumed build starts its
phase at the queries a cancelled one finished, and those cost nothing this time). A phase is a run
of reports with one total and a count that does not go back, whatever their messages say (document
embedding alternates "chunked 12 documents" and "embedding 1,024 chunks (12/100 documents)"); a
new total or a count going back starts the next phase's clock.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace
from typing import Callable, Optional

from spar_desktop.core.progress import Progress, ProgressCallback

MIN_ELAPSED_S = 3.0  # no guess before the phase has run this long: the first batches warm caches


def time_left(elapsed_s: float, done: int, total: int) -> Optional[float]:
    """Seconds left at the rate so far (``done`` of ``total`` units in ``elapsed_s``); None when
    nothing is done yet or the total is unknown."""
    if total <= 0 or done <= 0 or elapsed_s <= 0:
        return None
    return max(0.0, elapsed_s / done * max(0, total - done))


def format_duration(seconds: float) -> str:
    """'40 s', '3 min', '1 h 20 min': rounded to what a person plans by."""
    s = max(0.0, float(seconds))
    if s < 10:
        return f"{max(1, int(round(s)))} s"
    if s < 57.5:
        return f"{int(round(s / 5.0)) * 5} s"
    minutes = int(round(s / 60.0))
    if minutes < 60:
        return f"{minutes} min"
    h, m = divmod(minutes, 60)
    m = int(round(m / 5.0) * 5)
    if m == 60:
        h, m = h + 1, 0
    return f"{h} h {m} min" if m else f"{h} h"


def format_range(low_s: float, high_s: float) -> str:
    """'about 15–35 min', 'under 2 min', 'about 1–3 h': the low end rounded down and the high end
    up (to minutes, to 5 minutes from 10 minutes on, to hours from 90 minutes on), so the range
    holds what was estimated."""
    low, high = max(0.0, low_s), max(low_s, high_s)
    if high < 60:
        return "under a minute"
    if low < 60:
        return f"under {math.ceil(high / 60.0)} min" if high < 90 * 60 else f"under {math.ceil(high / 3600.0)} h"
    if high < 90 * 60:
        step = 5 if high >= 10 * 60 else 1
        lo = max(step, math.floor(low / 60.0 / step) * step)
        hi = max(lo, math.ceil(high / 60.0 / step) * step)
        return f"about {lo} min" if lo == hi else f"about {lo}–{hi} min"
    lo, hi = max(1, math.floor(low / 3600.0)), max(1, math.ceil(high / 3600.0))
    return f"about {lo} h" if lo == hi else f"about {lo}–{hi} h"


def format_time_left(seconds: float) -> str:
    return "less than a minute left" if seconds < 60 else f"about {format_duration(seconds)} left"


class Eta:
    """Follows one phase at a time (see the module doc) and says how long it has left."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, min_elapsed_s: float = MIN_ELAPSED_S) -> None:
        self.clock = clock
        self.min_elapsed_s = min_elapsed_s
        self._total: Optional[int] = None
        self._last = 0
        self._start = (0.0, 0)  # (clock, done) at the phase's first report

    def update(self, done: int, total: Optional[int]) -> Optional[float]:
        """Seconds left in the current phase (None: unknown yet, or no total)."""
        now = self.clock()
        if not total:
            self._total = None
            return None
        if total != self._total or done < self._last:  # another phase, or a new pass over the same items
            self._total, self._last, self._start = total, done, (now, done)
            return None
        self._last = done
        elapsed = now - self._start[0]
        if elapsed < self.min_elapsed_s:
            return None
        return time_left(elapsed, done - self._start[1], total - self._start[1])


def with_eta(progress: ProgressCallback, clock: Callable[[], float] = time.monotonic) -> ProgressCallback:
    """``progress`` with ', about N min left' appended to the message of every report whose phase
    has run long enough to tell (the numbers are unchanged)."""
    eta = Eta(clock)

    def relay(p: Progress) -> None:
        left = eta.update(p.done, p.total)
        if left is None or (p.total is not None and p.done >= p.total):
            progress(p)
            return
        message = f"{p.message}, {format_time_left(left)}" if p.message else format_time_left(left)
        progress(replace(p, message=message))

    return relay

"""Timers around a command's functions, for the ``*_phases.py`` benchmarks: each wrapped function
adds what its calls took on the given clocks, and the number of calls, under a label."""

from __future__ import annotations

import functools
from typing import Callable


class Phases:
    """``totals[label]`` = [seconds on each clock..., calls]."""

    def __init__(self, *clocks: Callable[[], float]) -> None:
        self.clocks = clocks
        self.totals: dict[str, list[float]] = {}

    def wrap(self, owner, name: str, label: str) -> None:
        fn = getattr(owner, name)
        clocks, totals = self.clocks, self.totals

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            start = [clock() for clock in clocks]
            try:
                return fn(*args, **kwargs)
            finally:
                row = totals.setdefault(label, [0.0] * len(clocks) + [0])
                for i, clock in enumerate(clocks):
                    row[i] += clock() - start[i]
                row[-1] += 1

        setattr(owner, name, wrapper)

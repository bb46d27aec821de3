"""Progress reporting and cooperative cancellation shared by every long core operation.

Long operations take ``progress`` and ``cancel`` arguments and check them once per batch, so the
UI (or the CLI) can show a bar and stop the work between batches without killing a thread.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass
from typing import Callable, Optional


class Cancelled(Exception):
    """Raised inside a long operation when its CancelToken was set."""


class UserActivity:
    """When the user last worked the window (scrolled a list, expanded a tag). Background work
    whose token yields to it waits at its batch checks until the window has been quiet for
    ``quiet_s``: on two cores, a vocabulary job's encoder threads and Python otherwise take the
    CPU (and the GIL) the UI thread needs to paint the next page (stop 42: scrolling at 1M files
    while start-up work ran waited 3-5.7 s for a CPU in 80 page steps). Thread-safe: one float,
    written by the UI thread and read by workers."""

    def __init__(self, quiet_s: float = 0.5, clock: Callable[[], float] = time.monotonic) -> None:
        self.quiet_s = quiet_s
        self.clock = clock
        self._last = -math.inf
        self.waited_s = 0.0  # in all: what background work gave way (diagnostics, benchmarks)

    def touch(self) -> None:
        self._last = self.clock()

    def quiet_left(self) -> float:
        """Seconds until the window counts as quiet (<= 0: quiet now)."""
        return self.quiet_s - (self.clock() - self._last)

    def wait_quiet(self, stop: threading.Event) -> float:
        """Block until the window is quiet or ``stop`` is set; returns the seconds waited."""
        start = time.monotonic()
        left = self.quiet_left()
        while left > 0 and not stop.wait(min(left, 0.1)):
            left = self.quiet_left()
        waited = time.monotonic() - start
        self.waited_s += waited
        return waited


class CancelToken:
    """Thread-safe flag a UI thread sets and a worker polls between batches. A background task's
    token may also ``yield_to`` the user: each poll then first waits while the user works the
    window (``UserActivity``); cancelling ends the wait at once."""

    def __init__(self, yield_to: Optional[UserActivity] = None) -> None:
        self._event = threading.Event()
        self._yield_to = yield_to

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def raise_if_cancelled(self) -> None:
        if self._yield_to is not None and self._yield_to.quiet_left() > 0:
            self._yield_to.wait_quiet(self._event)
        if self._event.is_set():
            raise Cancelled()


@dataclass(frozen=True)
class Progress:
    """One immutable progress report; ``total`` is None while unknown (e.g. still listing)."""

    done: int
    total: Optional[int]
    message: str = ""

    @property
    def fraction(self) -> Optional[float]:
        if not self.total:
            return None
        return min(1.0, self.done / self.total)


ProgressCallback = Callable[[Progress], None]


def no_progress(_: Progress) -> None:
    """Default progress sink."""


def check(cancel: Optional[CancelToken]) -> None:
    """Raise Cancelled when ``cancel`` is set; a None token never cancels."""
    if cancel is not None:
        cancel.raise_if_cancelled()

"""Progress reporting and cooperative cancellation shared by every long core operation.

Long operations take ``progress`` and ``cancel`` arguments and check them once per batch, so the
UI (or the CLI) can show a bar and stop the work between batches without killing a thread.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Callable, Optional


class Cancelled(Exception):
    """Raised inside a long operation when its CancelToken was set."""


class CancelToken:
    """Thread-safe flag a UI thread sets and a worker polls between batches."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def raise_if_cancelled(self) -> None:
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

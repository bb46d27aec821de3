"""A memory budget for long work: a runaway becomes a message, not the kernel's OOM kill.

A relations export once grew to 23 GB and the kernel killed it, with the desktop session around
it. Work that can grow with the index (relations build, graph layout, export) runs inside
``memory_budget``: a watcher thread samples the process's resident memory and, past the limit,
cancels the work through its cancel token (the same checks Cancel uses, so finished batches are
kept); the context then raises ``MemoryBudgetExceeded`` with a message that says what to do.
A single allocation too large to fit fails as MemoryError, which is reported the same way.

The limit is 60 % of physical memory, or SPAR_MEMORY_LIMIT_MB (set it lower to test, higher on a
machine given over to one big job). The CLI also caps its data segment at 60 % of physical memory
while a command runs (``capped_process_memory``), so even one huge allocation between two checks
cannot take the machine.
"""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager
from typing import Iterator, Optional

from spar_desktop.core.progress import CancelToken, Cancelled

SHARE_OF_RAM = 0.6
POLL_SECONDS = 0.2


class MemoryBudgetExceeded(RuntimeError):
    """The work needed more memory than its budget; the message is for people."""


def limit_bytes() -> int:
    raw = os.environ.get("SPAR_MEMORY_LIMIT_MB", "").strip()
    if raw:
        try:
            return max(64, int(float(raw))) * 1024 * 1024
        except ValueError:
            pass
    import psutil  # deferred: only long tasks need it

    return int(psutil.virtual_memory().total * SHARE_OF_RAM)


@contextmanager
def capped_process_memory() -> Iterator[None]:
    """RLIMIT_DATA at SHARE_OF_RAM of physical memory while a CLI command runs (POSIX), put back
    after it. Only writable private memory counts, so the reservations that threads and native
    libraries make are not charged; an allocation past it fails with MemoryError (reported like
    the budget) instead of waking the OOM killer. Fixed, unlike the budget: it is the last line."""
    try:
        import resource

        import psutil
    except ImportError:  # Windows
        yield
        return
    cap = int(psutil.virtual_memory().total * SHARE_OF_RAM)
    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    lowered = soft == resource.RLIM_INFINITY or soft > cap
    if lowered:
        resource.setrlimit(resource.RLIMIT_DATA, (cap, hard))
    try:
        yield
    finally:
        if lowered:
            resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))


def budget_message(what: str, limit: int | None = None) -> str:
    limit = limit or limit_bytes()
    return (f"{what} stopped: it needed more than {limit / 2**30:.1f} GB of memory, the limit that keeps this "
            "machine usable. Narrow it to a workspace, or (for an export) leave out the layout with "
            "--no-layout; SPAR_MEMORY_LIMIT_MB raises the limit.")


class _BudgetToken(CancelToken):
    """Cancelled by the user (the parent token) or by the budget."""

    def __init__(self, parent: Optional[CancelToken]) -> None:
        super().__init__()
        self._parent = parent

    @property
    def cancelled(self) -> bool:
        return super().cancelled or (self._parent is not None and self._parent.cancelled)

    def raise_if_cancelled(self) -> None:
        if self.cancelled:
            raise Cancelled()


def _rss() -> int:
    import psutil

    return int(psutil.Process().memory_info().rss)


@contextmanager
def memory_budget(what: str, cancel: Optional[CancelToken] = None, limit: Optional[int] = None) -> Iterator[CancelToken]:
    """Yields the token the work must check (pass it on as its ``cancel``)."""
    limit = limit or limit_bytes()
    token = _BudgetToken(cancel)
    over = threading.Event()
    done = threading.Event()

    def watch() -> None:
        while not done.wait(POLL_SECONDS):
            if _rss() > limit:
                over.set()
                token.cancel()
                return

    watcher = threading.Thread(target=watch, name="memory-budget", daemon=True)
    watcher.start()
    try:
        yield token
    except Cancelled:
        if over.is_set():
            raise MemoryBudgetExceeded(budget_message(what, limit)) from None
        raise
    except MemoryError:
        raise MemoryBudgetExceeded(budget_message(what, limit)) from None
    finally:
        done.set()
        watcher.join(timeout=1)

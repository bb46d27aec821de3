"""Run a call in a fresh thread and hand back what it returned or raised, as if called directly.

Two kinds of callers need a thread of their own: synchronous LLM helpers called from inside a
running event loop (asyncio.run refuses to nest; llm/helpers.run_sync), and background jobs
that lower their own thread's priority so the window and a scan keep the CPU
(``in_low_priority_thread``: tagging, the relation graph's live update). Qt-free, stdlib only.
"""

from __future__ import annotations

import os
import threading
from typing import Any, Callable, Optional, TypeVar

T = TypeVar("T")
NICE = 10  # background jobs' niceness (raised, never lowered)


def call_in_thread(fn: Callable[[], T], name: str, setup: Optional[Callable[[], None]] = None) -> T:
    """``fn()`` run in a new daemon thread named ``name`` (after ``setup()`` there, e.g. a nice
    level, which applies to that thread only); its exception, Cancelled included, is re-raised
    in the caller's thread."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            if setup is not None:
                setup()
            box["value"] = fn()
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    t = threading.Thread(target=target, name=name, daemon=True)
    t.start()
    t.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


def _lower_priority() -> None:
    if hasattr(os, "setpriority") and hasattr(threading, "get_native_id"):
        try:
            tid = threading.get_native_id()
            if os.getpriority(os.PRIO_PROCESS, tid) < NICE:  # lower it, never raise it (`nice spar ...`)
                os.setpriority(os.PRIO_PROCESS, tid, NICE)
        except (OSError, AttributeError):  # not Linux-like, or not allowed: run at normal priority
            pass


def in_low_priority_thread(fn: Callable[[], T], name: str) -> T:
    """``fn()`` in a fresh thread at nice 10 (that thread only), returning or raising as ``fn`` does."""
    return call_in_thread(fn, name, setup=_lower_priority)

"""Run a call in a fresh thread and hand back what it returned or raised, as if called directly.

Two callers need a thread of their own: synchronous LLM helpers called from inside a running
event loop (asyncio.run refuses to nest; chat/ollama_tasks.run_sync) and background updates that
lower their own thread's priority (tagging/job.in_low_priority_thread). Qt-free, stdlib only.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Optional, TypeVar

T = TypeVar("T")


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

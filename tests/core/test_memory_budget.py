"""Work inside a memory budget stops with a message when it outgrows it, keeps what the user's
Cancel means, and does nothing to work that stays within it (real allocations, real watcher)."""

from __future__ import annotations

import time

import psutil
import pytest

from spar_desktop.core.memory_budget import MemoryBudgetExceeded, memory_budget
from spar_desktop.core.progress import CancelToken, Cancelled, check


def _grow(token: CancelToken, step_mb: int = 16, steps: int = 200) -> list:
    """A runaway: keeps allocating (and touching) memory, checking its cancel token as work does."""
    held = []
    for _ in range(steps):
        held.append(bytearray(step_mb * 1024 * 1024))
        check(token)
        time.sleep(0.02)
    return held


def test_a_runaway_is_stopped_with_a_message_and_its_memory_freed():
    base = psutil.Process().memory_info().rss
    with pytest.raises(MemoryBudgetExceeded) as err:
        with memory_budget("The graph export", limit=base + 150 * 2**20) as token:
            _grow(token)
    assert "The graph export stopped" in str(err.value) and "--no-layout" in str(err.value)
    assert psutil.Process().memory_info().rss < base + 600 * 2**20  # stopped near the limit, not at 3.2 GB


def test_work_within_the_budget_runs_to_the_end():
    with memory_budget("The relations build", limit=64 * 2**30) as token:
        assert len(_grow(token, step_mb=1, steps=20)) == 20


def test_the_users_cancel_is_still_a_cancel():
    user = CancelToken()
    user.cancel()
    with pytest.raises(Cancelled):
        with memory_budget("The relations build", user, limit=64 * 2**30) as token:
            check(token)


def test_an_allocation_that_cannot_be_made_is_reported_the_same_way():
    with pytest.raises(MemoryBudgetExceeded):
        with memory_budget("The graph export", limit=64 * 2**30):
            raise MemoryError()

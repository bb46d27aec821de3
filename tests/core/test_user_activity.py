"""Background work gives way while the user works the window: a token that yields to
``UserActivity`` waits at each check until the window has been quiet, and cancelling ends the
wait (the clock here is the test's, so nothing depends on the machine's speed)."""

from __future__ import annotations

import threading

import pytest

from spar_desktop.core.progress import Cancelled, CancelToken, UserActivity


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _checking(token: CancelToken) -> tuple[threading.Thread, dict]:
    state: dict = {"passed": threading.Event(), "error": None}

    def work() -> None:
        try:
            token.raise_if_cancelled()
            state["passed"].set()
        except Cancelled as exc:
            state["error"] = exc

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    return thread, state


def test_a_background_check_waits_while_the_user_works_the_window_and_goes_on_once_quiet():
    clock = Clock()
    activity = UserActivity(quiet_s=0.5, clock=clock)
    assert activity.quiet_left() <= 0  # never touched: quiet
    activity.touch()
    thread, state = _checking(CancelToken(yield_to=activity))
    assert not state["passed"].wait(0.35)  # the clock has not moved: the user is still at it
    clock.now += 0.3
    activity.touch()  # still scrolling
    assert not state["passed"].wait(0.25)
    clock.now += 0.6  # quiet for longer than quiet_s
    thread.join(5)
    assert state["passed"].is_set() and state["error"] is None
    assert activity.waited_s > 0


def test_cancelling_ends_the_wait_and_a_token_without_the_gate_never_waits():
    clock = Clock()
    activity = UserActivity(quiet_s=0.5, clock=clock)
    activity.touch()
    token = CancelToken(yield_to=activity)
    thread, state = _checking(token)
    assert not state["passed"].wait(0.2)
    token.cancel()
    thread.join(5)
    assert isinstance(state["error"], Cancelled) and not state["passed"].is_set()

    CancelToken().raise_if_cancelled()  # a foreground task's token: no wait, nothing raised
    busy_but_not_ours = CancelToken()
    busy_but_not_ours.cancel()
    with pytest.raises(Cancelled):
        busy_but_not_ours.raise_if_cancelled()

"""Requests at the edges: dates outside the calendar give a note or a problem, never a traceback,
and a request's work grows linearly with its length (a 20,000-item list took 10.6 s)."""

from __future__ import annotations

import sys
from datetime import date

import pytest

from spar_desktop.core.workspaces.dates import find_dates
from spar_desktop.core.workspaces.request import parse_request

TODAY = date(2024, 6, 1)


@pytest.mark.parametrize("text", [
    "contracts from the past 3000 years",
    "minutes last 999999999 days",
    "in the last 99999999999999999999 weeks",
    "memos past 200000 months",
    "reports past 2024 years",  # today minus 2024 years is the year 0
    "audits in the last " + "9" * 5000 + " days",  # more digits than int() accepts
])
def test_relative_dates_before_the_year_1_are_clamped_with_a_note(text):
    r = parse_request(text, TODAY)
    assert (r.since, r.until) == (date.min, TODAY)
    assert any("reaches back before the year 1" in n for n in r.notes)
    assert r.problems == ()
    assert not any(ch.isdigit() for k in r.keywords for ch in k)  # the date words are not keywords


@pytest.mark.parametrize("text,since", [
    ("reports past 2023 years", date(1, 6, 1)),  # the last range that fits: not clamped
    ("last 739037 days", date(1, 1, 1)),
    ("in the last 3 weeks", date(2024, 5, 11)),
])
def test_relative_dates_that_fit_are_exact(text, since):
    r = parse_request(text, TODAY)
    assert (r.since, r.until) == (since, None) and r.notes == ()  # up to now: open on the right


def test_find_dates_never_raises_on_far_phrases():
    for text in ("from the past 3000 years", "last 999999999 days", "after 2099 and last 10**9 days",
                 "between the past 99999 years and today", "before Feb 30 2019"):
        findings, problems, rest = find_dates(text, TODAY)
        assert isinstance(rest, str) and all(f.span.start <= f.span.end for f in findings)


def test_a_20000_item_list_keeps_every_keyword():
    words = [f"term{i}" for i in range(20_000)]
    r = parse_request(", ".join(words + ["TERM7", "term19999"]), TODAY)  # repeats, any case, are dropped
    assert r.keywords == tuple(words)


def test_a_long_list_of_dates_is_all_read():
    items = [f"May {2000 + i % 25}" for i in range(10_000)]
    findings, problems, rest = find_dates(", ".join(items), TODAY)
    assert len(findings) == 10_000 and problems == []
    assert rest.replace(",", "").split() == []  # every date word consumed


def _python_calls(text: str) -> int:
    """Python and builtin calls made by parse_request(text): the work it does, free of the clock."""
    calls = 0

    def count(frame, event, arg):
        nonlocal calls
        if event in ("call", "c_call"):
            calls += 1

    before = sys.getprofile()
    sys.setprofile(count)
    try:
        parse_request(text, TODAY)
    finally:
        sys.setprofile(before)
    return calls


def test_work_grows_linearly_with_the_length_of_a_request():
    """Twice the items, about twice the calls (it was four times: every new keyword was compared
    with every earlier one, every date with every date found before it)."""
    def request(n: int) -> str:
        return ", ".join(f"word{i}" if i % 3 else f"in {2000 + i % 25}" for i in range(n))

    small, large = _python_calls(request(1500)), _python_calls(request(3000))
    assert large < 2.3 * small, (small, large)


@pytest.mark.timeout(120)  # a limit, not a measurement: about 1 s now, several minutes before
def test_many_folder_phrases_without_an_end():
    """Each unbounded 'in folder <name>' scanned the rest of the request for where the name ends."""
    r = parse_request(" ".join(f"in folder x{i}" for i in range(8000)) + " #", TODAY)
    assert r.folders == () and len(r.keywords) == 8000

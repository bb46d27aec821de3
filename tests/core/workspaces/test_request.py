"""Plain-language requests → keywords and metadata constraints (rules), relative to a fixed today."""

from __future__ import annotations

from datetime import date

import pytest

from spar_desktop.core.workspaces.request import parse_request

TODAY = date(2026, 11, 22)


def parsed(text: str):
    return parse_request(text, TODAY)


def test_the_papers_example():
    r = parsed("Retrieve all CT scans and reports for patient A dated May 25")
    assert r.keywords == ("CT scans", "reports", "patient A")
    assert (r.since, r.until) == (date(2026, 5, 25), date(2026, 5, 25))
    assert any("no year given" in n for n in r.notes)


@pytest.mark.parametrize("text,since,until", [
    ("reports 2019", date(2019, 1, 1), date(2019, 12, 31)),
    ("reports Q2 2019", date(2019, 4, 1), date(2019, 6, 30)),
    ("budget May 2019", date(2019, 5, 1), date(2019, 5, 31)),
    ("minutes from May 2019", date(2019, 5, 1), date(2019, 5, 31)),
    ("minutes 2019–2021", date(2019, 1, 1), date(2021, 12, 31)),
    ("minutes from 2019 to 2021", date(2019, 1, 1), date(2021, 12, 31)),
    ("between March 2020 and June 2021", date(2020, 3, 1), date(2021, 6, 30)),
    ("policies since 2018", date(2018, 1, 1), None),
    ("policies after 2018", date(2019, 1, 1), None),
    ("memos before March", None, date(2026, 2, 28)),
    ("memos until 2020", None, date(2020, 12, 31)),
    ("contracts last year", date(2025, 1, 1), date(2025, 12, 31)),
    ("contracts this year", date(2026, 1, 1), TODAY),
    ("notes last month", date(2026, 10, 1), date(2026, 10, 31)),
    ("audits in the last 2 years", date(2024, 11, 22), TODAY),
    ("the 2019-05-25 report", date(2019, 5, 25), date(2019, 5, 25)),
    ("results 25 May 2019", date(2019, 5, 25), date(2019, 5, 25)),
    ("results May 25, 2019", date(2019, 5, 25), date(2019, 5, 25)),
])
def test_dates(text, since, until):
    r = parsed(text)
    assert (r.since, r.until) == (since, until), r.to_json()
    assert r.problems == ()


def test_file_types_authors_and_folders():
    r = parsed("spreadsheets and PDFs by Maria Lopez in the Finance folder about turbine costs")
    assert set(r.formats) >= {"csv", "pdf"}
    assert r.authors == ("Maria Lopez",)
    assert r.folders == ("Finance",)
    assert r.keywords == ("turbine costs",)
    assert parsed("slides about budgets").formats == ("pptx", "ppt", "odp")
    assert parsed("emails about the outage").formats == ("eml", "msg", "mbox", "email")
    assert parsed("CT scans of patient B").formats == ()  # 'scans' is a subject, not image files


def test_may_the_verb_is_not_a_date():
    r = parsed("documents that may describe gearbox wear")
    assert (r.since, r.until) == (None, None)
    assert "gearbox wear" in " ".join(r.keywords)


@pytest.mark.parametrize("text,problem", [
    ("", "empty"),
    ("   ", "empty"),
    ("the of and all", "only common words"),
    ("before 2010 since 2015", "contradict"),
    ("meeting notes on Feb 30", "not a real date"),
])
def test_bad_requests_are_explained(text, problem):
    r = parsed(text)
    assert any(problem in p for p in r.problems), r.to_json()


def test_llm_extractor_is_used_and_falls_back():
    r = parse_request("CT reports for patient A", TODAY, llm_keywords=lambda t: ["computed tomography", "patient A"])
    assert r.keywords == ("computed tomography", "patient A") and r.extractor == "llm"

    def broken(_):
        raise ConnectionError("no server")

    r = parse_request("CT reports for patient A", TODAY, llm_keywords=broken)
    assert r.keywords == ("CT reports", "patient A") and r.extractor == "rules"
    assert any("rules were used" in n for n in r.notes)

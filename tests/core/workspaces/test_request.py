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
    ("contracts this year", date(2026, 1, 1), date(2026, 12, 31)),  # an update admits later files of the year
    ("notes last month", date(2026, 10, 1), date(2026, 10, 31)),
    ("audits in the last 2 years", date(2024, 11, 22), None),  # runs up to now: open on the right
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


@pytest.mark.parametrize("text,formats,keywords", [
    # a type word heading its phrase is a file type ...
    ("images of the turbine", ("image",), ("turbine",)),
    ("image files about the outage", ("image",), ("outage",)),
    ("slides of the board meeting", ("pptx", "ppt", "odp"), ("board meeting",)),
    ("pdfs about gearbox wear", ("pdf",), ("gearbox wear",)),
    ("presentations from May 2019", ("pptx", "ppt", "odp"), ()),
    ("all the photos sent by Maria Lopez", ("image",), ()),
    ("slides showing the wind farm", ("pptx", "ppt", "odp"), ("showing wind farm",)),
    # ... a word that names a format is one wherever it stands ...
    ("budget spreadsheets and quarterly PDFs", ("csv", "tsv", "xlsx", "xls", "ods", "pdf"), ("budget", "quarterly")),
    # ... after a content word, or before a noun, it is part of the topic
    ("Do parents perceive body image differently?", (), ("parents perceive body image differently",)),
    ("Can vaginal pH be measured from the wet mount slide?", (), ("vaginal pH measured", "wet mount slide")),
    ("Do communication disorders extend to musical messages?", (), ("communication disorders extend", "musical messages")),
    ("is the radiographic scout image necessary?", (), ("radiographic scout image",)),
    ("posts about image formats like JPEG and GIF", (), ("image formats", "JPEG", "GIF")),
    ("email addresses of suppliers", (), ("email addresses", "suppliers")),
])
def test_file_type_words_head_a_phrase_or_belong_to_a_topic(text, formats, keywords):
    r = parsed(text)
    assert r.formats == formats, r.to_json()
    assert r.keywords == keywords, r.to_json()


@pytest.mark.parametrize("text,authors", [
    ("reports written by Maria Lopez", ("Maria Lopez",)),
    ("memos by John Smith about the budget", ("John Smith",)),
    ("emails sent by Alice regarding the outage", ("Alice",)),
    ("notes prepared by J. R. Tolkien", ("J. R. Tolkien",)),
    ("emails from John about the outage", ()),  # 'from' names a sender only in mail headers, not an author
    ("Are Reviewers' Scores Influenced by Citations to Their Own Work?", ()),
    ("therapies used by U.S. adults with chronic disease", ()),
    ("Proliferative index obtained by DNA image cytometry", ()),
    ("reports by English speakers", ()),  # a capitalised word before a noun is an adjective
    ("papers written by IBM", ()),  # an acronym is no person
])
def test_authors_only_in_authorship_contexts(text, authors):
    r = parsed(text)
    assert r.authors == authors, r.to_json()


def test_authors_words_leave_the_keywords():
    r = parsed("memos by John Smith about the budget")
    assert r.keywords == ("memos", "budget")
    r = parsed("therapies used by U.S. adults with chronic disease")
    assert "U.S adults" in r.keywords  # kept as a topic when it is no author


def test_posts_and_articles_are_not_topics():
    assert parsed("posts about graphics cards in comp hardware").keywords == ("graphics cards", "comp hardware")
    assert parsed("articles about gearbox wear").keywords == ("gearbox wear",)
    assert parsed("monitor posts in mac hardware").keywords == ("monitor", "mac hardware")
    assert parsed("treadmill training post stroke").keywords == ("treadmill training post stroke",)  # 'post' stays


def _calls(text: str) -> int:
    import sys

    calls = 0

    def count(frame, event, arg):
        nonlocal calls
        if event in ("call", "c_call"):
            calls += 1

    sys.setprofile(count)
    try:
        parse_request(text, TODAY)
    finally:
        sys.setprofile(None)
    return calls


@pytest.mark.parametrize("item", [
    "body image n{i}", "images of site n{i}", "memos by John Smith{i} and", "reports by U.S. adults n{i},",
    "patients treated in {y}", "posts from the week of April {d}, {y}", "early April {y} and", "spring {y},",
])
def test_new_rules_stay_linear(item):
    """Type words, authors and date phrases: twice the items, about twice the work."""
    def request(n: int) -> str:
        return " ".join(item.format(i=i, y=1990 + i % 30, d=1 + i % 28) for i in range(n))

    small, large = _calls(request(1000)), _calls(request(2000))
    assert large < 2.3 * small, (small, large)

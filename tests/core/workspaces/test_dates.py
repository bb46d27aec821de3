"""Date phrases: parts of months and years, weeks, seasons, a year said once for a range, and which
dates are the files' dates rather than part of what they are about."""

from __future__ import annotations

import re
from datetime import date

import pytest

from spar_desktop.core.workspaces.dates import combine, find_dates, is_content_question
from spar_desktop.core.workspaces.request import parse_request

TODAY = date(2026, 11, 24)


def parsed(text: str):
    return parse_request(text, TODAY)


@pytest.mark.parametrize("text,since,until", [
    # a year given once, at the end of a range, holds for both ends
    ("posts about hard drives from April 1 to April 10, 1993", date(1993, 4, 1), date(1993, 4, 10)),
    ("memos from 19 April to 30 April 1993", date(1993, 4, 19), date(1993, 4, 30)),
    ("memos from November to February 1994", date(1993, 11, 1), date(1994, 2, 28)),
    # parts of a month or a year
    ("early April 1993 posts", date(1993, 4, 1), date(1993, 4, 10)),
    ("notes from mid April 1993", date(1993, 4, 11), date(1993, 4, 20)),
    ("notes from mid-April 1993", date(1993, 4, 11), date(1993, 4, 20)),
    ("reports in late April 1993", date(1993, 4, 21), date(1993, 4, 30)),
    ("reports from late 1993", date(1993, 9, 1), date(1993, 12, 31)),
    ("posts in the first half of April 1993", date(1993, 4, 1), date(1993, 4, 15)),
    ("posts in the second half of April 1993", date(1993, 4, 16), date(1993, 4, 30)),
    ("budgets from the second half of 2019", date(2019, 7, 1), date(2019, 12, 31)),
    ("posts since early May 2020", date(2020, 5, 1), None),
    # a week and the seasons
    ("posts from the week of April 19, 1993", date(1993, 4, 19), date(1993, 4, 25)),
    ("minutes from the week of 3 May 2021", date(2021, 5, 3), date(2021, 5, 9)),
    ("posts in spring 1993", date(1993, 3, 1), date(1993, 5, 31)),
    ("photos from summer 2019", date(2019, 6, 1), date(2019, 8, 31)),
    ("reports from the autumn of 2020", date(2020, 9, 1), date(2020, 11, 30)),
    ("reports from fall 2020", date(2020, 9, 1), date(2020, 11, 30)),
])
def test_date_phrases(text, since, until):
    r = parsed(text)
    assert (r.since, r.until) == (since, until), r.to_json()
    assert r.problems == ()


@pytest.mark.parametrize("text,keywords", [
    ("posts about SCSI drives in the second half of April 1993", ("SCSI drives",)),
    ("early April 1993 posts about window managers", ("window managers",)),
    ("posts about gun control from the week of April 19, 1993", ("gun control",)),
    ("posts about helmets in spring 1993", ("helmets",)),
])
def test_the_words_of_a_date_are_never_keywords(text, keywords):
    assert parsed(text).keywords == keywords


def test_winter_spans_the_new_year_and_says_so():
    r = parsed("notes from winter 1993")
    assert (r.since, r.until) == (date(1992, 12, 1), date(1993, 2, 28))
    assert any("December 1992 to February 1993" in n for n in r.notes)


def test_early_may_the_verb_is_no_date():
    r = parsed("does treating early may reduce pain")
    assert (r.since, r.until) == (None, None)


@pytest.mark.parametrize("text,since,until", [
    ("reports from 2019", date(2019, 1, 1), date(2019, 12, 31)),
    ("2019 reports about turbines", date(2019, 1, 1), date(2019, 12, 31)),
    ("minutes of May 2019", date(2019, 5, 1), date(2019, 5, 31)),
    ("contracts signed in 2019", date(2019, 1, 1), date(2019, 12, 31)),  # a verb of documents
    ("invoices paid in May 2019", date(2019, 5, 1), date(2019, 5, 31)),  # its subject is a document
    ("Which emails from May 2019 mention the outage?", date(2019, 5, 1), date(2019, 5, 31)),
    ("Is there anything from May 2019 about the outage?", date(2019, 5, 1), date(2019, 5, 31)),
    ("Can you find the memos dated 2018?", date(2018, 1, 1), date(2018, 12, 31)),
    ("turbine faults between 2019 and 2021", date(2019, 1, 1), date(2021, 12, 31)),
    ("posts in comp hardware between 15 April 1993 and 18 April 1993", date(1993, 4, 15), date(1993, 4, 18)),
    ("files modified since March 2024", date(2024, 3, 1), None),
])
def test_dates_of_the_files(text, since, until):
    r = parsed(text)
    assert (r.since, r.until) == (since, until), r.to_json()
    assert not any("part of the topic" in n for n in r.notes)


@pytest.mark.parametrize("text,why", [
    ("outcomes of patients treated between 1995 and 2005", "it follows 'treated'"),
    ("children diagnosed in 2009 with asthma", "it follows 'diagnosed'"),
    ("between 1995 and 2005 we studied 300 patients", "'we' follows it"),
    ("Has the use of herbal therapies changed from 2002 to 2007?", "it follows 'changed'"),
    ("Analysis of Shigellosis in Barcelona between 1988 and 2012: is it an emerging infection?",
     "question about content"),
    ("Validation of the 2009 TNM version: are further improvements needed?", "question about content"),
    ("Prevalence among Medicare beneficiaries in 2008 and 2010: are they getting sicker?", "question about content"),
    ("Has the prevalence of service use increased over the last decade (2001-2009) in elderly people?",
     "question about content"),
])
def test_dates_of_the_content_are_noted_not_applied(text, why):
    r = parsed(text)
    assert (r.since, r.until) == (None, None), r.to_json()
    note = next(n for n in r.notes if "part of the topic" in n)
    assert why in note and "not applied" in note
    assert not re.search(r"\b(?:19|20)\d\d\b", " ".join(r.keywords))  # the date words are not keywords
    assert r.problems == ()


def test_a_content_date_never_contradicts_a_file_date():
    r = parsed("reports since 2020 on patients treated before 2010")
    assert (r.since, r.until) == (date(2020, 1, 1), None) and r.problems == ()


def test_findings_say_what_they_are_about():
    findings, _, _ = find_dates("patients treated in 2009, reports from 2019", TODAY)
    assert [(f.span.text, f.about) for f in findings] == [("from 2019", "files"), ("2009", "content")]
    assert combine(findings) == (date(2019, 1, 1), date(2019, 12, 31))


@pytest.mark.parametrize("text,question", [
    ("Is it safe?", True),
    ("Do statins work in the elderly", True),
    ("Can you find the memos from May?", False),
    ("could you show me reports from 2019?", False),
    ("May 2019 budget", False),
    ("reports from 2019", False),
])
def test_content_questions(text, question):
    assert is_content_question(text) is question

"""The patterns that find date phrases in a request: month and year words, the date tokens, and
the range / open-ended / relative / single-date expressions built from them (used by dates.py)."""

from __future__ import annotations

import calendar
import re

MONTHS = {m.lower(): i for i, m in enumerate(calendar.month_name) if m}
MONTHS.update({m.lower(): i for i, m in enumerate(calendar.month_abbr) if m})
MONTHS["sept"] = 9
MONTH_RE = r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
YEAR_RE = r"(?:19|20)\d\d"

MONTH_OR_YEAR = rf"(?:{MONTH_RE}\.?,?(?:\s*{YEAR_RE})?|{YEAR_RE})"
DAY_OF_MONTH = (rf"(?:\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{MONTH_RE}\.?,?(?:\s*{YEAR_RE})?"
                rf"|{MONTH_RE}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s*{YEAR_RE})?|{YEAR_RE}-\d\d-\d\d)")
DATE_TOKEN = (
    rf"(?:(?:the\s+)?(?:first|1st|second|2nd)\s+half\s+of\s+{MONTH_OR_YEAR}"
    rf"|(?:early|mid|late)(?:\s+|-){MONTH_OR_YEAR}"
    rf"|(?:the\s+)?week\s+of\s+{DAY_OF_MONTH}"
    rf"|(?:the\s+)?(?:spring|summer|autumn|fall|winter)\s+(?:of\s+)?{YEAR_RE}"
    rf"|{YEAR_RE}-\d\d-\d\d"
    rf"|q[1-4]\s*(?:of\s+)?{YEAR_RE}|{YEAR_RE}\s*q[1-4]"
    rf"|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{MONTH_RE}\.?,?(?:\s*{YEAR_RE})?"
    rf"|{MONTH_RE}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s*{YEAR_RE})?"
    rf"|{MONTH_RE}\.?,?\s*(?:of\s+)?{YEAR_RE}"
    rf"|{MONTH_RE}|{YEAR_RE})"
)
RELATIVE_TOKEN = (
    r"(?:today|yesterday|this year|current year|last year|this month|last month|this quarter|last quarter"
    r"|this week|last week|(?:in\s+)?(?:the\s+)?(?:last|past)\s+(?:\d+|two|three|four|five|six|twelve)\s+(?:day|week|month|year)s?)"
)
RANGE_RE = re.compile(
    rf"\b(?:from\s+|between\s+)?(?P<a>{DATE_TOKEN})\s*(?:–|—|-|to|until|through|and)\s*(?P<b>{DATE_TOKEN})\b", re.I)
OPEN_RE = re.compile(
    rf"\b(?P<op>since|after|from|starting|before|prior to|until|till|up to|by|earlier than|later than|no later than|"
    rf"not before|not after)\s+(?P<d>{DATE_TOKEN})\b", re.I)
RELATIVE_RE = re.compile(rf"\b(?P<r>{RELATIVE_TOKEN})\b", re.I)
SINGLE_RE = re.compile(rf"\b(?P<d>{DATE_TOKEN})\b", re.I)

OPEN_KIND = {
    "since": "since", "from": "within", "starting": "since", "not before": "since",
    "after": "after", "later than": "after",
    "before": "before", "prior to": "before", "earlier than": "before",
    "until": "until", "till": "until", "up to": "until", "by": "until", "no later than": "until",
    "not after": "until",
}

YEAR_WORD = re.compile(rf"\b{YEAR_RE}\b")
VERB_MONTH = re.compile(r"(?:(?:early|mid|late)[\s-]+)?(?:may|march|mar|jun|june|sep|dec|jan)", re.I)

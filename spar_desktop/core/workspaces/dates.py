"""Date expressions in plain-language requests → inclusive date ranges (relative to today).

Handles a year, 'Q2 2019', 'May 2019', 'May 25' / '25 May 2019' / ISO dates, ranges
('2019–2021', 'from 2019 to 2021', 'between ... and ...'), open ranges ('since 2018',
'after 2018', 'before March', 'until 2020') and relative ones ('last year', 'this year',
'last month', 'in the last 3 years', 'past 6 months'). Impossible dates ('Feb 30') are reported.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Optional

MONTHS = {m.lower(): i for i, m in enumerate(calendar.month_name) if m}
MONTHS.update({m.lower(): i for i, m in enumerate(calendar.month_abbr) if m})
MONTHS["sept"] = 9
MONTH_RE = r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
YEAR_RE = r"(?:19|20)\d\d"


@dataclass(frozen=True)
class DateSpan:
    start: date
    end: date
    text: str  # the words that produced it
    note: Optional[str] = None  # an assumption the user should see (e.g. 'no year given')


@dataclass(frozen=True)
class DateFinding:
    """A date constraint found in a request: ``kind`` is 'within', 'since', 'after', 'before' or 'until'."""

    kind: str
    span: DateSpan


def _month_end(y: int, m: int) -> date:
    return date(y, m, calendar.monthrange(y, m)[1])


def _shift_months(d: date, months: int) -> date:
    m = d.month - 1 + months
    y, m = d.year + m // 12, m % 12 + 1
    return date(y, m, min(d.day, calendar.monthrange(y, m)[1]))


class DateParser:
    def __init__(self, today: date) -> None:
        self.today = today
        self.problems: list[str] = []

    # -- single expressions → span ------------------------------------------------------
    def span(self, text: str, prefer_past: bool = True) -> Optional[DateSpan]:
        t = text.strip().lower().rstrip(".,")
        if m := re.fullmatch(rf"({YEAR_RE})-(\d\d)-(\d\d)", t):
            return self._day(int(m[1]), int(m[2]), int(m[3]), text)
        if m := re.fullmatch(rf"q([1-4])\s*(?:of\s+)?({YEAR_RE})|({YEAR_RE})\s*q([1-4])", t):
            q, y = (int(m[1]), int(m[2])) if m[1] else (int(m[4]), int(m[3]))
            return DateSpan(date(y, 3 * q - 2, 1), _month_end(y, 3 * q), text)
        if m := re.fullmatch(rf"(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({MONTH_RE})\.?,?\s*({YEAR_RE})?", t):
            return self._month_day(m[2], int(m[1]), m[3], text)
        if m := re.fullmatch(rf"({MONTH_RE})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s*({YEAR_RE})?", t):
            return self._month_day(m[1], int(m[2]), m[3], text)
        if m := re.fullmatch(rf"({MONTH_RE})\.?,?\s*(?:of\s+)?({YEAR_RE})", t):
            mo, y = MONTHS[m[1]], int(m[2])
            return DateSpan(date(y, mo, 1), _month_end(y, mo), text)
        if re.fullmatch(MONTH_RE, t):
            mo = MONTHS[t]
            y = self.today.year if (mo <= self.today.month or not prefer_past) else self.today.year - 1
            return DateSpan(date(y, mo, 1), _month_end(y, mo), text, f"no year given for '{text}': assumed {y}")
        if re.fullmatch(YEAR_RE, t):
            y = int(t)
            return DateSpan(date(y, 1, 1), date(y, 12, 31), text)
        return None

    def _day(self, y: int, mo: int, d: int, text: str) -> Optional[DateSpan]:
        try:
            day = date(y, mo, d)
        except ValueError:
            self.problems.append(f"'{text}' is not a real date; ignored")
            return None
        return DateSpan(day, day, text)

    def _month_day(self, month: str, d: int, year: Optional[str], text: str) -> Optional[DateSpan]:
        mo = MONTHS[month.lower().rstrip(".")]
        if year:
            return self._day(int(year), mo, d, text)
        # No year: the most recent such day up to today (a worker asking about 'May 25' means
        # the last one), stated so the user can correct it.
        y = self.today.year
        if (mo, d) > (self.today.month, self.today.day):
            y -= 1
        if mo == 2 and d == 29:
            while not calendar.isleap(y):
                y -= 1
        span = self._day(y, mo, d, text)
        if span is None:
            return None
        return DateSpan(span.start, span.end, text, f"no year given for '{text}': assumed {y}")

    # -- whole request → findings ---------------------------------------------------------
    def relative(self, text: str) -> Optional[DateSpan]:
        t = text.lower()
        today = self.today
        if t == "today":
            return DateSpan(today, today, text)
        if t == "yesterday":
            return DateSpan(today - timedelta(days=1), today - timedelta(days=1), text)
        if t in ("this year", "current year"):
            return DateSpan(date(today.year, 1, 1), today, text)
        if t == "last year":
            return DateSpan(date(today.year - 1, 1, 1), date(today.year - 1, 12, 31), text)
        if t == "this month":
            return DateSpan(today.replace(day=1), today, text)
        if t == "last month":
            first = _shift_months(today.replace(day=1), -1)
            return DateSpan(first, _month_end(first.year, first.month), text)
        if t in ("this quarter", "last quarter"):
            q0 = date(today.year, 3 * ((today.month - 1) // 3) + 1, 1)
            if t == "last quarter":
                q0 = _shift_months(q0, -3)
                return DateSpan(q0, _month_end(*_shift_months(q0, 2).timetuple()[:2]), text)
            return DateSpan(q0, today, text)
        if t in ("this week", "last week"):
            monday = today - timedelta(days=today.weekday())
            if t == "last week":
                return DateSpan(monday - timedelta(days=7), monday - timedelta(days=1), text)
            return DateSpan(monday, today, text)
        if m := re.fullmatch(r"(?:in\s+)?(?:the\s+)?(?:last|past)\s+(\d+|two|three|four|five|six|twelve)\s+(day|week|month|year)s?", t):
            words = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "twelve": 12}
            start = _go_back(today, m[1] if m[1].isdigit() else words[m[1]], m[2])
            if start is None:
                # 'the past 3000 years', 'last 999999999 days': every date there is, stated.
                return DateSpan(date.min, today, text,
                                f"'{text}' reaches back before the year 1: no earliest date is used")
            return DateSpan(start, today, text)
        return None


def _go_back(today: date, n: str | int, unit: str) -> Optional[date]:
    """``today`` minus ``n`` days/weeks/months/years, or None when that is before the year 1."""
    if isinstance(n, str):
        if len(n) > 9:  # more days than there are since the year 1 (and int() refuses 4,300+ digits)
            return None
        n = int(n)
    months = {"month": 1, "year": 12}.get(unit)
    if months is not None:
        back = n * months
        if back > (today.year - 1) * 12 + today.month - 1:
            return None
        return _shift_months(today, -back)
    days = n * (7 if unit == "week" else 1)
    if days > today.toordinal() - 1:
        return None
    return today - timedelta(days=days)


DATE_TOKEN = (
    rf"(?:{YEAR_RE}-\d\d-\d\d"
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


def find_dates(text: str, today: date) -> tuple[list[DateFinding], list[str], str]:
    """Date constraints in ``text``, problems found, and the text with the date words removed."""
    parser = DateParser(today)
    findings: list[DateFinding] = []
    # Consumed characters as a bytearray: testing a match costs its length, not a scan of every
    # span found so far (a request listing 20,000 dates was quadratic).
    taken = bytearray(len(text))
    consumed: list[tuple[int, int]] = []

    def free(m: re.Match) -> bool:
        return taken.find(1, m.start(), m.end()) < 0

    def consume(m: re.Match) -> None:
        a, b = m.span()
        taken[a:b] = b"\x01" * (b - a)
        consumed.append((a, b))

    def safely(read, *args, **kwargs) -> Optional[DateSpan]:
        try:
            return read(*args, **kwargs)
        except (ValueError, OverflowError):  # a date outside the calendar: said, never a traceback
            parser.problems.append(f"'{args[0]}' is not a date SPAR can work with; ignored")
            return None

    for m in RANGE_RE.finditer(text):
        a, b = safely(parser.span, m["a"]), safely(parser.span, m["b"], prefer_past=False)
        if a and b and re.fullmatch(YEAR_RE, m["a"].strip()) and re.fullmatch(r"\d\d", m["b"].strip()):
            continue
        if a and b:
            findings.append(DateFinding("within", DateSpan(a.start, b.end, m[0].strip(), a.note or b.note)))
            consume(m)
    for m in RELATIVE_RE.finditer(text):
        if free(m) and (span := safely(parser.relative, m["r"])):
            findings.append(DateFinding("within", span))
            consume(m)
    for m in OPEN_RE.finditer(text):
        if free(m) and (span := safely(parser.span, m["d"])):
            # 'from May 2019' alone means dated in May 2019 ('from X to Y' was taken as a range above)
            findings.append(DateFinding(OPEN_KIND[m["op"].lower()], DateSpan(span.start, span.end, m[0].strip(), span.note)))
            consume(m)
    for m in SINGLE_RE.finditer(text):
        if not free(m):
            continue
        word = m["d"]
        if re.fullmatch(r"may|march|mar|jun|june|sep|dec|jan", word.strip(), re.I) and not _date_context(text, m):
            continue  # 'may' the verb, 'march' the noun...: only a date next to date words
        problems_before = len(parser.problems)
        if span := safely(parser.span, word):
            findings.append(DateFinding("within", span))
            consume(m)
        elif len(parser.problems) > problems_before:
            consume(m)  # an impossible date ('Feb 30'): reported, not a keyword
    # The text with each consumed span replaced by a space, built in one pass (slicing the
    # string once per span was quadratic).
    pieces: list[str] = []
    pos = 0
    for a, b in sorted(consumed):
        pieces.append(text[pos:a])
        pos = b
    pieces.append(text[pos:])
    return findings, parser.problems, " ".join(pieces)


def _date_context(text: str, m: re.Match) -> bool:
    before = text[max(0, m.start() - 12):m.start()].lower()
    return bool(re.search(r"(in|from|since|before|after|until|during|of|dated|on)\s*$", before))


def combine(findings: list[DateFinding]) -> tuple[Optional[date], Optional[date]]:
    """Intersect findings into one inclusive (since, until); None where open."""
    since: Optional[date] = None
    until: Optional[date] = None
    for f in findings:
        lo = hi = None
        if f.kind == "within":
            lo, hi = f.span.start, f.span.end
        elif f.kind == "since":
            lo = f.span.start
        elif f.kind == "after":  # the calendar's ends stay put rather than overflow
            lo = f.span.end + timedelta(days=1) if f.span.end < date.max else date.max
        elif f.kind == "before":
            hi = f.span.start - timedelta(days=1) if f.span.start > date.min else date.min
        elif f.kind == "until":
            hi = f.span.end
        if lo and (since is None or lo > since):
            since = lo
        if hi and (until is None or hi < until):
            until = hi
    return since, until

"""Date expressions in plain-language requests → inclusive date ranges (relative to today).

Handles a year, 'Q2 2019', 'May 2019', 'May 25' / '25 May 2019' / ISO dates, ranges
('2019–2021', 'from 2019 to 2021', 'between ... and ...'), open ranges ('since 2018',
'after 2018', 'before March', 'until 2020') and relative ones ('last year', 'this year',
'last month', 'in the last 3 years', 'past 6 months'). Impossible dates ('Feb 30') are reported.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass, replace
from datetime import date, timedelta
from typing import Optional

from spar_desktop.core.workspaces.date_patterns import (
    MONTH_RE, MONTHS, OPEN_KIND, OPEN_RE, RANGE_RE, RELATIVE_RE, SINGLE_RE, VERB_MONTH, YEAR_RE, YEAR_WORD,
)



@dataclass(frozen=True)
class DateSpan:
    start: date
    end: date
    text: str  # the words that produced it
    note: Optional[str] = None  # an assumption the user should see (e.g. 'no year given')
    # 'the last 30 days': a range that runs up to now, open on the right, so a workspace made
    # from it admits files dated after its creation when it is updated.
    open_end: bool = False


@dataclass(frozen=True)
class DateFinding:
    """A date constraint found in a request: ``kind`` is 'within', 'since', 'after', 'before' or 'until'."""

    kind: str
    span: DateSpan
    # 'files': a constraint on the documents' dates; 'content': part of what they are about
    # ('patients treated in 2009'), shown in the notes and never applied.
    about: str = "files"
    reason: Optional[str] = None


def _month_end(y: int, m: int) -> date:
    return date(y, m, calendar.monthrange(y, m)[1])


def _shift_months(d: date, months: int) -> date:
    m = d.month - 1 + months
    y, m = d.year + m // 12, m % 12 + 1
    return date(y, m, min(d.day, calendar.monthrange(y, m)[1]))


def _part(inner: DateSpan, which: str, text: str) -> DateSpan:
    """The first/second half or the early/mid/late third of a month or a year ('early April' =
    1-10, 'mid' 11-20, 'late' 21-end; 'early 1993' = January-April; halves split a month at the 15th)."""
    a, b = inner.start, inner.end
    whole_year = (a.month, a.day, b.month, b.day) == (1, 1, 12, 31) and a.year == b.year
    if whole_year:
        cuts = {"first": (1, 6), "second": (7, 12), "early": (1, 4), "mid": (5, 8), "late": (9, 12)}[which]
        return DateSpan(date(a.year, cuts[0], 1), _month_end(a.year, cuts[1]), text, inner.note)
    whole_month = a.day == 1 and (a.year, a.month) == (b.year, b.month) and b == _month_end(b.year, b.month)
    if whole_month:
        days = {"first": (1, 15), "second": (16, b.day), "early": (1, 10), "mid": (11, 20), "late": (21, b.day)}[which]
        return DateSpan(a.replace(day=days[0]), a.replace(day=days[1]), text, inner.note)
    n = (b - a).days  # any other span: halves and thirds of its days
    if which in ("first", "second"):
        mid = a + timedelta(days=n // 2)
        return DateSpan(a, mid, text, inner.note) if which == "first" else DateSpan(min(mid + timedelta(days=1), b), b, text, inner.note)
    i = ("early", "mid", "late").index(which)
    lo, hi = a + timedelta(days=n * i // 3), a + timedelta(days=n * (i + 1) // 3)
    return DateSpan(lo, hi, text, inner.note)


class DateParser:
    def __init__(self, today: date) -> None:
        self.today = today
        self.problems: list[str] = []

    # -- single expressions → span ------------------------------------------------------
    def span(self, text: str, prefer_past: bool = True) -> Optional[DateSpan]:
        t = " ".join(text.strip().lower().rstrip(".,").split())
        if m := re.fullmatch(r"(?:the\s+)?(first|1st|second|2nd)\s+half\s+of\s+(.+)", t):
            inner = self.span(m[2], prefer_past)
            return None if inner is None else _part(inner, "first" if m[1] in ("first", "1st") else "second", text)
        if m := re.fullmatch(r"(early|mid|late)[\s-]+(.+)", t):
            inner = self.span(m[2], prefer_past)
            return None if inner is None else _part(inner, m[1], text)
        if m := re.fullmatch(r"(?:the\s+)?week\s+of\s+(.+)", t):
            inner = self.span(m[1], prefer_past)
            if inner is None or inner.start != inner.end:
                return None
            return DateSpan(inner.start, min(inner.start + timedelta(days=6), date.max), text, inner.note)
        if m := re.fullmatch(rf"(?:the\s+)?(spring|summer|autumn|fall|winter)\s+(?:of\s+)?({YEAR_RE})", t):
            y = int(m[2])
            if m[1] == "winter":
                return DateSpan(date(y - 1, 12, 1), _month_end(y, 2), text,
                                f"'{text}' read as December {y - 1} to February {y}")
            first = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9}[m[1]]
            return DateSpan(date(y, first, 1), _month_end(y, first + 2), text)
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
            return DateSpan(date(today.year, 1, 1), date(today.year, 12, 31), text)  # the whole year
        if t == "last year":
            return DateSpan(date(today.year - 1, 1, 1), date(today.year - 1, 12, 31), text)
        if t == "this month":
            return DateSpan(today.replace(day=1), _month_end(today.year, today.month), text)
        if t == "last month":
            first = _shift_months(today.replace(day=1), -1)
            return DateSpan(first, _month_end(first.year, first.month), text)
        if t in ("this quarter", "last quarter"):
            q0 = date(today.year, 3 * ((today.month - 1) // 3) + 1, 1)
            if t == "last quarter":
                q0 = _shift_months(q0, -3)
                return DateSpan(q0, _month_end(*_shift_months(q0, 2).timetuple()[:2]), text)
            return DateSpan(q0, _month_end(*_shift_months(q0, 2).timetuple()[:2]), text)
        if t in ("this week", "last week"):
            monday = today - timedelta(days=today.weekday())
            if t == "last week":
                return DateSpan(monday - timedelta(days=7), monday - timedelta(days=1), text)
            return DateSpan(monday, monday + timedelta(days=6), text)
        if m := re.fullmatch(r"(?:in\s+)?(?:the\s+)?(?:last|past)\s+(\d+|two|three|four|five|six|twelve)\s+(day|week|month|year)s?", t):
            words = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "twelve": 12}
            start = _go_back(today, m[1] if m[1].isdigit() else words[m[1]], m[2])
            if start is None:
                # 'the past 3000 years', 'last 999999999 days': every date there is, stated.
                return DateSpan(date.min, today, text,
                                f"'{text}' reaches back before the year 1: no earliest date is used")
            return DateSpan(start, today, text, open_end=True)
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


def find_dates(text: str, today: date, question: Optional[bool] = None) -> tuple[list[DateFinding], list[str], str]:
    """Date phrases in ``text``, problems found, and the text with the date words removed.

    Each finding says whether it is about the files (a constraint) or about their content
    ('patients treated between 1995 and 2005'; see ``_about``). ``question``: whether the
    request is a question about content (None: judged from the text). The most specific
    expressions are matched first; a later one never reuses words an earlier one took."""
    scan = _DateScan(text, DateParser(today))
    scan.ranges()
    scan.relative()
    scan.open_ended()
    scan.single()
    findings = scan.findings
    if findings:
        if question is None:
            question = is_content_question(text)
        findings = [_about(text, f, a, b, question) for f, (a, b) in zip(findings, scan.where)]
    return findings, scan.parser.problems, scan.remaining_text()


class _DateScan:
    """One pass of ``find_dates`` over a text: the findings so far and the characters they took."""

    def __init__(self, text: str, parser: DateParser) -> None:
        self.text = text
        self.parser = parser
        self.findings: list[DateFinding] = []
        self.where: list[tuple[int, int]] = []  # each finding's span in ``text``
        # Consumed characters as a bytearray: testing a match costs its length, not a scan of every
        # span found so far (a request listing 20,000 dates was quadratic).
        self.taken = bytearray(len(text))
        self.consumed: list[tuple[int, int]] = []

    def free(self, m: re.Match) -> bool:
        return self.taken.find(1, m.start(), m.end()) < 0

    def consume(self, m: re.Match) -> None:
        a, b = m.span()
        self.taken[a:b] = b"\x01" * (b - a)
        self.consumed.append((a, b))

    def found(self, f: DateFinding, m: re.Match) -> None:
        self.findings.append(f)
        self.where.append(m.span())
        self.consume(m)

    def safely(self, read, *args, **kwargs) -> Optional[DateSpan]:
        try:
            return read(*args, **kwargs)
        except (ValueError, OverflowError):  # a date outside the calendar: said, never a traceback
            self.parser.problems.append(f"'{args[0]}' is not a date SPAR can work with; ignored")
            return None

    def ranges(self) -> None:
        parser = self.parser
        for m in RANGE_RE.finditer(self.text):
            b = self.safely(parser.span, m["b"], prefer_past=False)
            years_b = YEAR_WORD.findall(m["b"])
            if b and years_b and not YEAR_WORD.search(m["a"]):
                # 'from April 1 to April 10, 1993': the year said once, at the end, holds for both ends
                # (the year before when the start would follow the end: 'November to February 1994').
                y = int(years_b[-1])
                a = self.safely(parser.span, f"{m['a']} {y}")
                if a and a.start > b.end:
                    a = self.safely(parser.span, f"{m['a']} {y - 1}")
            else:
                a = self.safely(parser.span, m["a"])
            if a and b and re.fullmatch(YEAR_RE, m["a"].strip()) and re.fullmatch(r"\d\d", m["b"].strip()):
                continue
            if a and b:
                self.found(DateFinding("within", DateSpan(a.start, b.end, m[0].strip(), a.note or b.note)), m)

    def relative(self) -> None:
        for m in RELATIVE_RE.finditer(self.text):
            if self.free(m) and (span := self.safely(self.parser.relative, m["r"])):
                self.found(DateFinding("within", span), m)

    def open_ended(self) -> None:
        for m in OPEN_RE.finditer(self.text):
            if self.free(m) and (span := self.safely(self.parser.span, m["d"])):
                # 'from May 2019' alone means dated in May 2019 ('from X to Y' was taken as a range above)
                kind = OPEN_KIND[m["op"].lower()]
                self.found(DateFinding(kind, DateSpan(span.start, span.end, m[0].strip(), span.note)), m)

    def single(self) -> None:
        problems = self.parser.problems
        for m in SINGLE_RE.finditer(self.text):
            if not self.free(m):
                continue
            word = m["d"]
            if VERB_MONTH.fullmatch(word.strip()) and not _date_context(self.text, m):
                continue  # 'may' the verb, 'march' the noun...: only a date next to date words
            problems_before = len(problems)
            if span := self.safely(self.parser.span, word):
                self.found(DateFinding("within", span), m)
            elif len(problems) > problems_before:
                self.consume(m)  # an impossible date ('Feb 30'): reported, not a keyword

    def remaining_text(self) -> str:
        """The text with each consumed span replaced by a space, built in one pass (slicing the
        string once per span was quadratic)."""
        pieces: list[str] = []
        pos = 0
        for a, b in sorted(self.consumed):
            pieces.append(self.text[pos:a])
            pos = b
        pieces.append(self.text[pos:])
        return " ".join(pieces)


# -- is a date about the files or about their content? ------------------------------------------
# Nouns for documents: a date next to one dates the documents ('reports from 2019', '2019 reports').
DOC_NOUNS = frozenset("""
document documents file files doc docs record records report reports minute minutes memo memos note notes
email emails e-mail e-mails mail mails message messages letter letters post posts article articles thread threads
slide slides deck decks presentation presentations spreadsheet spreadsheets sheet sheets pdf pdfs photo photos
image images picture pictures scan scans contract contracts invoice invoices draft drafts version versions copy
copies agenda agendas newsletter newsletters page pages attachment attachments upload uploads folder folders
""".split())
# Verbs whose date is the document's ('written in May', 'sent after April 15').
DOC_VERBS = frozenset("""
dated written sent received created authored signed drafted emailed mailed posted uploaded downloaded saved
scanned printed filed published issued submitted shared taken recorded
""".split())
# Verbs said of files and of anything else: the files' date unless the request is a question.
FILE_VERBS = frozenset("modified changed edited updated added opened accessed deleted moved renamed".split())
# Irregular past participles of content verbs (regular ones end in -ed).
IRREGULAR = frozenset("""
born seen done given found shown held kept grown known begun led met paid told built bought brought caught
taught won lost spent fed bred fallen risen died lived run put set hit cut
""".split())
# Prepositions that tie a date to the request as its documents' date.
DOC_PREPS = frozenset("from dated since until till before after starting prior".split())
_SKIP = frozenset("in on during between from since until till before after around by through throughout at of "
                  "within the a an over for dated starting prior to".split())
PRONOUNS = frozenset("we they i he she".split())
QUESTION_START = frozenset("""
is are was were do does did can could should would will has have had what which who whom whose how why when
where must might shall
""".split())
RETRIEVAL_VERBS = frozenset("""
find show get give list retrieve fetch pull collect gather search look open display bring locate send
""".split())
_WORDS = re.compile(r"[\w'-]+")
_TOKENS = re.compile(r"[\w'-]+|[^\w\s]")


def is_content_question(text: str) -> bool:
    """'Has the use of X changed from 2002 to 2007?': a question about content, not a request
    for files ('Can you find the memos from May?' asks for files)."""
    head = [w.lower() for w in _WORDS.findall(text[:120])][:6]
    if not head:
        return False
    if any(w in RETRIEVAL_VERBS for w in head[:5]):
        return False
    return text.rstrip().endswith("?") or head[0] in QUESTION_START


def _is_content_verb(word: str, question: bool) -> bool:
    if word in DOC_VERBS or word in DOC_NOUNS:
        return False
    if word in FILE_VERBS:
        return question
    return word in IRREGULAR or (len(word) >= 5 and word.endswith("ed") and not word.endswith("eed"))


def _about(text: str, f: DateFinding, start: int, end: int, question: bool) -> DateFinding:
    """A date is the files' date when it sits next to a document noun ('reports from 2019',
    'early April posts') or a verb of documents ('written in May'), or follows from/since/
    before/after/until/dated; it is about the content when it follows another verb ('patients
    treated between 1995 and 2005', unless its subject is a document: 'invoices paid in May'),
    is followed by a pronoun ('between 1995 and 2005 we studied ...'), or when the whole request
    is a question about content ('... in Barcelona between 1988 and 2012: is it ...?').
    Bounded windows on both sides: linear in the number of dates."""
    # Words and punctuation on each side: a word across a comma or a bracket is not attached.
    before = [w.lower() for w in _TOKENS.findall(text[max(0, start - 80):start])]
    if start > 80 and before:
        before = before[1:]  # the window may have cut the first word
    own = [w.lower() for w in _WORDS.findall(f.span.text)[:2]]
    preps = set(own[:1])
    while before and before[-1] in _SKIP:
        preps.add(before.pop())
    prev = before[-1] if before else ""
    prev2 = before[-2] if len(before) > 1 else ""
    after = [w.lower() for w in _TOKENS.findall(text[end:end + 40])[:1]]
    nxt = after[0] if after else ""

    def content(reason: str) -> DateFinding:
        return replace(f, about="content", reason=reason)

    if prev in DOC_NOUNS or nxt in DOC_NOUNS or prev in DOC_VERBS:
        return f
    if prev and _is_content_verb(prev, question):
        if prev2 in DOC_NOUNS:
            return f  # 'invoices paid in May': the documents' own date
        return content(f"it follows '{prev}'")
    if nxt in PRONOUNS:
        return content(f"'{nxt}' follows it")
    if preps & DOC_PREPS:
        return f
    if question:
        return content("the request is a question about content")
    return f


def content_date_note(f: DateFinding) -> str:
    return (f"'{f.span.text}' ({f.span.start} to {f.span.end}) reads as part of the topic ({f.reason}), "
            f"not as the files' date: not applied (say 'files from {f.span.text}' to filter by date)")


def _date_context(text: str, m: re.Match) -> bool:
    before = text[max(0, m.start() - 12):m.start()].lower()
    return bool(re.search(r"(in|from|since|before|after|until|during|of|dated|on)\s*$", before))


def combine(findings: list[DateFinding]) -> tuple[Optional[date], Optional[date]]:
    """Intersect findings into one inclusive (since, until); None where open."""
    since: Optional[date] = None
    until: Optional[date] = None
    for f in findings:
        if f.about != "files":
            continue  # about the content: in the notes, never a constraint
        lo = hi = None
        if f.kind == "within":
            lo, hi = f.span.start, None if f.span.open_end else f.span.end
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

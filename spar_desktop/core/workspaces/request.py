"""Plain-language file requests → keywords + metadata constraints (SPAR's buildUpdateDtb, rules).

"Retrieve all CT scans and reports for patient A dated May 25" → keywords ['CT scans',
'reports', 'patient A'], date = the last May 25. Metadata constraints are explicit in requests
and need no disambiguation (SPAR §3.3.2), so rules handle them; keywords go on to tag matching.
An LLM extractor can replace the keyword step when a server is reachable (see ``parse_request``).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from datetime import date
from typing import Callable, Optional

from spar_desktop.core.workspaces.dates import DateFinding, combine, find_dates

log = logging.getLogger(__name__)

# Words for kinds of files → formats in the index. 'scans' is absent on purpose: 'CT scans' are
# the subject of a request, not image files.
FILE_TYPE_WORDS: dict[str, tuple[str, ...]] = {
    r"pdfs?|pdf files?|pdf documents?": ("pdf",),
    r"spreadsheets?|excel files?|worksheets?|workbooks?|csv files?|csvs?|tables?": ("csv", "tsv", "xlsx", "xls", "ods"),
    r"slides?|slide decks?|decks?|presentations?|powerpoints?": ("pptx", "ppt", "odp"),
    r"e-?mails?|mails?|messages?": ("eml", "msg", "mbox", "email"),  # "email": indexes before 0.2
    r"word (?:documents?|files?|docs?)|docx files?|docx": ("docx", "doc", "odt", "rtf"),
    r"archives?|zip files?|zips?": ("zip",),
    r"markdown(?: files?| notes?)?": ("md",),
    r"text files?|plain text|txt files?": ("txt",),
    r"web ?pages?|html(?: pages?| files?)?": ("html",),
    r"json(?: files?)?": ("json", "jsonl"),
    r"images?|photos?|pictures?": ("image",),
}
_TYPE_RE = re.compile(r"\b(?:" + "|".join(f"(?P<t{i}>{p})" for i, p in enumerate(FILE_TYPE_WORDS)) + r")\b", re.I)

STOP_WORDS = set("""
a an the and or but nor of in on at to for from by with without about into onto over under as is are was were be been
being do does did have has had i me my we our you your he she it its they them their this that these those there here
all any every each some no not only just also please can could would should will shall may might must need want
retrieve find get show give list fetch pull collect gather search look looking open display bring locate return
documents document files file docs doc items records stuff things everything anything related relevant regarding
concerning re dated date dates which what who whom whose when where why how than then so such very more most
""".split()) | set("""
effective efficacious efficient safe safely useful relevant important significant possible potential necessary
needed really still also even actually better worse good bad best worst new old real true false likely
work works working impact impacts affect affects affected increase increases increased decrease decreases
decreased improve improves improved reduce reduces reduced promote promotes predict predicts predicted
exist exists existing associated association relationship related role influence matter matters help helps
""".split())
# The second set: evaluative and relational words that carry the question ("is it safe?", "does
# it work?") rather than its topic; as tag groups they would only over-constrain the selection.
# Connectors split keyword phrases: 'CT scans and reports for patient A' → 3 phrases.
PHRASE_BREAK = re.compile(r"\b(?:and|or|for|of|about|on|in|with|from|by|regarding|concerning|to|at|dated|that|which|including)\b|[,;:()\[\]!?\"]", re.I)

AUTHOR_RE = re.compile(r"\b(?:written|authored|prepared|sent|created|signed)?\s*by\s+(?P<name>[A-Z][\w.'-]*(?:\s+[A-Z][\w.'-]*){0,3})")
# Names are bounded (200 characters): unbounded, each 'in folder' of a long request scanned the
# rest of it, and 8,000 of them took minutes.
AUTHOR_FIELD_RE = re.compile(r"\bauthor\s*[:=]\s*(?P<name>[\w.' -]{1,200}?)(?=\s*(?:,|;|$|\band\b))", re.I)
FOLDER_RE = re.compile(r"\b(?:in|under|inside|within)\s+(?:the\s+)?(?:folder|directory)\s+[\"']?(?P<f>[\w./ -]{1,200}?)[\"']?(?=\s*(?:,|;|$|\band\b|\bfrom\b|\bsince\b))"
                       r"|\b(?:in|under|inside|within)\s+(?:the\s+)?[\"']?(?P<g>[\w./-]+)[\"']?\s+(?:folder|directory)\b", re.I)


@dataclass(frozen=True)
class ParsedRequest:
    text: str
    keywords: tuple[str, ...]
    since: Optional[date] = None
    until: Optional[date] = None
    formats: tuple[str, ...] = ()
    authors: tuple[str, ...] = ()
    folders: tuple[str, ...] = ()
    date_findings: tuple[DateFinding, ...] = ()
    notes: tuple[str, ...] = ()  # assumptions the user should see
    problems: tuple[str, ...] = ()  # things we could not use, contradictions
    extractor: str = "rules"

    @property
    def is_empty(self) -> bool:
        return not (self.keywords or self.since or self.until or self.formats or self.authors or self.folders)

    def to_json(self) -> dict:
        return {
            "text": self.text, "keywords": list(self.keywords),
            "since": self.since.isoformat() if self.since else None,
            "until": self.until.isoformat() if self.until else None,
            "formats": list(self.formats), "authors": list(self.authors), "folders": list(self.folders),
            "notes": list(self.notes), "problems": list(self.problems), "extractor": self.extractor,
        }


_WORD_RE = re.compile(r"[\w][\w'./+-]*")


def _is_label(word: str) -> bool:
    """'A' in 'patient A', 'B' in 'Site B': a capital letter after a word names something."""
    return len(word) == 1 and word.isupper()


def extract_keywords(text: str) -> list[str]:
    """Content phrases: split at connectors/punctuation, drop stop-words at phrase edges."""
    phrases: list[str] = []
    seen: set[str] = set()  # lower-cased phrases kept: a set, as a 20,000-item list made this quadratic
    for part in PHRASE_BREAK.split(text):
        words = [w.strip(".'") for w in _WORD_RE.findall(part)]
        # Trim stop-words at both ends, keep inner ones ('chief of staff' is split anyway);
        # by index, as popping the front of a long run of stop-words is quadratic too.
        lo, hi = 0, len(words)
        while lo < hi and words[lo].lower() in STOP_WORDS:
            lo += 1
        while lo < hi and words[hi - 1].lower() in STOP_WORDS and not (hi - lo > 1 and _is_label(words[hi - 1])):
            hi -= 1
        words = words[lo:hi]
        kept = [w for i, w in enumerate(words) if w.lower() not in STOP_WORDS or (i > 0 and _is_label(w))]
        if not kept:
            continue
        phrase = " ".join(kept)
        if len(phrase) == 1 and not phrase.isupper():
            continue
        key = phrase.lower()
        if key not in seen:
            seen.add(key)
            phrases.append(phrase)
    return phrases


def parse_request(text: str, today: Optional[date] = None,
                  llm_keywords: Optional[Callable[[str], list[str]]] = None) -> ParsedRequest:
    """Rules always; ``llm_keywords`` (e.g. an Ollama extractor) may replace the keyword step and
    falls back to the rules when it fails or returns nothing usable."""
    today = today or date.today()
    original = text
    text = " ".join((text or "").split())
    problems: list[str] = []
    notes: list[str] = []
    if not text:
        return ParsedRequest(original, (), problems=("the request is empty: describe the files you want",))

    findings, date_problems, rest = find_dates(text, today)
    problems += date_problems
    notes += [f.span.note for f in findings if f.span.note]
    since, until = combine(findings)
    if since and until and since > until:
        shown = ", ".join(f.span.text for f in findings[:6]) + (f" and {len(findings) - 6} more" if len(findings) > 6 else "")
        problems.append(
            f"the dates contradict each other ({shown}): "
            f"nothing can be both on/after {since} and on/before {until}")

    formats: list[str] = []
    for m in _TYPE_RE.finditer(rest):
        group = next(k for k, v in m.groupdict().items() if v)
        for fmt in list(FILE_TYPE_WORDS.values())[int(group[1:])]:
            if fmt not in formats:
                formats.append(fmt)
    rest = _TYPE_RE.sub(" ", rest)

    authors = [m["name"].strip() for m in AUTHOR_RE.finditer(rest)] + [m["name"].strip() for m in AUTHOR_FIELD_RE.finditer(rest)]
    rest = AUTHOR_FIELD_RE.sub(" ", AUTHOR_RE.sub(" ", rest))
    folders = [(m["f"] or m["g"]).strip() for m in FOLDER_RE.finditer(rest)]
    rest = FOLDER_RE.sub(" ", rest)

    keywords = extract_keywords(rest)
    extractor = "rules"
    if llm_keywords is not None:
        try:
            llm = [k.strip() for k in llm_keywords(text) if isinstance(k, str) and k.strip()]
            if llm:
                keywords, extractor = llm[:12], "llm"
        except Exception as exc:  # any LLM failure falls back to the rules, with a log line
            log.warning("LLM keyword extraction failed, using rules: %s", exc)
            notes.append("the language model could not be used for this request; rules were used")
    parsed = ParsedRequest(original, tuple(keywords), since, until, tuple(formats), tuple(authors), tuple(folders),
                           tuple(findings), tuple(notes), tuple(problems), extractor)
    if parsed.is_empty and not problems:
        problems.append("no keywords, dates or file types found in the request (only common words?)")
        parsed = ParsedRequest(original, (), problems=tuple(problems), notes=tuple(notes))
    return parsed

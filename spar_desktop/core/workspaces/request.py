"""Plain-language file requests → keywords + metadata constraints (SPAR's buildUpdateDtb, rules).

"Retrieve all CT scans and reports for patient A dated May 25" → keywords ['CT scans',
'reports', 'patient A'], date = the last May 25. Metadata constraints are explicit in requests
and need no disambiguation (SPAR §3.3.2), so rules handle them; keywords go on to tag matching.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from typing import Optional

from spar_desktop.core.workspaces.dates import DOC_VERBS, IRREGULAR, DateFinding, combine, content_date_note, find_dates


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
KNOWN_FORMATS = frozenset(f for fmts in FILE_TYPE_WORDS.values() for f in fmts)
_TYPE_ALTERNATIVES = "|".join(f"(?P<t{i}>{p})" for i, p in enumerate(FILE_TYPE_WORDS))
# Words that name a format and nothing else: a type wherever they stand ('budget PDFs').
# The others are also ordinary nouns ('body image', 'wet mount slide', 'musical messages'): a
# type only at the head of a phrase ('images of the turbine', 'slides about budgets').
_FORMAT_NAME_RE = re.compile(
    r"pdfs?|pdf \w+|spreadsheets?|excel files?|worksheets?|workbooks?|csv files?|csvs?|slide decks?|powerpoints?"
    r"|e-?mails?|word \w+|docx(?: files?)?|zip files?|zips?|markdown(?: \w+)?|text files?|plain text|txt files?"
    r"|web ?pages?|html(?: \w+)?|json(?: \w+)?", re.I)

STOP_WORDS = set("""
a an the and or but nor of in on at to for from by with without about into onto over under as is are was were be been
being do does did have has had i me my we our you your he she it its they them their this that these those there here
all any every each some no not only just also please can could would should will shall may might must need want
retrieve find get show give list fetch pull collect gather search look looking open display bring locate return
documents document files file docs doc items records stuff things everything anything related relevant regarding
concerning re dated date dates which what who whom whose when where why how than then so such very more most
posts articles article threads thread
""".split()) | set("""
effective efficacious efficient safe safely useful relevant important significant possible potential necessary
needed really still also even actually better worse good bad best worst new old real true false likely
work works working impact impacts affect affects affected increase increases increased decrease decreases
decreased improve improves improved reduce reduces reduced promote promotes predict predicts predicted
exist exists existing associated association relationship related role influence matter matters help helps
""".split())
# 'posts', 'articles', 'threads': what a request is for ('posts about X'), never a topic ('post'
# stays: 'post stroke').
# The second set: evaluative and relational words that carry the question ("is it safe?", "does
# it work?") rather than its topic; as tag groups they would only over-constrain the selection.
# Connectors split keyword phrases: 'CT scans and reports for patient A' → 3 phrases.
# 'like'/'such as' introduce examples: 'image formats like JPEG and GIF' → 'image formats', 'JPEG', 'GIF'.
_BREAK_WORDS = r"and|or|for|of|about|on|in|with|from|by|regarding|concerning|to|at|dated|that|which|including|like|such as"
PHRASE_BREAK = re.compile(r"\b(?:" + _BREAK_WORDS + r")\b|[,;:()\[\]!?\"]", re.I)
# One pass over the text for file-type words: each token is a type word, a phrase break or a word.
_TYPE_SCAN_RE = re.compile(r"\b(?P<type>" + _TYPE_ALTERNATIVES + r")\b|(?P<brk>\b(?:" + _BREAK_WORDS
                           + r")\b|[,;:()\[\]!?\"])|(?P<word>[\w][\w'./+-]*)", re.I)

# 'by X' names an author only after a verb of authorship or a noun for documents ('written by X',
# 'memos by X'); 'influenced by Citations', 'used by U.S. adults' name no one.
_AUTHOR_VERBS = r"written|authored|prepared|sent|created|signed|drafted|edited|compiled|submitted|posted|made"
_AUTHOR_NOUNS = (r"reports?|notes?|e-?mails?|mails?|memos?|documents?|docs?|files?|letters?|papers?|slides?|decks?"
                 r"|presentations?|messages?|posts?|articles?|minutes|drafts?|spreadsheets?|pdfs?|photos?|pictures?"
                 r"|images?|work|contributions?")
AUTHOR_RE = re.compile(r"\b(?:(?P<verb>(?i:" + _AUTHOR_VERBS + r"))|(?i:" + _AUTHOR_NOUNS + r"))\s+"
                       r"(?P<by>(?i:by)\s+(?P<name>[A-Z][\w.'-]*(?:\s+[A-Z][\w.'-]*){0,3}))")
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
    # Where each constraint came from when a language model read the request too (request_merge):
    # (kind, value, 'rules' | 'model' | 'rules+model'); empty when the rules alone read it.
    sources: tuple[tuple[str, str, str], ...] = ()

    @property
    def is_empty(self) -> bool:
        return not (self.keywords or self.since or self.until or self.formats or self.authors or self.folders)

    def to_json(self) -> dict:
        return {
            "text": self.text, "keywords": list(self.keywords),
            "since": self.since.isoformat() if self.since else None,
            "until": self.until.isoformat() if self.until else None,
            "formats": list(self.formats), "authors": list(self.authors), "folders": list(self.folders),
            "notes": list(self.notes), "problems": list(self.problems),
        } | ({"sources": [list(x) for x in self.sources]} if self.sources else {})


_WORD_RE = re.compile(r"[\w][\w'./+-]*")
_FOLLOWER_RE = re.compile(r"\s*([\w][\w'./+-]*)")


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


def _names_a_thing(word: str) -> bool:
    """A lower-case content word that is no verb form: 'formats' in 'image formats', 'adults' in
    'by U.S. adults' (not 'sent' in 'emails sent by X', nor 'showing' in 'slides showing X')."""
    w = word.lower()
    if not w.isalpha() or w in STOP_WORDS or w in DOC_VERBS or w in IRREGULAR or PHRASE_BREAK.fullmatch(w):
        return False
    return not (len(w) >= 5 and (w.endswith("ed") or w.endswith("ing")))


def find_authors(text: str) -> tuple[list[str], str]:
    """Authors named after a verb of authorship or a document noun, and the text without their
    'by X' words. A name is refused when it is only acronyms or initials ('by U.S. adults',
    'by DNA') or when a lower-case noun follows it (then it was an adjective: 'by English speakers')."""
    authors: list[str] = []
    pieces: list[str] = []
    pos = 0
    for m in AUTHOR_RE.finditer(text):
        name = m["name"].strip()
        words = name.split()
        if all(not any(c.islower() for c in w) for w in words):
            continue  # 'DNA', 'U.S.', 'IBM': acronyms, not people
        follower = _FOLLOWER_RE.match(text[m.end("name"):m.end("name") + 80])
        if follower and follower[1][:1].islower() and _names_a_thing(follower[1].strip(".'")):
            continue
        authors.append(name)
        pieces.append(text[pos:m.start("verb") if m["verb"] else m.start("by")])  # 'sent by X' goes, 'memos' stays
        pos = m.end("by")
    pieces.append(text[pos:])
    return authors, " ".join(pieces)


def find_types(text: str) -> tuple[list[str], str]:
    """File-type constraints and the text without the words that made them. A type word is a
    type when it names a format ('PDFs', 'spreadsheets', 'emails') or heads its phrase ('images',
    'slides of the board meeting', 'presentations from May'); after a content word ('body image',
    'wet mount slide') or before a noun ('image formats') it is part of a topic and stays."""
    formats: list[str] = []
    tokens = list(_TYPE_SCAN_RE.finditer(text))
    cuts: list[tuple[int, int]] = []
    head = True  # no content word yet in this phrase
    groups = list(FILE_TYPE_WORDS.values())
    for i, tok in enumerate(tokens):
        if tok["brk"]:
            head = True
            continue
        if tok["word"]:
            if tok["word"].lower().strip(".'") not in STOP_WORDS:
                head = False
            continue
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        before_noun = bool(nxt and nxt["word"] and nxt["word"][:1].islower() and _names_a_thing(nxt["word"].strip(".'")))
        is_type = not before_noun and (head or _FORMAT_NAME_RE.fullmatch(tok["type"]) is not None)
        if not is_type:
            head = False
            continue
        group = next(k for k, v in tok.groupdict().items() if v and k.startswith("t") and k[1:].isdigit())
        for fmt in groups[int(group[1:])]:
            if fmt not in formats:
                formats.append(fmt)
        cuts.append(tok.span())
    pieces: list[str] = []
    pos = 0
    for a, b in cuts:
        pieces.append(text[pos:a])
        pos = b
    pieces.append(text[pos:])
    return formats, " ".join(pieces)


def parse_request(text: str, today: Optional[date] = None) -> ParsedRequest:
    today = today or date.today()
    original = text
    text = " ".join((text or "").split())
    problems: list[str] = []
    notes: list[str] = []
    if not text:
        return ParsedRequest(original, (), problems=("the request is empty: describe the files you want",))

    findings, date_problems, rest = find_dates(text, today)
    problems += date_problems
    applied = [f for f in findings if f.about == "files"]
    notes += [f.span.note for f in applied if f.span.note]
    notes += [content_date_note(f) for f in findings if f.about != "files"]
    since, until = combine(applied)
    if since and until and since > until:
        shown = ", ".join(f.span.text for f in applied[:6]) + (f" and {len(applied) - 6} more" if len(applied) > 6 else "")
        problems.append(
            f"the dates contradict each other ({shown}): "
            f"nothing can be both on/after {since} and on/before {until}")

    authors, rest = find_authors(rest)
    authors += [m["name"].strip() for m in AUTHOR_FIELD_RE.finditer(rest)]
    rest = AUTHOR_FIELD_RE.sub(" ", rest)
    folders = [(m["f"] or m["g"]).strip() for m in FOLDER_RE.finditer(rest)]
    rest = FOLDER_RE.sub(" ", rest)
    formats, rest = find_types(rest)

    keywords = extract_keywords(rest)
    parsed = ParsedRequest(original, tuple(keywords), since, until, tuple(formats), tuple(authors), tuple(folders),
                           tuple(findings), tuple(notes), tuple(problems))
    if parsed.is_empty and not problems:
        problems.append("no keywords, dates or file types found in the request (only common words?)")
        parsed = ParsedRequest(original, (), problems=tuple(problems), notes=tuple(notes))
    return parsed

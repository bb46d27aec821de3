"""Token units and sentence/paragraph segments with char offsets, the raw material of chunking.

Everything here works on (start, end) char spans into one document string, never on copies of
the text, so every chunk built from these spans maps back exactly to ``ExtractedDocument.text``.
Sentence splitting is a regex heuristic on purpose: it has to run offline, without NLTK/spaCy model
downloads, over any language the file share holds; chunk boundaries only need to be plausible.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_left, bisect_right
from typing import NamedTuple, Optional

from spar_desktop.core.documents.tokens import UNIT_RE, UnitCost, estimate_unit

Span = tuple[int, int]  # (start, end) char offsets into the document text
# A parent/child may close at an earlier paragraph break instead of mid-paragraph, but only if
# that still leaves it at least this full; otherwise we'd produce many tiny chunks.
MIN_FILL_AT_PARAGRAPH = 0.5


class Units:
    """Token units of a text with prefix sums of their costs, so any span's cost is O(log n).

    Costs are kept as integers in hundredths of a token (``SCALE``): fractional estimates summed
    as floats drift, and a chunk must never come out one token over budget because of rounding.
    ``cum[i]`` is the total cost of units ``0..i-1``. Arrays (not lists of tuples) keep a
    20-million-character document at a few dozen MB instead of hundreds.
    """

    SCALE = 100

    def __init__(self, text: str, unit_cost: Optional[UnitCost] = None) -> None:
        cost = unit_cost or estimate_unit
        offsets = "i" if len(text) < 2**31 else "q"  # 4-byte offsets halve memory on big files
        self.starts = array(offsets)
        self.ends = array(offsets)
        self.cum = array("q", [0])
        # This loop runs once per word of every file, so it is kept tight: costs are memoised
        # per distinct unit (natural text repeats its words constantly) and methods pre-bound.
        memo: dict[str, int] = {}
        add_start, add_end, add_cum = self.starts.append, self.ends.append, self.cum.append
        total = 0
        for m in UNIT_RE.finditer(text):
            unit = m.group()
            c = memo.get(unit)
            if c is None:
                c = memo[unit] = round(cost(unit) * self.SCALE)
            s, e = m.span()
            add_start(s)
            add_end(e)
            total += c
            add_cum(total)

    def __len__(self) -> int:
        return len(self.starts)

    @classmethod
    def scaled(cls, tokens: float) -> int:
        """A token budget in the same integer units as ``cost``."""
        return int(tokens * cls.SCALE)

    def index_range(self, start: int, end: int) -> tuple[int, int]:
        """Indices [i, j) of the units lying entirely inside chars [start, end)."""
        return bisect_left(self.starts, start), bisect_right(self.ends, end)

    def cost(self, start: int, end: int) -> int:
        """Cost of chars [start, end) in hundredths of a token."""
        i, j = self.index_range(start, end)
        return self.cum[j] - self.cum[i] if j > i else 0


class Segment(NamedTuple):
    """A sentence (or a piece of an over-long one); ``para`` marks a paragraph's first segment.

    A NamedTuple rather than a dataclass: a big file has a million of these, and tuples of ints
    are cheap and untracked by the garbage collector, which otherwise rescans them repeatedly.
    """

    start: int
    end: int
    para: bool = False


_PARA_RE = re.compile(r"\n[ \t\r\f\v]*\n\s*")
# A sentence ends at terminal punctuation (plus closing quotes/brackets) followed by whitespace,
# after CJK full stops (no space follows those), or before a line that starts a list item,
# heading or table row (structure in Markdown/DOCX/PDF text without a full stop).
_BOUNDARY_RE = re.compile(
    r"[.!?\u2026]+[\"'\u201d\u2019)\]]*\s+"
    r"|[\u3002\uff01\uff1f]+\s*"
    r"|\n(?=[ \t]*(?:[-*+\u2022]\s|\d{1,3}[.)]\s|#{1,6}\s|\|))"
)
# Words whose trailing period is rarely a sentence end (lower-cased, without the final '.').
_ABBREVIATIONS = frozenset(
    "mr mrs ms dr prof st jr sr vs e.g i.e cf fig figs eq eqs no nos vol pp p al approx ca "
    "inc ltd co corp dept est jan feb mar apr jun jul aug sep sept oct nov dec".split()
)


def _is_false_stop(text: str, para_start: int, punct_start: int, nxt: int) -> bool:
    """True when the period at ``punct_start`` is probably an abbreviation or an initial."""
    if text[punct_start] != ".":
        return False
    if nxt < len(text) and text[nxt].islower():
        return True  # "e.g. foo", "approx. ten": a real sentence rarely starts lower-case
    before = text[max(para_start, punct_start - 24):punct_start].split()
    if not before:
        return False
    word = before[-1].lower().lstrip("(\"'\u201c\u2018[")
    return word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha())


def _trimmed(text: str, start: int, end: int) -> Optional[tuple[int, int]]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if end > start else None


def paragraphs(text: str, start: int = 0, end: Optional[int] = None) -> list[tuple[int, int]]:
    """Non-empty paragraph spans (blank-line separated) within [start, end)."""
    end = len(text) if end is None else end
    spans, pos = [], start
    for m in _PARA_RE.finditer(text, start, end):
        span = _trimmed(text, pos, m.start())
        if span:
            spans.append(span)
        pos = m.end()
    span = _trimmed(text, pos, end)
    if span:
        spans.append(span)
    return spans


def sentences(text: str, start: int = 0, end: Optional[int] = None) -> list[Segment]:
    """Sentence segments within [start, end), each paragraph's first flagged ``para``."""
    out: list[Segment] = []
    for p_start, p_end in paragraphs(text, start, end):
        first, pos = True, p_start
        for m in _BOUNDARY_RE.finditer(text, p_start, p_end):
            if _is_false_stop(text, p_start, m.start(), m.end()):
                continue
            span = _trimmed(text, pos, m.end())
            if span:
                out.append(Segment(span[0], span[1], first))
                first = False
            pos = m.end()
        span = _trimmed(text, pos, p_end)
        if span:
            out.append(Segment(span[0], span[1], first))
    return out


_LINE_RE = re.compile(r"[^\n]+")


def split_oversized(text: str, seg: Segment, units: Units, budget: int) -> list[Segment]:
    """Split a segment costing more than ``budget`` (``Units.SCALE`` units): at line breaks
    first, then between words.

    Over-long "sentences" are common in legacy files (CSV-like lines, tables pasted as text,
    minified JSON, prose without punctuation); cutting them at lines keeps records whole.
    """
    if units.cost(seg.start, seg.end) <= budget:
        return [seg]
    out: list[Segment] = []
    lines = [s for s in (_trimmed(text, m.start(), m.end())
                         for m in _LINE_RE.finditer(text, seg.start, seg.end)) if s]
    if len(lines) > 1:
        # Pack whole lines greedily; a line over budget is cut between words.
        cur_start, cur_end, cur_cost = -1, -1, 0
        for ls, le in lines:
            c = units.cost(ls, le)
            if cur_start >= 0 and cur_cost + c > budget:
                out.extend(_hard_split(Segment(cur_start, cur_end), units, budget))
                cur_start, cur_cost = -1, 0
            if cur_start < 0:
                cur_start = ls
            cur_end, cur_cost = le, cur_cost + c
        if cur_start >= 0:
            out.extend(_hard_split(Segment(cur_start, cur_end), units, budget))
    else:
        out = _hard_split(seg, units, budget)
    if out:
        out[0] = Segment(out[0].start, out[0].end, seg.para)
    return out


def _hard_split(seg: Segment, units: Units, budget: int) -> list[Segment]:
    """Cut a segment between units so each piece costs at most ``budget`` (one unit minimum)."""
    i, j = units.index_range(seg.start, seg.end)
    if j - i == 0 or units.cum[j] - units.cum[i] <= budget:
        return [seg]
    out: list[Segment] = []
    while i < j:
        k = bisect_right(units.cum, units.cum[i] + budget, i + 1, j + 1) - 1
        k = max(k, i + 1)  # a single unit above budget still has to go somewhere
        out.append(Segment(units.starts[i], units.ends[k - 1]))
        i = k
    return out


def at_word_start(text: str, pos: int) -> bool:
    """True if a chunk may begin at ``pos`` without cutting a word: after whitespace, or at a
    CJK ideograph boundary (those scripts don't separate words with spaces)."""
    if pos <= 0:
        return True
    return text[pos - 1].isspace() or _is_ideograph(text[pos]) or _is_ideograph(text[pos - 1])


def _is_ideograph(ch: str) -> bool:
    return "\u3400" <= ch <= "\u9fff" or "\uf900" <= ch <= "\ufaff" or ch >= "\U00020000"


def first_start_in(segs: list[Segment], lo: int, hi: int) -> Optional[int]:
    """Earliest segment start in [lo, hi), or None; ``segs`` sorted by start."""
    idx = bisect_left(segs, lo, key=lambda s: s.start)
    if idx < len(segs) and segs[idx].start < hi:
        return segs[idx].start
    return None


def pack(segs: list[Segment], units: Units, budget: int) -> list[list[Segment]]:
    """Greedily group consecutive segments into groups costing at most ``budget`` each
    (budgets and costs here are in ``Units.SCALE`` fractions of a token).

    Segments must already fit the budget individually (``split_oversized``). When a group
    overflows it is closed at its last paragraph start if that leaves it at least
    ``MIN_FILL_AT_PARAGRAPH`` full, so chunks tend to begin with a paragraph, not mid-way.
    """
    groups: list[list[Segment]] = []
    cur: list[Segment] = []
    costs: list[int] = []
    total = 0
    for seg in segs:
        c = units.cost(seg.start, seg.end)
        while cur and total + c > budget:
            cut, prefix = len(cur), total
            for k in range(len(cur) - 1, 0, -1):
                prefix -= costs[k]
                if cur[k].para and prefix >= MIN_FILL_AT_PARAGRAPH * budget:
                    cut = k
                    break
            groups.append(cur[:cut])
            cur, costs = cur[cut:], costs[cut:]
            total = sum(costs)
        cur.append(seg)
        costs.append(c)
        total += c
    if cur:
        groups.append(cur)
    return groups

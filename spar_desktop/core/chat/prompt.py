"""Grounding: workspace hits → numbered passages → the prompt; the answer's [n] → citations.

Pure functions (no I/O) so the prompt and the citation parser are tested without any server.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, replace
from pathlib import PurePath
from typing import Any, Iterable, Mapping, Optional, Sequence

# Small local models have small context windows: 8 passages of ~1,200 characters (~300 tokens
# each) plus instructions and a little history stay well inside the 8k window we ask for.
DEFAULT_PASSAGE_CHARS = 1200
EXCERPT_CHARS = 280
HISTORY_MESSAGES = 6

SYSTEM_PROMPT = """You answer questions using only the numbered passages from the user's documents.
Rules:
- Cite every claim with the number of the passage it comes from, in square brackets, e.g. [1] or [2][3].
- Use only passage numbers that appear in the list. Never invent sources.
- If the passages do not contain the answer, say so plainly instead of guessing.
- Be concise. Answer in the language of the question."""


@dataclass(frozen=True)
class Passage:
    """One numbered source the answer may cite; ``text`` is what the model sees (the parent
    chunk when there is one), ``excerpt`` the matched child chunk (what the viewer highlights)."""

    n: int
    file_id: Optional[int]
    path: str
    title: Optional[str]
    page_start: int
    page_end: int
    chunk_id: str
    score: float
    text: str
    excerpt: str
    file_missing: bool = False

    @property
    def name(self) -> str:
        return PurePath(self.path.replace("\\", "/")).name or self.path

    @property
    def pages(self) -> str:
        return page_label(self.page_start, self.page_end)

    @property
    def label(self) -> str:
        return f"{self.name}, {self.pages}"

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Passage":
        return cls(int(d["n"]), _opt_int(d.get("file_id")), str(d.get("path") or ""), _opt_str(d.get("title")),
                   int(d.get("page_start") or 1), int(d.get("page_end") or d.get("page_start") or 1),
                   str(d.get("chunk_id") or ""), float(d.get("score") or 0.0), str(d.get("text") or ""),
                   str(d.get("excerpt") or ""), bool(d.get("file_missing", False)))


@dataclass(frozen=True)
class Citation:
    """An [n] in an answer resolved to what it opens; ``valid`` is False when n names no passage
    (the model made it up): the UI shows it flagged and opens nothing."""

    n: int
    file_id: Optional[int]
    path: Optional[str]
    page_start: Optional[int]
    page_end: Optional[int]
    chunk_id: Optional[str]
    valid: bool

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Citation":
        return cls(int(d["n"]), _opt_int(d.get("file_id")), _opt_str(d.get("path")), _opt_int(d.get("page_start")),
                   _opt_int(d.get("page_end")), _opt_str(d.get("chunk_id")), bool(d.get("valid")))


def _opt_int(v: Any) -> Optional[int]:
    return None if v is None else int(v)


def _opt_str(v: Any) -> Optional[str]:
    return None if v is None else str(v)


def page_label(start: Optional[int], end: Optional[int]) -> str:
    if not start:
        return "p. ?"
    return f"p. {start}" if not end or end == start else f"pp. {start}–{end}"


def _clip(text: str, limit: int) -> str:
    text = " ".join((text or "").split())
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0]
    return cut + " …"


def passages_from_hits(hits: Iterable[Any], max_chars: int = DEFAULT_PASSAGE_CHARS) -> tuple[Passage, ...]:
    """Number workspace hits (``WorkspaceHit``-like) 1..n, best first.

    Several child chunks of one parent would show the model the same text twice: they merge into
    one passage (first chunk kept for the highlight, page span widened to cover all of them).
    """
    merged: list[dict] = []
    by_parent: dict[tuple, int] = {}
    for h in hits:
        context = getattr(h, "context", None)
        key = (h.file_id, context) if context else None
        if key is not None and key in by_parent:
            m = merged[by_parent[key]]
            m["page_start"] = min(m["page_start"], h.page_start)
            m["page_end"] = max(m["page_end"], h.page_end)
            continue
        if key is not None:
            by_parent[key] = len(merged)
        merged.append(dict(file_id=h.file_id, path=h.path, title=getattr(h, "title", None),
                           page_start=h.page_start, page_end=h.page_end, chunk_id=h.chunk_id, score=float(h.score),
                           text=_clip(context or h.text, max_chars), excerpt=_clip(h.text, EXCERPT_CHARS),
                           file_missing=bool(getattr(h, "file_missing", False))))
    return tuple(Passage(n=i + 1, **m) for i, m in enumerate(merged))


def format_sources(passages: Sequence[Passage]) -> str:
    """The numbered block the model cites from: '[n] file name, p. X' then the text."""
    blocks = []
    for p in passages:
        head = f"[{p.n}] {p.name}, {p.pages}"
        if p.title and p.title.strip() and p.title.strip() != p.name:
            head += f" — {p.title.strip()}"
        blocks.append(f"{head}\n{p.text}")
    return "\n\n".join(blocks)


def build_messages(question: str, passages: Sequence[Passage],
                   history: Sequence[tuple[str, str]] = ()) -> list[dict[str, str]]:
    """Chat messages for /api/chat: system rules, recent turns (role, content), then the passages
    and the question. Passages go with the newest question only: earlier turns keep their text but
    not their sources, which keeps the prompt small and the numbering unambiguous."""
    msgs = [{"role": "system", "content": SYSTEM_PROMPT}]
    for role, content in list(history)[-HISTORY_MESSAGES:]:
        if role in ("user", "assistant") and content.strip():
            msgs.append({"role": role, "content": content})
    user = (f"Passages:\n\n{format_sources(passages)}\n\n"
            f"Question: {question.strip()}\n\n"
            f"Answer from the passages above, citing them as [n] (1 to {len(passages)}).")
    msgs.append({"role": "user", "content": user})
    return msgs


# '[1]', '[1, 3]', '[2-4]', '[1][2]', and the '[Source 2]' / '[passage 3]' small models write.
# Up to three digits so a bracketed year is not taken for a citation.
_CITE_RE = re.compile(
    r"\[(?:(?:sources?|passages?|docs?|documents?)\s*)?(\d{1,3}(?:\s*(?:[,;]|[-–])\s*(?:(?:sources?|passages?)\s*)?\d{1,3})*)\]",
    re.IGNORECASE)
_MAX_RANGE = 20


def citation_numbers(text: str) -> list[int]:
    """Every cited number, in order of first appearance."""
    seen: dict[int, None] = {}
    for m in _CITE_RE.finditer(text or ""):
        body = re.sub(r"(?i)sources?|passages?", "", m.group(1))
        for part in re.split(r"[,;]", body):
            bounds = [int(x) for x in re.split(r"[-–]", part) if x.strip()]
            if len(bounds) == 2 and 0 <= bounds[1] - bounds[0] <= _MAX_RANGE:
                nums: Iterable[int] = range(bounds[0], bounds[1] + 1)
            else:
                nums = bounds
            for n in nums:
                seen.setdefault(n, None)
    return list(seen)


def parse_citations(text: str, passages: Sequence[Passage]) -> tuple[Citation, ...]:
    by_n = {p.n: p for p in passages}
    out = []
    for n in citation_numbers(text):
        p = by_n.get(n)
        if p is None:
            out.append(Citation(n, None, None, None, None, None, False))
        else:
            out.append(Citation(n, p.file_id, p.path, p.page_start, p.page_end, p.chunk_id, True))
    return tuple(out)


def all_citations(passages: Sequence[Passage]) -> tuple[Citation, ...]:
    return tuple(Citation(p.n, p.file_id, p.path, p.page_start, p.page_end, p.chunk_id, True) for p in passages)


RETRIEVAL_ONLY_HEADER = "No language model is available, so here are the most relevant passages, grouped by file:"


def reading_order(passages: Sequence[Passage]) -> tuple[Passage, ...]:
    """Passages grouped by file (files in order of their best passage, best first within a file)
    and renumbered 1..n in that order: the retrieval-only answer shows them grouped, and its
    citations must read [1], [2], [3] down the page, not [1], [3] under one file and [2] after."""
    groups: dict[str, list[Passage]] = {}
    for p in passages:
        groups.setdefault(p.path, []).append(p)
    ordered = [p for ps in groups.values() for p in ps]
    return tuple(p if p.n == i else replace(p, n=i) for i, p in enumerate(ordered, start=1))


def retrieval_only_text(passages: Sequence[Passage], header: str = RETRIEVAL_ONLY_HEADER) -> str:
    """The no-LLM answer: best passages grouped by file (files in order of their best passage),
    numbered in reading order (pass ``reading_order(passages)`` on as the answer's passages, so
    each [n] opens what the text shows)."""
    groups: dict[str, list[Passage]] = {}
    for p in reading_order(passages):
        groups.setdefault(p.path, []).append(p)
    lines = [header]
    for path, ps in groups.items():
        first = ps[0]
        title = f" — {first.title.strip()}" if first.title and first.title.strip() != first.name else ""
        missing = " (file missing on disk)" if first.file_missing else ""
        lines += ["", f"**{first.name}**{title}{missing}"]
        lines += [f"- [{p.n}] {p.pages}: {p.excerpt}" for p in ps]
    return "\n".join(lines)

"""Passages, prompt and citation parsing: pure functions, no server."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from spar_desktop.core.chat.prompt import (
    SYSTEM_PROMPT, Passage, build_messages, citation_numbers, parse_citations, passages_from_hits,
    retrieval_only_text,
)


@dataclass(frozen=True)
class Hit:  # the fields of WorkspaceHit that chat reads
    file_id: int
    path: str
    page_start: int
    page_end: int
    text: str
    context: Optional[str]
    chunk_id: str
    score: float = 1.0
    title: Optional[str] = None
    file_missing: bool = False


HITS = [
    Hit(1, "/share/ops/report.pdf", 2, 2, "bearing failed", "PARENT A: the bearing failed after oil ...", "c3"),
    Hit(2, "/share/ops/blade.md", 1, 1, "blade crack", None, "c0", title="Blade survey"),
    Hit(1, "/share/ops/report.pdf", 3, 3, "oil contamination", "PARENT A: the bearing failed after oil ...", "c4"),
    Hit(1, "/share/ops/report.pdf", 7, 7, "later section", "PARENT B", "c9"),
]


def test_passages_are_numbered_and_children_of_one_parent_merge():
    ps = passages_from_hits(HITS)
    assert [p.n for p in ps] == [1, 2, 3]
    first = ps[0]
    assert (first.page_start, first.page_end, first.chunk_id) == (2, 3, "c3")  # widened, first chunk kept
    assert first.text.startswith("PARENT A") and first.excerpt == "bearing failed"
    assert ps[1].text == "blade crack" and ps[1].label == "blade.md, p. 1"
    assert first.label == "report.pdf, pp. 2–3"
    long = passages_from_hits([Hit(1, "/a.md", 1, 1, "x " * 5000, None, "c0")], max_chars=100)
    assert len(long[0].text) <= 102


def test_prompt_numbers_each_passage_with_file_and_page_and_asks_for_citations():
    ps = passages_from_hits(HITS)
    msgs = build_messages("Why did the bearing fail?", ps, history=[("user", "hi"), ("assistant", "hello [1]")])
    assert msgs[0] == {"role": "system", "content": SYSTEM_PROMPT} and "[1]" in SYSTEM_PROMPT
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "user"]
    user = msgs[-1]["content"]
    assert "[1] report.pdf, pp. 2–3\nPARENT A" in user
    assert "[2] blade.md, p. 1 — Blade survey\nblade crack" in user
    assert "[3] report.pdf, p. 7" in user
    assert "Question: Why did the bearing fail?" in user and "(1 to 3)" in user


def test_citation_forms_and_invalid_numbers():
    assert citation_numbers("a [1] b [2, 3] c [1][4] d [5-7] e [Source 8] f [passage 2; 9]") == [1, 2, 3, 4, 5, 6, 7, 8, 9]
    assert citation_numbers("in [2023] and [1234] and [x] and [ ]") == []  # years (4 digits) are not citations
    ps = passages_from_hits(HITS)
    cites = parse_citations("Oil [1]. Cracks [2]. Invented [7].", ps)
    assert [(c.n, c.valid) for c in cites] == [(1, True), (2, True), (7, False)]
    assert (cites[0].file_id, cites[0].path, cites[0].page_start, cites[0].page_end, cites[0].chunk_id) == \
        (1, "/share/ops/report.pdf", 2, 3, "c3")
    assert cites[2].file_id is None and cites[2].path is None


def test_retrieval_only_groups_passages_by_file_with_their_numbers():
    ps = passages_from_hits(HITS)
    text = retrieval_only_text(ps)
    lines = text.splitlines()
    assert lines[0].startswith("No language model")
    assert text.index("**report.pdf**") < text.index("**blade.md** — Blade survey")  # files by best passage
    assert "- [1] pp. 2–3: bearing failed" in lines and "- [2] p. 7: later section" in lines
    # Both report.pdf passages sit under one heading.
    assert text.count("**report.pdf**") == 1
    assert text.index("[2] p. 7") < text.index("**blade.md**") < text.index("- [3] p. 1: blade crack")


def test_retrieval_only_numbers_citations_in_order_of_appearance():
    """Issue 14.14: grouping by file used to print [1], [3] under one file, then [2]."""
    import re

    from spar_desktop.core.chat.prompt import reading_order

    ps = passages_from_hits(HITS)
    assert [(p.n, p.chunk_id) for p in ps] == [(1, "c3"), (2, "c0"), (3, "c9")]  # best first
    text = retrieval_only_text(ps)
    assert [int(n) for n in re.findall(r"\[(\d+)\]", text)] == [1, 2, 3]
    ordered = reading_order(ps)
    assert [(p.n, p.chunk_id) for p in ordered] == [(1, "c3"), (2, "c9"), (3, "c0")]
    assert reading_order(ordered) == ordered and retrieval_only_text(ordered) == text


def test_passage_json_round_trip():
    p = passages_from_hits(HITS)[0]
    assert Passage.from_json(p.to_json()) == p

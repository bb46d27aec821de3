"""Chunking an ExtractedDocument into searchable pieces: fixed, hierarchical (default), semantic.

All chunkers are pure functions of (document text, config): the same input always gives the same
chunk ids and spans, which is what lets the embedding cache key chunks by (content hash, config).
Budgets are in estimated encoder tokens (see ``tokens``); every chunk's ``text`` is exactly
``doc.text[char_start:char_end]`` so a hit can be highlighted and mapped back to its pages.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import Callable, Optional

from spar_desktop.core.documents.contextual import contextualize
from spar_desktop.core.documents.segment import (
    Segment,
    Span,
    Units,
    at_word_start,
    first_start_in,
    pack,
    sentences,
    split_oversized,
)
from spar_desktop.core.documents.semantic import semantic_spans
from spar_desktop.core.documents.tokens import UnitCost
from spar_desktop.core.documents.types import Chunk, ChunkerConfig, ExtractedDocument

__all__ = ["chunk_document", "contextualize", "validate_config", "PageMap", "METHODS"]

METHODS = ("hierarchical", "fixed", "semantic")


class PageMap:
    """Maps char offsets in ``doc.text`` to 1-based page numbers."""

    def __init__(self, doc: ExtractedDocument) -> None:
        self.offsets = doc.page_offsets
        self.numbers = tuple(p.page for p in doc.pages)

    def page_at(self, pos: int) -> int:
        if not self.numbers:
            return 1
        return self.numbers[max(0, bisect_right(self.offsets, pos) - 1)]

    def span(self, start: int, end: int) -> tuple[int, int]:
        return self.page_at(start), self.page_at(max(start, end - 1))


def validate_config(config: ChunkerConfig) -> None:
    """Reject configs that would loop forever or silently overflow the encoder window."""
    if config.method not in METHODS:
        raise ValueError(f"unknown chunking method {config.method!r}; expected one of {METHODS}")
    if config.child_tokens <= 0:
        raise ValueError("child_tokens must be positive")
    # Semantic chunks don't overlap (their edges are topic changes), so only the others check.
    if config.method != "semantic" and not 0 <= config.overlap_tokens < config.child_tokens:
        raise ValueError("overlap_tokens must be >= 0 and smaller than child_tokens")
    if config.method == "hierarchical" and config.parent_tokens < config.child_tokens:
        raise ValueError("parent_tokens must be at least child_tokens")


# Formats whose pages are sheets or slides: units a reader cites on their own.
PAGE_UNIT_FORMATS = frozenset({"xlsx", "xls", "ods", "pptx", "odp", "ppt"})


def chunk_document(
    doc: ExtractedDocument,
    config: Optional[ChunkerConfig] = None,
    embed_fn: Optional[Callable[[list[str]], object]] = None,
    file_id: Optional[int] = None,
    *,
    unit_cost: Optional[UnitCost] = None,
    context_fn: Optional[Callable[[str, str], str]] = None,
) -> list[Chunk]:
    """Chunk ``doc`` according to ``config`` (hierarchical by default).

    Hierarchical returns each parent ('p<i>') followed by its children ('c<j>', ``parent_id``
    set); fixed and semantic return 'c<j>' chunks with level 'flat'. ``embed_fn`` (texts ->
    L2-normalised vectors) is required for semantic chunking. ``unit_cost`` swaps the token
    estimate for an exact per-word count (``tokens.counter_from_tokenizer``). When
    ``config.contextual`` is set and ``context_fn`` is given, searchable chunks get an LLM context
    (see ``contextual.contextualize``).
    """
    config = config or ChunkerConfig()
    validate_config(config)
    text = doc.text  # a join over all pages: compute once
    if not text.strip():
        return []
    units = Units(text, unit_cost)
    pages = PageMap(doc)

    if config.method == "fixed":
        spans = fixed_spans(text, units, Units.scaled(config.child_tokens),
                            Units.scaled(config.overlap_tokens))
        chunks = [_chunk(f"c{i}", text, s, pages, "flat", None, file_id) for i, s in enumerate(spans)]
    elif config.method == "semantic":
        if embed_fn is None:
            raise ValueError(
                "semantic chunking needs embed_fn (list of sentences -> normalised vectors); "
                "pass the encoder's embed function or use method 'hierarchical'"
            )
        spans = semantic_spans(text, units, config, embed_fn)
        chunks = [_chunk(f"c{i}", text, s, pages, "flat", None, file_id) for i, s in enumerate(spans)]
    else:
        chunks = _hierarchical(text, units, pages, config, file_id, doc.format in PAGE_UNIT_FORMATS)

    if config.contextual and context_fn is not None:
        chunks = contextualize(chunks, doc, context_fn)
    return chunks


def _chunk(cid: str, text: str, span: Span, pages: PageMap, level: str,
           parent_id: Optional[str], file_id: Optional[int]) -> Chunk:
    start, end = span
    page_start, page_end = pages.span(start, end)
    return Chunk(cid, text[start:end], start, end, page_start, page_end, level, parent_id,
                 None, file_id)


def _page_groups(segs: list[Segment], pages: PageMap) -> list[list[Segment]]:
    """Consecutive segments split where the page changes."""
    out: list[list[Segment]] = []
    last = None
    for seg in segs:
        page = pages.page_at(seg.start)
        if page != last:
            out.append([])
            last = page
        out[-1].append(seg)
    return out


def _hierarchical(text: str, units: Units, pages: PageMap, config: ChunkerConfig,
                  file_id: Optional[int], page_breaks: bool = False) -> list[Chunk]:
    segs = sentences(text)
    parent_budget = Units.scaled(config.parent_tokens)
    overlap = Units.scaled(config.overlap_tokens)
    # Children never cross their parent (containment), so they are packed per parent from the
    # parent's own sentences; the overlap is reserved out of the child budget.
    content_budget = Units.scaled(config.child_tokens) - overlap
    parent_segs = [p for s in segs for p in split_oversized(text, s, units, parent_budget)]
    out: list[Chunk] = []
    child_no = 0
    if page_breaks:  # a sheet or a slide is a unit of its own: a chunk never spans two
        parent_groups = [g for page in _page_groups(parent_segs, pages) for g in pack(page, units, parent_budget)]
    else:
        parent_groups = pack(parent_segs, units, parent_budget)
    for p_no, group in enumerate(parent_groups):
        pid = f"p{p_no}"
        p_span = (group[0].start, group[-1].end)
        out.append(_chunk(pid, text, p_span, pages, "parent", None, file_id))
        child_segs = [c for s in group for c in split_oversized(text, s, units, content_budget)]
        groups = pack(child_segs, units, content_budget)
        for span in with_overlap(text, units, child_segs, groups, overlap):
            out.append(_chunk(f"c{child_no}", text, span, pages, "child", pid, file_id))
            child_no += 1
    return out


def with_overlap(text: str, units: Units, segs: list[Segment], groups: list[list[Segment]],
                 overlap: int) -> list[Span]:
    """Spans of ``groups``, each after the first extended back by ≤ ``overlap`` tokens.

    The overlap starts at a sentence start when one lies inside the overlap window (a whole
    sentence of context reads better than half of one), else at a word start.
    """
    spans: list[Span] = []
    prev: Optional[Span] = None
    for group in groups:
        start, end = group[0].start, group[-1].end
        if prev is not None and overlap > 0:
            start = overlap_start(text, units, segs, prev, start, overlap)
        spans.append((start, end))
        prev = (group[0].start, end)
    return spans


def overlap_start(text: str, units: Units, segs: list[Segment], prev: Span, start: int,
                  overlap: int) -> int:
    """Where a chunk beginning at ``start`` should really begin to repeat ≤ ``overlap`` tokens
    of the previous chunk ``prev`` (never its very first unit, so chunks always advance)."""
    i_prev, j_prev = units.index_range(prev[0], prev[1])
    if j_prev - i_prev < 2:
        return start
    # Smallest unit u with cost(u .. j_prev) <= overlap, from prefix sums.
    u = bisect_left(units.cum, units.cum[j_prev] - overlap, i_prev + 1, j_prev)
    while u < j_prev and not at_word_start(text, units.starts[u]):
        u += 1  # don't start inside a word like "don't" or "e-mail"
    if u >= j_prev:
        return start
    lo = units.starts[u]
    snapped = first_start_in(segs, lo, prev[1])
    return snapped if snapped is not None else lo


def fixed_spans(text: str, units: Units, window: int, overlap: int) -> list[Span]:
    """Sliding windows of ≤ ``window`` tokens, consecutive windows sharing ≤ ``overlap`` tokens.

    Windows start at word starts; structure is ignored on purpose (this is the baseline).
    """
    n = len(units)
    spans: list[Span] = []
    i = 0
    while i < n:
        j = bisect_right(units.cum, units.cum[i] + window, i + 1, n + 1) - 1
        j = max(j, i + 1)
        spans.append((units.starts[i], units.ends[j - 1]))
        if j >= n:
            break
        nxt = bisect_left(units.cum, units.cum[j] - overlap, i + 1, j) if overlap > 0 else j
        while nxt < j and not at_word_start(text, units.starts[nxt]):
            nxt += 1
        i = max(nxt, i + 1)
    return spans

"""What BM25 scores: whole parent sections (the default) or the small child chunks.

Dense retrieval works best on small chunks (one idea per vector), but BM25 loses on them: a
query's terms are spread over a whole abstract or section, and a 200-token child holds only
some of them. Measured on the development sets (benchmarks/results/retrieval_quality.md),
BM25 over parents beat BM25 over children on all four (SciFact train +3.0 nDCG@10 points),
and for short documents a parent is the whole document. So the keyword index is built over
"keyword units" — each parent once, plus every chunk that has no known parent (flat chunkers) —
and a child takes its unit's BM25 score. Ranking then works on chunks as before: children of
one parent share the BM25 side and differ by their dense score.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional, Sequence

import numpy as np

KEYWORD_UNITS = ("parent", "chunk")
DEFAULT_KEYWORD_UNIT = "parent"


def check_unit(unit: str) -> str:
    if unit not in KEYWORD_UNITS:
        raise ValueError(f"keyword_unit must be one of {KEYWORD_UNITS}, not '{unit}'")
    return unit


@dataclass(frozen=True)
class UnitMap:
    """``unit_of[p]``: the keyword unit of chunk position p; ``ids[u]``: unit u's id (a parent as
    '<doc>#<parent id>', a chunk by its key); ``members``: chunk positions by unit (CSR:
    ``members[starts[u]:starts[u+1]]``); ``parent[u]``: index into the table's parent columns,
    or -1 when the unit is a single chunk."""

    unit: str
    unit_of: np.ndarray
    ids: list[str]
    parent: np.ndarray
    starts: np.ndarray
    members: np.ndarray

    @classmethod
    def build(cls, table: object, unit: str) -> "UnitMap":
        check_unit(unit)
        keys: Sequence[str] = table.keys  # type: ignore[attr-defined]
        doc_of: Sequence[str] = table.doc_of  # type: ignore[attr-defined]
        parent_pos = np.asarray(table.parent_pos, dtype=np.int64).reshape(len(keys))  # type: ignore[attr-defined]
        parent_ids: Sequence[str] = table.parent_ids  # type: ignore[attr-defined]
        n = len(keys)
        unit_of = np.empty(n, dtype=np.int64)
        ids: list[str] = []
        parent: list[int] = []
        seen: dict[int, int] = {}
        for p in range(n):
            pp = int(parent_pos[p]) if unit == "parent" else -1
            if pp >= 0:
                u = seen.get(pp)
                if u is None:
                    u = seen[pp] = len(ids)
                    ids.append(f"{doc_of[p]}#{parent_ids[pp]}")
                    parent.append(pp)
            else:
                u = len(ids)
                ids.append(keys[p])
                parent.append(-1)
            unit_of[p] = u
        order = np.argsort(unit_of, kind="stable")
        starts = np.zeros(len(ids) + 1, dtype=np.int64)
        if n:
            np.cumsum(np.bincount(unit_of, minlength=len(ids)), out=starts[1:])
        return cls(unit, unit_of, ids, np.asarray(parent, dtype=np.int64), starts, order)

    def __len__(self) -> int:
        return len(self.ids)

    def texts(self, table: object) -> list[str]:
        """What BM25 indexes per unit: the parent's text (plus any contextual prefixes of its
        children, which the child keys carried), or the chunk's own key text."""
        out: list[str] = []
        for u in range(len(self.ids)):
            members = self.members[self.starts[u]:self.starts[u + 1]]
            pp = int(self.parent[u])
            if pp < 0:
                out.append(table.embed_text(int(members[0])))  # type: ignore[attr-defined]
                continue
            contexts = [table.contexts[int(p)] for p in members if int(p) in table.contexts]  # type: ignore[attr-defined]
            text = table.parent_texts[pp]  # type: ignore[attr-defined]
            out.append("\n\n".join([*dict.fromkeys(contexts), text]) if contexts else text)
        return out

    def siblings(self, p: int) -> list[int]:
        u = int(self.unit_of[p])
        return self.members[self.starts[u]:self.starts[u + 1]].tolist()

    def chunks_of(self, units: Sequence[int]) -> list[int]:
        """Chunk positions of ``units``, unit by unit, in chunk order within each."""
        out: list[int] = []
        for u in units:
            out.extend(self.members[self.starts[u]:self.starts[u + 1]].tolist())
        return out


# Which child of a parent to show first: children share their parent's BM25 score, so the dense
# side alone would pick the passage, and it may hold one of the query's words where a sibling
# holds them all. Within a parent, a child keeps PASSAGE_WEIGHT of the parent's keyword share in
# proportion to the query words (IDF-weighted) it holds, relative to its best sibling. Files are
# still ranked by the unadjusted scores (what retrieval_quality.md measured).
PASSAGE_WEIGHT = 0.5


def passage_coverage(query_tokens: Sequence[str], candidates: Sequence[int], tokens_of: Callable[[int], frozenset],
                     idf: Callable[[str], float]) -> dict[int, float]:
    """Per candidate chunk: IDF mass of the query tokens it contains / the best such mass among
    ``candidates`` (1.0 for the best; all 1.0 when none contains any)."""
    terms = {t: idf(t) for t in dict.fromkeys(query_tokens)}
    mass = {p: sum(w for t, w in terms.items() if t in tokens_of(p)) for p in candidates}
    best = max(mass.values(), default=0.0)
    return {p: (m / best if best > 0 else 1.0) for p, m in mass.items()}


def prefer_matching_passages(searcher: Any, query: str, fused: Mapping[int, float],
                             head: Sequence[tuple[int, float]], why: Any) -> dict[int, float]:
    """``fused`` with the children of the parents shown in ``head`` keeping their share of the
    parent's BM25 part by the query words they hold (PASSAGE_WEIGHT), so the passage shown for a
    document is the one that matches, not only the one dense liked best. ``why``: the query's
    explain.FusionParts, whose per-child factors are recorded for the explanation."""
    adjusted = dict(fused)
    units, bm25 = searcher.units, searcher.bm25
    q = bm25.tokenizer.tokenize(query)
    cache = searcher.__dict__.setdefault("_chunk_token_cache", {})

    def tokens_of(p: int) -> frozenset:
        got = cache.get(p)
        if got is None:
            if len(cache) > 50_000:  # bounded: a long session over a huge workspace
                cache.clear()
            got = cache[p] = frozenset(bm25.tokenizer.tokenize(searcher.table.embed_text(p)))
        return got

    for u in dict.fromkeys(int(units.unit_of[p]) for p, _ in head):
        cands = [p for p in units.chunks_of((u,)) if p in fused]
        if len(cands) < 2:
            continue
        for p, r in passage_coverage(q, cands, tokens_of, bm25.token_idf).items():
            why.factors[p] = 1.0 - PASSAGE_WEIGHT * (1.0 - r)
            adjusted[p] = fused[p] - (1.0 - why.alpha) * why.nb.get(p, 0.0) * PASSAGE_WEIGHT * (1.0 - r)
    return adjusted


SHORT_SHARE = 0.5  # a collection is "short documents" when at least half fit in one section
_SIZE = re.compile(r"-(c|p)(\d+)")


@dataclass(frozen=True)
class ChunkingChoice:
    """How a searcher cut its collection, chosen from the collection's own length statistics:
    short documents (most fit in one parent section) are keyword-scored whole, long ones by
    section; meaning (dense) is always scored on the small child passages, which won on every
    development set (whole-document vectors lost 1.1-3.6 nDCG points)."""

    kind: str  # 'short' | 'long' | 'flat' (a chunker without parents)
    documents: int
    one_section: float  # share of documents that are a single parent section
    child_tokens: Optional[int]
    parent_tokens: Optional[int]
    keyword_unit: str

    def describe(self) -> str:
        child = f"{self.child_tokens}-token passages" if self.child_tokens else "passages"
        if self.keyword_unit == "chunk" or self.kind == "flat":
            return f"keywords and meaning both scored on {child}"
        if self.kind == "short":
            return (f"short documents ({self.one_section:.0%} fit in one section): keywords scored on whole "
                    f"documents, meaning on {child}")
        section = f"{self.parent_tokens}-token sections" if self.parent_tokens else "sections"
        return f"long documents: keywords scored on {section}, meaning on {child}"


def chunking_choice(table: object, units: UnitMap) -> ChunkingChoice:
    docs: dict[str, set[int]] = {}
    for d, u in zip(table.doc_of, units.unit_of.tolist()):  # type: ignore[attr-defined]
        docs.setdefault(d, set()).add(u)
    n = len(docs)
    single = sum(1 for us in docs.values() if len(us) == 1) / n if n else 0.0
    has_parents = bool(len(units.parent)) and bool((units.parent >= 0).any())
    key = next(iter(table.doc_refs.values()), ("", ""))[1] if getattr(table, "doc_refs", None) else ""  # type: ignore[attr-defined]
    sizes = {m.group(1): int(m.group(2)) for m in _SIZE.finditer(key or "")}
    kind = "flat" if not has_parents else ("short" if single >= SHORT_SHARE else "long")
    return ChunkingChoice(kind, n, round(single, 4), sizes.get("c"), sizes.get("p") if has_parents else None,
                          units.unit)

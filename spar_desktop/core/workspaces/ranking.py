"""Ranked admission (issue 16): hard constraints stay hard, every other file is scored by the
evidence that it is about the request, and the best are admitted up to a budget.

Why: all-or-nothing tag matching loses a file as soon as one keyword's tags miss it (on PubMedQA
the gold abstract was admitted for 0.857 of the questions), while a request's keywords are rarely
all tagged on the file that answers it. Scoring instead keeps the files with the most evidence:

    score = (1 - SIMILARITY_WEIGHT) * tags + SIMILARITY_WEIGHT * likeness

``tags``: the mean over the request's optional keyword groups of the match score of the best tag
of that group the file has (a tag or any descendant: the DAG expansion of all-or-nothing
matching; an unconfirmed suggestion, when counted, times its own certainty); ``likeness``: how far the cosine of the file's summary vector to the request rises
above SIMILARITY_FLOOR, scaled to 0..1 (0 without a summary). A file with score 0 has no evidence
(no tag of any group, no summary like the request) and is never admitted, so a small index is not
filled up to its budget with unrelated files. Ties break by path: the same index and filter
always admit the same files, and explain() and admitted_files() share one function
(``select_files``, which also applies all-or-nothing filters and files added by hand).
"""

from __future__ import annotations

import base64
import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence

import numpy as np
from sqlalchemy import select

from spar_desktop.core.documents.types import storable_text
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.models import File, FileTag
from spar_desktop.core.library.queries import FileFilter, build_query, count_files
from spar_desktop.core.library.tags import descendant_ids
from spar_desktop.core.tagging.summaries import SummaryStore, summary_similarity

if TYPE_CHECKING:  # selection calls this module: a type only
    from spar_desktop.core.workspaces.selection import WorkspaceFilter

# A tenth of the index: the target for a workspace that still holds what a global search
# would find; never fewer than 25, so a small index's workspace is not a handful of files.
BUDGET_SHARE = 0.10
MIN_BUDGET = 25
# A summary below the floor is no evidence. MiniLM cosines of a request to unrelated summaries
# rarely pass 0.3 (PubMedQA: 97% of all question-abstract pairs are below it, 99% of the answers above).
SIMILARITY_FLOOR = 0.3
# Tuned on PubMedQA train (the development split, benchmarks/spar_vs_global.py); see DESIGN.
SIMILARITY_WEIGHT = 0.5
_IN_CHUNK = 500


def default_budget(indexed_files: int) -> int:
    return max(MIN_BUDGET, math.ceil(indexed_files * BUDGET_SHARE))


def encode_vector(vector: Sequence[float]) -> str:
    """A request vector as stored in the filter (base64 float32: compact, exact, no pickle)."""
    return base64.b64encode(np.asarray(vector, dtype=np.float32).tobytes()).decode("ascii")


def decode_vector(text: str) -> Optional[np.ndarray]:
    """The stored request vector, L2-normalised; None when absent or unreadable (a hand-edited
    or damaged filter ranks by tags only rather than failing)."""
    if not text:
        return None
    try:
        raw = base64.b64decode(text.encode("ascii"), validate=True)
    except (ValueError, UnicodeEncodeError):
        return None
    if not raw or len(raw) % 4:
        return None
    vec = np.frombuffer(raw, dtype=np.float32)
    norm = float(np.linalg.norm(vec))
    return vec / norm if norm > 0 and np.isfinite(norm) else None


@dataclass(frozen=True)
class ScoredFile:
    file_id: int
    path: str
    content_hash: Optional[str]
    score: float
    tags: float  # mean best-tag match over the keyword groups, 0..1
    similarity: Optional[float]  # cosine of its summary to the request; None without one
    suggested_only: bool = False  # admitted only because unconfirmed suggestions were counted


@dataclass(frozen=True)
class Ranking:
    pool: int  # files that meet every hard constraint
    candidates: int  # of them, files with some evidence (score > 0)
    budget: int
    admitted: tuple[ScoredFile, ...]  # best first
    with_summaries: int  # pool files that have a current summary vector

    @property
    def cutoff(self) -> float:
        return self.admitted[-1].score if self.admitted else 0.0

    def label(self) -> str:
        if not self.candidates:
            return "ranked: no file has a keyword's tag" + (" or a summary like the request" if self.with_summaries else "")
        return f"ranked: top {len(self.admitted)} of {self.candidates} candidates (score ≥ {self.cutoff:.2f})"

    def to_json(self) -> dict:
        return {"pool": self.pool, "candidates": self.candidates, "budget": self.budget,
                "admitted": len(self.admitted), "cutoff": round(self.cutoff, 4),
                "with_summaries": self.with_summaries, "label": self.label()}


def _group_scores(session, groups: Sequence[Mapping[int, float]], include_unconfirmed: bool,
                  pool: set[int]) -> tuple[dict[int, list[float]], dict[int, list[float]]]:
    """Per pool file, the best match score per group: (counting suggestions if asked, confirmed only)."""
    counted: dict[int, list[float]] = {}
    confirmed: dict[int, list[float]] = {}
    n = len(groups)
    for gi, group in enumerate(groups):
        best: dict[int, float] = {}  # tag or descendant → best score of a group tag above it
        for tag_id, score in group.items():
            for d in descendant_ids(session, [tag_id]):
                best[d] = max(best.get(d, 0.0), float(score))
        ids = sorted(best)
        for i in range(0, len(ids), _IN_CHUNK):
            q = select(FileTag.file_id, FileTag.tag_id, FileTag.confirmed, FileTag.score).where(
                FileTag.tag_id.in_(ids[i:i + _IN_CHUNK]))
            for fid, tid, ok, certainty in session.execute(q):
                if fid not in pool:
                    continue
                if ok:
                    row = confirmed.setdefault(fid, [0.0] * n)
                    row[gi] = max(row[gi], best[tid])
                if ok or include_unconfirmed:
                    # A suggestion weighs as much as its own certainty; a confirmed tag fully.
                    weight = 1.0 if ok else min(1.0, max(0.0, float(certainty or 0.0)))
                    row = counted.setdefault(fid, [0.0] * n)
                    row[gi] = max(row[gi], best[tid] * weight)
    return counted, confirmed


def _likeness(library: Library, query: Optional[np.ndarray], model_id: str, pool: set[int]) -> dict[int, float]:
    """Cosine of each pool file's current summary to the request (files without one are absent)."""
    if query is None or not model_id:
        return {}
    return {i: v for i, v in summary_similarity(library, model_id, query).items() if i in pool}


def _score(tags: float, similarity: Optional[float]) -> float:
    like = 0.0 if similarity is None else max(0.0, similarity - SIMILARITY_FLOOR) / (1.0 - SIMILARITY_FLOOR)
    return (1.0 - SIMILARITY_WEIGHT) * tags + SIMILARITY_WEIGHT * like


def rank(library: Library, hard: FileFilter, groups: Sequence[Mapping[int, float]], budget: int,
         query: Optional[np.ndarray] = None, model_id: str = "") -> Ranking:
    """Score the files that meet ``hard`` by ``groups`` (tag id → match score, one mapping per
    optional keyword group) and by summary likeness to ``query``; admit the best ``budget``."""
    with library.session() as s:
        rows = {r[0]: (r[1], r[2]) for r in s.execute(
            build_query(s, hard).with_only_columns(File.id, File.path, File.content_hash))}
        pool = set(rows)
        confirmed_pool = pool
        if hard.include_unconfirmed and hard.tag_groups:  # required groups met only through suggestions
            confirmed_pool = {r[0] for r in s.execute(build_query(s, replace(hard, include_unconfirmed=False))
                                                      .with_only_columns(File.id))}
        counted, confirmed = _group_scores(s, groups, hard.include_unconfirmed, pool) if groups else ({}, {})
    likeness = _likeness(library, query, model_id, pool)
    n = max(1, len(groups))
    scored: list[ScoredFile] = []
    for fid in pool:
        sim = likeness.get(fid)
        tags = sum(counted.get(fid, ())) / n
        score = _score(tags, sim)
        if score <= 0.0:
            continue
        path, h = rows[fid]
        scored.append(ScoredFile(fid, path, h, score, tags, sim))
    scored.sort(key=lambda f: (-f.score, f.path))
    admitted = scored[:max(0, budget)]
    if hard.include_unconfirmed:
        cutoff = admitted[-1].score if admitted else 0.0
        admitted = [_mark(f, confirmed_pool, confirmed, n, cutoff) for f in admitted]
    return Ranking(len(pool), len(scored), budget, tuple(admitted), len(likeness))


def _mark(f: ScoredFile, confirmed_pool: set[int], confirmed: dict[int, list[float]], n: int, cutoff: float) -> ScoredFile:
    """Would ``f`` be admitted on its confirmed tags alone (same cutoff)? If not, it came only
    through unconfirmed suggestions, and the explanation names it."""
    alone = _score(sum(confirmed.get(f.file_id, ())) / n, f.similarity)
    if f.file_id in confirmed_pool and (alone >= cutoff and alone > 0.0):
        return f
    return replace(f, suggested_only=True)


Row = tuple[int, str, Optional[str]]


@dataclass(frozen=True)
class Selection:
    """What a filter admits: explain() and admitted_files() both read this, so they agree."""

    rows: tuple[Row, ...]  # path order
    ranking: Optional[Ranking]
    suggested_only: tuple[str, ...]


def _rows(s, flt: FileFilter) -> dict[int, Row]:
    q = build_query(s, flt).with_only_columns(File.id, File.path, File.content_hash)
    return {r[0]: tuple(r) for r in s.execute(q)}


def select_files(library: Library, flt: "WorkspaceFilter") -> Selection:
    """What ``flt`` admits, ranked or all-or-nothing, and which files only suggestions brought in."""
    rows: dict[int, Row] = {}
    ranked: Optional[Ranking] = None
    suggested: set[str] = set()
    if flt.only_pinned or not flt.scoped:  # unscoped: nothing, never everything
        pass
    elif flt.ranks:
        groups = [{t.tag_id: t.score for t in g.tags} for g in flt.optional_groups]
        budget = flt.budget
        if budget <= 0:  # a hand-made or damaged filter: the default, never an empty workspace
            with library.session() as s:
                budget = default_budget(count_files(s, FileFilter()))
        ranked = rank(library, flt.hard_filter(), groups, budget, decode_vector(flt.request_vector), flt.vector_model)
        rows = {f.file_id: (f.file_id, f.path, f.content_hash) for f in ranked.admitted}
        suggested = {f.path for f in ranked.admitted if f.suggested_only}
    else:
        base = flt.hard_filter() if flt.ranked else flt.file_filter()
        with library.session() as s:
            rows = _rows(s, base)
            if flt.include_unconfirmed and (base.tag_groups or base.soft_groups):
                alone = _rows(s, replace(base, include_unconfirmed=False))
                suggested = {r[1] for fid, r in rows.items() if fid not in alone}
    if flt.pinned:
        with library.session() as s:
            pinned = _rows(s, FileFilter(file_ids=frozenset(flt.pinned)))
        suggested -= {r[1] for r in pinned.values()}  # added by hand: not through a suggestion
        rows.update(pinned)
    return Selection(tuple(sorted(rows.values(), key=lambda r: r[1])), ranked, tuple(sorted(suggested)))


def summaries_available(library: Library, model_id: str) -> bool:
    return SummaryStore(library).count(model_id) > 0


def request_vector(encoder: Any, text: str) -> str:
    """The request encoded as a search query, stored in the filter so that every later explain
    and build (in any process, with or without an encoder loaded) ranks the same way."""
    return encode_vector(encoder.encode_query(storable_text(text)))

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
from typing import Any, Mapping, Optional, Protocol, Sequence

import numpy as np

from spar_desktop.core.documents.types import storable_text
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.models import File
from spar_desktop.core.library.queries import FileFilter, build_query, count_files
from spar_desktop.core.progress import CancelToken, ProgressCallback, no_progress
from spar_desktop.core.tagging.summaries import SummaryReport, SummaryStore, summarize_files
from spar_desktop.core.workspaces.group_scores import GroupScores, best_rows, group_scores
from spar_desktop.core.workspaces.likeness import pool_likeness


# A tenth of the index: the target for a workspace that still holds what a global search
# would find; never fewer than 25, so a small index's workspace is not a handful of files, and
# never more than 5,000 by default: a workspace is built for one task (embedding 5,000 documents
# already takes minutes to hours here), and a tenth of a million-file share (100,000 files, days of
# embedding) made every request list and sort O(index) files (issue 29). The user asks for more
# with --budget or the dialog's "Show more"; the funnel says how many candidates were left out.
BUDGET_SHARE = 0.10
MIN_BUDGET = 25
MAX_DEFAULT_BUDGET = 5_000
# A summary below the floor is no evidence. MiniLM cosines of a request to unrelated summaries
# rarely pass 0.3 (PubMedQA: 97% of all question-abstract pairs are below it, 99% of the answers above).
SIMILARITY_FLOOR = 0.3
# Tuned on PubMedQA train (the development split, benchmarks/spar_vs_global.py); see DESIGN.
SIMILARITY_WEIGHT = 0.5
_IN_CHUNK = 500
# Summaries computed on demand for one request, at most: those of the best candidates by their
# tags (issue 29: the CLI and a workspace made right after indexing have no background job's
# summaries). On PubMedQA the gold abstract is among the best 200 candidates whenever its tags
# make it a candidate at all; a fixed cap keeps the first request O(1) in the size of the index.
ON_DEMAND_SUMMARIES = 200


def default_budget(indexed_files: int) -> int:
    return min(MAX_DEFAULT_BUDGET, max(MIN_BUDGET, math.ceil(indexed_files * BUDGET_SHARE)))


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
    # Candidates scored by their tags alone: no current summary (none computed yet, or the
    # request was not encoded). The funnel says so: their likeness to the request is unknown.
    without_summary: int = 0

    @property
    def cutoff(self) -> float:
        return self.admitted[-1].score if self.admitted else 0.0

    def label(self) -> str:
        if not self.candidates:
            return "ranked: no file has a keyword's tag" + (" or a summary like the request" if self.with_summaries else "")
        text = f"ranked: top {len(self.admitted)} of {self.candidates} candidates (score ≥ {self.cutoff:.2f})"
        if self.without_summary:
            text += (f"; {self.without_summary} ranked by tags alone, without a file summary"
                     if self.without_summary < self.candidates else "; ranked by tags alone, without file summaries")
        return text

    def to_json(self) -> dict:
        return {"pool": self.pool, "candidates": self.candidates, "budget": self.budget,
                "admitted": len(self.admitted), "cutoff": round(self.cutoff, 4),
                "with_summaries": self.with_summaries, "without_summary": self.without_summary,
                "label": self.label()}


def _unconstrained(hard: FileFilter) -> bool:
    """Every file with a current summary meets ``hard`` (summaries are of present, readable files)."""
    return not (hard.tag_groups or hard.soft_groups or hard.since or hard.until or hard.formats or hard.statuses
                or hard.authors or hard.folder_ids or hard.file_ids is not None or hard.path_glob)


def _likeness_scores(sims: np.ndarray) -> np.ndarray:
    """``_score(0, sim)`` for an array: a file's score from its summary alone."""
    return SIMILARITY_WEIGHT * (np.maximum(0.0, sims - SIMILARITY_FLOOR) / (1.0 - SIMILARITY_FLOOR))


def _score(tags: float, similarity: Optional[float]) -> float:
    like = 0.0 if similarity is None else max(0.0, similarity - SIMILARITY_FLOOR) / (1.0 - SIMILARITY_FLOOR)
    return (1.0 - SIMILARITY_WEIGHT) * tags + SIMILARITY_WEIGHT * like


def _confirmed_pool(s, hard: FileFilter, ids: Sequence[int]) -> set[int]:
    """Those of ``ids`` that meet ``hard`` on confirmed tags alone."""
    if not (hard.include_unconfirmed and hard.tag_groups):
        return set(ids)
    out: set[int] = set()
    ids = sorted(ids)
    for i in range(0, len(ids), _IN_CHUNK):
        part = replace(hard, include_unconfirmed=False, file_ids=frozenset(ids[i:i + _IN_CHUNK]))
        out.update(s.scalars(build_query(s, part).order_by(None).with_only_columns(File.id)))
    return out


def rank(library: Library, hard: FileFilter, groups: Sequence[Mapping[int, float]], budget: int,
         query: Optional[np.ndarray] = None, model_id: str = "") -> Ranking:
    """Score the files that meet ``hard`` by ``groups`` (tag id → match score, one mapping per
    optional keyword group) and by summary likeness to ``query``; admit the best ``budget``.
    Costs what the candidates cost: the pool is counted in SQL, only files with a group's tag or
    a summary are scored (a file with neither scores 0 and is never admitted), as arrays, and
    rows are read for the files that can be admitted."""
    likeness = pool_likeness(library, query, model_id, hard, narrows=not _unconstrained(hard))
    n = max(1, len(groups))
    with library.session() as s:
        pool = count_files(s, hard)
        scored = group_scores(s, groups, hard) if groups else GroupScores.empty(n)
        tags = scored.tag_scores()
        sims = likeness.at(scored.ids)  # NaN: no current summary
        scores = np.where(np.isnan(sims), (1.0 - SIMILARITY_WEIGHT) * tags,
                          (1.0 - SIMILARITY_WEIGHT) * tags + _likeness_scores(np.nan_to_num(sims)))
        with_evidence = scores > 0.0
        unsummarised = int(np.count_nonzero(with_evidence & np.isnan(sims)))
        # Files with a summary but no keyword tag: counted all, rows built only for those that
        # can still make the budget (at a million summarised files, not a million rows).
        alone, alone_ids, alone_sims = likeness.top_alone(scored.ids, _likeness_scores, budget)
        alone_sims64 = alone_sims.astype(np.float64)
        ids = np.concatenate([scored.ids[with_evidence], alone_ids])
        evidence = {"score": np.concatenate([scores[with_evidence], _likeness_scores(alone_sims64)]),
                    "tags": np.concatenate([tags[with_evidence], np.zeros(len(alone_ids))]),
                    "sim": np.concatenate([sims[with_evidence], alone_sims64])}
        best = best_rows(s, ids, evidence["score"], budget)
        at = _positions(ids, [fid for fid, _, _ in best])
        admitted = _scored(best, at, evidence)  # the admitted only
        if hard.include_unconfirmed:
            confirmed_pool = _confirmed_pool(s, hard, [f.file_id for f in admitted])
            cutoff = admitted[-1].score if admitted else 0.0
            confirmed = scored.confirmed_sums(np.array([f.file_id for f in admitted], dtype=np.int64))
            admitted = [_mark(f, confirmed_pool, float(c), n, cutoff) for f, c in zip(admitted, confirmed)]
    candidates = int(np.count_nonzero(with_evidence)) + alone
    return Ranking(pool, candidates, budget, tuple(admitted), len(likeness), unsummarised)


def _positions(ids: np.ndarray, wanted: Sequence[int]) -> list[int]:
    """Where each of ``wanted`` (all in ``ids``, which has no duplicates) is in ``ids``: found by
    sorting, not through a dict of every candidate (166k of them for one keyword at 1M files)."""
    if not wanted:
        return []
    order = np.argsort(ids, kind="stable")
    return order[np.searchsorted(ids, np.asarray(wanted, dtype=ids.dtype), sorter=order)].tolist()


def _scored(best: Sequence[tuple[int, str, Optional[str]]], at: list[int],
            evidence: Mapping[str, np.ndarray]) -> list[ScoredFile]:
    """The admitted files with their evidence, read from the arrays at once (``tolist``), not an
    element at a time (numpy scalars: 0.06 s of a request admitting 5,000 files)."""
    score, tags, sims = (evidence[k][at].tolist() for k in ("score", "tags", "sim"))
    return [ScoredFile(fid, path, h, sc, tg, None if math.isnan(sim) else sim)
            for (fid, path, h), sc, tg, sim in zip(best, score, tags, sims)]


def _mark(f: ScoredFile, confirmed_pool: set[int], confirmed_sum: float, n: int, cutoff: float) -> ScoredFile:
    """Would ``f`` be admitted on its confirmed tags alone (same cutoff)? If not, it came only
    through unconfirmed suggestions, and the explanation names it. ``confirmed_sum``: its best
    confirmed scores summed over the groups."""
    alone = _score(confirmed_sum / n, f.similarity)
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


class AdmissionFilter(Protocol):
    """What select_files reads of a filter (selection.WorkspaceFilter): a protocol, so ranking
    does not import selection, which calls it."""
    only_pinned: bool
    pinned: tuple[int, ...]
    ranked: bool
    budget: int
    include_unconfirmed: bool
    request_vector: str
    vector_model: str

    @property
    def scoped(self) -> bool: ...

    @property
    def ranks(self) -> bool: ...

    @property
    def optional_groups(self) -> Sequence[Any]: ...

    def file_filter(self) -> FileFilter: ...

    def hard_filter(self) -> FileFilter: ...


def select_files(library: Library, flt: AdmissionFilter) -> Selection:
    """What ``flt`` admits, ranked or all-or-nothing, and which files only suggestions brought in."""
    rows: dict[int, Row] = {}
    ranked: Optional[Ranking] = None
    suggested: set[str] = set()
    if flt.only_pinned or not flt.scoped:  # unscoped: nothing, never everything
        pass
    elif flt.ranks:
        groups = [{t.tag_id: t.score for t in g.tags} for g in flt.optional_groups]
        ranked = rank(library, flt.hard_filter(), groups, _budget(library, flt), decode_vector(flt.request_vector), flt.vector_model)
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


def summary_candidates(library: Library, flt: AdmissionFilter, limit: int = ON_DEMAND_SUMMARIES) -> list[int]:
    """Ids of the best ``limit`` candidates by their tags (files with a tag of an optional keyword
    group that meet the hard constraints) without a current summary for the filter's model. Costs
    what the candidates cost: one query per group, one summary lookup of at most ``limit`` ids."""
    if flt.only_pinned or not (flt.ranks and flt.request_vector and flt.vector_model) or limit <= 0:
        return []
    groups = [{t.tag_id: t.score for t in g.tags} for g in flt.optional_groups]
    if not groups:
        return []
    # Likeness only adds to a candidate's tag score. So when every file with evidence fits the
    # budget, or no file has a summary yet and the budget takes the best ``limit`` by tags anyway,
    # summarising would change the order of the admitted files, not which ones: nothing to compute
    # (a 100k share's "reports from 2019" spent 6 s of CPU on it). The second case reads no candidate.
    summarised, budget = SummaryStore(library).count(flt.vector_model), _budget(library, flt)
    if summarised == 0 and budget >= limit:
        return []
    with library.session() as s:
        scored = group_scores(s, groups, flt.hard_filter())
        if len(scored) + summarised <= budget:
            return []
        best = [fid for fid, _, _ in best_rows(s, scored.ids, scored.tag_scores(), limit)]
    have = set(SummaryStore(library).matrix(flt.vector_model, best)[0].tolist()) if best else set()
    return [fid for fid in best if fid not in have]


def _budget(library: Library, flt: AdmissionFilter) -> int:
    """The filter's budget; a hand-made or damaged filter's (0) is the default, never an empty workspace."""
    if flt.budget > 0:
        return flt.budget
    with library.session() as s:
        return default_budget(count_files(s, FileFilter()))


def summarise_candidates(library: Library, settings: Any, encoder: Any, flt: AdmissionFilter,
                         progress: ProgressCallback = no_progress, cancel: Optional[CancelToken] = None,
                         limit: int = ON_DEMAND_SUMMARIES) -> SummaryReport:
    """Compute, now, the missing summaries of ``flt``'s best candidates (summary_candidates) and
    store them as the background job would (the next request, explain and build reuse them), so
    a request ranks by likeness without waiting for that job. Nothing to do: an empty report.
    ``encoder``: the encoder, or a function loading it - called only when a summary is missing
    (a request whose candidates are all summarised loads no model)."""
    model_id = getattr(encoder, "model_id", None) if hasattr(encoder, "encode") else getattr(flt, "vector_model", None)
    if model_id is None or model_id != flt.vector_model:
        return SummaryReport()
    ids = summary_candidates(library, flt, limit)
    if not ids:
        return SummaryReport()
    return summarize_files(library, settings, encoder if hasattr(encoder, "encode") else encoder(), ids,
                           progress, cancel)


def summaries_available(library: Library, model_id: str) -> bool:
    return SummaryStore(library).count(model_id) > 0


def request_vector(encoder: Any, text: str) -> str:
    """The request encoded as a search query, stored in the filter so that every later explain
    and build (in any process, with or without an encoder loaded) ranks the same way."""
    return encode_vector(encoder.encode_query(storable_text(text)))

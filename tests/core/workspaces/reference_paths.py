"""The Python paths that issue 29 replaced with SQL, kept verbatim as references: tests check
that the SQL versions admit the same files, with the same scores and funnel counts, and match
the same tags, on small indexes. Never used by the product (they read every pool file / tag)."""

from __future__ import annotations

from dataclasses import replace
from typing import Mapping, Optional, Sequence

import numpy as np
from sqlalchemy import select

from spar_desktop.core.library.database import Library
from spar_desktop.core.library.models import File, FileTag, Tag
from spar_desktop.core.library.queries import FileFilter, build_query
from spar_desktop.core.library.tags import descendant_ids
from spar_desktop.core.tagging.summaries import summary_similarity
from spar_desktop.core.workspaces.ranking import Ranking, ScoredFile, _mark, _score
from spar_desktop.core.workspaces.tag_index import (
    ANY_ORDER_SCORE, INDEXED_SOURCES, TagChoice, _contains, normalize_words,
)


def _group_scores(session, groups: Sequence[Mapping[int, float]], include_unconfirmed: bool, pool: set[int]):
    counted: dict[int, list[float]] = {}
    confirmed: dict[int, list[float]] = {}
    n = len(groups)
    for gi, group in enumerate(groups):
        best: dict[int, float] = {}
        for tag_id, score in group.items():
            for d in descendant_ids(session, [tag_id]):
                best[d] = max(best.get(d, 0.0), float(score))
        ids = sorted(best)
        for i in range(0, len(ids), 500):
            q = select(FileTag.file_id, FileTag.tag_id, FileTag.confirmed, FileTag.score).where(
                FileTag.tag_id.in_(ids[i:i + 500]))
            for fid, tid, ok, certainty in session.execute(q):
                if fid not in pool:
                    continue
                if ok:
                    row = confirmed.setdefault(fid, [0.0] * n)
                    row[gi] = max(row[gi], best[tid])
                if ok or include_unconfirmed:
                    weight = 1.0 if ok else min(1.0, max(0.0, float(certainty or 0.0)))
                    row = counted.setdefault(fid, [0.0] * n)
                    row[gi] = max(row[gi], best[tid] * weight)
    return counted, confirmed


def reference_rank(library: Library, hard: FileFilter, groups: Sequence[Mapping[int, float]], budget: int,
                   query: Optional[np.ndarray] = None, model_id: str = "") -> Ranking:
    with library.session() as s:
        rows = {r[0]: (r[1], r[2]) for r in s.execute(
            build_query(s, hard).with_only_columns(File.id, File.path, File.content_hash))}
        pool = set(rows)
        confirmed_pool = pool
        if hard.include_unconfirmed and hard.tag_groups:
            confirmed_pool = {r[0] for r in s.execute(build_query(s, replace(hard, include_unconfirmed=False))
                                                      .with_only_columns(File.id))}
        counted, confirmed = _group_scores(s, groups, hard.include_unconfirmed, pool) if groups else ({}, {})
    likeness = ({i: v for i, v in summary_similarity(library, model_id, query).items() if i in pool}
                if query is not None and model_id else {})
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
        admitted = [_mark(f, confirmed_pool, sum(confirmed.get(f.file_id, ())), n, cutoff) for f in admitted]
    unsummarised = sum(1 for f in scored if f.file_id in counted and f.file_id not in likeness)
    return Ranking(len(pool), len(scored), budget, tuple(admitted), len(likeness), unsummarised)


def reference_lexical(library: Library, keyword: str) -> dict[int, TagChoice]:
    """Exact and lexical matches of ``keyword`` over every indexed tag (the pre-issue-29 loop)."""
    with library.session() as s:
        lexicon = {t.id: (t.key, t.value, tuple(normalize_words(t.value)))
                   for t in s.scalars(select(Tag).where(Tag.source.in_(INDEXED_SOURCES)))}
    found: dict[int, TagChoice] = {}
    kw_words = normalize_words(keyword)
    kw_text = " ".join(kw_words)
    partial: set[int] = set()
    for tid, (key, value, words) in lexicon.items():
        if not words:
            continue
        if " ".join(words) == kw_text:
            found[tid] = TagChoice(tid, key, value, 1.0, "exact")
        elif len(words) >= 1 and _contains(kw_words, words) and len(" ".join(words)) >= 3:
            found[tid] = TagChoice(tid, key, value, round(0.6 + 0.3 * len(words) / len(kw_words), 4), "lexical")
            partial.add(tid)
        elif len(kw_words) >= 1 and _contains(words, kw_words) and len(kw_text) >= 3:
            found[tid] = TagChoice(tid, key, value, 0.8, "lexical")
        elif len(kw_words) >= 2 and set(kw_words) <= set(words):
            found[tid] = TagChoice(tid, key, value, ANY_ORDER_SCORE, "lexical")
    if any(m.how == "exact" for m in found.values()):
        found = {t: m for t, m in found.items() if t not in partial}
    return found

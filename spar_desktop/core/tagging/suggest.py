"""Tag suggestions per file, stored as unconfirmed ``file_tags`` (source 'auto', or 'llm' when the
LLM chose the tag) for the user to review (review.py).

What is never done: touching a confirmed row (folder, date, taxonomy, user or accepted tags),
suggesting a pair the user rejected (``tag_rejections``), suggesting a tag a file already has or
implies (an ancestor of one of its tags), suggesting date tags, or suggesting another folder to a
file that has a folder of its own (where a file lives is a fact, not a guess; a file at the top of
a share, or dropped alone, has none and may get one).

Resumable: each batch of files is written in one transaction together with the summaries'
``suggest_key`` (vocabulary + settings + LLM on/off), so a killed run redoes only the batches it
had not committed, and a new tag vocabulary makes every file's suggestions current again.
"""

from __future__ import annotations

import hashlib
import logging
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Iterable, Optional

import numpy as np
from sqlalchemy import delete, select, update

from spar_desktop.core.library import count_store
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.models import FileSummary, FileTag, Tag, TagRejection, TagSource
from spar_desktop.core.progress import CancelToken, Progress, ProgressCallback, check, no_progress
from spar_desktop.core.tagging.llm import Classify
from spar_desktop.core.tagging.scoring import (SuggestConfig, Seeds, combined_scores, neighbour_scores,
                                               text_scores, voted_kinds)
from spar_desktop.core.tagging.summaries import SummaryStore
from spar_desktop.core.tagging.vocabulary import Vocabulary, load_vocabulary, tag_vectors

log = logging.getLogger(__name__)

SUGGESTION_SOURCES = (TagSource.AUTO, TagSource.LLM)
BATCH = 64  # files scored and written per transaction
LLM_BATCH = 8  # with an LLM each file costs seconds: commit more often


@dataclass(frozen=True)
class SuggestReport:
    files: int = 0  # files whose suggestions were (re)computed
    suggestions: int = 0  # suggestions stored
    up_to_date: int = 0  # files skipped: their suggestions are current
    llm_files: int = 0  # files the LLM classified
    llm_error: Optional[str] = None  # why the LLM step stopped (the rest went on without it)

    def message(self) -> str:
        text = f"{self.suggestions} suggestions for {self.files} files"
        if self.llm_files:
            text += f" ({self.llm_files} classified by the LLM)"
        if self.llm_error:
            text += f"; LLM step stopped: {self.llm_error}"
        return text


@dataclass(frozen=True)
class _Context:
    vocab: Vocabulary
    tag_vecs: np.ndarray
    seeds: Seeds
    col: dict[int, int]  # tag id -> vocabulary column
    voted: np.ndarray  # [n_tags] bool: some seed file carries a tag of its kind (source)


def _confirmed_tags(library: Library, vocab_cols: dict[int, int]) -> dict[int, list[int]]:
    """file id -> vocabulary columns of its confirmed tags (the neighbours' votes)."""
    out: dict[int, list[int]] = defaultdict(list)
    with library.session() as s:
        for fid, tid in s.execute(select(FileTag.file_id, FileTag.tag_id).where(FileTag.confirmed.is_(True))):
            c = vocab_cols.get(tid)
            if c is not None:
                out[fid].append(c)
    return out


def suggestion_key(vocab: Vocabulary, cfg: SuggestConfig, llm: bool, model_id: str) -> str:
    raw = f"{vocab.fingerprint}|{cfg.key()}|llm={int(llm)}|{model_id}"
    return hashlib.sha1(raw.encode()).hexdigest()[:32]


def _existing(library: Library, file_ids: list[int]) -> tuple[dict[int, list[tuple[int, bool, str]]], set[tuple[int, int]]]:
    """(file id -> [(tag id, confirmed, source)], rejected (file, tag) pairs) for these files."""
    rows: dict[int, list[tuple[int, bool, str]]] = defaultdict(list)
    rejected: set[tuple[int, int]] = set()
    with library.session() as s:
        for i in range(0, len(file_ids), 500):
            part = file_ids[i:i + 500]
            q = (select(FileTag.file_id, FileTag.tag_id, FileTag.confirmed, FileTag.source, Tag.source)
                 .join(Tag, Tag.id == FileTag.tag_id).where(FileTag.file_id.in_(part)))
            for fid, tid, confirmed, source, tag_source in s.execute(q):
                rows[fid].append((tid, bool(confirmed), source if source in SUGGESTION_SOURCES else tag_source))
            rejected.update((int(f), int(t)) for f, t in s.execute(
                select(TagRejection.file_id, TagRejection.tag_id).where(TagRejection.file_id.in_(part))))
    return rows, rejected


def _blocked(fid: int, rows: list[tuple[int, bool, str]], rejected: set[tuple[int, int]], vocab: Vocabulary,
             col: dict[int, int]) -> tuple[np.ndarray, bool]:
    """(vocabulary columns this file must not be suggested, whether it has a folder of its own)."""
    blocked: set[int] = set()
    has_folder = False
    for tid, confirmed, source in rows:
        if confirmed or source not in SUGGESTION_SOURCES:  # kept rows: the tag and what it implies
            blocked.add(tid)
            blocked |= vocab.ancestors.get(tid, frozenset())
        if confirmed and source == TagSource.PATH:
            has_folder = True
    cols = [col[t] for t in blocked if t in col]
    cols += [col[t] for f, t in rejected if f == fid and t in col]
    return np.asarray(sorted(set(cols)), dtype=np.int64), has_folder


def _choose(scores: np.ndarray, order: np.ndarray, cfg: SuggestConfig, vocab: Vocabulary,
            llm_cols: set[int]) -> list[tuple[int, float, str]]:
    """Best first, above the threshold, no tag next to one of its descendants, at most top_k."""
    chosen: list[int] = []
    for c in order:
        if scores[c] < cfg.min_score or len(chosen) >= cfg.top_k * 2:
            break
        chosen.append(int(c))
    ids = {vocab.ids[c] for c in chosen}
    implied = set().union(*(vocab.ancestors.get(t, frozenset()) for t in ids)) if ids else set()
    kept = [c for c in chosen if vocab.ids[c] not in implied][:cfg.top_k]
    return [(c, round(float(scores[c]), 4), TagSource.LLM if c in llm_cols else TagSource.AUTO) for c in kept]


def _context(library: Library, encoder: Any, ids: np.ndarray, vecs: np.ndarray) -> Optional[_Context]:
    vocab = load_vocabulary(library)
    if not vocab.ids:
        return None
    col = vocab.index()
    seeds = Seeds.build(ids, vecs, _confirmed_tags(library, col), len(vocab.ids))
    return _Context(vocab, tag_vectors(vocab, encoder), seeds, col, voted_kinds(seeds, vocab.sources))


def score_batch(ctx: _Context, file_ids: np.ndarray, file_vecs: np.ndarray, cfg: SuggestConfig) -> np.ndarray:
    """Combined embedding scores [files, tags] of one batch."""
    text = text_scores(file_vecs, ctx.tag_vecs, cfg)
    neigh = neighbour_scores(file_ids, file_vecs, ctx.seeds, len(ctx.vocab.ids), cfg)
    return combined_scores(text, neigh, cfg, ctx.voted)


def suggest_files(library: Library, encoder: Any, file_ids: Optional[Iterable[int]] = None,
                  config: SuggestConfig = SuggestConfig(), classify: Optional[Classify] = None,
                  progress: ProgressCallback = no_progress, cancel: Optional[CancelToken] = None,
                  redo: bool = False, limit: Optional[int] = None) -> SuggestReport:
    """Compute and store suggestions for files with a current summary (see summaries.py) whose
    suggestions are not current (all of them with ``redo``). Raises Cancelled between batches."""
    progress(Progress(0, None, "preparing tag suggestions"))
    store = SummaryStore(library)
    ids, vecs = store.matrix(encoder.model_id)
    ctx = _context(library, encoder, ids, vecs) if len(ids) else None
    if ctx is None:
        return SuggestReport()
    key = suggestion_key(ctx.vocab, config, classify is not None, encoder.model_id)
    # Files done after the LLM gave up are marked as done without it, so a later run with a
    # working server asks it about them.
    key_without_llm = suggestion_key(ctx.vocab, config, False, encoder.model_id)
    todo, up_to_date = _todo(library, ids, file_ids, key, redo)
    report = SuggestReport(up_to_date=up_to_date)
    if limit is not None:
        todo = todo[:max(0, limit)]
    total, batch_size = len(todo), (LLM_BATCH if classify is not None else BATCH)
    llm = _Llm(classify)
    progress(Progress(0, total, "suggesting tags"))
    for start in range(0, total, batch_size):
        check(cancel)
        rows_idx = np.asarray(todo[start:start + batch_size], dtype=np.int64)
        b_ids = ids[rows_idx]
        llm_files = llm.files
        out = _suggest_batch(library, store, ctx, b_ids, vecs[rows_idx], config, llm, cancel)
        check(cancel)
        batch_ids = [int(f) for f in b_ids]
        out = _store_batch(library, batch_ids, out, key if llm.classify is not None or classify is None else key_without_llm)
        report = SuggestReport(report.files + len(batch_ids), report.suggestions + len(out), report.up_to_date,
                               report.llm_files + llm.files - llm_files, llm.error)
        done = min(start + batch_size, total)
        progress(Progress(done, total, f"suggested tags for {done}/{total} files"))
    return report


def _todo(library: Library, ids: np.ndarray, file_ids: Optional[Iterable[int]], key: str,
          redo: bool) -> tuple[list[int], int]:
    """Rows of ``ids`` whose suggestions are to be (re)done, and how many asked for are up to date."""
    wanted = set(int(i) for i in file_ids) if file_ids is not None else None
    with library.session() as s:
        done_keys = dict(s.execute(select(FileSummary.file_id, FileSummary.suggest_key)).all())
    todo = [i for i, fid in enumerate(ids) if (wanted is None or int(fid) in wanted)
            and (redo or done_keys.get(int(fid)) != key)]
    return todo, (len(wanted & set(ids.tolist())) if wanted is not None else len(ids)) - len(todo)


class _Llm:
    """The optional LLM classifier of one run; dropped for the rest of the run at its first failure."""

    def __init__(self, classify: Optional[Classify]) -> None:
        self.classify = classify
        self.error: Optional[str] = None
        self.files = 0  # files it answered about

    def pick(self, text: str, labels: list[str]) -> Optional[set[str]]:
        try:
            picked = set(self.classify(text, labels))
        except Exception as exc:  # a dead or confused server: the embedding signals go on alone
            self.error, self.classify = str(exc) or type(exc).__name__, None
            log.warning("tag suggestions go on without the LLM: %s", self.error)
            return None
        self.files += 1
        return picked


def _suggest_batch(library: Library, store: SummaryStore, ctx: _Context, b_ids: np.ndarray, b_vecs: np.ndarray,
                   config: SuggestConfig, llm: _Llm, cancel: Optional[CancelToken]) -> list[dict]:
    """The suggestion rows of one batch of files (not yet stored)."""
    scores = score_batch(ctx, b_ids, b_vecs, config)
    existing, rejected = _existing(library, [int(f) for f in b_ids])
    texts = store.texts([int(f) for f in b_ids]) if llm.classify is not None else {}
    folder_cols = np.asarray([c for c, src in enumerate(ctx.vocab.sources) if src == TagSource.PATH], dtype=np.int64)
    out: list[dict] = []
    for r, fid in enumerate(int(f) for f in b_ids):
        check(cancel)
        blocked, has_folder = _blocked(fid, existing.get(fid, []), rejected, ctx.vocab, ctx.col)
        row = scores[r].copy()
        row[blocked] = -1.0
        if has_folder:
            row[folder_cols] = -1.0
        llm_cols: set[int] = set()
        cand = [int(c) for c in np.argsort(-row)[:config.llm_candidates] if row[c] > 0] if llm.classify else []
        if llm.classify is not None and cand and fid in texts:
            picked = llm.pick(texts[fid], [ctx.vocab.labels[c] for c in cand])
            llm_cols = {c for c in cand if ctx.vocab.labels[c] in picked} if picked is not None else set()
            if llm_cols:
                boost = config.w_llm / (1.0 + config.w_llm)
                for c in cand:  # the LLM's pick pulls a tag up, its silence pulls it down
                    row[c] = row[c] * (1.0 - boost) + (boost if c in llm_cols else 0.0)
        for c, score, source in _choose(row, np.argsort(-row, kind="stable"), config, ctx.vocab, llm_cols):
            out.append({"file_id": fid, "tag_id": ctx.vocab.ids[c], "source": source, "score": score,
                        "confirmed": False})
    return out


def _store_batch(library: Library, batch_ids: list[int], out: list[dict], suggest_key: str) -> list[dict]:
    """Replace the batch's unconfirmed suggestions with ``out``; returns the rows written."""
    with library.session() as s:
        s.execute(delete(FileTag).where(FileTag.file_id.in_(batch_ids), FileTag.confirmed.is_(False),
                                        FileTag.source.in_(SUGGESTION_SOURCES)))
        # Read again inside the write: a tag accepted, applied or rejected since the batch was
        # scored (the user, a scan) wins over the suggestion, and never breaks the insert.
        taken = {(int(f), int(t)) for f, t in s.execute(
            select(FileTag.file_id, FileTag.tag_id).where(FileTag.file_id.in_(batch_ids)))}
        taken |= {(int(f), int(t)) for f, t in s.execute(
            select(TagRejection.file_id, TagRejection.tag_id).where(TagRejection.file_id.in_(batch_ids)))}
        out = [o for o in out if (o["file_id"], o["tag_id"]) not in taken]
        if out:
            s.execute(FileTag.__table__.insert(), out)
        s.execute(update(FileSummary).where(FileSummary.file_id.in_(batch_ids)).values(suggest_key=suggest_key))
        count_store.refresh(s, ())  # unconfirmed suggestions count nowhere
    return out


def clear_suggestions(library: Library, file_ids: Optional[Iterable[int]] = None) -> int:
    """Remove unconfirmed suggestions (all, or of these files) and mark them to be redone."""
    with library.session() as s:
        q = delete(FileTag).where(FileTag.confirmed.is_(False), FileTag.source.in_(SUGGESTION_SOURCES))
        u = update(FileSummary).values(suggest_key=None)
        if file_ids is not None:
            ids = list(file_ids)
            q, u = q.where(FileTag.file_id.in_(ids)), u.where(FileSummary.file_id.in_(ids))
        n = s.execute(q).rowcount or 0
        s.execute(u)
        count_store.refresh(s, ())  # unconfirmed suggestions count nowhere
        return n


__all__ = ["SuggestConfig", "SuggestReport", "suggest_files", "clear_suggestions", "score_batch"]

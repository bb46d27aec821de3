"""What the app calls: feedback in, evolved keys out, stats, reset (Qt-free, synchronous; the UI
runs these through its task runner).

    record_feedback(manager, "ops", query, ["12#c3"], success=True)   # answer good / citation opened
    memory_stats(manager, "ops").evolved_keys
    reset_memory(manager, "ops")                                      # original keys, exactly

Memory sits above workspaces: it is handed the manager and reaches searchers through it; builds
read the evolved keys it writes through ``workspaces/evolved_keys.py``. Feedback feeds the memory
at once; keys change only when a batch round closes (learner.py), in one step: database rows
first (one transaction), then the workspace's collection and searcher.
Bad input (archived or unknown workspace, deleted chunks, junk units) is logged and ignored.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any, Optional, Sequence, Union

import numpy as np

from spar_desktop.core.library.models import utcnow
from spar_desktop.core.memory import store
from spar_desktop.core.memory.config import ERMConfig
from spar_desktop.core.memory.learner import BatchProgress, ERMLearner
from spar_desktop.core.memory.models import MemoryProgressRow
from spar_desktop.core.memory.units import ExpansionUnit, llm_units, prf_units
from spar_desktop.core.retrieval.bm25_index import english_stopwords
from spar_desktop.core.retrieval.searcher import HybridSearcher, KeyOverride
from spar_desktop.core.workspaces.evolved_keys import key_tag
from spar_desktop.core.workspaces.manager import Workspaces

log = logging.getLogger(__name__)


ChunkArg = Union[str, tuple[int, str]]  # '<file id>#<chunk id>' or (file id, chunk id)


@dataclass(frozen=True)
class FeedbackOutcome:
    accepted: bool
    reason: str
    units: tuple[str, ...] = ()
    credited_chunks: int = 0
    evolved_keys: Optional[int] = None  # set when this feedback closed a round and keys evolved


@dataclass(frozen=True)
class MemoryStats:
    workspace: str
    model_id: Optional[str]
    evolved_keys: int
    chunks_with_memory: int
    units: int
    other_model: int  # rows from another embedding model, ignored
    pending: int  # successful feedback waiting for the batch to close
    rounds: int
    accepted: int
    ignored: int
    last_evolved_at: Optional[datetime]

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["last_evolved_at"] = self.last_evolved_at.isoformat() if self.last_evolved_at else None
        return d


# -- feedback -----------------------------------------------------------------------------------
def _workspace(manager: Workspaces, name: str) -> tuple[Optional[int], Optional[str]]:
    """(id, None) for a searchable workspace, else (id or None, why it is not)."""
    info = manager.find(name)
    if info is None:
        return None, f"no workspace named '{name}'"
    if info.archived:
        return info.id, f"'{info.name}' is archived"
    if not info.active:
        return info.id, f"'{info.name}' is not built"
    return info.id, None


def _progress(s: Any, ws_id: int) -> MemoryProgressRow:
    row = s.get(MemoryProgressRow, ws_id)
    if row is None:
        row = MemoryProgressRow(workspace_id=ws_id, pending=0, batch_gain=0.0, best_gain=0.0, stale=0, batches=0,
                                rounds=0, accepted=0, ignored=0)
        s.add(row)
    return row


def _ignore(manager: Workspaces, ws_id: Optional[int], reason: str) -> FeedbackOutcome:
    log.info("ERM: feedback ignored: %s", reason)
    if ws_id is not None:
        with manager.library.session() as s:
            row = _progress(s, ws_id)
            row.ignored = (row.ignored or 0) + 1
    return FeedbackOutcome(False, reason)


def _key_of(c: ChunkArg) -> Optional[str]:
    if isinstance(c, str) and "#" in c:
        return c
    if isinstance(c, (tuple, list)) and len(c) == 2:
        return f"{c[0]}#{c[1]}"
    return None


def prf_expansion_units(query: str, searcher: HybridSearcher, qvec: np.ndarray,
                        config: ERMConfig = ERMConfig()) -> list[ExpansionUnit]:
    """Pseudo-relevance feedback units: what learning uses when no LLM units were given."""
    res = searcher.search(query, k=config.prf_passages, query_vector=qvec)
    encoder = searcher.encoder
    return prf_units(query, [h.text for h in res.hits], idf=searcher.bm25.idf, stopwords=english_stopwords(),
                     sentence_scores=lambda sents: encoder.encode(sents) @ qvec, config=config)


def record_feedback(manager: Workspaces, workspace: str, query: str, chunks: Sequence[ChunkArg], success: bool, *,
                    helpers: Any = None, config: ERMConfig = ERMConfig(),
                    units: Optional[Sequence[ExpansionUnit]] = None) -> FeedbackOutcome:
    """One query's feedback (eq. 4's gate: an answer marked good or a cited passage opened).
    ``chunks``: the chunks the user confirmed (a hit's '<file id>#<chunk id>'). ``units``: expansion
    units worked out beforehand; else Ollama's through ``helpers`` (LLMHelpers), asked before the
    workspace's lock is taken (a generation takes seconds and must not hold up a search of it),
    falling back to local feedback. The rest runs under the workspace's lock: closing a round
    rewrites the collection and swaps the searcher. Never raises on bad input: the outcome says
    why nothing was learned."""
    if not units and helpers is not None and success and isinstance(query, str) and query.strip():
        units = llm_units(helpers, query, config)
    with manager.lock(workspace):
        return _record(manager, workspace, query, chunks, success, config, units)


def _record(manager: Workspaces, workspace: str, query: str, chunks: Sequence[ChunkArg], success: bool,
            config: ERMConfig, units: Optional[Sequence[ExpansionUnit]]) -> FeedbackOutcome:
    ws_id, why = _workspace(manager, workspace)
    if why:
        return _ignore(manager, ws_id, why)
    if not success:
        return _ignore(manager, ws_id, "the answer was not marked useful (nothing is learned from failures)")
    if not isinstance(query, str) or not query.strip():
        return _ignore(manager, ws_id, "empty query")
    _, searcher, _ = manager.searcher(workspace)
    if searcher.encoder is None or searcher.vectors is None:
        return _ignore(manager, ws_id, "the workspace has no dense keys")
    keys = [k for k in (_key_of(c) for c in chunks or ()) if k is not None]
    live = [k for k in dict.fromkeys(keys) if searcher.position(k) is not None]
    given = len(chunks or ())
    if len(live) < given:
        log.info("ERM: %d of %d feedback chunks are unknown or no longer in '%s' (deleted or rebuilt)",
                 given - len(live), given, workspace)
    if not live:
        return _ignore(manager, ws_id, "none of the chunks is in the workspace any more")
    qvec = searcher.encoder.encode_query(query)
    units = list(units or ()) or prf_expansion_units(query, searcher, qvec, config)
    if not units:
        return _ignore(manager, ws_id, "no usable expansion units")
    uvecs = searcher.encoder.encode([u.text for u in units])
    refs = {k: searcher.chunk_ref(k) for k in live}
    targets = [(refs[k], searcher.vectors[searcher.position(k)]) for k in live]
    model_id = searcher.encoder.model_id
    chunker_key = refs[live[0]][1]
    hashes = _hashes(searcher)
    evolved: Optional[int] = None
    try:
        with manager.library.session() as s:  # one transaction: memory, progress and keys together
            row = _progress(s, ws_id)
            learner = ERMLearner(config, store.load_memory(s, hashes, chunker_key, model_id,
                                                           searcher.vectors.shape[1]), _to_progress(row))
            learner.observe(qvec, units, uvecs, targets)
            due = learner.end_query()
            store.save_memory(s, learner.memory, learner.touched, model_id)
            row.accepted = (row.accepted or 0) + 1
            if due:
                evolved = _evolve(manager, ws_id, searcher, learner, s)
                row.last_evolved_at = utcnow()
            _from_progress(row, learner.progress)
    except Exception as exc:  # noqa: BLE001 - a store failure must not take the app down
        log.warning("ERM: feedback not recorded, nothing changed: %s", exc)
        return FeedbackOutcome(False, f"could not update the memory: {exc}")
    credited = sum(1 for k in live if refs[k] in learner.touched)
    return FeedbackOutcome(True, "learned" if credited else "no unit improved these chunks' keys",
                           tuple(u.text for u in units), credited, evolved)


def evolve_now(manager: Workspaces, workspace: str, config: ERMConfig = ERMConfig()) -> int:
    """Close the current round and evolve keys from the memory now; returns evolved key count."""
    with manager.lock(workspace):
        return _evolve_now(manager, workspace, config)


def _evolve_now(manager: Workspaces, workspace: str, config: ERMConfig) -> int:
    ws_id, why = _workspace(manager, workspace)
    if why:
        log.info("ERM: not evolving: %s", why)
        return 0
    _, searcher, _ = manager.searcher(workspace)
    if searcher.vectors is None or not searcher.keys:
        return 0
    model_id = searcher.encoder.model_id
    chunker_key = searcher.chunk_ref(searcher.keys[0])[1]
    try:
        with manager.library.session() as s:
            row = _progress(s, ws_id)
            learner = ERMLearner(config, store.load_memory(s, _hashes(searcher), chunker_key, model_id,
                                                           searcher.vectors.shape[1]), _to_progress(row))
            learner.close_round()
            n = _evolve(manager, ws_id, searcher, learner, s)
            row.last_evolved_at = utcnow()
            _from_progress(row, learner.progress)
    except Exception as exc:  # noqa: BLE001 - the keys stay as they were
        log.warning("ERM: evolution failed, keys unchanged: %s", exc)
        return 0
    return n


def _evolve(manager: Workspaces, ws_id: int, searcher: HybridSearcher, learner: ERMLearner, s: Any) -> int:
    """Keys of every chunk with memory, from its original key (eq. 8); rows, then collection.
    The session commits only after the collection took the vectors: a failure leaves both as
    they were (with_keys puts back what it wrote)."""
    originals = {searcher.chunk_ref(k): searcher.original_vectors[p] for p, k in enumerate(searcher.keys)}
    keys = learner.evolved_keys({r: v for r, v in originals.items() if r in learner.memory})
    by_ref = {searcher.chunk_ref(k): k for k in searcher.keys}
    stale = [by_ref[r] for r in by_ref if r not in keys and by_ref[r] in searcher.overrides]
    store.save_keys(s, keys, [searcher.chunk_ref(k) for k in stale], searcher.encoder.model_id)
    s.flush()
    overrides = {by_ref[r]: KeyOverride(k.vector, k.text, key_tag(k.vector, k.text)) for r, k in keys.items()}
    new = searcher.with_keys(overrides)
    _replace_searcher(manager, ws_id, new)
    log.info("ERM: workspace %s evolved %d keys (round %d)", ws_id, len(overrides), learner.progress.rounds)
    return len(overrides)


def _replace_searcher(manager: Workspaces, ws_id: int, searcher: HybridSearcher) -> None:
    """The evolved searcher replaces the one it came from, in memory and in the saved state
    (whose evolved-key digest would otherwise no longer match the database)."""
    manager.searchers.update(ws_id, searcher)


def _hashes(searcher: HybridSearcher) -> list[str]:
    return sorted(searcher.content_hashes())


def _to_progress(row: MemoryProgressRow) -> BatchProgress:
    return BatchProgress(row.pending or 0, row.batch_gain or 0.0, row.best_gain or 0.0, row.stale or 0,
                         row.batches or 0, row.rounds or 0)


def _from_progress(row: MemoryProgressRow, p: BatchProgress) -> None:
    row.pending, row.batch_gain, row.best_gain = p.pending, p.batch_gain, p.best_gain
    row.stale, row.batches, row.rounds = p.stale, p.batches, p.rounds


# -- stats / reset -----------------------------------------------------------------------------
def _files(manager: Workspaces, name: str) -> tuple[Any, list[str], Optional[str]]:
    info = manager.get(name)
    return info, manager.ready_hashes(name), info.chunker_key


def memory_stats(manager: Workspaces, workspace: str) -> MemoryStats:
    """How far this workspace's keys have evolved (works for archived workspaces too)."""
    info, hashes, chunker = _files(manager, workspace)
    model_id = info.model_id
    with manager.library.session() as s:
        c = store.counts(s, hashes, chunker or "", model_id or "") if chunker else \
            {"evolved_keys": 0, "units": 0, "chunks_with_memory": 0, "other_model": 0}
        row = s.get(MemoryProgressRow, info.id)
        p = (row.pending, row.rounds, row.accepted, row.ignored, row.last_evolved_at) if row else (0, 0, 0, 0, None)
    return MemoryStats(info.name, model_id, c["evolved_keys"], c["chunks_with_memory"], c["units"], c["other_model"],
                       *p)


def reset_memory(manager: Workspaces, workspace: str) -> int:
    """Forget what this workspace's files learned and put the original keys back, exactly.
    Memory is per file, so other workspaces holding the same files go back to originals too
    (their searchers reload and reconcile their collections on next use). Returns rows dropped."""
    with manager.lock(workspace):
        return _reset(manager, workspace)


def _reset(manager: Workspaces, workspace: str) -> int:
    info, hashes, chunker = _files(manager, workspace)
    with manager.library.session() as s:
        n = store.delete_for(s, hashes, chunker) if chunker else 0
        row = s.get(MemoryProgressRow, info.id)
        if row is not None:
            s.delete(row)
    current = manager.searchers.cached(info.id)
    if current is not None:
        manager.searchers.update(info.id, current.with_keys({}))
    # Other workspaces holding these files: dropped from memory; their saved states no longer
    # match the database's evolved keys, so they are rebuilt (and reconciled) when next opened.
    manager.searchers.forget_sharing(hashes, keep=info.id)
    log.info("ERM: reset '%s' (%d rows dropped)", info.name, n)
    return n

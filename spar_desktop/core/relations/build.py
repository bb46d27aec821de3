"""Building the relations of a scope (edrmq | tfidf | cooc) and storing them: full builds and
EDR-MQ's incremental updates (build_delta.py) both go through ``build_relations``.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence

import numpy as np

from spar_desktop.core.changes import Changes
from spar_desktop.core.progress import CancelToken, Progress, ProgressCallback, check, no_progress
from spar_desktop.core.relations import persist
from spar_desktop.core.relations.build_delta import Accumulate, update_edrmq
from spar_desktop.core.relations.checkpoint import QueryCheckpoint
from spar_desktop.core.relations.clusters import cluster_sequences
from spar_desktop.core.relations.cooc import build_sequences, nearest_neighbors, question_sequences
from spar_desktop.core.relations.doc_vectors import DocSet
from spar_desktop.core.relations.edrmq import (
    EdrmqParams, RelationAccumulator, accumulate_bm25, accumulate_dense, auto_neighbors,
)
from spar_desktop.core.relations.errors import RelationsError
from spar_desktop.core.relations.estimate import estimate_build, record_build
from spar_desktop.core.relations.eta import with_eta
from spar_desktop.core.relations.hybrid import LexicalIndex, accumulate_hybrid
from spar_desktop.core.relations.names import DEFAULT_RETRIEVER, METHODS, RETRIEVERS
from spar_desktop.core.relations.querylog import group_sessions, query_texts, read_query_log, session_sequences
from spar_desktop.core.relations.scope import load_documents, scope_files, scope_key, workspace_id
from spar_desktop.core.relations.synthetic import QuestionFn, synthetic_queries
from spar_desktop.core.relations.tfidf import tfidf_top_k
from spar_desktop.core.relations.topk import top_k_rows
from spar_desktop.core.retrieval.bm25_index import BM25Index
from spar_desktop.core.workspaces.engine import engine_for

if TYPE_CHECKING:
    from spar_desktop.core.library.database import Library



@dataclass(frozen=True)
class BuildReport:
    method: str
    scope: str
    documents: int
    queries: dict[str, int]  # by source: log, file, title, sentence, question
    pairs: int  # non-zero entries of R
    seconds: float
    path: str
    incremental: bool = False
    notes: tuple[str, ...] = ()
    clusters: Optional[int] = None
    files_changed: Optional[dict] = None  # EDR-MQ update: files added / changed / removed since the last build

    @property
    def changes(self) -> Changes:
        """What the build wrote, for the app's change notification (core/changes.py)."""
        return Changes(relations=True)

    def to_json(self) -> dict:
        return dict(self.__dict__)


def read_queries_file(path: str | Path) -> list[str]:
    """One query per line, or JSON lines with a 'text' / 'query' field (a BEIR queries.jsonl)."""
    p = Path(path)
    try:
        raw = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise RelationsError(f"cannot read queries file {p}: {exc.strerror or exc}") from exc
    out = []
    for lineno, line in enumerate(raw.splitlines(), 1):
        line = line.strip()
        if not line:
            continue
        if line.startswith("{"):
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise RelationsError(f"{p}:{lineno}: not valid JSON ({exc.msg})") from exc
            line = str(rec.get("text") or rec.get("query") or "").strip()
        if line:
            out.append(line)
    if not out:
        raise RelationsError(f"{p} holds no queries")
    return out


def _encode(encoder: Any, texts: Sequence[str], progress: ProgressCallback, cancel: Optional[CancelToken]) -> np.ndarray:
    def relay(p: Progress) -> None:
        progress(Progress(p.done, p.total, f"embedding queries {p.done}/{p.total}"))

    return encoder.encode(list(texts), batch_size=128, progress=relay, cancel=cancel)


QUERY_CHUNK = 512  # queries encoded and marginalised together: a cancel loses at most one chunk's encoding


def _in_chunks(texts: Sequence[str], acc: RelationAccumulator, progress: ProgressCallback,
               cancel: Optional[CancelToken], on_chunk: Optional[Callable[[RelationAccumulator], None]],
               run: Callable[[Sequence[str], ProgressCallback], None]) -> None:
    """``run(chunk, relay)`` per QUERY_CHUNK queries, in order, reporting queries done of all of
    ``texts`` (``relay`` takes the chunk's own done/total); ``on_chunk(acc)`` after each (the
    checkpoint's save)."""
    m = len(texts)
    for a in range(0, m, QUERY_CHUNK):
        check(cancel)
        part = texts[a:a + QUERY_CHUNK]
        run(part, lambda p, a=a, n=len(part): progress(Progress(a + min(p.done, n), m, "running queries")))
        progress(Progress(a + len(part), m, "running queries"))
        if on_chunk is not None:
            on_chunk(acc)


def build_relations(library: "Library", *, workspace: Optional[str] = None, method: str = "edrmq",
                    queries: Sequence[str] = (), question_fn: Optional[QuestionFn] = None, synthetic: bool = True,
                    retriever: str = DEFAULT_RETRIEVER, params: EdrmqParams = EdrmqParams(), incremental: bool = True,
                    encoder: Any = None, progress: ProgressCallback = no_progress,
                    cancel: Optional[CancelToken] = None) -> BuildReport:
    """Build (or update) and store the relations of a scope. EDR-MQ updates incrementally when a
    previous build with the same model and parameters exists: removed files leave the stored sum,
    changed files are reset, and only queries logged since, the queries passed in, and synthetic
    queries of new and changed documents are run (earlier queries are not re-run against new
    documents: see build_delta.py; pass incremental=False to recompute everything)."""
    if method not in METHODS:
        raise RelationsError(f"unknown method '{method}': use one of {', '.join(METHODS)}")
    edrmq_accumulator(retriever, params)  # an unknown retriever fails here, before any work
    started = time.perf_counter()
    predicted = _predicted_seconds(library, workspace, method, retriever, params, synthetic, len(queries),
                                   incremental, encoder)
    progress = with_eta(progress)  # every phase with a count says how long it has left
    ws_id = workspace_id(library, workspace)
    scope = scope_key(ws_id)
    need_vectors = method == "cooc" or (method == "edrmq" and retriever_uses_vectors(retriever, params))
    # One read of the scope's files, before their texts: a file changing in between is then seen
    # as changed next time.
    files = scope_files(library, ws_id)
    fingerprints = {str(f.file_id): f.content_hash for f in files}
    docs, notes = load_documents(library, ws_id, need_vectors=need_vectors, encoder=encoder, progress=progress,
                                 cancel=cancel, files=files)
    out_dir = persist.relations_dir(library.settings.data_dir, scope, method)
    enc = None
    if need_vectors:
        enc = engine_for(library.settings, encoder).encoder
    files_changed = None
    checkpoint = None
    if method == "tfidf":
        R = tfidf_top_k(docs.texts, progress=progress, cancel=cancel)
        stored = persist.StoredRelations("tfidf", scope, list(docs.ids), RelationAccumulator(len(docs), R, 1),
                                         {"top_k": 25})
        counts: dict[str, int] = {}
    elif method == "cooc":
        stored, counts = _build_cooc(library, docs, ws_id, scope, enc, question_fn, progress, cancel)
    else:
        stored, counts, incremental, files_changed, checkpoint = _build_edrmq(
            library, docs, ws_id, scope, out_dir, enc, queries, question_fn, synthetic, retriever, params,
            incremental, fingerprints, progress, cancel)
        if checkpoint.resumed:
            notes.append(f"resumed: {checkpoint.resumed:,} queries were done by a build that was cancelled")
    check(cancel)
    stored.fingerprints = fingerprints
    persist.save(out_dir, stored)
    if checkpoint is not None:
        checkpoint.clear()  # stored: nothing left to resume
    seconds = time.perf_counter() - started
    if predicted is not None and not (checkpoint is not None and checkpoint.resumed):
        record_build(library.settings.data_dir, predicted, seconds)  # estimates learn this machine's speed
    R = stored.acc.total
    return BuildReport(method, scope, len(stored.ids), counts, int(R.nnz), round(seconds, 2),
                       str(out_dir), incremental and method == "edrmq", tuple(notes),
                       int(stored.cluster_labels.max()) + 1 if stored.cluster_labels is not None and len(stored.ids) else None,
                       files_changed)


def _predicted_seconds(library, workspace, method, retriever, params, synthetic, extra_queries, incremental,
                       encoder) -> Optional[float]:
    """The build's own estimate at its start (estimate.py), to compare with what it took."""
    try:
        return estimate_build(library, workspace, method, retriever=retriever, params=params, synthetic=synthetic,
                              extra_queries=extra_queries, incremental=incremental, encoder=encoder).seconds
    except Exception:  # noqa: BLE001 - an estimate must never stop a build (the build says what is wrong)
        return None


def retriever_uses_vectors(retriever: str, params: EdrmqParams) -> bool:
    return retriever == "dense" or (retriever == "hybrid" and params.alpha > 0)


def edrmq_accumulator(retriever: str, params: EdrmqParams, encoder: Any = None) -> Accumulate:
    """The one place EDR-MQ's retriever is chosen: full builds and incremental updates both run
    their queries through what this returns, so another retriever slots in here. The queries run
    in chunks (encoded, then marginalised): the index over the documents (TF-IDF, neighbours,
    BM25) is made once per call, and progress counts queries finished."""
    def dense(docs: DocSet, texts: Sequence[str], acc: RelationAccumulator, progress: ProgressCallback,
              cancel: Optional[CancelToken], on_chunk: Any = None) -> None:
        D = np.ascontiguousarray(docs.vectors, dtype=np.float32)
        neighbors = auto_neighbors(D, len(texts), params, cancel)

        def run(part: Sequence[str], relay: ProgressCallback) -> None:
            accumulate_dense(D, _encode(encoder, part, relay, cancel), params, acc, no_progress, cancel, neighbors)

        _in_chunks(texts, acc, progress, cancel, on_chunk, run)

    def hybrid(docs: DocSet, texts: Sequence[str], acc: RelationAccumulator, progress: ProgressCallback,
               cancel: Optional[CancelToken], on_chunk: Any = None) -> None:
        lex = LexicalIndex.fit(docs.texts)  # IDF of the scope as it is now (an update refits)

        def run(part: Sequence[str], relay: ProgressCallback) -> None:
            vectors = _encode(encoder, part, relay, cancel) if params.alpha > 0 else None
            accumulate_hybrid(lex, part, params, params.alpha, docs.vectors, vectors, acc,
                              no_progress if vectors is not None else relay, cancel)

        _in_chunks(texts, acc, progress, cancel, on_chunk, run)

    def bm25(docs: DocSet, texts: Sequence[str], acc: RelationAccumulator, progress: ProgressCallback,
             cancel: Optional[CancelToken], on_chunk: Any = None) -> None:
        index = BM25Index().build(list(docs.texts), list(docs.ids), cancel)
        _in_chunks(texts, acc, progress, cancel, on_chunk,
                   lambda part, relay: accumulate_bm25(index, docs.texts, part, params, acc, relay, cancel))

    if retriever not in RETRIEVERS:
        raise RelationsError(f"retriever must be one of {', '.join(RETRIEVERS)}")
    if not 0.0 <= params.alpha <= 1.0:
        raise RelationsError("the dense weight (alpha) must be between 0 and 1")
    return {"dense": dense, "hybrid": hybrid, "bm25": bm25}[retriever]


def _build_edrmq(library, docs: DocSet, ws_id, scope, out_dir, enc, queries, question_fn, synthetic, retriever,
                 params: EdrmqParams, incremental: bool, fingerprints, progress, cancel):
    param_key = {**params.to_json(), "retriever": retriever}
    param_key.pop("batch_size", None)  # batching changes nothing in the result
    prev = None
    if incremental:
        try:
            prev = persist.load(out_dir)
        except persist.RelationsStoreError:
            prev = None
    model_id = docs.model_id if retriever_uses_vectors(retriever, params) else None
    if prev is not None and (prev.model_id != model_id or prev.params != param_key):
        prev = None  # another model or other parameters: start over
    after = prev.last_log_id if prev is not None else 0
    log_entries = read_query_log(library, ws_id, after_id=after)
    texts: list[tuple[str, str]] = [(q, "log") for q in query_texts(log_entries)]
    texts += [(q, "file") for q in queries]
    checkpoint = QueryCheckpoint(out_dir, {"method": "edrmq", "params": param_key, "model": model_id})
    up = update_edrmq(docs, edrmq_accumulator(retriever, params, enc), prev=prev, fingerprints=fingerprints,
                      queries=texts, synthetic=synthetic, question_fn=question_fn, checkpoint=checkpoint,
                      progress=progress, cancel=cancel)
    last = max([e.log_id for e in log_entries], default=after)
    stats: dict[str, Any] = {"queries": up.counts, "synthetic": synthetic}
    if prev is not None:  # how far the stored sum is from an exact rebuild (shown, not used)
        stats["updates_since_full_build"] = int(prev.stats.get("updates_since_full_build", 0)) + 1
        stats["last_update"] = {**up.changes.to_json(), "fresh_documents": up.fresh}
    stored = persist.StoredRelations("edrmq", scope, up.ids, up.acc, param_key, model_id, last, stats=stats)
    return stored, up.counts, up.incremental, (up.changes.to_json() if up.incremental else None), checkpoint


def _build_cooc(library, docs: DocSet, ws_id, scope, enc, question_fn, progress, cancel):
    index = docs.index()
    sessions = group_sessions(read_query_log(library, ws_id))
    real = [[index[str(f)] for f in seq if str(f) in index] for seq in session_sequences(sessions)]
    neighbors = nearest_neighbors(docs.vectors, 10, cancel=cancel)
    # Question-driven paths: each document's most salient sentence (plus generated questions when
    # a hook is given) retrieves its neighbours, starting from the document it came from.
    sq = [q for q in synthetic_queries(docs.titles, docs.texts, per_doc=1, use_titles=False, question_fn=question_fn,
                                       progress=progress, cancel=cancel)]
    questions: list[list[int]] = []
    if sq:
        V = _encode(enc, [q.text for q in sq], progress, cancel)
        retrieved = np.vstack([top_k_rows(V[i:i + 1024] @ docs.vectors.T, 4)[0] for i in range(0, len(V), 1024)])
        questions = question_sequences([q.doc_index for q in sq], retrieved, 3)
    seqs = build_sequences(len(docs), real=real, neighbors=neighbors, questions=questions, progress=progress,
                           cancel=cancel)
    clusters = cluster_sequences(seqs, len(docs), progress=progress, cancel=cancel)
    R = clusters.relation_matrix()
    counts = {"sessions": len(real), "walks": len(docs), "questions": len(questions), "sequences": len(seqs)}
    stored = persist.StoredRelations("cooc", scope, list(docs.ids), RelationAccumulator(len(docs), R, 1),
                                     {"dim": 100, "window": 2, "negative": 10, "epochs": 30, "seed": 42},
                                     docs.model_id, stats={"sequences": counts},
                                     cluster_labels=clusters.labels, cooc_vectors=clusters.embeddings)
    return stored, counts

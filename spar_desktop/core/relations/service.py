"""Relations for the app and the CLI: build (edrmq | tfidf | cooc), related files, the graph.

Every function takes the Library, a scope (a workspace name or the whole index), and progress /
cancel, and returns immutable values, so the UI runs them in its worker pool unchanged.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, Sequence

import numpy as np

from spar_desktop.core.progress import CancelToken, Progress, ProgressCallback, check, no_progress
from spar_desktop.core.relations import store
from spar_desktop.core.relations.documents import DocSet, subset
from spar_desktop.core.relations.edrmq import EdrmqParams, RelationAccumulator, accumulate_bm25, accumulate_dense
from spar_desktop.core.relations.querylog import group_sessions, query_texts, read_query_log, session_sequences
from spar_desktop.core.relations.scope import RelationsError, load_documents, scope_key, workspace_id
from spar_desktop.core.relations.synthetic import QuestionFn, synthetic_queries

if TYPE_CHECKING:
    from spar_desktop.core.library.database import Library

METHODS = store.METHODS
COMBINE = {"edrmq": "sum", "tfidf": "max", "cooc": "max"}  # see graph.undirected


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

    def to_json(self) -> dict:
        return dict(self.__dict__)


@dataclass(frozen=True)
class RelatedFile:
    file_id: int
    path: str
    title: str
    weight: float


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


def build_relations(library: "Library", *, workspace: Optional[str] = None, method: str = "edrmq",
                    queries: Sequence[str] = (), question_fn: Optional[QuestionFn] = None, synthetic: bool = True,
                    retriever: str = "dense", params: EdrmqParams = EdrmqParams(), incremental: bool = True,
                    encoder: Any = None, progress: ProgressCallback = no_progress,
                    cancel: Optional[CancelToken] = None) -> BuildReport:
    """Build (or update) and store the relations of a scope. EDR-MQ updates incrementally when a
    previous build with the same model and parameters exists: only queries logged since, the
    queries passed in, and synthetic queries of new documents are added (earlier queries are not
    re-run against new documents; pass incremental=False to recompute everything)."""
    if method not in METHODS:
        raise RelationsError(f"unknown method '{method}': use one of {', '.join(METHODS)}")
    if retriever not in ("dense", "bm25"):
        raise RelationsError("retriever must be 'dense' or 'bm25'")
    started = time.perf_counter()
    ws_id = workspace_id(library, workspace)
    scope = scope_key(ws_id)
    need_vectors = method == "cooc" or (method == "edrmq" and retriever == "dense")
    docs, notes = load_documents(library, ws_id, need_vectors=need_vectors, encoder=encoder, progress=progress,
                                 cancel=cancel)
    out_dir = store.relations_dir(library.settings.data_dir, scope, method)
    enc = None
    if need_vectors:
        from spar_desktop.core.workspaces.engine import engine_for

        enc = engine_for(library.settings, encoder).encoder
    if method == "tfidf":
        from spar_desktop.core.relations.tfidf import tfidf_top_k

        R = tfidf_top_k(docs.texts, progress=progress, cancel=cancel)
        stored = store.StoredRelations("tfidf", scope, list(docs.ids), RelationAccumulator(len(docs), R, 1),
                                       {"top_k": 25})
        counts: dict[str, int] = {}
    elif method == "cooc":
        stored, counts = _build_cooc(library, docs, ws_id, scope, enc, question_fn, progress, cancel)
    else:
        stored, counts, incremental = _build_edrmq(library, docs, ws_id, scope, out_dir, enc, queries, question_fn,
                                                   synthetic, retriever, params, incremental, progress, cancel)
    check(cancel)
    store.save(out_dir, stored)
    R = stored.acc.total
    return BuildReport(method, scope, len(stored.ids), counts, int(R.nnz), round(time.perf_counter() - started, 2),
                       str(out_dir), incremental and method == "edrmq", tuple(notes),
                       int(stored.cluster_labels.max()) + 1 if stored.cluster_labels is not None and len(stored.ids) else None)


def _build_edrmq(library, docs: DocSet, ws_id, scope, out_dir, enc, queries, question_fn, synthetic, retriever,
                 params: EdrmqParams, incremental: bool, progress, cancel):
    param_key = {**params.to_json(), "retriever": retriever}
    param_key.pop("batch_size", None)  # batching changes nothing in the result
    prev = None
    if incremental:
        try:
            prev = store.load(out_dir)
        except store.RelationsStoreError:
            prev = None
    model_id = docs.model_id if retriever == "dense" else None
    if prev is not None and (prev.model_id != model_id or prev.params != param_key or not set(prev.ids) <= set(docs.ids)):
        prev = None  # model, parameters or document set changed incompatibly: start over
    new_rows: Optional[set[int]] = None
    if prev is not None:
        index = docs.index()
        old = set(prev.ids)
        docs = subset(docs, [index[i] for i in prev.ids] + [index[i] for i in docs.ids if i not in old])
        acc = prev.acc
        acc.grow(len(docs))
        new_rows = set(range(len(prev.ids), len(docs)))
        after = prev.last_log_id
        counts = dict(prev.stats.get("queries", {}))
    else:
        acc, after, counts = RelationAccumulator(len(docs)), 0, {}
    log_entries = read_query_log(library, ws_id, after_id=after)
    texts: list[tuple[str, str]] = [(q, "log") for q in query_texts(log_entries)]
    texts += [(q, "file") for q in queries]
    if synthetic:
        rows = sorted(new_rows) if new_rows is not None else range(len(docs))
        sq = synthetic_queries([docs.titles[i] for i in rows], [docs.texts[i] for i in rows],
                               question_fn=question_fn, progress=progress, cancel=cancel)
        texts += [(q.text, q.kind) for q in sq]
    for _, kind in texts:
        counts[kind] = counts.get(kind, 0) + 1
    qs = [t for t, _ in texts]
    if qs:
        if retriever == "dense":
            accumulate_dense(docs.vectors, _encode(enc, qs, progress, cancel), params, acc, progress, cancel)
        else:
            from spar_desktop.core.retrieval.bm25_index import BM25Index

            index = BM25Index().build(list(docs.texts), list(docs.ids), cancel)
            accumulate_bm25(index, docs.texts, qs, params, acc, progress, cancel)
    last = max([e.log_id for e in log_entries], default=after)
    stored = store.StoredRelations("edrmq", scope, list(docs.ids), acc, param_key, model_id, last,
                                   stats={"queries": counts})
    return stored, counts, prev is not None


def _build_cooc(library, docs: DocSet, ws_id, scope, enc, question_fn, progress, cancel):
    from spar_desktop.core.relations.clusters import cluster_sequences
    from spar_desktop.core.relations.cooc import build_sequences, nearest_neighbors, question_sequences
    from spar_desktop.core.relations.edrmq import top_k_rows

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
    stored = store.StoredRelations("cooc", scope, list(docs.ids), RelationAccumulator(len(docs), R, 1),
                                   {"dim": 100, "window": 2, "negative": 10, "epochs": 30, "seed": 42},
                                   docs.model_id, stats={"sequences": counts},
                                   cluster_labels=clusters.labels, cooc_vectors=clusters.embeddings)
    return stored, counts


# -- reading ---------------------------------------------------------------------------------------
def load_stored(library: "Library", workspace: Optional[str] = None, method: Optional[str] = None) -> store.StoredRelations:
    ws_id = workspace_id(library, workspace)
    scope = scope_key(ws_id)
    data_dir = library.settings.data_dir
    if method is None:
        have = store.available(data_dir, scope)
        if not have:
            raise RelationsError(f"no relations built for {'this workspace' if ws_id else 'the index'} yet: "
                                 "run `spar relations build` first")
        method = have[0][0]
    try:
        return store.load(store.relations_dir(data_dir, scope, method))
    except store.RelationsStoreError as exc:
        raise RelationsError(f"no '{method}' relations for {'this workspace' if ws_id else 'the index'}: "
                             f"run `spar relations build --method {method}` ({exc})") from exc


def resolve_file(library: "Library", ref: str) -> tuple[int, str, str]:
    """(file id, path, title) of a file given by id or path (relative paths resolve from cwd)."""
    import os

    from sqlalchemy import select

    from spar_desktop.core.library.models import File

    with library.session() as s:
        f = None
        if ref.isdigit():
            f = s.get(File, int(ref))
        if f is None:
            f = s.scalar(select(File).where(File.path == os.path.abspath(os.path.expanduser(ref))))
        if f is None:
            f = s.scalar(select(File).where(File.path == ref))
        if f is None:
            raise RelationsError(f"'{ref}' is not a file in the index")
        return f.id, f.path, f.title or os.path.basename(f.path)


def related_files(library: "Library", ref: str, k: int = 10, workspace: Optional[str] = None,
                  method: Optional[str] = None) -> tuple[str, list[RelatedFile]]:
    """(method used, the k files most related to ``ref``), strongest first."""
    from sqlalchemy import select

    from spar_desktop.core.library.models import File
    from spar_desktop.core.relations.graph import undirected

    fid, path, _ = resolve_file(library, ref)
    stored = load_stored(library, workspace, method)
    try:
        row = stored.ids.index(str(fid))
    except ValueError:
        raise RelationsError(f"{path} was not part of the last '{stored.method}' build: rebuild the relations") from None
    S = undirected(stored.matrix(), COMBINE[stored.method]).tocsr()
    r = S.getrow(row)
    order = np.lexsort((r.indices, -r.data))[:k]
    picks = [(int(stored.ids[r.indices[i]]), float(r.data[i])) for i in order]
    with library.session() as s:
        files = {f.id: f for f in s.scalars(select(File).where(File.id.in_([p[0] for p in picks])))} if picks else {}
    import os

    out = [RelatedFile(i, files[i].path, files[i].title or os.path.basename(files[i].path), w)
           for i, w in picks if i in files]
    return stored.method, out


def relations_graph(library: "Library", workspace: Optional[str] = None, method: Optional[str] = None, *,
                    top_per_node: Optional[int] = 10, layout: bool = True, iterations: int = 100,
                    progress: ProgressCallback = no_progress, cancel: Optional[CancelToken] = None) -> Any:
    """networkx graph of the stored relations with metadata, clusters (from a cooc build of the
    same scope, when there is one), Louvain communities and, optionally, a ForceAtlas2 layout."""
    from spar_desktop.core.relations.graph import add_communities, build_graph, edge_list, set_positions
    from spar_desktop.core.relations.layout import layout_graph
    from spar_desktop.core.relations.scope import scope_files

    stored = load_stored(library, workspace, method)
    ws_id = workspace_id(library, workspace)
    files = {str(f.file_id): f for f in scope_files(library, ws_id)}
    keep = [i for i, d in enumerate(stored.ids) if d in files]  # files deleted since the build drop out
    R = stored.matrix()[keep][:, keep]
    ids = [stored.ids[i] for i in keep]
    import os

    docs = DocSet(tuple(ids), tuple(files[d].title or os.path.basename(files[d].path) for d in ids),
                  tuple("" for _ in ids), None,
                  tuple({"path": files[d].path, "folder": files[d].folder, "tags": files[d].tags,
                         "file_id": files[d].file_id} for d in ids))
    clusters = _cluster_labels(library, stored, ids)
    edges, weights = edge_list(R, top_per_node, combine=COMBINE[stored.method])
    G = build_graph(docs, edges, weights, clusters=clusters, method=stored.method)
    check(cancel)
    add_communities(G)
    if layout:
        set_positions(G, layout_graph(G, iterations=iterations, progress=progress, cancel=cancel))
    return G


def _cluster_labels(library, stored: store.StoredRelations, ids: list[str]) -> Optional[list[int]]:
    source = stored
    if stored.cluster_labels is None:
        try:
            source = store.load(store.relations_dir(library.settings.data_dir, stored.scope, "cooc"))
        except store.RelationsStoreError:
            return None
        if source.cluster_labels is None:
            return None
    where = {d: int(c) for d, c in zip(source.ids, source.cluster_labels)}
    return [where.get(d, -1) for d in ids]


def export_relations(library: "Library", out: str | Path, fmt: Optional[str] = None, **kwargs: Any) -> Path:
    from spar_desktop.core.relations.graph import export_graph

    return export_graph(relations_graph(library, **kwargs), out, fmt)


def graph_payload(library: "Library", workspace: Optional[str] = None, method: Optional[str] = None, *,
                  build_missing: bool = True, question_fn: Optional[QuestionFn] = None,
                  progress: ProgressCallback = no_progress, cancel: Optional[CancelToken] = None,
                  **kwargs: Any) -> Any:
    """The GraphPayload the graph view draws, building the method's relations first when none
    are stored (and ``build_missing``). Slow (build, layout): call it in a worker."""
    from spar_desktop.core.relations.payload import payload_from_graph

    if build_missing and method is not None:
        try:
            load_stored(library, workspace, method)
        except RelationsError:
            build_relations(library, workspace=workspace, method=method, question_fn=question_fn,
                            progress=progress, cancel=cancel)
    G = relations_graph(library, workspace, method, progress=progress, cancel=cancel, **kwargs)
    return payload_from_graph(G, G.graph.get("method", ""), workspace or "whole index")

"""Keeping stored relations current as files are added, changed and removed, without a rebuild.

EDR-MQ stores the sum S of p1·p2 over every query so far and the query count N (R = S / N,
edrmq.RelationAccumulator). An update compares the fingerprint (content hash) of every file the
stored build saw with the scope's files now (``diff``), then:
- removed files: their rows and columns leave S; N is unchanged, so R stays S / N;
- changed files (same id, new content): their rows and columns are zeroed (a remove), and they
  are treated as added;
- added files: new rows; their synthetic queries, plus queries logged since the last build, run
  against the whole current document set through one ``Accumulate`` callable, so the retriever
  (hybrid by default, dense or BM25) is chosen in one place (build.edrmq_accumulator).
An edit that keeps the content (a touch, a copy with the same bytes) keeps the hash: nothing to
redo, as relations depend on content only.

What is approximate (Rebuild recomputes exactly):
- earlier queries are not re-run against new or changed documents: those gain relations only
  from queries run after they arrived (their own synthetic queries and later logged queries);
- the queries of removed or changed documents stay counted in N, and the mass they put on pairs
  of other documents stays in S;
- a new document's salient sentences are chosen with term weights from the new documents plus
  a fixed sample of the others (a full build weighs terms over all documents).

TF-IDF has no accumulated state: an update recomputes it exactly (2-3 s of CPU for SciFact's 5,183
abstracts; reading the files' text is the larger cost on a real share). Co-occurrence clusters are
global (Word2Vec over walks through every document, then agglomerative clustering with M = N/5),
so an update rebuilds them in full, in the background like the rest.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Optional, Sequence

import numpy as np
from scipy import sparse

from spar_desktop.core.progress import Cancelled, CancelToken, Progress, ProgressCallback, check, no_progress
from spar_desktop.core.relations import persist
from spar_desktop.core.relations.checkpoint import QueryCheckpoint
from spar_desktop.core.relations.doc_vectors import DocSet, subset
from spar_desktop.core.relations.edrmq import RelationAccumulator
from spar_desktop.core.relations.scope import scope_files, scope_key, workspace_id
from spar_desktop.core.relations.synthetic import QuestionFn, synthetic_queries

if TYPE_CHECKING:
    from spar_desktop.core.library.database import Library

# (documents in row order, query texts, accumulator to add to, progress, cancel): runs every query
# through EDR-MQ's two retrieval stages over ``docs`` and adds p1·p2 to the accumulator, in order,
# reporting queries done of len(texts). With a checkpoint, update_edrmq also passes
# ``on_chunk=callable(acc)``, to be called between chunks of queries (build.edrmq_accumulator's do).
Accumulate = Callable[..., None]

CONTEXT_DOCS = 256  # other documents whose terms weigh a new document's sentences (see module doc)


@dataclass(frozen=True)
class DocChanges:
    """File ids (as strings) added, changed (same id, new fingerprint) and removed since a build."""

    added: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()

    def __len__(self) -> int:
        return len(self.added) + len(self.changed) + len(self.removed)

    def to_json(self) -> dict[str, int]:
        return {"added": len(self.added), "changed": len(self.changed), "removed": len(self.removed)}


def diff(known: Mapping[str, Optional[str]], current: Mapping[str, Optional[str]]) -> DocChanges:
    """Changes from ``known`` (id -> fingerprint the build saw; None = not recorded) to
    ``current``. An unknown fingerprint on either side counts as unchanged."""
    added = tuple(d for d in current if d not in known)
    removed = tuple(d for d in known if d not in current)
    changed = tuple(d for d, fp in current.items()
                    if d in known and fp is not None and known[d] is not None and known[d] != fp)
    return DocChanges(added, changed, removed)


def realign(acc: RelationAccumulator, old_ids: Sequence[str], new_ids: Sequence[str],
            reset: Iterable[str] = ()) -> RelationAccumulator:
    """The accumulator re-indexed from ``old_ids`` to ``new_ids``: an id in both keeps its row
    and column of S (moved to its new position), ids missing from ``new_ids`` are dropped, new
    ids and ``reset`` ids start empty. N is kept. O(non-zeros)."""
    pos = {d: i for i, d in enumerate(old_ids)}
    cleared = set(reset)
    mapping = np.full(len(old_ids), -1, dtype=np.int64)
    for j, d in enumerate(new_ids):
        i = pos.get(d)
        if i is not None and d not in cleared:
            mapping[i] = j
    t = acc.total.tocoo()
    r, c = mapping[t.row], mapping[t.col]
    ok = (r >= 0) & (c >= 0)
    n = len(new_ids)
    total = sparse.coo_matrix((t.data[ok], (r[ok], c[ok])), shape=(n, n)).tocsr()
    return RelationAccumulator(n, total, acc.n_queries)


@dataclass
class EdrmqUpdate:
    ids: list[str]  # row order of ``acc``
    acc: RelationAccumulator
    counts: dict[str, int]  # queries by source, all builds and updates together
    changes: DocChanges  # what the update found (empty for a full build)
    incremental: bool  # False: computed from scratch
    fresh: int  # documents whose synthetic queries ran this time
    resumed: int = 0  # queries a cancelled run of the same job had finished (checkpoint.py)


def update_edrmq(docs: DocSet, accumulate: Accumulate, *, prev: Optional[persist.StoredRelations] = None,
                 fingerprints: Optional[Mapping[str, Optional[str]]] = None, queries: Sequence[tuple[str, str]] = (),
                 synthetic: bool = True, question_fn: Optional[QuestionFn] = None,
                 checkpoint: Optional[QueryCheckpoint] = None,
                 progress: ProgressCallback = no_progress, cancel: Optional[CancelToken] = None) -> EdrmqUpdate:
    """EDR-MQ over ``docs``: from scratch when ``prev`` is None, else ``prev`` brought up to date
    (see the module doc). ``fingerprints``: id -> content hash of every file in scope now (files
    without text included, so they are not retried until they change; None: ``docs.ids`` with
    unknown fingerprints, so only added and removed documents are seen); ``queries``: (text,
    source) run in any case — logged searches since ``prev``, a queries file. Synthetic queries
    run first and those given after them, so searches logged after a cancelled run extend its
    list rather than shift it. ``checkpoint``: keeps the queries' work as they run and resumes
    the same job a cancelled run left (checkpoint.py)."""
    if prev is None:
        acc, counts, changes, fresh = RelationAccumulator(len(docs)), {}, DocChanges(), list(range(len(docs)))
    else:
        current = fingerprints if fingerprints is not None else {d: None for d in docs.ids}
        changes = diff(prev.known(), current)
        index = docs.index()
        old = set(prev.ids)
        keep = [d for d in prev.ids if d in index]  # removed files, and files that lost their text, drop out
        order = keep + [d for d in docs.ids if d not in old]
        changed = set(changes.changed)
        acc = realign(prev.acc, prev.ids, order, changed)
        docs = subset(docs, [index[d] for d in order])
        fresh = [i for i, d in enumerate(keep) if d in changed] + list(range(len(keep), len(order)))
        counts = dict(prev.stats.get("queries", {}))
    check(cancel)
    texts: list[tuple[str, str]] = []
    if synthetic and fresh:
        texts += [(q.text, q.kind) for q in fresh_queries(docs, fresh, question_fn, progress, cancel)]
    texts += list(queries)
    for _, kind in texts:
        counts[kind] = counts.get(kind, 0) + 1
    resumed = 0
    if texts:
        base = None if prev is None else {"created_at": prev.created_at, "n_queries": prev.acc.n_queries,
                                          "changed": sorted(changes.changed)}
        acc, resumed = run_queries(docs, [t for t, _ in texts], acc, accumulate, checkpoint, base, progress, cancel)
    return EdrmqUpdate(list(docs.ids), acc, counts, changes, prev is not None, len(fresh), resumed)


def run_queries(docs: DocSet, texts: Sequence[str], acc: RelationAccumulator, accumulate: Accumulate,
                checkpoint: Optional[QueryCheckpoint], base: Any, progress: ProgressCallback,
                cancel: Optional[CancelToken]) -> tuple[RelationAccumulator, int]:
    """The long phase: every query through ``accumulate``, reported as "running queries i/N"
    (with_eta adds the time left). With ``checkpoint``: resumes what a cancelled run of the same
    job finished, saves as it goes and when cancelled. Returns (accumulator, queries resumed)."""
    start = 0
    if checkpoint is not None:
        acc, start = checkpoint.begin(docs.ids, acc, base, texts)
    m = len(texts)

    def relay(p: Progress) -> None:
        done = start + min(p.done, m - start)
        progress(Progress(done, m, f"running queries {done:,}/{m:,}"))

    if start >= m:
        return acc, start
    relay(Progress(0, m - start))
    extra = {} if checkpoint is None else {"on_chunk": lambda a: checkpoint.save(a) if checkpoint.due() else None}
    try:
        accumulate(docs, list(texts[start:]), acc, relay, cancel, **extra)
    except Cancelled:
        if checkpoint is not None:
            checkpoint.save(acc)  # whole batches only: the first acc.n_queries - base of texts
        raise
    return acc, start


def fresh_queries(docs: DocSet, rows: Sequence[int], question_fn: Optional[QuestionFn] = None,
                  progress: ProgressCallback = no_progress, cancel: Optional[CancelToken] = None) -> list[Any]:
    """Synthetic queries of ``rows`` only. Sentence salience is TF-IDF: fitted on the new rows
    alone, one new document would weigh every term alike, so up to CONTEXT_DOCS other documents
    (every k-th: deterministic) join the fit; their own queries are dropped. Questions (an LLM
    call per document) are asked for ``rows`` only."""
    rows = list(rows)
    if len(rows) == len(docs):
        return synthetic_queries(docs.titles, docs.texts, question_fn=question_fn, progress=progress, cancel=cancel)
    chosen = set(rows)
    others = [i for i in range(len(docs)) if i not in chosen]
    context = others[::max(1, len(others) // CONTEXT_DOCS)][:CONTEXT_DOCS]
    picked = rows + context
    drawn = synthetic_queries([docs.titles[i] for i in picked], [docs.texts[i] for i in picked],
                              progress=progress, cancel=cancel)
    out = [q for q in drawn if q.doc_index < len(rows)]
    if question_fn is not None:
        out += synthetic_queries([docs.titles[i] for i in rows], [docs.texts[i] for i in rows], per_doc=0,
                                 use_titles=False, question_fn=question_fn, progress=progress, cancel=cancel)
    return out


# -- the library's scopes ----------------------------------------------------------------------
def scope_fingerprints(library: "Library", ws_id: Optional[int]) -> dict[str, str]:
    """str(file id) -> content hash of every readable file in scope (a scan keeps the hash current:
    size and mtime first, then the content)."""
    return {str(f.file_id): f.content_hash for f in scope_files(library, ws_id)}


def pending_changes(library: "Library", workspace: Optional[str] = None,
                    method: str = "edrmq") -> Optional[DocChanges]:
    """Files added, changed or removed in the scope since its stored ``method`` build; None when
    nothing is stored (or it cannot be read). Reads meta.json and the index only: cheap."""
    ws_id = workspace_id(library, workspace)
    try:
        meta = persist.load_meta(persist.relations_dir(library.settings.data_dir, scope_key(ws_id), method))
    except persist.RelationsStoreError:
        return None
    return diff(persist.known_files(meta), scope_fingerprints(library, ws_id))

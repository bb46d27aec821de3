"""Workspace search with co-occurrence cluster expansion (co-occurrence paper §4.2): the app's own
hybrid search ranks the files, then the clusters of its top k_v files are added and the union is
re-ranked by cosine to the query (``expand``), or every candidate gets α·cos(query, its cluster's
centroid) added (``boost``). Needs a co-occurrence build of the workspace
(`spar relations build --workspace W --method cooc`).

Why on top of the logged search rather than inside the searcher: expansion works on files, after
chunks are mapped to files, and the vanilla query is still what the query log records.

``session_search`` is the search panel's "Cover my session": one passage per file, in the
expanded order, each marked when expansion added it. What the app says about the feature is
EXPANSION_LABEL / EXPANSION_NOTE, here and nowhere else.
"""

from __future__ import annotations

import dataclasses
import os
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

import numpy as np

from spar_desktop.core.relations.doc_vectors import subset
from spar_desktop.core.relations.errors import RelationsError
from spar_desktop.core.relations.scope import load_documents, workspace_id

if TYPE_CHECKING:
    from spar_desktop.core.library.database import Library

# The app's main window imports this module for EXPANSION_LABEL / FROM_CLUSTER: imports inside
# functions defer scipy (clusters, expansion, the stored build) and the search stack (workspaces
# engine / manager / search), which the window's start does not otherwise load.

VARIANTS = ("vanilla", "expand", "boost")

EXPANSION_LABEL = "Cover my session"
FROM_CLUSTER = "+ from cluster"  # the mark on a result expansion added
# The one description of cluster-expanded search the app shows (button tooltip, added results).
# The verdict comes from benchmarks/results/relations_sessions.md (issue 18). On sessions the
# clusters had not seen, this expansion (k_v = 3, query re-ranking) found no more of a task's
# documents than plain search: coverage@8 +0.009 on SciFact and +0.004 on NFCorpus, both
# intervals include 0. It helped only on sessions already in the log (NFCorpus +0.029). So it is
# an explicit action and is never applied to plain search.
EXPANSION_NOTE = ("Cover my session: besides the 3 best matches, brings files from their co-occurrence clusters "
                  "(files used together in your past searches, or close to them), ranked by closeness to your words; "
                  f"files it added are marked “{FROM_CLUSTER}”. It is off by default — plain search (Enter) never "
                  "expands — because in our tests it did not find more of what a new task needs than plain search; "
                  "it helped only for tasks whose files had already been used together in earlier searches.")


class ClustersNotBuilt(RelationsError):
    """The workspace has no readable co-occurrence clusters: build them (method cooc), then search."""


@dataclass(frozen=True)
class ExpandedHit:
    file_id: int
    path: str
    title: str
    from_cluster: bool  # added by expansion (not in the search's own top k)
    cluster: int


@dataclass(frozen=True)
class ExpandedResults:
    workspace: str
    query: str
    variant: str
    hits: tuple[ExpandedHit, ...]
    log_id: Optional[int]
    search: Any = None  # the logged WorkspaceResults expansion started from (its passages)
    openings: tuple[str, ...] = ()  # per hit: the opening of its text (for files the search did not reach)


def expanded_search(library: "Library", workspace: str, query: str, *, variant: str = "expand", k: int = 8,
                    k_v: int = 3, alpha: float = 0.2, depth: int = 50, manager: Any = None,
                    encoder: Any = None) -> ExpandedResults:
    # deferred: scipy and the search stack (module note)
    from spar_desktop.core.relations.clusters import CoocClusters
    from spar_desktop.core.relations.expansion import cluster_boost, cluster_expand
    from spar_desktop.core.relations.stored_lookup import load_stored
    from spar_desktop.core.workspaces.engine import engine_for
    from spar_desktop.core.workspaces.manager import Workspaces

    if variant not in VARIANTS:
        raise RelationsError(f"unknown variant '{variant}': use one of {', '.join(VARIANTS)}")
    ws_id = workspace_id(library, workspace)  # an unknown workspace fails here, not as missing clusters
    try:
        stored = load_stored(library, workspace, "cooc")
    except RelationsError as exc:  # none stored, or unreadable
        raise ClustersNotBuilt(str(exc)) from exc
    if stored.cluster_labels is None or stored.cooc_vectors is None:
        raise ClustersNotBuilt("the stored co-occurrence build has no clusters: rebuild it (--method cooc)")
    if manager is None:
        manager = Workspaces(library, engine_for(library.settings, encoder))
    with manager.lock(workspace):  # the search and the documents see one state of the workspace
        results = manager.search(workspace, query, k=depth)  # logged like any search
        docs, _ = load_documents(library, ws_id, encoder=encoder)
    index = docs.index()
    rows = [index[d] for d in stored.ids if d in index]  # documents of the build still in scope
    docs = subset(docs, rows)
    at = {d: i for i, d in enumerate(stored.ids)}
    kept = [at[d] for d in docs.ids]
    clusters = CoocClusters(stored.cluster_labels[kept], stored.cooc_vectors[kept])
    pos = docs.index()
    ranked = list(dict.fromkeys(pos[str(h.file_id)] for h in results.hits if str(h.file_id) in pos))
    q = np.asarray(engine_for(library.settings, encoder).encoder.encode_query(query), dtype=np.float32)
    if variant == "expand":
        out = cluster_expand(ranked, q, docs.vectors, clusters, k_v=k_v, k=k)
    elif variant == "boost":
        out = cluster_boost(ranked, q, docs.vectors, clusters, alpha=alpha, k_v=k_v, k=k)
    else:
        out = ranked[:k]
    own = set(ranked[:k])
    hits = tuple(ExpandedHit(int(docs.ids[r]), str(docs.meta[r].get("path", "")),
                             docs.titles[r] or os.path.basename(str(docs.meta[r].get("path", ""))),
                             r not in own, int(clusters.labels[r])) for r in out)
    openings = tuple(" ".join(docs.texts[r][:600].split()) for r in out)
    return ExpandedResults(workspace, query, variant, hits, results.log_id, results, openings)


@dataclass(frozen=True)
class SessionResults:
    """Cover my session as the search panel shows it (the attributes of WorkspaceResults it reads,
    plus which results expansion added)."""

    workspace: str
    query: str
    hits: tuple[Any, ...]  # WorkspaceHit per file: its best passage, else its opening (chunk_id '')
    from_cluster: tuple[bool, ...]  # aligned with hits
    latency_ms: float
    log_id: Optional[int]
    message: Optional[str] = None
    notes: tuple[str, ...] = ()
    chunking: Optional[str] = None

    @property
    def added(self) -> int:
        return sum(self.from_cluster)


def session_search(library: "Library", workspace: str, query: str, *, k: int = 8, k_v: int = 3, depth: int = 50,
                   manager: Any = None, encoder: Any = None) -> SessionResults:
    """Cluster-expanded search (``expand``) with a passage per file: the file's best passage among
    the search's top ``depth``, else its opening (page 1; no chunk, so it teaches the evolving keys
    nothing). Needs a co-occurrence build of the workspace (ClustersNotBuilt says so)."""
    t0 = time.perf_counter()
    res = expanded_search(library, workspace, query, variant="expand", k=k, k_v=k_v, depth=depth, manager=manager,
                          encoder=encoder)
    from spar_desktop.core.workspaces.search import WorkspaceHit  # deferred: the search stack (module note)

    best: dict[int, Any] = {}
    for h in res.search.hits:
        best.setdefault(h.file_id, h)
    hits = []
    for rank, (e, opening) in enumerate(zip(res.hits, res.openings), 1):
        h = best.get(e.file_id)
        hits.append(dataclasses.replace(h, rank=rank) if h is not None else
                    WorkspaceHit(rank, e.file_id, e.path, e.title, 1, 1, 0.0, None, None, opening, None, ""))
    s = res.search
    return SessionResults(workspace, query, tuple(hits), tuple(e.from_cluster for e in res.hits),
                          (time.perf_counter() - t0) * 1000, res.log_id, s.message, tuple(s.notes), s.chunking)

"""Workspace search with co-occurrence cluster expansion (co-occurrence paper §4.2): the app's own
hybrid search ranks the files, then the clusters of its top k_v files are added and the union is
re-ranked by cosine to the query (``expand``), or every candidate gets α·cos(query, its cluster's
centroid) added (``boost``). Needs a co-occurrence build of the workspace
(`spar relations build --workspace W --method cooc`).

Why on top of the logged search rather than inside the searcher: expansion works on files, after
chunks are mapped to files, and the vanilla query is still what the query log records.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

import numpy as np

from spar_desktop.core.relations.scope import RelationsError

if TYPE_CHECKING:
    from spar_desktop.core.library.database import Library

VARIANTS = ("vanilla", "expand", "boost")


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


def expanded_search(library: "Library", workspace: str, query: str, *, variant: str = "expand", k: int = 8,
                    k_v: int = 3, alpha: float = 0.2, depth: int = 50, manager: Any = None,
                    encoder: Any = None) -> ExpandedResults:
    from spar_desktop.core.relations.clusters import CoocClusters
    from spar_desktop.core.relations.documents import subset
    from spar_desktop.core.relations.expansion import cluster_boost, cluster_expand
    from spar_desktop.core.relations.scope import load_documents, workspace_id
    from spar_desktop.core.relations.service import load_stored
    from spar_desktop.core.workspaces.engine import engine_for

    if variant not in VARIANTS:
        raise RelationsError(f"unknown variant '{variant}': use one of {', '.join(VARIANTS)}")
    stored = load_stored(library, workspace, "cooc")
    if stored.cluster_labels is None or stored.cooc_vectors is None:
        raise RelationsError("the stored co-occurrence build has no clusters: rebuild it (--method cooc)")
    if manager is None:
        from spar_desktop.core.workspaces.manager import Workspaces

        manager = Workspaces(library, engine_for(library.settings, encoder))
    results = manager.search(workspace, query, k=depth)  # logged like any search
    docs, _ = load_documents(library, workspace_id(library, workspace), encoder=encoder)
    index = docs.index()
    rows = [index[d] for d in stored.ids if d in index]  # documents of the build still in scope
    docs = subset(docs, rows)
    clusters = CoocClusters(stored.cluster_labels[[stored.ids.index(d) for d in docs.ids]],
                            stored.cooc_vectors[[stored.ids.index(d) for d in docs.ids]])
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
    return ExpandedResults(workspace, query, variant, hits, results.log_id)

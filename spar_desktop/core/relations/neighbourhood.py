"""A document's k-hop neighbourhood in the relation graph: the files within k relations of it.

At 20,000 documents the whole graph is a texture; "what relates to this file, and what relates
to those" is the question people bring from the file table. The subgraph keeps the whole
graph's colours (communities, clusters, tags) and is laid out again on its own, starting from
its nodes' places in the whole layout (so it keeps its orientation), because in the whole layout
a 2- or 3-hop neighbourhood can span distant communities and be drawn as a few long edges.
Pure numpy/scipy over a GraphPayload (or a networkx graph for the CLI's export): no Qt.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
from scipy import sparse

from spar_desktop.core.progress import CancelToken, ProgressCallback, check, no_progress
from spar_desktop.core.relations.errors import RelationsError
from spar_desktop.core.relations.graph import set_positions
from spar_desktop.core.relations.layout import forceatlas2, layout_graph
from spar_desktop.core.relations.payload import GraphPayload, make_payload
from spar_desktop.core.relations.stored_lookup import relations_graph, resolve_file

MAX_HOPS = 3
LAYOUT_ITERATIONS = 60  # from the whole layout's positions: enough to untangle a subgraph


@dataclass(frozen=True)
class Neighbourhood:
    payload: GraphPayload  # the subgraph, laid out on its own
    center: int  # row of the chosen document in ``payload``
    hops: int
    distance: np.ndarray  # (n,) hops from the centre of each row of ``payload`` (0 = the centre)


def hop_distances(n: int, edges: np.ndarray, start: int, hops: int) -> np.ndarray:
    """(n,) number of relations between ``start`` and each node, -1 beyond ``hops`` (a
    breadth-first search as sparse matrix-vector products, one per hop)."""
    if not 0 <= start < n:
        raise IndexError(f"node row {start} is not in a graph of {n} nodes")
    if hops < 0:
        raise ValueError("hops must be >= 0")
    e = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    A = sparse.csr_matrix((np.ones(2 * len(e), dtype=np.int8), (np.r_[e[:, 0], e[:, 1]], np.r_[e[:, 1], e[:, 0]])),
                          shape=(n, n))
    dist = np.full(n, -1, dtype=np.int64)
    dist[start] = 0
    frontier = np.zeros(n, dtype=np.int8)
    frontier[start] = 1
    for k in range(1, hops + 1):
        reached = (A @ frontier > 0) & (dist < 0)
        if not reached.any():
            break
        dist[reached] = k
        frontier = reached.astype(np.int8)
    return dist


def subgraph_payload(payload: GraphPayload, rows: np.ndarray) -> GraphPayload:
    """The payload restricted to ``rows`` (in that order) and the edges among them; groups and
    their colours are carried over, so a node keeps its colour."""
    rows = np.asarray(rows, dtype=np.int64)
    new = np.full(payload.n_nodes, -1, dtype=np.int64)
    new[rows] = np.arange(rows.size)
    e = payload.edges.astype(np.int64)
    keep = (new[e[:, 0]] >= 0) & (new[e[:, 1]] >= 0)
    sub = new[e[keep]]
    edges = np.sort(sub, axis=1)  # keep i < j
    take = rows.tolist()
    return make_payload(
        [payload.node_ids[i] for i in take], [payload.labels[i] for i in take],
        payload.positions[rows], edges, payload.weights[keep],
        file_ids=[payload.file_ids[i] for i in take], paths=[payload.paths[i] for i in take],
        groups={k: v[rows] for k, v in payload.groups.items()}, group_names=payload.group_names,
        method=payload.method, scope=payload.scope)


def neighbourhood(payload: GraphPayload, row: int, hops: int, *, layout: bool = True,
                  iterations: int = LAYOUT_ITERATIONS, progress: ProgressCallback = no_progress,
                  cancel: Optional[CancelToken] = None) -> Neighbourhood:
    """The documents within ``hops`` relations of ``row`` (1..MAX_HOPS), the centre first, then
    by distance and row; laid out again unless ``layout`` is False."""
    if not 1 <= hops <= MAX_HOPS:
        raise ValueError(f"hops must be between 1 and {MAX_HOPS}")
    dist = hop_distances(payload.n_nodes, payload.edges, row, hops)
    rows = np.flatnonzero(dist >= 0)
    rows = rows[np.lexsort((rows, dist[rows]))]  # centre first
    check(cancel)
    sub = subgraph_payload(payload, rows)
    if layout and sub.n_nodes > 1:
        P = forceatlas2(sub.n_nodes, sub.edges, sub.weights, iterations=iterations,
                        initial=sub.positions.astype(np.float64), progress=progress, cancel=cancel)
        sub = sub.with_positions(P)
    return Neighbourhood(sub, 0, hops, dist[rows])


def neighbourhood_graph(G: Any, node: Any, hops: int) -> Any:
    """The networkx subgraph (a copy, graph attributes kept) of the nodes within ``hops`` of
    ``node``: the same search as ``neighbourhood``, for exports."""
    if node not in G:
        raise KeyError(node)
    if not 1 <= hops <= MAX_HOPS:
        raise ValueError(f"hops must be between 1 and {MAX_HOPS}")
    import networkx as nx  # deferred like every networkx use here (loaded already: G is one)

    H = nx.ego_graph(G, node, radius=hops)  # a copy: node, edge and graph attributes kept
    H.graph["around"], H.graph["hops"] = str(node), int(hops)
    return H


def stored_neighbourhood_graph(library: Any, ref: str, hops: int, *, workspace: Optional[str] = None,
                               method: Optional[str] = None, top_per_node: Optional[int] = 10, layout: bool = True,
                               iterations: int = 100, progress: ProgressCallback = no_progress,
                               cancel: Optional[CancelToken] = None) -> Any:
    """The networkx graph of the stored relations around the file ``ref`` (an id or a path),
    with communities from the whole graph and a layout of its own (what `spar relations export
    --around FILE --hops K` writes)."""
    fid, path, _ = resolve_file(library, ref)
    G = relations_graph(library, workspace, method, top_per_node=top_per_node, layout=False, cancel=cancel)
    if str(fid) not in G:
        where = f"workspace '{workspace}'" if workspace else "the index"
        raise RelationsError(f"{path} is not in the '{G.graph.get('method', '')}' relations of {where}: rebuild them "
                             "(`spar relations build`) if it is new")
    H = neighbourhood_graph(G, str(fid), hops)
    check(cancel)
    if layout:
        set_positions(H, layout_graph(H, iterations=iterations, progress=progress, cancel=cancel))
    return H

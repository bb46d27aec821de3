"""The relation graph: documents as nodes, relation strengths as edge weights; Louvain
communities; GEXF / GraphML export for Gephi.

Node attributes: path, title, folder, tags, cluster, community, file_id (-1 outside the library),
plus x/y once laid out.
GEXF carries positions and a community colour in its ``viz`` namespace, so Gephi opens the file
looking like the app's view; GraphML has no viz namespace, so x/y are plain attributes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

import numpy as np
from scipy import sparse

from spar_desktop.core.relations.documents import DocSet

FORMATS = ("gexf", "graphml")
COMMUNITY_SEED = 42


def undirected(R: sparse.spmatrix, combine: str = "sum") -> sparse.csr_matrix:
    """Symmetric strength without the diagonal. 'sum' (EDR-MQ): p(z_i, z_j) and p(z_j, z_i) are
    both evidence; 'max' (TF-IDF, co-occurrence): the weight is a symmetric similarity that one
    direction may lack only because it fell outside that row's top-k."""
    R = sparse.csr_matrix(R)
    S = (R + R.T) if combine == "sum" else R.maximum(R.T)
    S = sparse.csr_matrix(S)
    S.setdiag(0)
    S.eliminate_zeros()
    return S


def edge_list(R: sparse.spmatrix, top_per_node: Optional[int] = None, min_weight: float = 0.0,
              combine: str = "sum") -> tuple[np.ndarray, np.ndarray]:
    """((m, 2) rows with i < j, (m,) weights). ``top_per_node`` keeps an edge when it is among
    either endpoint's strongest, so every node keeps its best links while clutter stays bounded."""
    coo = undirected(R, combine).tocoo()
    keep = coo.data > min_weight
    r, c, w = coo.row[keep], coo.col[keep], coo.data[keep]
    if top_per_node is not None and r.size:
        order = np.lexsort((c, -w, r))  # by row, strongest first
        r, c, w = r[order], c[order], w[order]
        rank = np.arange(r.size) - np.searchsorted(r, r, side="left")
        chosen = rank < top_per_node
        r, c, w = r[chosen], c[chosen], w[chosen]
        a, b = np.minimum(r, c), np.maximum(r, c)
        key = a.astype(np.int64) * (int(R.shape[0]) + 1) + b
        _, first = np.unique(key, return_index=True)
        return np.stack([a[first], b[first]], axis=1).astype(np.int64), w[first].astype(np.float64)
    upper = r < c
    return np.stack([r[upper], c[upper]], axis=1).astype(np.int64), w[upper].astype(np.float64)


def build_graph(docs: DocSet, edges: np.ndarray, weights: np.ndarray, *,
                clusters: Optional[Sequence[int]] = None, method: str = "") -> Any:
    """networkx Graph with one node per document (isolated documents included, so the view and
    Gephi show what has no relation yet). Node keys are the DocSet ids."""
    import networkx as nx

    G = nx.Graph(method=method)
    for i, doc_id in enumerate(docs.ids):
        meta = docs.meta[i] if docs.meta else {}
        G.add_node(doc_id, label=docs.titles[i] or doc_id, title=docs.titles[i] or "",
                   path=str(meta.get("path", "")), folder=str(meta.get("folder", "")),
                   tags="; ".join(meta.get("tags", ()) or ()),
                   cluster=int(clusters[i]) if clusters is not None else -1, community=-1,
                   file_id=int(meta.get("file_id", -1)))
    for (a, b), w in zip(edges.tolist(), weights.tolist()):
        G.add_edge(docs.ids[a], docs.ids[b], weight=float(w))
    return G


def add_communities(G: Any, seed: int = COMMUNITY_SEED, resolution: float = 1.0) -> int:
    """Louvain communities (seeded, so the colouring is stable between runs) written to the
    ``community`` node attribute, largest community = 0; returns how many there are."""
    import networkx as nx

    if G.number_of_nodes() == 0:
        return 0
    comms = nx.community.louvain_communities(G, weight="weight", resolution=resolution, seed=seed)
    comms = sorted(comms, key=lambda c: (-len(c), min(map(str, c))))
    for k, members in enumerate(comms):
        for node in members:
            G.nodes[node]["community"] = k
    return len(comms)


def set_positions(G: Any, positions: Mapping[Any, tuple[float, float]]) -> None:
    for node, (x, y) in positions.items():
        G.nodes[node]["x"] = float(x)
        G.nodes[node]["y"] = float(y)


def palette(k: int) -> tuple[int, int, int]:
    """A stable, distinguishable colour per category (golden-angle hues)."""
    import colorsys

    h = (k * 0.618033988749895) % 1.0
    r, g, b = colorsys.hsv_to_rgb(h, 0.65, 0.9)
    return int(r * 255), int(g * 255), int(b * 255)


def export_graph(G: Any, out: str | Path, fmt: Optional[str] = None) -> Path:
    """Write GEXF or GraphML (format from ``fmt`` or the file suffix)."""
    import networkx as nx

    out = Path(out)
    fmt = (fmt or out.suffix.lstrip(".")).lower()
    if fmt not in FORMATS:
        raise ValueError(f"unknown graph format '{fmt}': use one of {', '.join(FORMATS)}")
    H = G.copy()
    H.graph = {k: v for k, v in G.graph.items() if isinstance(v, (str, int, float, bool))}
    for _, data in H.nodes(data=True):
        for key, value in list(data.items()):
            if value is None:
                data[key] = ""  # neither format has a null
    out.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "gexf":
        for _, data in H.nodes(data=True):
            viz: dict = {"color": dict(zip("rgb", palette(max(int(data.get("community", 0)), 0))), a=1.0), "size": 5.0}
            if "x" in data and "y" in data:
                viz["position"] = {"x": data["x"], "y": data["y"], "z": 0.0}
            data["viz"] = viz
        nx.write_gexf(H, out)
    else:
        nx.write_graphml(H, out)
    return out

"""The relation graph: documents as nodes, relation strengths as edge weights; Louvain
communities; GEXF / GraphML export for Gephi.

Node attributes: label, path, title, folder, tags, cluster, community, file_id (-1 outside the
library), plus x/y once laid out; edge attribute: weight; graph attributes: name, method.
GEXF carries positions and a community colour in its ``viz`` namespace, so Gephi opens the file
looking like the app's view; GraphML has no viz namespace, so x/y are plain attributes.
Both read back in networkx with the same nodes, edges, attribute names, types and values
(tests/core/relations/test_graph_export.py), except what XML 1.0 cannot hold: control characters
and unpaired surrogates (a file name that is not valid UTF-8) become U+FFFD. GEXF has no graph
attributes besides ``name`` (so ``method`` is only in GraphML) and adds an ``id`` to every edge.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

import numpy as np
from scipy import sparse

from spar_desktop.core.relations.doc_vectors import DocSet
from spar_desktop.core.relations.payload import palette

# networkx (~0.3 s to import) is imported only by the functions that build, analyse or write a graph.

FORMATS = ("gexf", "graphml")
COMMUNITY_SEED = 42
# What XML 1.0 cannot carry: C0 controls but tab, newline and carriage return; U+FFFE/U+FFFF;
# unpaired surrogates (os.fsdecode's stand-ins for undecodable bytes in file names).
XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


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

    G = nx.Graph(name=f"SPAR relations ({method})" if method else "SPAR relations", method=method)
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


def xml_safe(value: Any) -> Any:
    """``value`` with what XML 1.0 cannot hold replaced by U+FFFD (strings only)."""
    return XML_INVALID.sub("\ufffd", value) if isinstance(value, str) else value


def _exportable(G: Any) -> Any:
    """A copy both writers accept and both readers give back as is: string ids and values made
    XML-safe; None (neither format has a null) and non-scalar values left out."""
    import networkx as nx

    def clean(data: Mapping) -> dict:
        return {xml_safe(k): xml_safe(v) for k, v in data.items()
                if isinstance(v, (str, bool, int, float))}

    H = nx.Graph()
    H.graph.update(clean(G.graph))
    H.add_nodes_from((xml_safe(n), clean(d)) for n, d in G.nodes(data=True))
    H.add_edges_from((xml_safe(a), xml_safe(b), clean(d)) for a, b, d in G.edges(data=True))
    return H


def export_graph(G: Any, out: str | Path, fmt: Optional[str] = None) -> Path:
    """Write GEXF or GraphML (format from ``fmt`` or the file suffix)."""
    import networkx as nx

    out = Path(out)
    fmt = (fmt or out.suffix.lstrip(".")).lower()
    if fmt not in FORMATS:
        raise ValueError(f"unknown graph format '{fmt}': use one of {', '.join(FORMATS)}")
    H = _exportable(G)
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

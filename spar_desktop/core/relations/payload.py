"""The immutable value the graph view draws: built in a worker, handed to the UI thread as is.

Arrays are flagged read-only and mappings are proxies, so neither side can change what the other
holds. Colours are precomputed per grouping (community, cluster, tag) so the widget only indexes.
"""

from __future__ import annotations

import colorsys
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any, Mapping, Optional, Sequence

import numpy as np

GROUPINGS = ("community", "cluster", "tag")


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


@dataclass(frozen=True)
class GraphPayload:
    node_ids: tuple[str, ...]
    file_ids: tuple[int, ...]  # -1 where a node is not a library file (e.g. BEIR documents)
    labels: tuple[str, ...]  # titles, shown on hover
    paths: tuple[str, ...]
    positions: np.ndarray  # (n, 2) float32
    edges: np.ndarray  # (m, 2) int32 node rows, i < j
    weights: np.ndarray  # (m,) float32
    groups: Mapping[str, np.ndarray]  # grouping -> (n,) int category per node
    group_names: Mapping[str, tuple[str, ...]]  # grouping -> category names
    colors: Mapping[str, np.ndarray]  # grouping -> (n, 3) uint8
    method: str = ""
    scope: str = ""

    @property
    def n_nodes(self) -> int:
        return len(self.node_ids)

    @property
    def n_edges(self) -> int:
        return int(self.edges.shape[0])

    def with_positions(self, positions: np.ndarray) -> "GraphPayload":
        """The same graph laid out at ``positions`` (n, 2)."""
        return replace(self, positions=_frozen(np.asarray(positions, dtype=np.float32).reshape(self.n_nodes, 2)))

    def neighbors(self, row: int) -> np.ndarray:
        """Rows adjacent to ``row`` (for the view's expand action)."""
        e = self.edges
        return np.unique(np.concatenate([e[e[:, 0] == row, 1], e[e[:, 1] == row, 0]]))


def palette(k: int) -> tuple[int, int, int]:
    """A stable, distinguishable colour per category (golden-angle hues)."""
    h = (k * 0.618033988749895) % 1.0
    r, g, b = colorsys.hsv_to_rgb(h, 0.65, 0.9)
    return int(r * 255), int(g * 255), int(b * 255)


def category_colors(codes: np.ndarray) -> np.ndarray:
    table = np.array([palette(k) for k in range(int(codes.max()) + 1 if codes.size else 0)] or [(128, 128, 128)],
                     dtype=np.uint8)
    out = table[np.clip(codes, 0, None)] if codes.size else np.zeros((0, 3), np.uint8)
    out[codes < 0] = (160, 160, 160)  # no category: grey
    return out


def make_payload(node_ids: Sequence[str], labels: Sequence[str], positions: np.ndarray, edges: np.ndarray,
                 weights: np.ndarray, *, file_ids: Optional[Sequence[int]] = None, paths: Optional[Sequence[str]] = None,
                 groups: Optional[Mapping[str, Sequence[int]]] = None,
                 group_names: Optional[Mapping[str, Sequence[str]]] = None, method: str = "",
                 scope: str = "") -> GraphPayload:
    n = len(node_ids)
    g = {k: _frozen(np.asarray(v, dtype=np.int64)) for k, v in (groups or {}).items()}
    for name in GROUPINGS:
        g.setdefault(name, _frozen(np.zeros(n, dtype=np.int64)))
    names = {k: tuple((group_names or {}).get(k, ())) for k in g}
    return GraphPayload(
        node_ids=tuple(node_ids), file_ids=tuple(int(f) for f in (file_ids if file_ids is not None else [-1] * n)),
        labels=tuple(labels), paths=tuple(paths if paths is not None else [""] * n),
        positions=_frozen(np.asarray(positions, dtype=np.float32).reshape(n, 2)),
        edges=_frozen(np.asarray(edges, dtype=np.int32).reshape(-1, 2)),
        weights=_frozen(np.asarray(weights, dtype=np.float32).reshape(-1)),
        groups=MappingProxyType(g), group_names=MappingProxyType(names),
        colors=MappingProxyType({k: _frozen(category_colors(v)) for k, v in g.items()}),
        method=method, scope=scope)


def payload_from_graph(G: Any, method: str = "", scope: str = "") -> GraphPayload:
    """From a graph built by graph.build_graph (with communities and x/y set)."""
    nodes = list(G.nodes)
    index = {node: i for i, node in enumerate(nodes)}
    data = [G.nodes[v] for v in nodes]
    edges = np.array([(index[a], index[b]) if index[a] < index[b] else (index[b], index[a]) for a, b in G.edges()],
                     dtype=np.int64).reshape(-1, 2)
    weights = np.array([float(d.get("weight", 1.0)) for _, _, d in G.edges(data=True)])
    tag_names: dict[str, int] = {}
    tag_codes = []
    for d in data:
        first = (d.get("tags") or "").split("; ")[0]
        tag_codes.append(tag_names.setdefault(first, len(tag_names)) if first else -1)
    file_ids = [int(d.get("file_id", -1)) for d in data]
    return make_payload(
        [str(v) for v in nodes], [d.get("title") or str(v) for v, d in zip(nodes, data)],
        np.array([(d.get("x", 0.0), d.get("y", 0.0)) for d in data], dtype=np.float64), edges, weights,
        file_ids=file_ids, paths=[d.get("path", "") for d in data],
        groups={"community": [int(d.get("community", -1)) for d in data],
                "cluster": [int(d.get("cluster", -1)) for d in data], "tag": tag_codes},
        group_names={"tag": tuple(tag_names)}, method=method, scope=scope)

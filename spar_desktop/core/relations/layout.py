"""ForceAtlas2 (Jacomy et al. 2014) as Gephi runs it, with the EDR-MQ paper's Table 1 settings.

networkx 3.4+ ships ``forceatlas2_layout``, but it materialises (n × n × 2) arrays every
iteration (≈2 GB of temporaries at 5,000 nodes), has no Barnes-Hut approximation, no edge-weight
normalisation/inversion and no progress or cancel hook. This is the same algorithm (forces,
adaptive speed and swinging, per Gephi's implementation) in O(n log n) numpy:

- repulsion is approximated on a quadtree laid out as grids of 2^l × 2^l cells: at each level a
  node feels, through their centre of mass, the cells that are children of its parent's
  neighbourhood but not in its own neighbourhood (a Barnes-Hut style interaction list); nodes in
  the finest neighbouring cells repel exactly. With a neighbourhood radius r = ⌈1/θ⌉ every
  approximated cell satisfies width / distance ≤ 1/r ≤ θ, so θ = 1.2 (Table 1) is honoured;
- attraction runs over the edge list; everything is vectorised; progress and cancel are
  checked every iteration, so the UI can run it in a worker and stop it at once;
- nodes start from a spectral layout (two leading non-trivial eigenvectors of the normalised
  adjacency, ~0.1 s at 5k nodes) instead of random points. Table 1 fixes the forces, not the
  start; from random points ForceAtlas2 needs many hundreds of iterations at 5k nodes before
  communities separate, from a spectral start it refines structure that is already there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from spar_desktop.core.progress import CancelToken, Progress, ProgressCallback, check, no_progress

# The layout is numpy only; scipy (its sparse eigensolver, ~0.2 s to import) is imported by spectral_start.


@dataclass(frozen=True)
class ForceAtlas2Settings:
    """Defaults are the EDR-MQ paper's Table 1."""

    jitter_tolerance: float = 1.0  # "Tolerance (speed)"
    barnes_hut: bool = True  # "Approximate Repulsion"
    barnes_hut_theta: float = 1.2  # "Approximation"
    scaling_ratio: float = 2.0  # "Scaling"
    strong_gravity: bool = False
    gravity: float = 1.0
    dissuade_hubs: bool = True  # Gephi's "outbound attraction distribution"
    linlog: bool = True
    prevent_overlap: bool = True  # Gephi's "adjust sizes"
    edge_weight_influence: float = 1.0
    normalize_edge_weights: bool = True
    invert_edge_weights: bool = True
    # Gephi users switch overlap prevention on once the layout has settled (it slows moves down
    # tenfold); we do the same for the last quarter of the iterations.
    overlap_from: float = 0.75


PAPER_TABLE1 = ForceAtlas2Settings()
# From the spectral start, 100 iterations separate communities (benchmarks/relations.py measures
# it); Gephi users would run it longer by hand, which the UI can do by calling again with `initial`.
ITERATIONS = 100
# The finest Barnes–Hut grid: 2^16 cells a side. Crowded cells (nodes that coincide) stop
# deepening there; beyond it the exact near field takes them.
MAX_DEPTH = 16


def prepare_weights(weights: np.ndarray, s: ForceAtlas2Settings) -> np.ndarray:
    """Gephi's order: invert (1/w, 0 stays 0), then min-max normalise, then raise to the
    influence (influence 0 means every edge pulls with weight 1)."""
    w = np.asarray(weights, dtype=np.float64).copy()
    if s.edge_weight_influence == 0 or w.size == 0:
        return np.ones_like(w)
    if s.invert_edge_weights:
        nz = w != 0
        w[nz] = 1.0 / w[nz]
    if s.normalize_edge_weights:
        lo, hi = float(w.min()), float(w.max())
        w = (w - lo) / (hi - lo) if lo < hi else np.ones_like(w)
    return w if s.edge_weight_influence == 1 else np.power(w, s.edge_weight_influence)


def _pair_repulsion(P: np.ndarray, mass: np.ndarray, size: np.ndarray, i: np.ndarray, j: np.ndarray,
                    kr: float, adjust: bool, F: np.ndarray) -> None:
    """Exact repulsion on i from each listed j (pairs are listed both ways)."""
    dx = P[i, 0] - P[j, 0]
    dy = P[i, 1] - P[j, 1]
    d = np.sqrt(dx * dx + dy * dy)
    mm = kr * mass[i] * mass[j]
    with np.errstate(divide="ignore", invalid="ignore"):
        if adjust:
            de = d - size[i] - size[j]
            f = np.where(de > 0, mm / (de * de), np.where(de < 0, 100.0 * mm, 0.0))
        else:
            f = np.where(d > 0, mm / (d * d), 0.0)
    n = F.shape[0]
    F[:, 0] += np.bincount(i, weights=f * dx, minlength=n)
    F[:, 1] += np.bincount(i, weights=f * dy, minlength=n)


def _repulsion_exact(P: np.ndarray, mass: np.ndarray, size: np.ndarray, kr: float, adjust: bool,
                     F: np.ndarray, block: int = 512) -> None:
    n = P.shape[0]
    for start in range(0, n, block):
        i = np.repeat(np.arange(start, min(start + block, n)), n)
        j = np.tile(np.arange(n), min(block, n - start))
        keep = i != j
        _pair_repulsion(P, mass, size, i[keep], j[keep], kr, adjust, F)


def _cells(P: np.ndarray, origin: np.ndarray, side: float, g: int) -> tuple[np.ndarray, np.ndarray]:
    c = np.floor((P - origin) / side * g).astype(np.int64)
    np.clip(c, 0, g - 1, out=c)
    return c[:, 0], c[:, 1]


def _choose_depth(P: np.ndarray, origin: np.ndarray, side: float, r: int) -> int:
    """About four nodes per finest cell, deeper while crowded cells would make the exact near
    field large (clusters tighten as the layout converges). Counted over occupied cells only: a
    grid of 4^depth cells is never allocated (at depth 16 that was 34 GB per array)."""
    n = P.shape[0]
    depth = max(2, math.ceil(math.log(max(n, 16) / 4, 4)))
    while depth < MAX_DEPTH:
        cx, cy = _cells(P, origin, side, 1 << depth)
        counts = np.unique(cx * (1 << depth) + cy, return_counts=True)[1].astype(np.float64)
        if (2 * r + 1) ** 2 * float(np.dot(counts, counts)) <= 60.0 * n:
            break
        depth += 1
    return depth


class _Occupied:
    """The occupied cells of a grid (sorted ids) and a lookup of per-cell values by cell id; a
    cell with no node reads as absent. Memory grows with the nodes, never with the grid."""

    def __init__(self, cell: np.ndarray) -> None:
        self.ids, self.of_node = np.unique(cell, return_inverse=True)

    def find(self, query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(row of each queried cell in ``ids``, whether that cell is occupied)."""
        pos = np.minimum(np.searchsorted(self.ids, query), len(self.ids) - 1)
        return pos, self.ids[pos] == query


def _repulsion_tree(P: np.ndarray, mass: np.ndarray, size: np.ndarray, kr: float, adjust: bool, theta: float,
                    F: np.ndarray, pair_budget: int = 2_000_000) -> None:
    n = P.shape[0]
    r = max(1, math.ceil(1.0 / theta))
    origin = P.min(axis=0)
    side = float((P.max(axis=0) - origin).max()) * (1 + 1e-9) + 1e-9
    depth = _choose_depth(P, origin, side, r)
    fx_cx, fx_cy = _cells(P, origin, side, 1 << depth)
    x, y = P[:, 0].astype(np.float32), P[:, 1].astype(np.float32)
    pad = 2 * r  # cell ids are padded so neighbour ids never wrap into another row
    # The 36 (r = 1) candidate cells are the children of the parent's neighbourhood; which of them
    # are the node's own neighbours depends only on the node's position inside its parent.
    span = np.arange(-2 * r, 2 * r + 2)
    ox, oy = [a.ravel() for a in np.meshgrid(span, span, indexing="ij")]
    keep = np.empty((4, ox.size), dtype=np.float32)
    for bx in (0, 1):
        for by in (0, 1):
            keep[bx * 2 + by] = ~((np.abs(ox - bx) <= r) & (np.abs(oy - by) <= r))
    for level in range(2, depth + 1):
        g = 1 << level
        G = g + 2 * pad
        cx, cy = fx_cx >> (depth - level), fx_cy >> (depth - level)
        occ = _Occupied((cx + pad) * G + (cy + pad))
        M = np.bincount(occ.of_node, weights=mass)  # > 0 in every occupied cell
        comx = (np.bincount(occ.of_node, weights=mass * P[:, 0]) / M).astype(np.float32)
        comy = (np.bincount(occ.of_node, weights=mass * P[:, 1]) / M).astype(np.float32)
        base = (2 * (cx >> 1) + pad) * G + (2 * (cy >> 1) + pad)
        pos, hit = occ.find(base[:, None] + (ox * G + oy)[None, :])
        Mc = np.where(hit, M.astype(np.float32)[pos], 0.0) * keep[(cx & 1) * 2 + (cy & 1)]
        dx = x[:, None] - comx[pos]
        dy = y[:, None] - comy[pos]
        f = Mc / np.maximum(dx * dx + dy * dy, 1e-9)
        F[:, 0] += kr * mass * (f * dx).sum(axis=1)
        F[:, 1] += kr * mass * (f * dy).sum(axis=1)
    # Near field: exact pairs with the nodes of the (2r+1)² neighbouring finest cells.
    g = 1 << depth
    G = g + 2 * pad
    cell = (fx_cx + pad) * G + (fx_cy + pad)
    order = np.argsort(cell, kind="stable")
    occ = _Occupied(cell)
    counts = np.bincount(occ.of_node)
    starts = np.cumsum(counts) - counts  # where each occupied cell's nodes begin in ``order``
    near = np.arange(-r, r + 1)
    nx_, ny_ = [a.ravel() for a in np.meshgrid(near, near, indexing="ij")]
    pos, hit = occ.find(cell[:, None] + (nx_ * G + ny_)[None, :])
    cnt = np.where(hit, counts[pos], 0)
    first_of = starts[pos]
    bounds = np.concatenate([[0], np.cumsum(cnt.sum(axis=1))])
    lo = 0
    while lo < n:  # chunks of nodes keep the pair arrays within the budget
        hi = int(np.searchsorted(bounds, bounds[lo] + pair_budget, side="right")) - 1
        hi = min(max(hi, lo + 1), n)
        c = cnt[lo:hi].ravel()
        total = int(c.sum())
        if total:
            i = np.repeat(np.repeat(np.arange(lo, hi), cnt.shape[1]), c)
            first = np.repeat(first_of[lo:hi].ravel(), c)
            within = np.arange(total) - np.repeat(np.cumsum(c) - c, c)
            j = order[first + within]
            sel = i != j
            _pair_repulsion(P, mass, size, i[sel], j[sel], kr, adjust, F)
        lo = hi


def spectral_start(n: int, edges: np.ndarray, weights: np.ndarray, scale: float,
                   rng: np.random.Generator) -> Optional[np.ndarray]:
    """Positions from the 2nd and 3rd eigenvectors of D^-1/2 A D^-1/2 (random-walk scaled), with
    a little jitter so nodes that coincide (isolated ones, tiny components) can separate. None
    when the graph is too small or the eigensolver does not converge (the caller goes random)."""
    if n < 16 or len(edges) == 0:
        return None
    from scipy import sparse
    from scipy.sparse.linalg import ArpackError, ArpackNoConvergence, eigsh

    w = np.abs(np.asarray(weights, dtype=np.float64)) + 1e-12
    A = sparse.coo_matrix((w, (edges[:, 0], edges[:, 1])), shape=(n, n))
    A = (A + A.T).tocsr()
    d = np.asarray(A.sum(axis=1)).ravel()
    inv = np.where(d > 0, 1.0 / np.sqrt(np.maximum(d, 1e-300)), 0.0)
    N = sparse.diags(inv) @ A @ sparse.diags(inv)
    try:
        _, vecs = eigsh(N, k=3, which="LA", v0=rng.random(n), maxiter=5000, tol=1e-4)
    except (ArpackNoConvergence, ArpackError):
        return None
    X = vecs[:, :2] * inv[:, None]  # eigsh sorts ascending: the last vector is the trivial one
    X = X - X.mean(axis=0)
    spread = float(X.std())
    if not np.isfinite(spread) or spread == 0:
        return None
    X = X / spread * scale
    return X + (rng.random((n, 2)) - 0.5) * scale * 0.05


def forceatlas2(n: int, edges: np.ndarray, weights: Optional[np.ndarray] = None,
                settings: ForceAtlas2Settings = PAPER_TABLE1, *, iterations: int = ITERATIONS, seed: int = 42,
                initial: Optional[np.ndarray] = None, sizes: Optional[np.ndarray] = None, start: str = "spectral",
                progress: ProgressCallback = no_progress, cancel: Optional[CancelToken] = None) -> np.ndarray:
    """(n, 2) positions. ``edges``: (m, 2) node rows (undirected, each pair once). ``initial``
    positions win over ``start`` ('spectral' or 'random')."""
    s = settings
    if n == 0:
        return np.zeros((0, 2))
    rng = np.random.default_rng(seed)
    E = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    keep = E[:, 0] != E[:, 1]
    E = E[keep]
    raw = np.ones(len(E)) if weights is None else np.asarray(weights, dtype=np.float64).reshape(-1)[keep]
    w = prepare_weights(raw, s)
    degree = np.bincount(E.ravel(), minlength=n).astype(np.float64)
    mass = degree + 1.0
    P = _start_positions(n, E, raw, mass, s, initial, start, rng)
    size = np.ones(n) if sizes is None else np.asarray(sizes, dtype=np.float64)
    coef = float(mass.mean()) if s.dissuade_hubs else 1.0
    speed = _Speed()
    old = np.zeros((n, 2))
    for it in range(iterations):
        check(cancel)
        adjust = s.prevent_overlap and it >= int(s.overlap_from * iterations)
        F = np.zeros((n, 2))
        if n > 1:
            if s.barnes_hut and n > 64:
                _repulsion_tree(P, mass, size, s.scaling_ratio, adjust, s.barnes_hut_theta, F)
            else:
                _repulsion_exact(P, mass, size, s.scaling_ratio, adjust, F)
        _add_gravity(F, P, mass, s)
        if len(E):
            _add_attraction(F, P, E, w, mass, size, coef, adjust, s)
        P += F * speed.step(F, old, mass, adjust, s)[:, None]
        old = F
        if it % 5 == 0 or it == iterations - 1:
            progress(Progress(it + 1, iterations, "ForceAtlas2 layout"))
    return P


def _start_positions(n: int, E: np.ndarray, raw: np.ndarray, mass: np.ndarray, s: ForceAtlas2Settings,
                     initial: Optional[np.ndarray], start: str, rng: np.random.Generator) -> np.ndarray:
    if initial is not None:
        return np.array(initial, dtype=np.float64, copy=True)
    if start == "spectral":
        # Scale of the equilibrium: gravity k_g·m balances repulsion k_r·m·Σm/r at r ≈ k_r·Σm/k_g.
        scale = s.scaling_ratio * float(mass.sum()) / max(s.gravity, 1e-9) / 8.0
        P = spectral_start(n, E, raw, scale, rng)  # structure from the raw (similarity) weights
        if P is not None:  # None: no structure to start from (too few nodes or edges)
            return P
    return (rng.random((n, 2)) - 0.5) * 10.0 * math.sqrt(n)


def _add_gravity(F: np.ndarray, P: np.ndarray, mass: np.ndarray, s: ForceAtlas2Settings) -> None:
    """Gravity towards the origin: k_g·m (strong: k_g·m·distance)."""
    dist = np.linalg.norm(P, axis=1)
    if s.strong_gravity:
        F -= s.gravity * mass[:, None] * P
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            F -= np.where(dist[:, None] > 0, s.gravity * mass[:, None] * P / dist[:, None], 0.0)


def _add_attraction(F: np.ndarray, P: np.ndarray, E: np.ndarray, w: np.ndarray, mass: np.ndarray, size: np.ndarray,
                    coef: float, adjust: bool, s: ForceAtlas2Settings) -> None:
    """Edge attraction (linear, or log with linlog; divided by the source's mass with dissuade_hubs)."""
    n = len(P)
    u, v = E[:, 0], E[:, 1]
    dxy = P[u] - P[v]
    d = np.linalg.norm(dxy, axis=1)
    de = d - size[u] - size[v] if adjust else d
    with np.errstate(divide="ignore", invalid="ignore"):
        if s.linlog:
            f = np.where(de > 0, -coef * w * np.log1p(np.maximum(de, 0)) / de, 0.0)
        else:
            f = np.where(de > 0, -coef * w, 0.0)
    if s.dissuade_hubs:
        f = f / mass[u]
    fx, fy = f * dxy[:, 0], f * dxy[:, 1]
    F[:, 0] += np.bincount(u, weights=fx, minlength=n) - np.bincount(v, weights=fx, minlength=n)
    F[:, 1] += np.bincount(u, weights=fy, minlength=n) - np.bincount(v, weights=fy, minlength=n)


class _Speed:
    """Adaptive speed (Gephi): a global speed from swinging vs. traction, then one factor per node."""

    def __init__(self) -> None:
        self.speed, self.efficiency = 1.0, 1.0

    def step(self, F: np.ndarray, old: np.ndarray, mass: np.ndarray, adjust: bool,
             s: ForceAtlas2Settings) -> np.ndarray:
        """Each node's displacement factor for forces ``F`` (``old``: the previous step's)."""
        n = len(F)
        swing_n = mass * np.linalg.norm(old - F, axis=1)
        swinging = float(swing_n.sum())
        traction = float((0.5 * mass * np.linalg.norm(old + F, axis=1)).sum())
        est = 0.05 * math.sqrt(n)
        jt = s.jitter_tolerance * max(math.sqrt(est), min(10.0, est * traction / (n * n)))
        if traction > 0 and swinging / traction > 2.0:
            if self.efficiency > 0.05:
                self.efficiency *= 0.5
            jt = max(jt, s.jitter_tolerance)
        target = jt * self.efficiency * traction / swinging if swinging > 0 else self.speed * 1.5
        if swinging > jt * traction:
            if self.efficiency > 0.05:
                self.efficiency *= 0.7
        elif self.speed < 1000:
            self.efficiency *= 1.3
        speed = self.speed = self.speed + min(target - self.speed, 0.5 * self.speed)
        if not adjust:
            return speed / (1.0 + np.sqrt(speed * swing_n))
        factor = 0.1 * speed / (1.0 + np.sqrt(speed * swing_n))
        df = np.linalg.norm(F, axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(df > 0, np.minimum(factor * df, 10.0) / df, 0.0)


def layout_graph(G: Any, settings: ForceAtlas2Settings = PAPER_TABLE1, *, iterations: int = ITERATIONS, seed: int = 42,
                 weight: Optional[str] = "weight", progress: ProgressCallback = no_progress,
                 cancel: Optional[CancelToken] = None) -> dict[Any, tuple[float, float]]:
    """ForceAtlas2 positions for a networkx graph, node → (x, y). Safe to call from a worker."""
    nodes = list(G.nodes)
    index = {node: i for i, node in enumerate(nodes)}
    edges = np.array([(index[a], index[b]) for a, b in G.edges()], dtype=np.int64).reshape(-1, 2)
    weights = np.array([float(d.get(weight, 1.0)) if weight else 1.0 for _, _, d in G.edges(data=True)])
    P = forceatlas2(len(nodes), edges, weights, settings, iterations=iterations, seed=seed,
                    progress=progress, cancel=cancel)
    return {node: (float(P[i, 0]), float(P[i, 1])) for node, i in index.items()}

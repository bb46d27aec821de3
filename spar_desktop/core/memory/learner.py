"""The ERM algorithm on plain arrays (paper 001 §4.2–4.3), shared by the app and evaluation.

- attribution (eq. 5): Δ_ij = cos(q, k_i + step·f(e_j)) − cos(q, k_i). Keys and units are unit
  vectors and the augmented key is re-normalised, as the collection stores it; with a raw inner
  product Δ would be q·f(e_j) for every key and could not tell keys apart.
- softmax over one query's units (eq. 6) and accumulation s_ij += w_ij·Δ_ij for Δ > 0 (eq. 7)
  into a memory of at most ``capacity`` units per chunk.
- batches with the patience rule (eq. 9–10): a round of evolution closes when P batches in a
  row fail to beat (1 − ρ) × the best batch gain, or after ``max_batches_per_round`` batches.
- evolved key (eq. 8) from the ORIGINAL key and the top-x units, k* = norm(k0 + step·Σ f(e)):
  re-applying is idempotent and dropping the memory restores k0 exactly (Theorem 4.3's limit).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Hashable, Iterable, Mapping, Optional, Sequence

import numpy as np

from spar_desktop.core.memory.config import ERMConfig
from spar_desktop.core.memory.units import ExpansionUnit

Ref = Hashable  # what a chunk memory is keyed by: a chunk key, or (hash, chunker, chunk id)


def attribution(query: np.ndarray, keys: np.ndarray, units: np.ndarray, step: float) -> np.ndarray:
    """Δ (n_keys × n_units), in closed form (no n×m×d tensor): for unit-length k, u, q,
    cos(q, k + s·u) = (q·k + s·q·u) / sqrt(1 + s²·|u|² + 2s·k·u)."""
    keys = np.atleast_2d(keys).astype(np.float32)
    units = np.atleast_2d(units).astype(np.float32)
    qk = keys @ query
    qu = units @ query
    ku = keys @ units.T
    norm = np.sqrt(np.maximum(1.0 + step * step * np.sum(units * units, axis=1)[None, :] + 2.0 * step * ku, 1e-12))
    return (qk[:, None] + step * qu[None, :]) / norm - qk[:, None]


def softmax_rows(x: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    z = x / temperature
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def unit_vector(v: np.ndarray) -> np.ndarray:
    n = float(np.linalg.norm(v))
    return (v / n).astype(np.float32) if n > 0 else v.astype(np.float32)


@dataclass
class MemoryEntry:
    text: str
    kind: str
    vector: np.ndarray
    score: float  # s_ij, accumulated
    hits: int = 0  # queries that credited it


@dataclass
class ChunkMemory:
    entries: dict[str, MemoryEntry] = field(default_factory=dict)  # by lower-cased text

    def credit(self, unit: ExpansionUnit, vector: np.ndarray, gain: float, capacity: int) -> None:
        e = self.entries.get(unit.text.lower())
        if e is None:
            self.entries[unit.text.lower()] = MemoryEntry(unit.text, unit.kind, vector, gain, 1)
        else:
            e.score += gain
            e.hits += 1
        if len(self.entries) > capacity:  # bounded memory: drop the lowest-scoring units
            keep = sorted(self.entries.items(), key=lambda kv: (-kv[1].score, kv[0]))[:capacity]
            self.entries = dict(keep)

    def top(self, x: int) -> list[MemoryEntry]:
        return sorted(self.entries.values(), key=lambda e: (-e.score, e.text.lower()))[:x]


@dataclass
class BatchProgress:
    """Where the batching and saturation rule stand (persisted per workspace in the app)."""

    pending: int = 0  # successful queries in the open batch
    batch_gain: float = 0.0  # Δ^B so far (eq. 9)
    best_gain: float = 0.0  # best Δ^B in this round
    stale: int = 0  # consecutive batches at or below (1 − ρ) × best
    batches: int = 0  # closed batches in this round
    rounds: int = 0  # evolutions applied


@dataclass(frozen=True)
class EvolvedKey:
    vector: np.ndarray
    text: str  # appended to the BM25 key
    units: tuple[str, ...]


class ERMLearner:
    def __init__(self, config: ERMConfig = ERMConfig(), memory: Optional[dict[Ref, ChunkMemory]] = None,
                 progress: Optional[BatchProgress] = None) -> None:
        self.config = config
        self.memory: dict[Ref, ChunkMemory] = memory if memory is not None else {}
        self.progress = progress or BatchProgress()
        self.touched: set[Ref] = set()  # memories changed since the caller last saved

    def observe(self, query: np.ndarray, units: Sequence[ExpansionUnit], unit_vectors: np.ndarray,
                targets: Sequence[tuple[Ref, np.ndarray]]) -> float:
        """One successful (gated) query: attribute its units to the target chunks' current keys
        and accumulate. Returns this query's best Δ (0 when no unit helped any key)."""
        if not units or not targets:
            return 0.0
        keys = np.vstack([k for _, k in targets])
        delta = attribution(query, keys, unit_vectors, self.config.step)
        weights = softmax_rows(delta, self.config.temperature)
        for i, (ref, _) in enumerate(targets):
            for j, unit in enumerate(units):
                if delta[i, j] > 0:
                    mem = self.memory.setdefault(ref, ChunkMemory())
                    mem.credit(unit, unit_vectors[j], float(weights[i, j] * delta[i, j]), self.config.capacity)
                    self.touched.add(ref)
        best = float(max(delta.max(), 0.0))
        self.progress.batch_gain = max(self.progress.batch_gain, best)
        return best

    def end_query(self) -> bool:
        """Count a successful query into the batch; True when a round closes (evolve now)."""
        p, c = self.progress, self.config
        p.pending += 1
        if p.pending < c.batch_size:
            return False
        gain, p.pending, p.batch_gain = p.batch_gain, 0, 0.0
        p.batches += 1
        if p.best_gain > 0 and gain <= (1.0 - c.margin) * p.best_gain:
            p.stale += 1
        else:
            p.stale = 0
        p.best_gain = max(p.best_gain, gain)
        if p.stale >= c.patience or p.batches >= c.max_batches_per_round:
            self.close_round()
            return True
        return False

    def close_round(self) -> None:
        p = self.progress
        p.rounds += 1
        p.batches = p.stale = p.pending = 0
        p.best_gain = p.batch_gain = 0.0

    def evolved_key(self, ref: Ref, original: np.ndarray) -> Optional[EvolvedKey]:
        mem = self.memory.get(ref)
        if mem is None or not mem.entries:
            return None
        top = mem.top(self.config.top_x)
        vec = unit_vector(original.astype(np.float32) + self.config.step * np.sum([e.vector for e in top], axis=0))
        text = " ".join(e.text for e in top[: self.config.bm25_units])
        return EvolvedKey(vec, text, tuple(e.text for e in top))

    def evolved_keys(self, originals: Mapping[Ref, np.ndarray]) -> dict[Ref, EvolvedKey]:
        out = {}
        for ref, vec in originals.items():
            key = self.evolved_key(ref, vec)
            if key is not None:
                out[ref] = key
        return out

    def refs(self) -> Iterable[Ref]:
        return (r for r, m in self.memory.items() if m.entries)

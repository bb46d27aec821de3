"""Co-occurrence sequences: which documents a user needs *together* (co-occurrence paper §4.1).

Three sources, all as lists of document rows:
1. real co-access: files opened or retrieved within one session of the query log (or, in
   evaluation, the documents judged relevant to one query) — the best signal, upsampled ×10;
2. embedding-neighbour random walks: 3–5 steps over each document's nearest neighbours with a
   40% chance per step of jumping to a random document, so sequences cross neighbourhoods instead
   of only restating the embedding;
3. question-driven neighbours: a question drawn from a document, then the documents retrieved for
   it — a simulated browsing path that starts from a real need.
Every sequence is augmented ×3: itself, reversed, and one contiguous sub-sequence of length 2–4.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

import numpy as np

from spar_desktop.core.progress import CancelToken, Progress, ProgressCallback, check, no_progress
from spar_desktop.core.relations.topk import top_k_rows


@dataclass(frozen=True)
class SequenceParams:
    walk_min_steps: int = 3
    walk_max_steps: int = 5
    jump_probability: float = 0.40
    walks_per_doc: int = 1  # every document starts a walk, so every document gets an embedding
    walk_neighbors: int = 10  # a walk step moves to one of the current document's 10 nearest
    question_neighbors: int = 3  # documents retrieved after a question's source document
    real_upsample: int = 10  # real co-access outweighs synthetic walks (the paper upsamples ×10)
    # Each upsampled copy of a real group in a fresh seeded order, so that in a group of more than
    # 5 documents every member shares a window-2 context with the others (a fixed order only pairs
    # neighbours). Off, as in the paper: on SciFact and NFCorpus it did not change session coverage
    # (benchmarks/results/relations_sessions.md, config "shuffled_groups").
    shuffle_real: bool = False
    seed: int = 42


def nearest_neighbors(vectors: np.ndarray, m: int, block: int = 2048,
                      cancel: Optional[CancelToken] = None) -> np.ndarray:
    """(n, m) rows of each document's m most similar other documents, most similar first."""
    V = np.ascontiguousarray(vectors, dtype=np.float32)
    n = V.shape[0]
    m = min(m, max(n - 1, 0))
    out = np.zeros((n, m), dtype=np.int64)
    if m == 0:
        return out
    for start in range(0, n, block):
        check(cancel)
        S = V[start:start + block] @ V.T
        S[np.arange(S.shape[0]), np.arange(start, start + S.shape[0])] = -np.inf
        out[start:start + S.shape[0]] = top_k_rows(S, m)[0]
    return out


def embedding_walks(neighbors: np.ndarray, params: SequenceParams = SequenceParams(),
                    rng: Optional[np.random.Generator] = None) -> list[list[int]]:
    n = neighbors.shape[0]
    rng = rng or np.random.default_rng(params.seed)
    if n == 0 or params.walks_per_doc <= 0:
        return []
    m = neighbors.shape[1]
    walks = []
    starts = np.concatenate([rng.permutation(n) for _ in range(params.walks_per_doc)])
    for s in starts.tolist():
        steps = int(rng.integers(params.walk_min_steps, params.walk_max_steps + 1))
        seq, cur = [s], s
        for _ in range(steps):
            if m == 0 or rng.random() < params.jump_probability:
                cur = int(rng.integers(n))
            else:
                cur = int(neighbors[cur, rng.integers(m)])
            seq.append(cur)
        walks.append(seq)
    return walks


def question_sequences(sources: Sequence[int], retrieved: np.ndarray, m: int = 3) -> list[list[int]]:
    """[source, first m other retrieved documents] per question; ``retrieved`` rows are the
    documents retrieved for each question, best first."""
    out = []
    for src, row in zip(sources, retrieved):
        seq = [int(src)] + [int(d) for d in row if int(d) != int(src)][:m]
        if len(seq) >= 2:
            out.append(seq)
    return out


def augment(sequences: Iterable[Sequence[int]], rng: np.random.Generator) -> list[list[int]]:
    """×3: original, reversed, one random contiguous sub-sequence of length 2–4."""
    out = []
    for seq in sequences:
        seq = list(seq)
        out.append(seq)
        out.append(seq[::-1])
        if len(seq) >= 2:
            length = int(rng.integers(2, min(4, len(seq)) + 1))
            start = int(rng.integers(0, len(seq) - length + 1))
            out.append(seq[start:start + length])
    return out


def real_sequences(n_docs: int, real: Sequence[Sequence[int]], params: SequenceParams,
                   rng: np.random.Generator) -> list[list[int]]:
    """Each real co-access group ``real_upsample`` times (the first copy in its own order, the
    others shuffled when ``shuffle_real``); rows outside 0..n_docs-1 are dropped."""
    out: list[list[int]] = []
    for seq in real:
        seq = [int(d) for d in seq if 0 <= int(d) < n_docs]
        if len(seq) < 2:
            continue
        for copy in range(params.real_upsample):
            shuffle = params.shuffle_real and copy > 0 and len(seq) > 2
            out.append([seq[i] for i in rng.permutation(len(seq))] if shuffle else seq)
    return out


def build_sequences(n_docs: int, *, real: Sequence[Sequence[int]] = (), neighbors: Optional[np.ndarray] = None,
                    questions: Sequence[Sequence[int]] = (), params: SequenceParams = SequenceParams(),
                    progress: ProgressCallback = no_progress, cancel: Optional[CancelToken] = None) -> list[list[int]]:
    """All sources together, augmented, in a seeded order. ``questions`` are ready-made
    question-driven sequences (see question_sequences)."""
    rng = np.random.default_rng(params.seed)
    progress(Progress(0, 3, "co-occurrence sequences"))
    base = real_sequences(n_docs, real, params, rng)
    check(cancel)
    if neighbors is not None:
        base.extend(embedding_walks(neighbors, params, rng))
    progress(Progress(1, 3, "co-occurrence sequences"))
    base.extend([list(map(int, q)) for q in questions if len(q) >= 2])
    check(cancel)
    out = augment(base, rng)
    progress(Progress(3, 3, f"{len(out)} co-occurrence sequences"))
    return out

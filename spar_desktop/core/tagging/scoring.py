"""How well each tag fits each file: pure numpy over summary vectors, no database.

Two signals (SPAR §3.2's automatic assignment, embedding flavour):
- tag text: cosine of the file's summary to the tag's text, mapped linearly from
  [text_floor, text_ceiling] to [0, 1] (MiniLM cosines of related short texts sit around 0.2-0.6);
- neighbours: the k most similar files that carry confirmed tags vote for those tags, each vote
  weighted by its similarity; the score is the weighted share of the neighbourhood that carries
  the tag, so 1.0 means every near neighbour has it.
The combined score is the stronger of the two, tag text discounted (``max(w_text * text, w_neighbours *
neighbours)``): a unanimous neighbourhood outranks any text match, and a close text match still
surfaces a descriptor no neighbour carries. On PubMedQA/MeSH this beat a weighted mean both on all
descriptors and on topical ones (see benchmarks/results/tag_suggestions.json). Tags of a kind
nobody has assigned yet are scored by their text alone. An LLM's choice (see llm.py) adds a third term.
The defaults were tuned on development data (benchmarks/tag_suggestions.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse


@dataclass(frozen=True)
class SuggestConfig:
    top_k: int = 5  # suggestions kept per file
    min_score: float = 0.35  # below this a suggestion is not worth a reviewer's time
    neighbours: int = 10
    w_text: float = 0.5  # tag text counts at most half as much as a unanimous neighbourhood
    w_neighbours: float = 1.0
    w_llm: float = 0.5
    text_floor: float = 0.15
    text_ceiling: float = 0.65
    llm_candidates: int = 12  # best-scored tags offered to the LLM per file

    def key(self) -> str:
        return (f"k{self.top_k}m{self.min_score:g}n{self.neighbours}t{self.w_text:g}nb{self.w_neighbours:g}"
                f"l{self.w_llm:g}f{self.text_floor:g}c{self.text_ceiling:g}")


@dataclass(frozen=True)
class Seeds:
    """Files whose confirmed tags vote: ids [m], unit vectors [m, d], tags as a 0/1 CSR [m, n_tags]."""

    ids: np.ndarray
    vectors: np.ndarray
    tags: sparse.csr_matrix

    @classmethod
    def build(cls, ids: np.ndarray, vectors: np.ndarray, tags_of: dict[int, list[int]], n_tags: int) -> "Seeds":
        """``tags_of``: file id -> vocabulary columns; files without any are left out."""
        keep = [i for i, fid in enumerate(ids) if tags_of.get(int(fid))]
        rows, cols = [], []
        for r, i in enumerate(keep):
            for c in set(tags_of[int(ids[i])]):
                rows.append(r)
                cols.append(c)
        mat = sparse.csr_matrix((np.ones(len(rows), dtype=np.float32), (rows, cols)), shape=(len(keep), n_tags))
        vecs = vectors[keep] if len(keep) else np.zeros((0, vectors.shape[1] if vectors.ndim == 2 else 0), np.float32)
        return cls(np.asarray(ids, dtype=np.int64)[keep], vecs, mat)


def text_scores(file_vecs: np.ndarray, tag_vecs: np.ndarray, cfg: SuggestConfig) -> np.ndarray:
    if not len(tag_vecs):
        return np.zeros((len(file_vecs), 0), dtype=np.float32)
    cos = file_vecs @ tag_vecs.T
    span = max(cfg.text_ceiling - cfg.text_floor, 1e-6)
    return np.clip((cos - cfg.text_floor) / span, 0.0, 1.0).astype(np.float32)


def neighbour_scores(file_ids: np.ndarray, file_vecs: np.ndarray, seeds: Seeds, n_tags: int,
                     cfg: SuggestConfig) -> np.ndarray:
    """[len(files), n_tags]: similarity-weighted share of each file's k nearest seeds with a tag.
    A file never votes for itself (its own id is excluded from its neighbours)."""
    b = len(file_ids)
    if not len(seeds.ids) or cfg.neighbours <= 0 or b == 0:
        return np.zeros((b, n_tags), dtype=np.float32)
    sims = file_vecs @ seeds.vectors.T  # [b, m]
    self_hit = file_ids[:, None] == seeds.ids[None, :]
    sims = np.where(self_hit, -np.inf, sims)
    k = min(cfg.neighbours, sims.shape[1] - (1 if self_hit.any() else 0))
    if k <= 0:
        return np.zeros((b, n_tags), dtype=np.float32)
    top = np.argpartition(-sims, k - 1, axis=1)[:, :k]
    weights = np.take_along_axis(sims, top, axis=1)
    weights = np.where(np.isfinite(weights), np.maximum(weights, 0.0), 0.0).astype(np.float32)
    totals = weights.sum(axis=1, keepdims=True)
    weights = np.divide(weights, totals, out=np.zeros_like(weights), where=totals > 0)
    w = sparse.csr_matrix((weights.ravel(), (np.repeat(np.arange(b), k), top.ravel())), shape=(b, len(seeds.ids)))
    return np.asarray((w @ seeds.tags).todense(), dtype=np.float32)


def combined_scores(text: np.ndarray, neigh: np.ndarray, cfg: SuggestConfig, voted: np.ndarray) -> np.ndarray:
    """The stronger signal per (file, tag). ``voted`` [n_tags] marks the tags whose kind (source)
    some seed file carries: for the others the neighbours cannot say anything yet, so their score
    is the tag text alone, undiscounted (a taxonomy nobody has assigned is suggested from its
    text on the same 0-1 scale, while folder tags are voted for)."""
    both = np.maximum(cfg.w_text * text, cfg.w_neighbours * neigh)
    return np.where(voted[None, :], both, text).astype(np.float32)


def voted_kinds(seeds: Seeds, sources: tuple[str, ...]) -> np.ndarray:
    """[n_tags] bool: tags of a source (folder, taxonomy, user...) some seed file carries a tag of.
    Per kind, not per tag: once people assign taxonomy terms, a term none of the neighbours
    carries is evidence against it, not a blank to fill from its text."""
    carried = np.asarray(seeds.tags.sum(axis=0)).ravel() > 0
    kinds = {sources[c] for c in np.flatnonzero(carried)}
    return np.asarray([src in kinds for src in sources], dtype=bool)

"""One entry per document for relation discovery: id, title, text and a document vector.

Document vector = L2-normalised mean of the document's chunk vectors (the searchable child or
flat chunks from the embedding cache). Why the mean and not the best chunk:
- a relation is between whole documents; the centroid summarises everything a document is about,
  while the best chunk is only defined relative to a query and would change with every x;
- the conditional query [z_i; x] needs *one* vector for z_i; with best-chunk scoring we would have
  to pick a chunk of z_i per query, and the choice would dominate p2;
- one row per document makes both EDR-MQ stages plain matrix products over an (n_docs × dim)
  matrix (5k documents: ~8 MB), where chunk-level max-sim would multiply the work by the average
  number of chunks (3–4 on SciFact) and break the 0.5 s budget for 1,000 queries.
Short documents (one chunk) get exactly their chunk vector, so nothing is lost for them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

import numpy as np


@dataclass(frozen=True)
class DocSet:
    """Immutable, row-aligned document data. ``ids`` are strings: str(file id) for the library,
    the corpus id for BEIR collections. ``vectors`` is None when only text methods are wanted."""

    ids: tuple[str, ...]
    titles: tuple[str, ...]
    texts: tuple[str, ...]
    vectors: Optional[np.ndarray] = None  # (n, dim) float32, rows L2-normalised
    meta: tuple[Mapping[str, Any], ...] = field(default_factory=tuple)  # per row: path, folder, tags...
    model_id: Optional[str] = None

    def __post_init__(self) -> None:
        n = len(self.ids)
        if len(self.titles) != n or len(self.texts) != n:
            raise ValueError("ids, titles and texts must be aligned")
        if self.vectors is not None and self.vectors.shape[0] != n:
            raise ValueError("one vector per document is required")
        if self.meta and len(self.meta) != n:
            raise ValueError("meta must be empty or one mapping per document")

    def __len__(self) -> int:
        return len(self.ids)

    def index(self) -> dict[str, int]:
        return {d: i for i, d in enumerate(self.ids)}


def normalize_rows(m: np.ndarray) -> np.ndarray:
    """Unit rows (a zero row stays zero instead of becoming NaN)."""
    m = np.asarray(m, dtype=np.float32)
    norms = np.linalg.norm(m, axis=-1, keepdims=True)
    return m / np.where(norms > 0, norms, 1.0)


def document_vector(chunk_vectors: np.ndarray) -> np.ndarray:
    """Normalised mean of (normalised) chunk vectors; zeros for a document without chunks."""
    if chunk_vectors.size == 0:
        return np.zeros(chunk_vectors.shape[-1] if chunk_vectors.ndim == 2 else 0, dtype=np.float32)
    return normalize_rows(chunk_vectors.mean(axis=0, keepdims=True))[0]


def cached_text(doc: Any) -> str:
    """A cached document's text rebuilt from its chunks: parents (or flat chunks) cover the text
    without the overlap children have; children alone are the fallback."""
    whole = [c.text for c in doc.chunks if c.level in ("parent", "flat")]
    if not whole:
        whole = [c.text for c in doc.chunks]
    return "\n".join(whole)


def from_cached(docs: Mapping[str, Any], titles: Optional[Mapping[str, str]] = None,
                meta: Optional[Mapping[str, Mapping[str, Any]]] = None, with_vectors: bool = True) -> DocSet:
    """DocSet from ``doc id → CachedDocument`` (the embedding cache's rows). Documents without a
    searchable chunk are skipped: they have nothing to relate by."""
    ids, tt, texts, vecs, metas = [], [], [], [], []
    model_id = None
    for doc_id, doc in docs.items():
        if with_vectors and (doc.vectors is None or doc.vectors.shape[0] == 0 or doc.vectors.shape[1] == 0):
            continue
        ids.append(str(doc_id))
        title = (titles or {}).get(doc_id) or doc.title or ""
        text = cached_text(doc)
        tt.append(title or _first_line(text))
        texts.append(text)
        if with_vectors:
            vecs.append(document_vector(doc.vectors))
            model_id = doc.model_id
        metas.append(dict((meta or {}).get(doc_id, {})))
    vectors = np.vstack(vecs).astype(np.float32) if with_vectors and vecs else None
    return DocSet(tuple(ids), tuple(tt), tuple(texts), vectors, tuple(metas), model_id)


def _first_line(text: str, limit: int = 80) -> str:
    for line in text.splitlines():
        line = line.strip()
        if line:
            return line[:limit]
    return ""


def subset(docs: DocSet, rows: Sequence[int]) -> DocSet:
    rows = list(rows)
    return DocSet(tuple(docs.ids[i] for i in rows), tuple(docs.titles[i] for i in rows),
                  tuple(docs.texts[i] for i in rows),
                  None if docs.vectors is None else docs.vectors[rows],
                  tuple(docs.meta[i] for i in rows) if docs.meta else (), docs.model_id)

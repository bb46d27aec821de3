"""What a HybridSearcher returns (chunk and file hits, results) and the evolved keys it takes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional, Protocol

import numpy as np


@dataclass(frozen=True, eq=False)
class KeyOverride:
    """An evolved retrieval key for one chunk (ERM, core/memory): a replacement dense vector
    (unit length; None keeps the original) and text appended to the chunk's BM25 key. ``tag``
    names the evolution that produced it; Chroma records it per vector so a later build can
    tell an evolved vector from an original one and reconcile the collection."""

    vector: Optional[np.ndarray]
    extra_text: str = ""
    tag: str = "erm"


class AlphaPredictor(Protocol):
    def predict(self, query: str, dense: Mapping[int, float], bm25: Mapping[int, float]) -> float:
        """A dense weight in [0, 1] for this query, from its text and raw candidate scores."""
        ...


@dataclass(frozen=True)
class ChunkHit:
    rank: int
    key: str  # '<doc_id>#<chunk_id>', unique within the searcher
    doc_id: str
    file_id: Optional[int]
    chunk_id: str
    text: str
    page_start: int
    page_end: int
    parent_id: Optional[str]
    parent_text: Optional[str]  # the context to show / give the LLM; None for flat chunks
    score: float  # what the list is ranked by: fused score, raw BM25 or raw cosine
    bm25_score: Optional[float]  # raw; None when BM25 did not propose this chunk
    dense_score: Optional[float]  # raw cosine; None when dense did not propose this chunk
    # Why it ranks here (explain.py): TM2C2 shares of ``score`` (keyword + meaning == score),
    # whether its key evolved (ERM) and the rank its original dense key would have given it.
    keyword_part: Optional[float] = None
    meaning_part: Optional[float] = None
    alpha: Optional[float] = None
    evolved: bool = False
    rank_without_evolution: Optional[int] = None


@dataclass(frozen=True)
class FileHit:
    rank: int
    doc_id: str
    file_id: Optional[int]
    title: Optional[str]
    score: float  # the score of its best chunk
    best_chunk: str  # key of that chunk
    matched_chunks: int  # how many of its chunks were among the fused candidates


@dataclass(frozen=True)
class SearchResults:
    query: str
    method: str
    fusion: str
    alpha: Optional[float]
    hits: tuple[ChunkHit, ...]
    files: tuple[FileHit, ...]
    message: Optional[str] = None  # why the list is empty, for the UI / CLI to show
    keyword_flatness: Optional[float] = None  # BM25's 10th/1st unit score when the weight came from it

    @property
    def empty(self) -> bool:
        return not self.hits

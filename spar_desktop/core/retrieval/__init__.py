"""Retrieval within a workspace: BM25 + dense child-chunk search, TM2C2/RRF fusion, parents as context.

Submodules import bm25s and chromadb lazily, inside the functions that need them.
"""

from spar_desktop.core.retrieval.fusion import DEFAULT_ALPHA, rrf_fuse, tm2c2_fuse, tm2c2_normalize
from spar_desktop.core.retrieval.searcher import ChunkHit, FileHit, HybridSearcher, SearchResults

__all__ = [
    "DEFAULT_ALPHA",
    "ChunkHit",
    "FileHit",
    "HybridSearcher",
    "SearchResults",
    "rrf_fuse",
    "tm2c2_fuse",
    "tm2c2_normalize",
]

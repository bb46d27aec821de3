"""Retrieval within a workspace: BM25 + dense child-chunk search, TM2C2/RRF fusion, parents as context.

Submodules import bm25s and chromadb lazily, inside the functions that need them; the names below
load on first use (PEP 562), so importing one light submodule (the vector store's helpers, the
fusion rules) does not load the searcher, which only a search needs.
"""

from importlib import import_module
from typing import Any

_WHERE = {
    "DEFAULT_ALPHA": "fusion", "rrf_fuse": "fusion", "tm2c2_fuse": "fusion", "tm2c2_normalize": "fusion",
    "ChunkHit": "searcher", "FileHit": "searcher", "HybridSearcher": "searcher", "SearchResults": "searcher",
}
__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{_WHERE[name]}"), name)

"""Embedding: the offline sentence encoder, the shared chunk/vector cache and the build pipeline.

Nothing is imported here until a name is asked for (PEP 562): importing one submodule (the cache,
the encoder) must not load the build pipeline and its chunkers, which a request never uses; torch
and sentence-transformers load only when an Encoder is first created.
"""

from importlib import import_module
from typing import Any

_WHERE = {
    "CachedDocument": "cache", "CacheStats": "cache", "EmbeddingCache": "cache",
    "Encoder": "encoder", "EncoderError": "encoder", "get_encoder": "encoder",
    "content_hash": "pipeline", "embed_documents": "pipeline",
}
__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{_WHERE[name]}"), name)

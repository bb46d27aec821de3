"""Embedding: the offline sentence encoder, the shared chunk/vector cache and the build pipeline.

Nothing heavy is imported here: torch and sentence-transformers load only when an Encoder is
first created, so importing this package (e.g. from the CLI's --help) stays cheap.
"""

from spar_desktop.core.embedding.cache import CachedDocument, CacheStats, EmbeddingCache
from spar_desktop.core.embedding.encoder import Encoder, EncoderError, get_encoder
from spar_desktop.core.embedding.pipeline import content_hash, embed_documents

__all__ = [
    "CachedDocument",
    "CacheStats",
    "EmbeddingCache",
    "Encoder",
    "EncoderError",
    "content_hash",
    "embed_documents",
    "get_encoder",
]

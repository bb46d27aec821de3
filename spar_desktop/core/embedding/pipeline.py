"""Extract → chunk → embed, doing only what the embedding cache lacks.

Documents are loaded lazily (a loader per content hash), so a rebuild over cached content opens no
files at all. Chunks of many documents are embedded together in large, length-sorted batches:
per-document encode calls would leave batches half empty and cost throughput on small files.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Callable, Iterable, Optional, Protocol, Sequence

import numpy as np

from spar_desktop.core.documents.types import Chunk, ChunkerConfig, ExtractedDocument
from spar_desktop.core.embedding.cache import CachedDocument, EmbeddingCache, is_searchable
from spar_desktop.core.progress import CancelToken, Progress, ProgressCallback, check, no_progress

Loader = Callable[[], ExtractedDocument]
ChunkFn = Callable[..., list[Chunk]]
ErrorHandler = Callable[[str, Exception], None]


class EncoderLike(Protocol):
    @property
    def model_id(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def encode(self, texts: Sequence[str], batch_size: int = 64, progress: ProgressCallback = no_progress,
               cancel: Optional[CancelToken] = None) -> np.ndarray: ...


def content_hash(text: str) -> str:
    """Hash for content that is not a file (BEIR records, pasted text): sha256 of its UTF-8."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def default_chunk_fn() -> ChunkFn:
    # Imported late: the chunking module belongs to the documents part and may pull in
    # optional dependencies the cache-only paths never need.
    from spar_desktop.core.documents.chunking import chunk_document

    return chunk_document


def chunk_with(chunk_fn: ChunkFn, doc: ExtractedDocument, config: ChunkerConfig,
               encoder: Optional[EncoderLike]) -> list[Chunk]:
    """Semantic chunking needs sentence vectors; every other method is pure text."""
    if config.method == "semantic" and encoder is not None:
        return list(chunk_fn(doc, config, embed_fn=lambda texts: encoder.encode(list(texts))))
    return list(chunk_fn(doc, config))


@dataclass
class _Pending:
    """Documents chunked but not yet embedded; flushed once enough chunk texts pile up."""

    docs: list[tuple[str, ExtractedDocument, list[Chunk]]] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)


def embed_documents(
    items: Iterable[tuple[str, Loader]],
    config: ChunkerConfig,
    encoder: EncoderLike,
    cache: EmbeddingCache,
    progress: ProgressCallback = no_progress,
    cancel: Optional[CancelToken] = None,
    *,
    chunk_fn: Optional[ChunkFn] = None,
    on_error: Optional[ErrorHandler] = None,
    batch_size: int = 64,
    flush_texts: int = 1024,
) -> dict[str, CachedDocument]:
    """Return a CachedDocument per content hash, embedding only cache misses.

    ``items`` are (content hash, loader) pairs; duplicates are processed once. A loader or chunker
    failure is passed to ``on_error(hash, exc)`` and the document skipped; without a handler it
    propagates. Finished batches are committed to the cache as they complete, so a cancelled
    build keeps its work and the next build resumes where it stopped.
    """
    chunk_fn = chunk_fn or default_chunk_fn()
    key, model_id = config.cache_key, encoder.model_id
    total = len(items) if hasattr(items, "__len__") else None  # type: ignore[arg-type]
    results: dict[str, CachedDocument] = {}
    pending = _Pending()
    seen: set[str] = set()
    done = embedded = 0

    def report(message: str) -> None:
        progress(Progress(done, total, message))

    def flush() -> None:
        nonlocal embedded
        if not pending.docs:
            return
        n_texts = len(pending.texts)

        def batch_progress(p: Progress) -> None:
            # One unit for the numbers and the words: documents done/total (what Progress
            # carries); the running chunk count never restarts at a flush.
            of = f"/{total:,}" if total is not None else ""
            report(f"embedding {embedded + p.done:,} chunks ({done:,}{of} documents)")

        vectors = encoder.encode(pending.texts, batch_size=batch_size, progress=batch_progress, cancel=cancel)
        new_docs, row = [], 0
        for h, doc, chunks in pending.docs:
            n = sum(1 for c in chunks if is_searchable(c))
            new_docs.append(
                CachedDocument(h, key, model_id, tuple(chunks), vectors[row : row + n], title=doc.title,
                               no_text_reason=doc.no_text_reason, warnings=tuple(doc.warnings))
            )
            row += n
        cache.put_many(new_docs)
        results.update((d.content_hash, d) for d in new_docs)
        embedded += n_texts
        pending.docs.clear()
        pending.texts.clear()

    for h, loader in items:
        check(cancel)
        if h in seen:
            continue
        seen.add(h)
        cached = cache.get(h, key, model_id)
        if cached is not None:
            results[h] = cached
            done += 1
            if done % 200 == 0:
                report("reusing cached vectors")
            continue
        try:
            doc = loader()
            chunks = chunk_with(chunk_fn, doc, config, encoder) if not doc.no_text_reason else []
        except Exception as exc:  # noqa: BLE001 - one bad file must not sink a whole build
            if on_error is None:
                raise
            on_error(h, exc)
            done += 1
            continue
        pending.docs.append((h, doc, chunks))
        pending.texts.extend(c.embed_text for c in chunks if is_searchable(c))
        done += 1
        if len(pending.texts) >= flush_texts:
            flush()
        elif done % 50 == 0:
            report(f"chunked {done} documents")
    flush()
    report(f"done: {embedded} chunks embedded, {len(results)} documents ready")
    return results

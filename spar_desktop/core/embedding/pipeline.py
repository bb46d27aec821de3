"""Extract → chunk → embed, doing only what the embedding cache lacks.

Documents are loaded lazily (a loader per content hash), so a rebuild over cached content opens no
files at all. Chunks of many documents are embedded together in large, length-sorted batches:
per-document encode calls would leave batches half empty and cost throughput on small files.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable, Optional, Protocol, Sequence

import numpy as np

from spar_desktop.core.documents.chunking import chunk_document
from spar_desktop.core.documents.types import Chunk, ChunkerConfig, ExtractedDocument
from spar_desktop.core.embedding.cache import CachedDocument, EmbeddingCache, is_searchable, text_key
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
    flush_seconds: float = 10.0,
    commit_texts: int = 256,
) -> dict[str, CachedDocument]:
    """Return a CachedDocument per content hash, embedding only cache misses.

    ``items`` are (content hash, loader) pairs; duplicates are processed once. A loader or chunker
    failure is passed to ``on_error(hash, exc)`` and the document skipped; without a handler it
    propagates.

    Pending chunks are embedded once ``flush_texts`` pile up or ``flush_seconds`` passed since the
    last flush (slow documents: OCR, large PDFs), and a flush commits to the cache every
    ``commit_texts`` texts or so, whole documents at a time. So a cancelled, crashed or killed
    build loses at most a few encode batches and the next build resumes where it stopped.
    """
    chunk_fn = chunk_fn or default_chunk_fn()
    key, model_id = config.cache_key, encoder.model_id
    total = len(items) if hasattr(items, "__len__") else None  # type: ignore[arg-type]
    results: dict[str, CachedDocument] = {}
    pending = _Pending()
    seen: set[str] = set()
    done = embedded = 0
    last_flush = time.monotonic()

    def report(message: str) -> None:
        progress(Progress(done, total, message))

    def flush() -> None:
        nonlocal embedded, last_flush
        docs = list(pending.docs)
        pending.docs.clear()
        pending.texts.clear()
        if not docs:
            return
        # Every chunk text of the flush, longest first: the order the encoder would sort one big
        # call into, so slicing it into commit groups keeps its batches (and their padding) as
        # they were. A document is committed as soon as its last chunk is embedded.
        rows = [(i, r, c.embed_text) for i, (_, _, chunks) in enumerate(docs)
                for r, c in enumerate(c for c in chunks if is_searchable(c))]
        rows.sort(key=lambda x: len(x[2]), reverse=True)
        left = [sum(1 for c in chunks if is_searchable(c)) for _, _, chunks in docs]
        vectors = [np.empty((n, encoder.dim), dtype=np.float32) for n in left]

        def batch_progress(p: Progress) -> None:
            # One unit for the numbers and the words: documents done/total (what Progress
            # carries); the running chunk count never restarts at a flush.
            of = f"/{total:,}" if total is not None else ""
            report(f"embedding {embedded + p.done:,} chunks ({done:,}{of} documents)")

        # Chunk texts some cached document already embedded (the unchanged parts of an edited
        # file, a paragraph shared by two files) are copied, not encoded again.
        lookup = getattr(cache, "vectors_for_texts", None)
        known = lookup([text_key(t) for _, _, t in rows], model_id) if lookup is not None and rows else {}
        if known:
            todo = []
            for i, r, t in rows:
                vec = known.get(text_key(t))
                if vec is not None and vec.shape[0] == vectors[i].shape[1]:
                    vectors[i][r] = vec
                    left[i] -= 1
                else:
                    todo.append((i, r, t))
            rows = todo
        commit([i for i, n in enumerate(left) if n == 0], docs, vectors)  # nothing (left) to embed
        for start in range(0, len(rows), commit_texts):
            part = rows[start : start + commit_texts]
            out = encoder.encode([t for _, _, t in part], batch_size=batch_size, progress=batch_progress,
                                 cancel=cancel)
            finished = []
            for (i, r, _), vec in zip(part, out):
                vectors[i][r] = vec
                left[i] -= 1
                if left[i] == 0:
                    finished.append(i)
            embedded += len(part)
            commit(finished, docs, vectors)
        last_flush = time.monotonic()

    def commit(indices: list[int], docs: list[tuple[str, ExtractedDocument, list[Chunk]]],
               vectors: list[np.ndarray]) -> None:
        new_docs = []
        for i in indices:
            h, doc, chunks = docs[i]
            new_docs.append(CachedDocument(h, key, model_id, tuple(chunks), vectors[i], title=doc.title,
                                           no_text_reason=doc.no_text_reason, warnings=tuple(doc.warnings)))
        cache.put_many(new_docs)  # one short WAL transaction: kept even if the build dies next
        results.update((d.content_hash, d) for d in new_docs)

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
        if len(pending.texts) >= flush_texts or (pending.texts and time.monotonic() - last_flush >= flush_seconds):
            flush()
        elif done % 50 == 0:
            report(f"chunked {done} documents")
    flush()
    report(f"done: {embedded} chunks embedded, {len(results)} documents ready")
    return results


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
    on_documents_ready: Optional[Callable[[dict[str, CachedDocument]], None]] = None,
) -> dict[str, CachedDocument]:
    """Return a CachedDocument per content hash, embedding only cache misses.

    ``items`` are (content hash, loader) pairs; duplicates are processed once. A loader or chunker
    failure is passed to ``on_error(hash, exc)`` and the document skipped; without a handler it
    propagates.

    Pending chunks are embedded once ``flush_texts`` pile up or ``flush_seconds`` passed since the
    last flush (slow documents: OCR, large PDFs), and a flush commits to the cache every
    ``commit_texts`` texts or so, whole documents at a time. So a cancelled, crashed or killed
    build loses at most a few encode batches and the next build resumes where it stopped.
    ``on_documents_ready`` gets each commit's newly embedded documents (a build searchable while
    it embeds: workspaces/live_build.py).
    """
    run = _EmbedRun(config, encoder, cache, progress, cancel, chunk_fn or default_chunk_fn(),
                    total=len(items) if hasattr(items, "__len__") else None,  # type: ignore[arg-type]
                    batch_size=batch_size, commit_texts=commit_texts)
    run.on_ready = on_documents_ready
    seen: set[str] = set()
    for h, loader in items:
        check(cancel)
        if h in seen:
            continue
        seen.add(h)
        if run.reuse_cached(h) or not run.chunk(h, loader, on_error):
            continue
        pending = run.pending.texts
        if len(pending) >= flush_texts or (pending and time.monotonic() - run.last_flush >= flush_seconds):
            run.flush()
        elif run.done % 50 == 0:
            run.report(f"chunked {run.done} documents")
    run.flush()
    run.report(f"done: {run.embedded} chunks embedded, {len(run.results)} documents ready")
    return run.results


class _EmbedRun:
    """One ``embed_documents`` call: the documents pending, the counts its progress shows, the results."""

    def __init__(self, config: ChunkerConfig, encoder: EncoderLike, cache: EmbeddingCache,
                 progress: ProgressCallback, cancel: Optional[CancelToken], chunk_fn: ChunkFn, *,
                 total: Optional[int], batch_size: int, commit_texts: int) -> None:
        self.config, self.encoder, self.cache = config, encoder, cache
        self.progress, self.cancel, self.chunk_fn = progress, cancel, chunk_fn
        self.key, self.model_id = config.cache_key, encoder.model_id
        self.total, self.batch_size, self.commit_texts = total, batch_size, commit_texts
        self.results: dict[str, CachedDocument] = {}
        self.pending = _Pending()
        self.done = self.embedded = 0
        self.last_flush = time.monotonic()
        self.on_ready: Optional[Callable[[dict[str, CachedDocument]], None]] = None

    def report(self, message: str) -> None:
        self.progress(Progress(self.done, self.total, message))

    def reuse_cached(self, h: str) -> bool:
        cached = self.cache.get(h, self.key, self.model_id)
        if cached is None:
            return False
        self.results[h] = cached
        self.done += 1
        if self.done % 200 == 0:
            self.report("reusing cached vectors")
        return True

    def chunk(self, h: str, loader: Loader, on_error: Optional[ErrorHandler]) -> bool:
        """Load and chunk one document into the pending ones; False when it failed (and was reported)."""
        try:
            doc = loader()
            chunks = chunk_with(self.chunk_fn, doc, self.config, self.encoder) if not doc.no_text_reason else []
        except Exception as exc:  # noqa: BLE001 - one bad file must not sink a whole build
            if on_error is None:
                raise
            on_error(h, exc)
            self.done += 1
            return False
        self.pending.docs.append((h, doc, chunks))
        self.pending.texts.extend(c.embed_text for c in chunks if is_searchable(c))
        self.done += 1
        return True


    def flush(self) -> None:
        """Embed the pending documents' chunks (reusing vectors the cache has for the same texts)
        and commit each document as soon as its last chunk is embedded."""
        docs = list(self.pending.docs)
        self.pending.docs.clear()
        self.pending.texts.clear()
        if not docs:
            return
        # Every chunk text of the flush, longest first: the order the encoder would sort one big
        # call into, so slicing it into commit groups keeps its batches (and their padding) as
        # they were.
        rows = [(i, r, c.embed_text) for i, (_, _, chunks) in enumerate(docs)
                for r, c in enumerate(c for c in chunks if is_searchable(c))]
        rows.sort(key=lambda x: len(x[2]), reverse=True)
        left = [sum(1 for c in chunks if is_searchable(c)) for _, _, chunks in docs]
        vectors = [np.empty((n, self.encoder.dim), dtype=np.float32) for n in left]
        rows = self._copy_known(rows, vectors, left)
        self._commit([i for i, n in enumerate(left) if n == 0], docs, vectors)  # nothing (left) to embed
        self._encode(rows, docs, vectors, left)
        self.last_flush = time.monotonic()

    def _copy_known(self, rows: list[tuple[int, int, str]], vectors: list[np.ndarray],
                    left: list[int]) -> list[tuple[int, int, str]]:
        """Chunk texts some cached document already embedded (the unchanged parts of an edited
        file, a paragraph shared by two files) are copied, not encoded again; returns the rest."""
        lookup = getattr(self.cache, "vectors_for_texts", None)
        known = lookup([text_key(t) for _, _, t in rows], self.model_id) if lookup is not None and rows else {}
        if not known:
            return rows
        todo = []
        for i, r, t in rows:
            vec = known.get(text_key(t))
            if vec is not None and vec.shape[0] == vectors[i].shape[1]:
                vectors[i][r] = vec
                left[i] -= 1
            else:
                todo.append((i, r, t))
        return todo

    def _encode(self, rows: list[tuple[int, int, str]], docs: list[tuple[str, ExtractedDocument, list[Chunk]]],
                vectors: list[np.ndarray], left: list[int]) -> None:
        total = self.total

        def batch_progress(p: Progress) -> None:
            # One unit for the numbers and the words: documents done/total (what Progress
            # carries); the running chunk count never restarts at a flush.
            of = f"/{total:,}" if total is not None else ""
            self.report(f"embedding {self.embedded + p.done:,} chunks ({self.done:,}{of} documents)")

        for start in range(0, len(rows), self.commit_texts):
            part = rows[start : start + self.commit_texts]
            out = self.encoder.encode([t for _, _, t in part], batch_size=self.batch_size, progress=batch_progress,
                                      cancel=self.cancel)
            finished = []
            for (i, r, _), vec in zip(part, out):
                vectors[i][r] = vec
                left[i] -= 1
                if left[i] == 0:
                    finished.append(i)
            self.embedded += len(part)
            self._commit(finished, docs, vectors)

    def _commit(self, indices: list[int], docs: list[tuple[str, ExtractedDocument, list[Chunk]]],
                vectors: list[np.ndarray]) -> None:
        new_docs = []
        for i in indices:
            h, doc, chunks = docs[i]
            new_docs.append(CachedDocument(h, self.key, self.model_id, tuple(chunks), vectors[i], title=doc.title,
                                           no_text_reason=doc.no_text_reason, warnings=tuple(doc.warnings)))
        self.cache.put_many(new_docs)  # one short WAL transaction: kept even if the build dies next
        self.results.update((d.content_hash, d) for d in new_docs)
        if self.on_ready is not None and new_docs:
            self.on_ready({d.content_hash: d for d in new_docs})

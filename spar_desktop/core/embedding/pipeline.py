"""Extract → chunk → embed, doing only what the embedding cache lacks.

Documents are loaded lazily (a loader per content hash), so a rebuild over cached content opens no
files at all. Chunks of many documents are embedded together in large, length-sorted batches:
per-document encode calls would leave batches half empty and cost throughput on small files.
"""

from __future__ import annotations

import hashlib
import queue
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Iterable, Optional, Protocol, Sequence

import numpy as np

from spar_desktop.core.documents.chunking import chunk_document
from spar_desktop.core.documents.types import Chunk, ChunkerConfig, ExtractedDocument
from spar_desktop.core.embedding.cache import CachedDocument, EmbeddingCache, is_searchable, text_key
from spar_desktop.core.progress import CancelToken, Cancelled, Progress, ProgressCallback, check, no_progress

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

    Encoding runs on a worker thread (``_EncodeWorker``) while this thread goes on reading and
    chunking the next documents and committing finished ones to the cache: ONNX Runtime releases
    the GIL, so reading, chunking and SQLite writes cost no encoding time. Pending chunks go to the
    encoder once ``flush_texts`` pile up, as soon as it idles with ``commit_texts`` waiting, or
    ``flush_seconds`` after the last flush (slow documents: OCR, large PDFs); finished documents are
    committed every ``commit_texts`` texts or so, whole documents at a time. So a cancelled,
    crashed or killed build loses at most a few encode batches and the next build resumes there.
    ``on_documents_ready`` gets each commit's newly embedded documents, on the calling thread (a
    build searchable while it embeds: workspaces/live_build.py).
    """
    run = _EmbedRun(config, encoder, cache, progress, cancel, chunk_fn or default_chunk_fn(),
                    total=len(items) if hasattr(items, "__len__") else None,  # type: ignore[arg-type]
                    batch_size=batch_size, commit_texts=commit_texts)
    run.on_ready = on_documents_ready
    seen: set[str] = set()
    try:
        for h, loader in items:
            check(cancel)
            run.drain()
            if h in seen:
                continue
            seen.add(h)
            if run.reuse_cached(h) or not run.chunk(h, loader, on_error):
                continue
            if run.flush_due(flush_texts, flush_seconds):
                run.flush()
            elif run.done % 50 == 0:
                run.report(f"chunked {run.done} documents")
        run.flush()
        run.finish()
    finally:
        run.close()
    run.report(f"done: {run.embedded} chunks embedded, {len(run.results)} documents ready")
    return run.results


_Docs = list[tuple[str, ExtractedDocument, list[Chunk]]]
_Row = tuple[int, int, str]  # (document index in its flush, row among its searchable chunks, text)


@dataclass
class _Flush:
    """One flush's documents and the vectors filled in as the worker encodes their chunks."""

    docs: _Docs
    vectors: list[np.ndarray]
    left: list[int]  # rows still to embed, per document


class _Stop:
    """Cancels the worker on the user's token or when the calling thread gave up (an error)."""

    def __init__(self, user: Optional[CancelToken]) -> None:
        self.user, self.abort = user, threading.Event()

    @property
    def cancelled(self) -> bool:
        return self.abort.is_set() or (self.user is not None and self.user.cancelled)

    def raise_if_cancelled(self) -> None:
        if self.cancelled:
            raise Cancelled()


class _EncodeWorker:
    """One thread that encodes flushes in order and hands each encoded commit group back through
    a queue; at most two flushes are outstanding, so reading never runs far ahead of encoding."""

    MAX_OUTSTANDING = 2

    def __init__(self, encode: Callable[[_Flush, list[_Row]], None]) -> None:
        self._encode = encode
        self.done: "queue.Queue[tuple[_Flush, list[_Row], np.ndarray]]" = queue.Queue()
        self._pool: Optional[ThreadPoolExecutor] = None
        self._jobs: list[Future] = []

    def submit(self, flush: _Flush, rows: list[_Row]) -> None:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="spar-encode")
        self._jobs.append(self._pool.submit(self._encode, flush, rows))

    @property
    def idle(self) -> bool:
        return all(j.done() for j in self._jobs)

    @property
    def full(self) -> bool:
        return sum(1 for j in self._jobs if not j.done()) >= self.MAX_OUTSTANDING

    def raise_failed(self) -> None:
        """Re-raise a finished job's error (Cancelled, an encoder failure) in the calling thread."""
        for j in [j for j in self._jobs if j.done()]:
            self._jobs.remove(j)
            j.result()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None


class _EmbedRun:
    """One ``embed_documents`` call: the documents pending, the counts its progress shows, the results.
    Reading, chunking and committing run on the caller's thread, encoding on ``_EncodeWorker``'s."""

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
        self._stop = _Stop(cancel)
        self._worker = _EncodeWorker(self._encode)
        self._report_lock = threading.Lock()  # the worker reports too

    def report(self, message: str, done: Optional[int] = None) -> None:
        with self._report_lock:
            self.progress(Progress(self.done if done is None else done, self.total, message))

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

    def flush_due(self, flush_texts: int, flush_seconds: float) -> bool:
        """Enough texts for a full flush, an idle encoder with a commit group's worth waiting, or
        texts waiting since ``flush_seconds`` (slow documents must not hold the finished ones back)."""
        n = len(self.pending.texts)
        if n >= flush_texts or (n and time.monotonic() - self.last_flush >= flush_seconds):
            return True
        return n >= self.commit_texts and self._worker.idle

    def flush(self) -> None:
        """Hand the pending documents' chunks to the encoder (reusing vectors the cache has for the
        same texts); each document is committed as soon as its last chunk is embedded."""
        docs = list(self.pending.docs)
        self.pending.docs.clear()
        self.pending.texts.clear()
        self.last_flush = time.monotonic()
        if not docs:
            return
        # Every chunk text of the flush, longest first, so batches of neighbours pad little; slicing
        # it into commit groups keeps those batches as one big encode call would have made them.
        rows = [(i, r, c.embed_text) for i, (_, _, chunks) in enumerate(docs)
                for r, c in enumerate(c for c in chunks if is_searchable(c))]
        rows.sort(key=lambda x: len(x[2]), reverse=True)
        left = [sum(1 for c in chunks if is_searchable(c)) for _, _, chunks in docs]
        flush = _Flush(docs, [np.empty((n, self.encoder.dim), dtype=np.float32) for n in left], left)
        rows = self._copy_known(rows, flush)
        self._commit(flush, [i for i, n in enumerate(left) if n == 0])  # nothing (left) to embed
        if rows:
            while self._worker.full:  # back-pressure: wait for the encoder, committing what it finished
                self.drain(block=True)
            self._worker.submit(flush, rows)

    def drain(self, block: bool = False) -> None:
        """Commit the documents the worker finished since the last call; re-raise its errors.
        ``block``: wait for at least one finished commit group (or a job's end) first."""
        if block:
            try:
                self._take(self._worker.done.get(timeout=0.05))
            except queue.Empty:
                pass
        while True:
            try:
                self._take(self._worker.done.get_nowait())
            except queue.Empty:
                break
        self._worker.raise_failed()

    def finish(self) -> None:
        """Wait for the encoder to finish every flush and commit the last documents."""
        while not self._worker.idle:
            self.drain(block=True)
        self.drain()

    def close(self) -> None:
        """Stop the worker (at its next batch when the caller failed) and wait for it."""
        self._stop.abort.set()
        self._worker.close()

    def _take(self, item: tuple[_Flush, list[_Row], np.ndarray]) -> None:
        flush, part, out = item
        finished = []
        for (i, r, _), vec in zip(part, out):
            flush.vectors[i][r] = vec
            flush.left[i] -= 1
            if flush.left[i] == 0:
                finished.append(i)
        self._commit(flush, finished)

    def _copy_known(self, rows: list[_Row], flush: _Flush) -> list[_Row]:
        """Chunk texts some cached document already embedded (the unchanged parts of an edited
        file, a paragraph shared by two files) are copied, not encoded again; returns the rest."""
        lookup = getattr(self.cache, "vectors_for_texts", None)
        known = lookup([text_key(t) for _, _, t in rows], self.model_id) if lookup is not None and rows else {}
        if not known:
            return rows
        todo = []
        for i, r, t in rows:
            vec = known.get(text_key(t))
            if vec is not None and vec.shape[0] == flush.vectors[i].shape[1]:
                flush.vectors[i][r] = vec
                flush.left[i] -= 1
            else:
                todo.append((i, r, t))
        return todo

    def _encode(self, flush: _Flush, rows: list[_Row]) -> None:
        """The worker's job: encode ``rows`` one commit group at a time, queueing each result."""
        total = self.total

        def batch_progress(p: Progress) -> None:
            # One unit for the numbers and the words: documents done/total (what Progress
            # carries); the running chunk count never restarts at a flush.
            done, of = self.done, (f"/{total:,}" if total is not None else "")
            self.report(f"embedding {self.embedded + p.done:,} chunks ({done:,}{of} documents)", done)

        for start in range(0, len(rows), self.commit_texts):
            part = rows[start : start + self.commit_texts]
            out = self.encoder.encode([t for _, _, t in part], batch_size=self.batch_size, progress=batch_progress,
                                      cancel=self._stop)  # type: ignore[arg-type]
            self.embedded += len(part)
            self._worker.done.put((flush, part, out))

    def _commit(self, flush: _Flush, indices: list[int]) -> None:
        new_docs = []
        for i in indices:
            h, doc, chunks = flush.docs[i]
            new_docs.append(CachedDocument(h, self.key, self.model_id, tuple(chunks), flush.vectors[i],
                                           title=doc.title, no_text_reason=doc.no_text_reason,
                                           warnings=tuple(doc.warnings)))
        if not new_docs:
            return
        self.cache.put_many(new_docs)  # one short WAL transaction: kept even if the build dies next
        self.results.update((d.content_hash, d) for d in new_docs)
        if self.on_ready is not None and new_docs:
            self.on_ready({d.content_hash: d for d in new_docs})

"""A build searchable while it embeds (issue 30).

Phase 1 reads and chunks every admitted file the cache lacks (cache hits come with their vectors)
and publishes a searcher with BM25 over all of them: keyword search answers in seconds. Phase 2
embeds the rest, best-ranked files first, and after each commit to the cache publishes a new
snapshot whose dense side covers what is embedded (retrieval/partial.py). The documents read in
phase 1 are handed to the embedding as they are (no second read, no second chunking), so the
finished build's documents, and its searcher, are exactly those of a build without phase 1.

Semantic chunking needs the model to cut a document, so it has no phase 1: its snapshots hold the
documents embedded so far (``Growing``), keyword and meaning search alike.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Optional

import numpy as np

from spar_desktop.core.documents.chunking import chunk_document
from spar_desktop.core.documents.reading import OCR_NOTE
from spar_desktop.core.embedding.cache import CachedDocument
from spar_desktop.core.embedding.pipeline import chunk_with
from spar_desktop.core.progress import Cancelled, CancelToken, Progress, ProgressCallback, check
from spar_desktop.core.retrieval.partial import LiveVectors, coverage_note, coverage_percent, unembedded
from spar_desktop.core.retrieval.searcher import HybridSearcher
from spar_desktop.core.workspaces.models import WorkspaceFileState

PUBLISH_SECONDS = 1.0  # at most one new snapshot a second (each copies the vectors)
# While files are read, a keyword snapshot of those read so far (best-ranked first) is published
# this long after reading starts, then at doubling intervals: a share of slow files (PDFs, OCR)
# answers within seconds, and rebuilding the keyword index costs at most about as much again.
FIRST_SNAPSHOT_SECONDS = 0.5
# Text of phase 1's documents kept for phase 2 (no second read). Past it, a document keeps only its
# chunks (the keyword snapshot needs them) and phase 2 reads it again: a big workspace's build
# holds at most this much extra text, not a second copy of everything read.
KEEP_TEXT_CHARS = 64_000_000


@dataclass
class Assigned:
    """The documents of a build by workspace file: what is searched, and each file's state."""
    by_doc: dict[str, CachedDocument] = field(default_factory=dict)
    file_ids: dict[str, int] = field(default_factory=dict)
    states: dict[int, tuple[str, Optional[str]]] = field(default_factory=dict)
    ocr_ids: list[int] = field(default_factory=list)


def assign(admitted: list, decided: dict, docs: dict[str, CachedDocument], errors: dict[str, str],
           label: bool = True) -> Assigned:
    """Each admitted file not ``decided`` already (duplicate, missing...) → its document (READY),
    or FAILED / NO_TEXT with the reason. ``label``: chunks carry their file id (what is stored);
    a snapshot's searcher takes the ids from ``file_ids`` alone."""
    out = Assigned()
    for file_id, _path, content_hash in admitted:
        if file_id in decided:
            continue
        if content_hash in errors:
            out.states[file_id] = (WorkspaceFileState.FAILED, errors[content_hash])
            continue
        doc = docs.get(content_hash)
        if doc is None or not doc.children:
            reason = (doc.no_text_reason if doc is not None else None) or "no searchable text"
            out.states[file_id] = (WorkspaceFileState.NO_TEXT, reason)
            continue
        out.by_doc[str(file_id)] = doc.with_file_id(file_id) if label else doc
        out.file_ids[str(file_id)] = file_id
        from_ocr = any(w.startswith(OCR_NOTE) for w in doc.warnings)
        out.states[file_id] = (WorkspaceFileState.READY, OCR_NOTE if from_ocr else None)
        if from_ocr:
            out.ocr_ids.append(file_id)
    return out


def embedding_order(items: list, admitted: list, ranked_ids: Optional[Iterable[int]]) -> list:
    """``items`` (content hash, loader) best-ranked file first (the ranked admission's order),
    the rest as they came (path order): what a user most likely needs is embedded first."""
    if ranked_ids is None:
        return list(items)
    hash_of = {fid: h for fid, _, h in admitted}
    rank: dict[str, int] = {}
    for i, fid in enumerate(ranked_ids):
        h = hash_of.get(fid)
        if h is not None:
            rank.setdefault(h, i)
    last = len(rank)
    return sorted(items, key=lambda item: rank.get(item[0], last))  # stable: ties keep path order


class ReadAhead:
    """Phase 1's documents: cached ones, and read-and-chunked ones waiting for their vectors."""

    def __init__(self, config: Any, encoder: Any, cache: Any) -> None:
        self.config, self.encoder, self.cache = config, encoder, cache
        self.cached: dict[str, CachedDocument] = {}
        self.read: dict[str, tuple[Any, list]] = {}  # content hash → (ExtractedDocument, chunks)
        self.errors: dict[str, Exception] = {}
        self.order: list[str] = []  # content hashes to embed, in the order given
        self.kept_chars = 0
        self.reread: set[str] = set()  # read in phase 1 but not kept (KEEP_TEXT_CHARS): read again

    def run(self, items: list, progress: ProgressCallback, cancel: Optional[CancelToken],
            on_due: Optional[Callable[[float], None]] = None) -> None:
        """Read and chunk ``items``; ``on_due(share of items done)`` when a keyword snapshot of
        what is read so far is due (FIRST_SNAPSHOT_SECONDS)."""
        key, model_id, total = self.config.cache_key, self.encoder.model_id, len(items)
        interval = FIRST_SNAPSHOT_SECONDS
        start = time.monotonic()
        due = start + interval
        for n, (h, loader) in enumerate(items, 1):
            check(cancel)
            now = time.monotonic()
            # Due, and the whole set is not about to be read anyway (at the pace so far).
            if on_due is not None and n > 1 and now >= due and (now - start) * (total - n) / n > interval:
                on_due((n - 1) / total)
                interval *= 2
                due = time.monotonic() + interval
            if h in self.cached or h in self.read or h in self.errors:
                continue
            cached = self.cache.get(h, key, model_id)
            if cached is not None:
                self.cached[h] = cached
                continue
            self.order.append(h)
            try:
                doc = loader()
                chunks = chunk_with(chunk_document, doc, self.config, None) if not doc.no_text_reason else []
            except Cancelled:
                raise
            except Exception as exc:  # noqa: BLE001 - one bad file must not sink a build; phase 2 reports it
                self.errors[h] = exc
                continue
            self.read[h] = (self._keep(h, doc), chunks)
            if n % 100 == 0:
                progress(Progress(n, total, f"reading files ({n:,}/{total:,})"))

    def _keep(self, h: str, doc: Any) -> Any:
        """``doc`` as kept until phase 2: whole within KEEP_TEXT_CHARS, else without its pages
        (title, warnings and reason stay for the snapshots) and marked to be read again."""
        size = sum(len(p.text) for p in doc.pages)
        if self.kept_chars + size <= KEEP_TEXT_CHARS:
            self.kept_chars += size
            return doc
        self.reread.add(h)
        return replace(doc, pages=())

    def documents(self) -> dict[str, CachedDocument]:
        """Every document phase 1 has: cached ones with vectors, read ones with zero vectors."""
        dim = int(self.encoder.dim)
        key, model_id = self.config.cache_key, self.encoder.model_id
        out = dict(self.cached)
        for h, (doc, chunks) in self.read.items():
            out[h] = unembedded(CachedDocument(h, key, model_id, tuple(chunks), np.empty((0, dim), np.float32),
                                               title=doc.title, no_text_reason=doc.no_text_reason,
                                               warnings=tuple(doc.warnings)), dim)
        return out

    def to_embed(self, items: list) -> list:
        """(content hash, loader) of what phase 2 embeds, in ``items``' order: read documents come
        back as they were read, and a failed read fails the same way (its error is reported)."""
        loaders = dict(items)
        out = []
        for h in self.order:
            if h in self.read and h not in self.reread:
                out.append((h, (lambda d=self.read[h][0]: d)))
            elif h in self.errors:
                out.append((h, _raiser(self.errors[h])))
            else:
                out.append((h, loaders[h]))
        return out

    def chunk_fn(self) -> Callable[..., list]:
        """The chunker phase 2 uses: the chunks phase 1 made for that very document."""
        made = {id(doc): chunks for h, (doc, chunks) in self.read.items() if h not in self.reread}

        def chunks_of(doc: Any, config: Any, **kw: Any) -> list:
            known = made.pop(id(doc), None)
            return list(known) if known is not None else chunk_document(doc, config, **kw)

        return chunks_of


def _raiser(exc: Exception) -> Callable[[], Any]:
    def load() -> Any:
        raise exc
    return load


class Growing:
    """Snapshots of the documents embedded so far, at doubling intervals (semantic chunking,
    where nothing is searchable before it is embedded): ``publish(documents, share of items)``."""

    def __init__(self, publish: Callable[[dict[str, CachedDocument], float], None], total: int) -> None:
        self.publish, self.total = publish, max(1, total)
        self.docs: dict[str, CachedDocument] = {}
        self.interval = FIRST_SNAPSHOT_SECONDS
        self.due = time.monotonic() + self.interval

    def add(self, docs: dict[str, CachedDocument]) -> None:
        self.docs.update(docs)
        if time.monotonic() >= self.due and len(self.docs) < self.total:
            self.publish(dict(self.docs), len(self.docs) / self.total)
            self.interval *= 2
            self.due = time.monotonic() + self.interval


class Publisher:
    """Publishes a build's snapshots (SearcherCache.publish_partial) and says how far meaning
    search got in the build's progress messages."""

    def __init__(self, searchers: Any, ws_id: int, progress: ProgressCallback) -> None:
        self.searchers, self.ws_id, self.progress = searchers, ws_id, progress
        self.live: Optional[LiveVectors] = None
        self.last = 0.0

    def start(self, searcher: HybridSearcher, cached: dict[str, CachedDocument], keyword: float = 1.0) -> None:
        """Publish a snapshot of ``searcher`` (the files read so far: ``keyword`` of them) with
        the vectors the cache had; the last one started is the one embedding fills."""
        searcher.keyword_coverage = keyword
        self.live = LiveVectors(searcher, np.zeros(len(searcher), dtype=bool))
        self.live.add(cached)
        self.publish(force=True)
        if keyword >= 1.0:
            self.progress(Progress(0, None, f"keyword search ready; {coverage_note(self.live.coverage)}"))

    def add(self, docs: dict[str, CachedDocument]) -> None:
        if self.live is not None and self.live.add(docs):
            self.publish()

    def publish(self, force: bool = False) -> None:
        now = time.monotonic()
        if self.live is None or (not force and now - self.last < PUBLISH_SECONDS):
            return
        self.last = now
        self.searchers.publish_partial(self.ws_id, self.live.snapshot())

    def finish(self) -> None:
        if self.live is not None:
            self.publish(force=True)  # the last commits, whatever the throttle held back

    def tell(self, p: Progress) -> None:
        """A progress report of the embedding with the coverage appended."""
        if self.live is None:
            return self.progress(p)
        self.progress(Progress(p.done, p.total, f"{p.message} · meaning search covers "
                                                f"{coverage_percent(self.live.coverage)}% of passages"))

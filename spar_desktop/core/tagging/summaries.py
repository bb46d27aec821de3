"""One short summary per file (its title and the opening of its text) and one vector for it.

Tag suggestions compare summaries with tag texts and with each other, and ranked admission scores
files against a request by them. It is deliberately one vector per file, not a chunk index: a
share of 100k files costs 100k short encodings once, and a file is summarised again only when its
content hash (or the encoder's model) changes. Reading uses the workspace builder's reader
(``documents.reading``) with OCR off and a small text budget: the opening is all we keep.
"""

from __future__ import annotations

import logging
import re
import threading
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Optional, Sequence

import numpy as np
from sqlalchemy import delete, func, select

from spar_desktop.core.documents.budget import ExtractionBudget
from spar_desktop.core.documents.types import storable_text
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.models import File, FileStatus, FileSummary, utcnow
from spar_desktop.core.library.paths import os_path
from spar_desktop.core.progress import CancelToken, Progress, ProgressCallback, check, no_progress

if TYPE_CHECKING:  # the readers (every format's extractor) load when a summary is made, not with the ranking
    from spar_desktop.core.documents.reading import ReadOptions

log = logging.getLogger(__name__)

SUMMARY_TOKENS = 200  # roughly; title + the opening of the text (MiniLM reads 256 word pieces)
_SUMMARY_WORDS = 150  # ~200 word pieces of ordinary prose
_READ_CHARS = 20_000  # text read per file: the opening is all a summary needs
BATCH_FILES = 64  # files read, encoded and committed together (a killed run keeps its batches)
_IN_CHUNK = 500  # ids per IN (...) list: SQLite's variable limit, PostgreSQL's plan size
# Tag suggestions and hierarchy induction read the whole index's summary vectors: decoded once per process and
# kept while a one-row aggregate (count, newest update, id sum) says the set is the same.
_MATRICES: dict[tuple[str, str], tuple[tuple, np.ndarray, np.ndarray]] = {}
_MATRICES_LOCK = threading.Lock()


@dataclass(frozen=True)
class SummaryReport:
    summarized: int = 0  # (re)written in this run
    up_to_date: int = 0  # already current: skipped
    unreadable: int = 0  # no text (scans with OCR off, errors, missing on disk): skipped
    errors: tuple[tuple[str, str], ...] = ()  # (path, message), the first few unreadable files

    def message(self) -> str:
        text = f"{self.summarized} summarised, {self.up_to_date} up to date"
        return text + (f", {self.unreadable} without readable text" if self.unreadable else "")


def summary_text(title: Optional[str], text: str) -> str:
    """The title (unless the text already opens with it) and the first ~SUMMARY_TOKENS tokens."""
    words = text.split()[:_SUMMARY_WORDS]
    body = " ".join(words)
    title = " ".join((title or "").split())
    if title and not _plain(body).startswith(_plain(title)[:60]):
        body = f"{title}. {body}" if body else title
    return storable_text(body.strip())


def _plain(text: str) -> str:
    """Words only, so '# Budget' (a markdown heading) counts as opening with the title 'Budget'."""
    return re.sub(r"\W+", " ", text.lower()).strip()


def _chunks(ids: Sequence[int]) -> Iterator[list[int]]:
    for i in range(0, len(ids), _IN_CHUNK):
        yield list(ids[i:i + _IN_CHUNK])


def _unit(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms > 0, norms, 1.0)


class SummaryStore:
    """Reads of ``file_summaries``. Only summaries of a file's current content count."""

    def __init__(self, library: Library) -> None:
        self.library = library

    def _select(self, columns: tuple, model_id: Optional[str], file_ids: Optional[Iterable[int]]):
        query = select(*columns).select_from(FileSummary).where(_current())
        if model_id is not None:
            query = query.where(FileSummary.model_id == model_id)
        if file_ids is None:
            yield query.order_by(FileSummary.file_id)
            return
        for part in _chunks(sorted(set(int(i) for i in file_ids))):
            yield query.where(FileSummary.file_id.in_(part)).order_by(FileSummary.file_id)

    def texts(self, file_ids: Iterable[int] | None = None) -> dict[int, str]:
        out: dict[int, str] = {}
        with self.library.session() as s:
            for query in self._select((FileSummary.file_id, FileSummary.text), None, file_ids):
                out.update((int(i), t) for i, t in s.execute(query))
        return out

    def matrix(self, model_id: str, file_ids: Iterable[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(ids int64 [n], vectors float32 [n, d], L2-normalised), ordered by id; read-only arrays."""
        if file_ids is None:
            return self._whole_matrix(model_id)
        return self._read_matrix(model_id, file_ids)

    def _whole_matrix(self, model_id: str) -> tuple[np.ndarray, np.ndarray]:
        [query] = self._select((func.count(), func.max(FileSummary.updated_at), func.sum(FileSummary.file_id)),
                               model_id, None)
        with self.library.session() as s:
            fingerprint = tuple(s.execute(query.order_by(None)).one())
        key = (str(self.library.engine.url), model_id)
        with _MATRICES_LOCK:
            cached = _MATRICES.get(key)
        if cached is not None and cached[0] == fingerprint:
            return cached[1], cached[2]
        ids, vectors = self._read_matrix(model_id, None)
        ids.flags.writeable = vectors.flags.writeable = False  # shared between callers
        with _MATRICES_LOCK:
            _MATRICES[key] = (fingerprint, ids, vectors)
        return ids, vectors

    def _read_matrix(self, model_id: str, file_ids: Iterable[int] | None) -> tuple[np.ndarray, np.ndarray]:
        ids: list[int] = []
        blobs: list[bytes] = []
        with self.library.session() as s:
            for query in self._select((FileSummary.file_id, FileSummary.vector), model_id, file_ids):
                for i, blob in s.execute(query):
                    ids.append(int(i))
                    blobs.append(blob)
        if not blobs:
            return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32)
        vectors = np.stack([np.frombuffer(b, dtype=np.float32) for b in blobs])
        return np.asarray(ids, dtype=np.int64), vectors

    def count(self, model_id: str) -> int:
        with self.library.session() as s:
            return int(s.scalar(select(func.count()).select_from(FileSummary)
                                .where(FileSummary.model_id == model_id, _current())) or 0)


def _current() -> Any:
    """The summary is of its file's current content, and the file is readable. A correlated
    EXISTS, not a join: the query then walks the summaries (a join let SQLite walk every file of
    the index by status to find none, 18 ms a query at 100k files, four queries a request)."""
    return (select(File.id).where(File.id == FileSummary.file_id, File.content_hash == FileSummary.content_hash,
                                  File.status == FileStatus.OK).exists())


def _todo(library: Library, model_id: str, file_ids: Optional[Iterable[int]]) -> tuple[list[tuple], int]:
    """(files needing a summary as (id, path, raw_path, format, hash, title), how many are current)."""
    wanted = sorted(set(int(i) for i in file_ids)) if file_ids is not None else None
    base = (select(File.id, File.path, File.raw_path, File.format, File.content_hash, File.title,
                   FileSummary.content_hash, FileSummary.model_id)
            .outerjoin(FileSummary, FileSummary.file_id == File.id)
            .where(File.status == FileStatus.OK, File.content_hash.is_not(None)).order_by(File.id))
    queries = [base] if wanted is None else [base.where(File.id.in_(p)) for p in _chunks(wanted)]
    todo, current = [], 0
    with library.session() as s:
        for query in queries:
            for fid, path, raw, fmt, h, title, s_hash, s_model in s.execute(query):
                if s_hash == h and s_model == model_id:
                    current += 1
                else:
                    todo.append((fid, path, raw, fmt, h, title))
    return todo, current


def _read_options(settings: Any) -> ReadOptions:
    from spar_desktop.core.documents.reading import ReadOptions

    budget = settings.extraction_budget() if settings is not None else ExtractionBudget()
    # OCR is a build's job (minutes per scan); a summary of a scan waits until it has text.
    return ReadOptions(budget=replace(budget, max_chars=_READ_CHARS), ocr=False)


def _read_summary(path: str, raw: Optional[bytes], fmt: str, content_hash: str, title: Optional[str],
                  options: Any) -> str:
    from spar_desktop.core.documents.reading import read_document

    doc = read_document(os_path(path, raw), fmt, content_hash, options)
    text = summary_text(title or doc.title, doc.text)
    if not text:
        raise ValueError(doc.no_text_reason or "no text")
    return text


def summarize_files(library: Library, settings: Any, encoder: Any, file_ids: Optional[Iterable[int]] = None,
                    progress: ProgressCallback = no_progress, cancel: Optional[CancelToken] = None,
                    limit: Optional[int] = None) -> SummaryReport:
    """Write the missing or stale summaries of ``file_ids`` (default: every readable file; at
    most ``limit`` of them this run).

    Resumable: each batch is committed, and files whose stored content hash and model id are
    current are skipped, so a killed or cancelled run goes on where it stopped. Raises Cancelled.
    """
    model_id = encoder.model_id
    todo, current = _todo(library, model_id, file_ids)
    if limit is not None:
        todo = todo[:max(0, limit)]
    options = _read_options(settings)
    report = SummaryReport(up_to_date=current)
    total = len(todo)
    progress(Progress(0, total, "summarising files"))
    done = 0
    by_hash: dict[str, str] = {}  # the same bytes under two names are read once
    for start in range(0, total, BATCH_FILES):
        check(cancel)
        batch = todo[start:start + BATCH_FILES]
        rows: list[tuple[int, str, str]] = []
        errors = list(report.errors)
        unreadable = report.unreadable
        for fid, path, raw, fmt, h, title in batch:
            check(cancel)
            text = by_hash.get(h)
            if text is None:
                try:
                    text = _read_summary(path, raw, fmt, h, title, options)
                except Exception as exc:  # one file never stops the job: counted, logged, retried next run
                    unreadable += 1
                    if len(errors) < 20:
                        errors.append((path, str(exc) or type(exc).__name__))
                    log.info("no summary for %s: %s", path, exc)
                    continue
                by_hash[h] = text
            rows.append((fid, h, text))
        if rows:
            vectors = _unit(encoder.encode([t for _, _, t in rows], cancel=cancel))
            with library.session() as s:
                s.execute(delete(FileSummary).where(FileSummary.file_id.in_([r[0] for r in rows])))
                now = utcnow()
                s.add_all(FileSummary(file_id=fid, content_hash=h, model_id=model_id, text=text,
                                      vector=vec.astype(np.float32).tobytes(), updated_at=now)
                          for (fid, h, text), vec in zip(rows, vectors))
        report = replace(report, summarized=report.summarized + len(rows), unreadable=unreadable,
                         errors=tuple(errors))
        done += len(batch)
        progress(Progress(done, total, f"summarised {done}/{total} files"))
    return report


def cosines(vectors: np.ndarray, query: np.ndarray) -> np.ndarray:
    """float32 cosines of unit rows to a unit query, the same whatever the batch: a float32 product
    rounds differently for a 1-row batch than inside a big one (BLAS takes another path), which
    would split identical summaries (copies of one file) at the budget's edge. Products of float32
    values are exact in float64, and its sum rounds to the same float32."""
    return (np.asarray(vectors, dtype=np.float64) @ np.asarray(query, dtype=np.float64)).astype(np.float32)


def summary_similarity(library: Library, model_id: str, query: np.ndarray,
                       file_ids: Iterable[int] | None = None) -> dict[int, float]:
    """Cosine of a unit query vector (the encoder's ``encode_query``) to each file's current
    summary; files without one, or summaries of another width, are absent."""
    ids, vectors = SummaryStore(library).matrix(model_id, file_ids)
    if not len(ids) or vectors.shape[1] != query.shape[0]:
        return {}
    sims = cosines(vectors, query)
    return {int(i): float(v) for i, v in zip(ids, sims)}

"""How like the request each pool file's summary is, read in bounded batches (issue 29).

Ranked admission compares the request with every current summary in the pool: a file with no
keyword tag can still be admitted by its summary alone. Once the app's background job has
summarised a big share, that is one 1.5 kB vector per file (1.5 GB at a million files), so it is
streamed from SQL in batches and only what ranking needs is kept: the cosine per file (12 bytes a
file), never the vectors. ``top_alone`` then picks the few summary-only files that can still make
the budget, so ranking builds rows and reads paths for those, not for every file with a summary.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np
from sqlalchemy import select

from spar_desktop.core.library.database import Library
from spar_desktop.core.library.models import File, FileStatus, FileSummary
from spar_desktop.core.library.queries import FileFilter, build_query
from spar_desktop.core.tagging.summaries import cosines

STREAM_ROWS = 10_000  # summaries decoded at a time: ~15 MB of vectors (~30 MB widened)


@dataclass(frozen=True)
class Likeness:
    """Cosines of the pool files' current summaries to the request, by file id (sorted)."""

    ids: np.ndarray  # int64, ascending
    sims: np.ndarray  # float32, aligned with ids

    @classmethod
    def empty(cls) -> "Likeness":
        return cls(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32))

    def __len__(self) -> int:
        return len(self.ids)

    def at(self, file_ids: np.ndarray) -> np.ndarray:
        """Cosine per id of ``file_ids`` as float64, NaN for a file without a current summary."""
        out = np.full(len(file_ids), np.nan)
        if len(self.ids) and len(file_ids):
            pos = np.minimum(np.searchsorted(self.ids, file_ids), len(self.ids) - 1)
            hit = self.ids[pos] == file_ids
            out[hit] = self.sims[pos[hit]]
        return out

    def top_alone(self, exclude: np.ndarray, score: Callable[[np.ndarray], np.ndarray],
                  keep: int) -> tuple[int, np.ndarray, np.ndarray]:
        """Files not in ``exclude`` scored by likeness alone: (how many score > 0, and the ids and
        cosines of the best ``keep`` of them plus every file tied with the last one kept). Only
        these can be admitted: any other scores below ``keep`` files that outrank it."""
        mask = ~np.isin(self.ids, exclude, assume_unique=True)
        ids, sims = self.ids[mask], self.sims[mask]
        scores = score(sims.astype(np.float64))
        positive = scores > 0.0
        ids, sims, scores = ids[positive], sims[positive], scores[positive]
        if keep <= 0 or not len(ids):
            return len(ids), ids[:0], sims[:0]
        if keep < len(ids):
            kth = np.partition(scores, len(scores) - keep)[len(scores) - keep]
            chosen = scores >= kth  # ties at the edge are decided by path, by the caller
            return len(ids), ids[chosen], sims[chosen]
        return len(ids), ids, sims


def pool_likeness(library: Library, query: Optional[np.ndarray], model_id: str, hard: FileFilter,
                  narrows: bool) -> Likeness:
    """Cosine of each current summary (this model, the file's present content) to ``query``,
    restricted to the files meeting ``hard`` when ``narrows`` (their ids read only then)."""
    if query is None or not model_id:
        return Likeness.empty()
    q = np.asarray(query, dtype=np.float32)
    width = q.shape[0] * 4
    # On SQLite the status is compared as an expression (``status || ''``), which no index serves:
    # given the status index, SQLite walked every present file (1M) probing for a summary, 0.17 s
    # a request with none; now it reads the summaries and looks up their files.
    status = File.status.concat("") if library.engine.dialect.name == "sqlite" else File.status
    stmt = (select(FileSummary.file_id, FileSummary.vector).join(File, File.id == FileSummary.file_id)
            .where(File.content_hash == FileSummary.content_hash, status == FileStatus.OK,
                   FileSummary.model_id == model_id)
            .order_by(FileSummary.file_id).execution_options(yield_per=STREAM_ROWS))
    id_parts: list[np.ndarray] = []
    sim_parts: list[np.ndarray] = []
    with library.session() as s:
        for rows in s.execute(stmt).partitions():
            kept = [(i, b) for i, b in rows if b is not None and len(b) == width]  # another width: another model
            if not kept:
                continue
            vectors = np.frombuffer(b"".join(b for _, b in kept), dtype=np.float32).reshape(len(kept), -1)
            id_parts.append(np.fromiter((i for i, _ in kept), dtype=np.int64, count=len(kept)))
            sim_parts.append(cosines(vectors, q))
        if not id_parts:
            return Likeness.empty()
        ids, sims = np.concatenate(id_parts), np.concatenate(sim_parts)
        if narrows:
            pool = np.fromiter(s.scalars(build_query(s, hard).order_by(None).with_only_columns(File.id)), dtype=np.int64)
            inside = np.isin(ids, pool)
            ids, sims = ids[inside], sims[inside]
    return Likeness(ids, sims)

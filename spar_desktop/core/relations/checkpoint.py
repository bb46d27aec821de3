"""Resuming EDR-MQ's long phase: the sum of the queries already run, kept while they run.

Running the queries (encoding each and marginalising it over the documents) is most of a build:
20,430 queries over 7,532 newsgroups posts took 31 minutes. The documents' vectors before it are
kept by the embedding cache as they are made; this keeps the queries' work, so a cancelled (or
killed) build is resumed by the next one with the same job instead of starting over.

- A job is what determines the sum: the documents in row order, the retriever's parameters and
  model, and the stored build it starts from (none for a full build). Its key is a hash of those.
- The queries run in order and the accumulator adds whole batches, so "done" queries are always
  the first ``done`` of the list; the checkpoint keeps a hash of exactly those texts. The next
  build resumes when the key and that prefix match (the same synthetic sentences; new logged
  searches come after them), and starts over otherwise.
- One file, ``partial.npz`` in the scope's relations directory (the sum's CSR arrays and the
  job's JSON), written to a temporary name and renamed: a kill mid-write leaves the previous
  checkpoint. Saved every ``EVERY_S`` seconds and when the run is cancelled; removed once the
  build is stored.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
import zipfile
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np
from scipy import sparse

from spar_desktop.core.relations.edrmq import RelationAccumulator

FILE = "partial.npz"
EVERY_S = 60.0  # a kill loses at most about this much of the long phase; a save costs ~0.1-1 s


def _digest(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, separators=(",", ":")).encode("utf-8")).hexdigest()


def texts_digest(texts: Sequence[str]) -> str:
    h = hashlib.sha256()
    for t in texts:
        h.update(t.encode("utf-8", "surrogatepass"))
        h.update(b"\0")
    return h.hexdigest()


class QueryCheckpoint:
    """The partial sum of one job's queries (see the module doc). ``job``: what besides the row
    order and the starting sum defines the result (method, retriever parameters, model id)."""

    def __init__(self, directory: str | Path, job: dict, every_s: float = EVERY_S) -> None:
        self.path = Path(directory) / FILE
        self.job = dict(job)
        self.every_s = every_s
        self.key: Optional[str] = None
        self.base_queries = 0
        self.texts: Sequence[str] = ()
        self.resumed = 0  # queries found done when the run began
        self._last_save = time.monotonic()

    def begin(self, ids: Sequence[str], acc: RelationAccumulator, base: Any,
              texts: Sequence[str]) -> tuple[RelationAccumulator, int]:
        """(accumulator to continue, queries of ``texts`` already in it). ``acc`` is the starting
        sum (empty, or the stored build realigned), ``base`` what identifies that stored build."""
        self.key = _digest({"job": self.job, "ids": list(ids), "base": base, "base_queries": acc.n_queries})
        self.base_queries, self.texts = acc.n_queries, texts
        self._last_save = time.monotonic()
        found = self._load(len(ids))
        if found is None:
            return acc, 0
        done, saved = found
        if done > len(texts) or saved.n_queries != acc.n_queries + done:
            return acc, 0
        self.resumed = done
        return saved, done

    def _load(self, n: int) -> Optional[tuple[int, RelationAccumulator]]:
        try:
            with np.load(self.path, allow_pickle=False) as z:
                meta = json.loads(str(z["meta"]))
                if meta.get("key") != self.key:
                    return None
                done = int(meta["done"])
                if meta.get("prefix") != texts_digest(self.texts[:done]):
                    return None
                total = sparse.csr_matrix((z["data"], z["indices"], z["indptr"]), shape=(n, n))
                return done, RelationAccumulator(n, total, int(meta["n_queries"]))
        except (OSError, EOFError, KeyError, ValueError, TypeError, zipfile.BadZipFile):  # none, or unreadable: start over
            return None

    def due(self) -> bool:
        return time.monotonic() - self._last_save >= self.every_s

    def save(self, acc: RelationAccumulator) -> int:
        """Keep the queries ``acc`` holds so far; returns how many of ``texts`` that is."""
        if self.key is None:
            raise RuntimeError("begin() first")
        done = acc.n_queries - self.base_queries
        if done <= self.resumed and self.path.is_file():
            self._last_save = time.monotonic()
            return done  # nothing new since the checkpoint it resumed from
        total = acc.total.tocsr()
        meta = {"key": self.key, "done": done, "n_queries": acc.n_queries, "params": _digest(self.job.get("params")),
                "prefix": texts_digest(self.texts[:done]), "saved_at": time.time()}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f"{FILE}.{os.getpid()}-{threading.get_ident()}.tmp")
        with open(tmp, "wb") as fh:  # a file object: savez would append '.npz' to the name
            np.savez(fh, data=total.data, indices=total.indices, indptr=total.indptr, meta=np.array(json.dumps(meta)))
        os.replace(tmp, self.path)
        self._last_save = time.monotonic()
        return done

    def clear(self) -> None:
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass


def pending_queries(directory: str | Path, params: Optional[dict] = None) -> Optional[int]:
    """Queries a cancelled build left done in ``directory`` (None: no checkpoint, or one made with
    other ``params`` when they are given). Whether the next build can use them is known only when
    it draws its queries: an estimate can only say 'up to'."""
    try:
        with np.load(Path(directory) / FILE, allow_pickle=False) as z:
            meta = json.loads(str(z["meta"]))
    except (OSError, EOFError, KeyError, ValueError, TypeError, zipfile.BadZipFile):
        return None
    if params is not None and meta.get("params") != _digest(params):
        return None
    return int(meta.get("done", 0))

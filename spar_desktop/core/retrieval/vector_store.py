"""Dense vector backends: Chroma (what workspaces use) and an exact in-memory numpy matrix.

Chroma is only ever given our own vectors: collections are created and opened with
``embedding_function=None`` because Chroma's default embedding function downloads an ONNX model,
which a desktop app on a locked-down network must never attempt. Collections use cosine space and
record the model id that produced their vectors (which includes the encoder variant, and for int8
the kind of CPU: encoder.Encoder.model_id), so a model, variant or CPU change is detected, not mixed
in; a collection with vectors but no recorded model id is refused too.
"""

from __future__ import annotations

import os
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Mapping, Optional, Protocol, Sequence

import numpy as np

from spar_desktop.core.config import Settings
from spar_desktop.core.progress import CancelToken, Progress, ProgressCallback, check, no_progress
from spar_desktop.core.retrieval.chroma_host import ChromaHostClient

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")  # before chromadb is first imported

MODEL_KEY = "spar_model_id"
# HNSW search breadth: above Chroma's default (100) so the 100-candidate lists fed to fusion
# match the exact numpy backend on workspace-sized collections.
HNSW_EF_SEARCH = 200
HNSW_EF_CONSTRUCTION = 200


def _configuration() -> dict[str, Any]:
    return {"hnsw": {"space": "cosine", "ef_search": HNSW_EF_SEARCH, "ef_construction": HNSW_EF_CONSTRUCTION}}



# In-process Chroma holds the GIL for the whole of an upsert (0.6-1.5 ms a vector on a 2-core
# machine, plus ~6 ms a call): batches of 64 keep a CLI build's progress and cancel prompt.
# The desktop app hosts Chroma in a helper process (chroma_host.py), where the GIL is its own.
UPSERT_BATCH = 64


class VectorStoreError(RuntimeError):
    pass


class ModelMismatchError(VectorStoreError):
    """The collection was built by another embedding model or encoder variant (fp32 / int8, or
    int8 on another kind of CPU); rebuild it rather than mix spaces."""

    def __init__(self, message: str, stored: Optional[str] = None, wanted: Optional[str] = None) -> None:
        super().__init__(message)
        self.stored, self.wanted = stored, wanted


def describe_model(model_id: Optional[str]) -> str:
    """A model id in words, for messages: which encoder variant, and for int8 on which kind of CPU
    (encoder.Encoder.model_id: '<model>@<package>[+w16][+onnx-int8@<cpu class>-<fingerprint>]')."""
    if not model_id:
        return "an unrecorded embedding model (no model id stored with the vectors)"
    base, sep, int8 = model_id.partition("+onnx-int8")
    if not sep:
        return f"the fp32 encoder ({model_id})"
    cpu = int8.lstrip("@").partition("-")[0]
    where = f" on a CPU of class {cpu}" if cpu else ""
    return f"the int8 encoder{where} ({model_id})"


class DenseBackend(Protocol):
    def search(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(positions, cosine similarities) of the ``k`` nearest vectors, best first."""
        ...


def cosine_scores(vectors: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Row-wise dot products (= cosine for unit vectors).

    Not ``vectors @ query``: multi-threaded OpenBLAS workers keep spinning after the call and
    starve the next query's (torch) encoding — on our 2-core machine a dense search took 90 ms
    instead of 40. einsum's own loop leaves no threads behind; large matrices are split by rows
    over a small pool of ordinary threads (einsum releases the GIL), which idle without spinning:
    50k x 384 took 10 ms on one core and 5.6 ms on two. Each row is computed by the same loop
    however the rows are split, so the scores are identical bit for bit.
    """
    q = query.astype(np.float32, copy=False)
    n = vectors.shape[0]
    parts = _MATVEC_THREADS if n >= _SPLIT_ROWS else 1
    if parts <= 1:
        return np.einsum("ij,j->i", vectors, q)
    out = np.empty(n, dtype=np.result_type(vectors.dtype, q.dtype))
    bounds = np.linspace(0, n, parts + 1, dtype=np.int64)
    futures = [_matvec_pool().submit(np.einsum, "ij,j->i", vectors[a:b], q, out=out[a:b])
               for a, b in zip(bounds[:-1], bounds[1:])]
    for f in futures:
        f.result()
    return out


_SPLIT_ROWS = 20_000  # below this a split costs more in hand-offs than it saves
_MATVEC_THREADS = min(4, os.cpu_count() or 1)
_POOL: Optional[ThreadPoolExecutor] = None
_POOL_LOCK = threading.Lock()


def _matvec_pool() -> ThreadPoolExecutor:
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(_MATVEC_THREADS, thread_name_prefix="spar-matvec")
        return _POOL


class NumpyBackend:
    """Exact search by one matrix-vector product; fast enough for eval and 50k-chunk workspaces."""

    def __init__(self, vectors: np.ndarray) -> None:
        self.vectors = np.ascontiguousarray(vectors, dtype=np.float32)

    def search(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        n = self.vectors.shape[0]
        if n == 0 or k <= 0:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32)
        sims = cosine_scores(self.vectors, query)
        cand = np.argpartition(-sims, k - 1)[:k] if k < n else np.arange(n)
        cand = cand[np.lexsort((cand, -sims[cand]))]
        return cand.astype(np.int64), sims[cand]


def make_chroma_client(settings: Settings) -> Any:
    """HttpClient when a Chroma server URL is set; otherwise a PersistentClient under the data
    dir, in this process or (``settings.chroma_process``, the desktop app) in a helper process."""
    if not settings.chroma_url and settings.chroma_process:
        path = settings.layout.chroma
        path.mkdir(parents=True, exist_ok=True)
        return ChromaHostClient(path)
    import chromadb  # deferred: 0.5-3.5 s of imports, and never in the app's process (chroma_host.py)
    from chromadb.config import Settings as ChromaSettings

    chroma_settings = ChromaSettings(anonymized_telemetry=False)
    if settings.chroma_url:
        from urllib.parse import urlparse

        url = urlparse(settings.chroma_url)
        return chromadb.HttpClient(
            host=url.hostname or "localhost",
            port=url.port or (443 if url.scheme == "https" else 8000),
            ssl=url.scheme == "https",
            settings=chroma_settings,
        )
    path = settings.layout.chroma
    path.mkdir(parents=True, exist_ok=True)
    return chromadb.PersistentClient(path=str(path), settings=chroma_settings)


_NAME_OK = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9._-]{1,510}[a-zA-Z0-9]$")


def safe_collection_name(name: str) -> str:
    """Chroma names need 3–512 chars of [a-zA-Z0-9._-], alphanumeric at both ends."""
    cleaned = re.sub(r"[^a-zA-Z0-9._-]+", "-", name).strip("._-")
    cleaned = (cleaned or "collection")[:500]
    if len(cleaned) < 3:
        cleaned = f"ws-{cleaned}"
    if not _NAME_OK.match(cleaned):  # pragma: no cover - defensive; the rules above satisfy it
        raise VectorStoreError(f"cannot make a valid Chroma collection name from '{name}'")
    return cleaned


class ChromaCollection:
    """One Chroma collection holding our vectors under string ids, with metadata per vector."""

    def __init__(self, client: Any, name: str, model_id: str, *, create: bool = True) -> None:
        self.client = client
        self.name = safe_collection_name(name)
        self.model_id = model_id
        if create:
            self._col = client.get_or_create_collection(
                self.name,
                embedding_function=None,
                metadata={MODEL_KEY: model_id},
                configuration=_configuration(),
            )
        else:
            try:
                self._col = client.get_collection(self.name, embedding_function=None)
            except Exception as exc:  # noqa: BLE001 - chromadb raises several types for "missing"
                raise VectorStoreError(f"no vector collection named '{self.name}'") from exc
        stored = (self._col.metadata or {}).get(MODEL_KEY)
        if stored is None and create and self.count() == 0:
            # Created elsewhere without our record (another tool, a half-made collection): empty,
            # so nothing is lost by making it again with the record.
            client.delete_collection(self.name)
            self._col = client.get_or_create_collection(self.name, embedding_function=None,
                                                        metadata={MODEL_KEY: model_id}, configuration=_configuration())
            stored = model_id
        self.stored_model_id: Optional[str] = stored
        if stored != model_id:
            # Also when nothing is recorded: vectors of unknown origin are never searched with ours.
            raise ModelMismatchError(
                f"Collection '{self.name}' holds vectors made by {describe_model(stored)}, but this app now "
                f"embeds with {describe_model(model_id)}; the two are not comparable, so it must be rebuilt "
                "(re-embedded) before it can be searched or updated", stored, model_id)

    def count(self) -> int:
        return int(self._col.count())

    def ids(self) -> set[str]:
        return set(self._col.get(include=[])["ids"])

    def max_batch(self) -> int:
        getter = getattr(self.client, "get_max_batch_size", None)
        limit = int(getter()) if getter else 5000
        return max(1, min(limit, 4096))

    def add(
        self,
        ids: Sequence[str],
        vectors: np.ndarray,
        metadatas: Optional[Sequence[Mapping[str, Any]]] = None,
        progress: ProgressCallback = no_progress,
        cancel: Optional[CancelToken] = None,
    ) -> None:
        """Upsert in batches no larger than the client allows; cancellable between batches."""
        if len(ids) != len(vectors):
            raise ValueError("ids and vectors differ in length")
        step = min(self.max_batch(), UPSERT_BATCH)
        for start in range(0, len(ids), step):
            check(cancel)
            end = min(start + step, len(ids))
            kwargs: dict[str, Any] = {"ids": list(ids[start:end]), "embeddings": np.asarray(vectors[start:end], dtype=np.float32)}
            if metadatas is not None:
                # Chroma metadata values must be str/int/float/bool; None is dropped, not stored.
                kwargs["metadatas"] = [
                    {k: v for k, v in m.items() if v is not None} or None for m in metadatas[start:end]
                ]
            self._col.upsert(**kwargs)
            progress(Progress(end, len(ids), "adding vectors"))

    def delete(self, ids: Sequence[str]) -> None:
        step = self.max_batch()
        for start in range(0, len(ids), step):
            self._col.delete(ids=list(ids[start : start + step]))

    def sync(self, ids: Sequence[str], vectors: np.ndarray, metadatas: Optional[Sequence[Mapping[str, Any]]] = None,
             progress: ProgressCallback = no_progress, cancel: Optional[CancelToken] = None,
             present: Optional[set[str]] = None) -> tuple[int, int]:
        """Make the collection hold exactly ``ids``: add the missing, delete the stale.
        Returns (added, deleted); an unchanged workspace costs one id listing (none when the
        caller listed them just before: ``present``)."""
        present = self.ids() if present is None else present
        wanted = {i: pos for pos, i in enumerate(ids)}
        stale = [i for i in present if i not in wanted]
        missing = [pos for i, pos in wanted.items() if i not in present]
        if stale:
            self.delete(stale)
        if missing:
            self.add([ids[p] for p in missing], vectors[missing],
                     [metadatas[p] for p in missing] if metadatas is not None else None, progress, cancel)
        return len(missing), len(stale)

    def reconcile(self, ids: Sequence[str], vectors: np.ndarray, metadatas: Sequence[Mapping[str, Any]],
                  fields: Mapping[str, Any]) -> int:
        """Rewrite the vectors whose stored metadata differs from the wanted one in any of
        ``fields`` (name → the value a vector stored without it has): which key a vector is
        (evolved vs original, ERM) and which version of its document it came from (an edited
        file keeps its chunk ids, so an id alone does not say the vector is current). The
        database and the cache are the truth; the collection is made to agree with them after an
        edit, a crash, a reset or an evolution made elsewhere. Returns how many were rewritten."""
        stored: dict[str, tuple] = {}
        step = self.max_batch()  # batched: one huge id list can exceed the store's query limits
        for start in range(0, len(ids), step):
            got = self._col.get(ids=list(ids[start:start + step]), include=["metadatas"])
            stored.update({i: tuple((m or {}).get(f, d) for f, d in fields.items())
                           for i, m in zip(got["ids"], got["metadatas"] or [])})
        stale = [p for p, i in enumerate(ids)
                 if i in stored and stored[i] != tuple(metadatas[p].get(f, d) for f, d in fields.items())]
        if stale:
            self.add([ids[p] for p in stale], vectors[stale], [metadatas[p] for p in stale])
        return len(stale)

    def query(self, vector: np.ndarray, k: int) -> tuple[list[str], np.ndarray]:
        """(ids, cosine similarities) best first; Chroma returns cosine *distance* = 1 - cos."""
        if k <= 0:
            return [], np.empty(0, dtype=np.float32)
        # Chroma (1.x) returns what it has when k exceeds the collection, so no count() first:
        # one call less per search (0.4 ms in-process, 1 ms through the helper process).
        res = self._col.query(query_embeddings=[np.asarray(vector, dtype=np.float32)], n_results=k,
                              include=["distances"])
        ids = list(res["ids"][0])
        sims = 1.0 - np.asarray(res["distances"][0], dtype=np.float32)
        return ids, sims


class ChromaBackend:
    """Adapts a ChromaCollection whose ids are the searcher's chunk keys to positions."""

    def __init__(self, collection: ChromaCollection, keys: Sequence[str],
                 positions: Optional[Mapping[str, int]] = None) -> None:
        self.collection = collection
        # The searcher's own key → position map when it has one (one dict less at 50k chunks).
        self._pos = positions if positions is not None else {key: i for i, key in enumerate(keys)}

    def search(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        try:
            ids, sims = self.collection.query(query, k)
        except Exception as exc:  # noqa: BLE001 - chromadb raises many kinds; callers reopen and rebuild
            raise VectorStoreError(f"the vector store failed during a search: {exc}") from exc
        keep = [(self._pos[i], s) for i, s in zip(ids, sims) if i in self._pos]
        if not keep:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32)
        pos, scores = zip(*keep)
        return np.asarray(pos, dtype=np.int64), np.asarray(scores, dtype=np.float32)


def delete_collection(client: Any, name: str) -> bool:
    """Drop a workspace's vectors (archive); False when there was nothing to drop."""
    try:
        client.delete_collection(safe_collection_name(name))
        return True
    except Exception:  # noqa: BLE001 - missing collection
        return False

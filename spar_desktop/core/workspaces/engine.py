"""Shared heavy services of one data dir: the encoder, the embedding cache and the Chroma client.

Created lazily and once per process (the encoder's runtime, its model and the Chroma client load
when first used), so commands that never embed never pay for them, and a Chroma directory deleted
or corrupted behind the app's back is set aside and recreated. The local
store is locked while open (core/store_lock.py): a second process gets a message naming the holder.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path
from typing import Any, Optional

from spar_desktop.core import store_lock
from spar_desktop.core.config import Settings
from spar_desktop.core.documents.types import ChunkerConfig
from spar_desktop.core.embedding.cache import EmbeddingCache
from spar_desktop.core.embedding.encoder import get_encoder
from spar_desktop.core.retrieval.vector_store import make_chroma_client
from spar_desktop.core.workspaces.errors import WorkspaceError

log = logging.getLogger(__name__)


def chunker_config(settings: Settings) -> ChunkerConfig:
    return ChunkerConfig(child_tokens=settings.chunk_child_tokens, parent_tokens=settings.chunk_parent_tokens,
                         overlap_tokens=settings.chunk_overlap_tokens)


class VectorStoreInUse(WorkspaceError):
    """Another process (the app, a CLI build) has this data dir's local vector store open."""


def encoder_for(settings: Settings) -> Any:
    """The process-wide encoder for these settings; its built ONNX graph is kept in the data dir
    (``DataLayout.onnx_cache``), so nothing is written outside it ($SPAR_MODEL_CACHE shares one)."""
    return get_encoder(settings.embedding_device, runtime=settings.embed_runtime, cache_dir=settings.layout.onnx_cache)


class Engine:
    def __init__(self, settings: Settings, encoder: Any = None) -> None:
        self.settings = settings
        self._encoder = encoder
        self._cache: Any = None
        self._client: Any = None
        self._store: Optional[Path] = None  # the local store whose lock this Engine holds
        self._lock = threading.RLock()
        self.notes: list[str] = []  # things the user should hear about (a recovered store...)

    @property
    def encoder(self) -> Any:
        with self._lock:
            if self._encoder is None:
                self._encoder = encoder_for(self.settings)
            return self._encoder

    @property
    def cache(self) -> Any:
        with self._lock:
            if self._cache is None:
                self._cache = EmbeddingCache(self.settings.data_dir)
            return self._cache

    @property
    def chroma(self) -> Any:
        with self._lock:
            if self._client is None:
                self._client = self._open_chroma()
            return self._client

    def reopen_chroma(self) -> Any:
        """Drop the client and Chroma's per-path system cache (which keeps stale database handles
        when the directory was deleted behind our back) and open the store again."""
        with self._lock:
            self._drop_client()
            self._client = self._open_chroma()
            return self._client

    def reset_chroma(self) -> Any:
        """Set a broken local vector store aside (inside the data dir) and start a fresh one.
        Workspaces rebuild from the embedding cache, so only vectors are lost, never work."""
        with self._lock:
            self.hold_store()  # never move a store another process has open
            self._drop_client()  # a helper process must let go of the files before they move
            if not self.settings.chroma_url:
                path = self.settings.layout.chroma
                if path.exists():
                    aside = path.with_name(f"chroma.broken-{int(time.time())}")
                    os.replace(path, aside)
                    self.notes.append(f"the vector store was damaged and was set aside as {aside}; "
                                      "workspaces are rebuilt from cached embeddings")
                    log.warning("vector store at %s was damaged; moved to %s", path, aside)
            self._client = self._open_chroma(retry=False)
            return self._client

    def _open_chroma(self, retry: bool = True) -> Any:
        self.hold_store()  # before anything touches the files; never "repaired" by a reset below
        try:
            client = make_chroma_client(self.settings)
            client.heartbeat()
            client.list_collections()
            return client
        except Exception as exc:  # noqa: BLE001 - chromadb raises many kinds for a broken store
            if self.settings.chroma_url:
                raise WorkspaceError(f"cannot reach the Chroma server at {self.settings.chroma_url}: {exc}") from exc
            if not retry:
                raise
            log.warning("cannot open the vector store: %s", exc)
            self._client = None
            return self.reset_chroma()

    def hold_store(self) -> None:
        """Lock the local store for as long as this Engine is open (a server needs no lock); raises
        VectorStoreInUse naming the process that has it. Work that records state before it opens
        the store (a build marks its workspace "building") calls this first."""
        if self.settings.chroma_url or self._store is not None:
            return
        store = self.settings.layout.chroma
        try:
            store_lock.acquire(store)
        except store_lock.StoreInUseError as exc:
            raise VectorStoreInUse(str(exc)) from exc
        except OSError as exc:  # no lock file (a read-only data dir): Chroma says what it can do
            log.warning("could not lock the vector store %s: %s", store, exc)
            return
        self._store = store

    def _drop_client(self) -> None:
        client, self._client = self._client, None
        shutdown = getattr(client, "shutdown", None)  # the helper-process client (chroma_host)
        if shutdown is not None:
            shutdown()
        else:
            _clear_chroma_cache()

    def close(self) -> None:
        with self._lock:
            self._drop_client()
            if self._store is not None:  # after the client let go of the files
                store_lock.release(self._store)
                self._store = None
            if self._cache is not None:
                self._cache.close()
                self._cache = None


def _clear_chroma_cache() -> None:
    try:
        from chromadb.api.client import SharedSystemClient  # deferred: chromadb takes seconds to import

        SharedSystemClient.clear_system_cache()
    except Exception as exc:  # noqa: BLE001 - best effort; a fresh client follows anyway
        log.debug("could not clear Chroma's system cache: %s", exc)


_ENGINES: dict[str, Engine] = {}
_ENGINES_LOCK = threading.Lock()


def engine_for(settings: Settings, encoder: Optional[Any] = None) -> Engine:
    """One Engine per data dir per process."""
    key = str(Path(settings.data_dir).resolve())
    with _ENGINES_LOCK:
        eng = _ENGINES.get(key)
        if eng is None or (encoder is not None and eng._encoder is not encoder):
            eng = _ENGINES[key] = Engine(settings, encoder)
        return eng


def release_engine(settings: Settings) -> None:
    """Close and forget the data dir's Engine (its vector-store helper process stops too)."""
    key = str(Path(settings.data_dir).resolve())
    with _ENGINES_LOCK:
        eng = _ENGINES.pop(key, None)
    if eng is not None:
        eng.close()

"""The workspaces' searchers: kept in memory, saved when a build finishes, opened by the next process.

A search in a new process (``spar ws search``, the app's first search) used to rebuild the
workspace to get a searcher: 10-25 s for a 17 ms query. Now a finished build saves its searcher
under ``DATA_DIR/workspaces/<collection>/searcher/`` and a miss in memory opens that instead.

On disk: ``searcher/CURRENT`` names the live ``state-<token>/`` directory (retrieval/
searcher_state.py). A save writes ``tmp-<token>/``, renames it to ``state-<token>/``, then
replaces ``CURRENT`` (one atomic file rename) and removes older states, so a kill at any point
leaves either the old or the new state live. A saved state is used only when it was saved for the
workspace's current build (built_at, model, chunker key, chunk count, chunk keys), its evolved keys
are those in the database (another workspace sharing a file may have evolved or reset them since),
and the workspace's Chroma collection still holds its vectors; otherwise the caller rebuilds from the
embedding cache, with a note saying why.
"""

from __future__ import annotations

import hashlib
import logging
import os
import secrets
import shutil
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Iterable, Optional

from spar_desktop.core.data_layout import DataLayout
from spar_desktop.core.retrieval import searcher_state
from spar_desktop.core.retrieval.alpha import load_default_model
from spar_desktop.core.retrieval.vector_store import ChromaCollection
from spar_desktop.core.workspaces.chunkings import build_config
from spar_desktop.core.workspaces.evolved_keys import load_keys
from spar_desktop.core.workspaces.models import Workspace, WorkspaceStatus

log = logging.getLogger(__name__)

POINTER = "CURRENT"
_OPENABLE = (WorkspaceStatus.ACTIVE, WorkspaceStatus.BUILDING)  # BUILDING: an update is running
# All a workspace folder may hold to count as ours: its saved searcher and its build lock.
_OURS = frozenset(p.name for p in (DataLayout(Path(".")).searcher_dir("ws"), DataLayout(Path(".")).build_lock("ws")))
_ABANDONED_SECONDS = 3600  # a tmp-* directory this old was left by a killed process


class SearcherCache:
    """Workspace id → (built_at, searcher), backed by the saved states. Thread-safe; a searcher
    is immutable, so one found here can serve queries while another replaces it."""

    def __init__(self, library: Any, engine: Callable[[], Any]) -> None:
        self._library = library
        self._engine = engine  # a callable: the manager's engine may be swapped (tests, reopen)
        self._lock = threading.RLock()
        self._save_lock = threading.Lock()
        self._mem: dict[int, tuple[datetime, Any]] = {}
        # A build running in this process publishes snapshots here (live_build.py): searched in
        # place of the last finished build's searcher until the build ends (end_build).
        self._partial: dict[int, Any] = {}
        self._building: set[int] = set()  # builds running in this process (begin_build .. end_build)

    # -- memory ------------------------------------------------------------------------------
    def cached(self, ws_id: int) -> Optional[Any]:
        """The searcher in memory, whatever build it belongs to (None when there is none)."""
        with self._lock:
            entry = self._mem.get(ws_id)
        return entry[1] if entry else None

    def items(self) -> list[tuple[int, Any]]:
        with self._lock:
            return [(i, e[1]) for i, e in self._mem.items()]

    def clear(self) -> None:
        """Forget every searcher in memory (saved states stay): as a new process starts."""
        with self._lock:
            self._mem.clear()

    # -- a build's snapshots ---------------------------------------------------------------------
    def begin_build(self, ws_id: int) -> None:
        with self._lock:
            self._building.add(ws_id)

    def building_here(self, ws_id: int) -> bool:
        """A build of this workspace runs in this process (its first snapshot may not be out yet)."""
        with self._lock:
            return ws_id in self._building

    def publish_partial(self, ws_id: int, searcher: Any) -> None:
        """A running build's latest snapshot (searcher.building, dense_coverage < 1 until done)."""
        with self._lock:
            self._partial[ws_id] = searcher

    def partial(self, ws_id: int) -> Optional[Any]:
        with self._lock:
            return self._partial.get(ws_id)

    def end_build(self, ws_id: int) -> None:
        """The build ended: its snapshots go (a finished build replaced them with its searcher)."""
        with self._lock:
            self._partial.pop(ws_id, None)
            self._building.discard(ws_id)

    # -- get / replace / forget ----------------------------------------------------------------
    def get(self, ws_id: int, built_at: Optional[datetime]) -> Optional[Any]:
        return self.open(ws_id, built_at)[0]

    def open(self, ws_id: int, built_at: Optional[datetime],
             library: Any = None) -> tuple[Optional[Any], Optional[str]]:
        """(searcher of this build, None), from memory or from its saved state; else (None, why).
        ``library``: where the state's rows are read (a caller's shared session), else our own.
        A build running in this process serves its latest snapshot: a first build's always, an
        update's once it has read every file (until then the finished build answers more)."""
        with self._lock:
            snapshot = self._partial.get(ws_id)
            if snapshot is not None and (built_at is None or getattr(snapshot, "keyword_coverage", 1.0) >= 1.0):
                return snapshot, None
            entry = self._mem.get(ws_id)
            if entry is not None and entry[0] == built_at:
                return entry[1], None
        if built_at is None:
            return None, "the workspace is not built"
        t0 = time.perf_counter()
        try:
            searcher = self._load(ws_id, built_at, library or self._library)
        except _Stale as exc:
            log.info("saved searcher of workspace %s not used: %s", ws_id, exc)
            return None, str(exc)
        except Exception as exc:  # noqa: BLE001 - any failure to open means "rebuild", never a crash
            log.warning("saved searcher of workspace %s could not be opened: %s", ws_id, exc)
            return None, f"the saved search index could not be opened ({exc})"
        with self._lock:
            entry = self._mem.get(ws_id)
            if entry is not None and entry[0] == built_at:  # another thread got there first
                return entry[1], None
            self._mem[ws_id] = (built_at, searcher)
        log.info("opened the saved searcher of workspace %s (%d chunks) in %.0f ms", ws_id, len(searcher),
                 (time.perf_counter() - t0) * 1000)
        return searcher, None

    def replace(self, ws_id: int, built_at: datetime, searcher: Any, save: bool = True) -> Optional[str]:
        """Make ``searcher`` this workspace's (a build finished, keys evolved or were reset) and
        save it for the next process. Returns why saving failed (the searcher is used anyway;
        the next process rebuilds), else None."""
        if getattr(searcher, "building", False):  # a snapshot is never taken for a finished build
            raise ValueError("a running build's snapshot cannot replace a build's searcher")
        with self._lock:
            self._mem[ws_id] = (built_at, searcher)
        if not save:
            return None
        try:
            with self._save_lock:
                with self._lock:  # a newer replace came while waiting: it saves its own searcher
                    if self._mem.get(ws_id, (None, None))[1] is not searcher:
                        return None
                self._save(ws_id, built_at, searcher)
        except Exception as exc:  # noqa: BLE001 - a full disk must not fail a build
            log.warning("could not save the searcher of workspace %s: %s", ws_id, exc)
            return f"the search index could not be saved for the next start ({exc})"
        return None

    def update(self, ws_id: int, searcher: Any) -> Optional[str]:
        """Swap the searcher of the current build (keys evolved or reset) and save it; nothing
        happens when this workspace has no searcher in memory."""
        with self._lock:
            entry = self._mem.get(ws_id)
        if entry is None:
            return None
        return self.replace(ws_id, entry[0], searcher)

    def forget(self, ws_id: int, collection: Optional[str] = None, disk: bool = True) -> None:
        """Drop the searcher from memory and (``disk``) its saved states: archive, delete, a
        vector store that failed. ``collection``: the workspace's, when its row is going away."""
        with self._lock:
            self._mem.pop(ws_id, None)
        if not disk:
            return
        if collection is None:
            with self._library.session() as s:
                ws = s.get(Workspace, ws_id)
                collection = ws.collection if ws is not None else None
        if collection:
            shutil.rmtree(self._dir(collection).parent, ignore_errors=True)

    def forget_sharing(self, hashes: Iterable[str], keep: Optional[int] = None) -> None:
        """Drop from memory the searchers holding any of these files (their keys were reset);
        their saved states are found stale by the evolved-key check when next opened."""
        mine = set(hashes)
        with self._lock:
            for ws_id, (_, other) in list(self._mem.items()):
                if ws_id != keep and mine & other.content_hashes():
                    self._mem.pop(ws_id, None)

    def remove_orphans(self, collections: Callable[[], set[str]]) -> list[str]:
        """Remove ``DATA_DIR/workspaces/<collection>/`` folders whose collection is not among
        ``collections()`` (the workspaces that exist). Only folders SPAR made are touched: named
        like a collection ('ws-...') and holding nothing but its saved searcher and build lock.
        The folders are listed before the workspaces are read: a workspace is stored before its
        folder is made, so one being created right now is never taken for an orphan."""
        top = self._engine().settings.layout.workspaces
        try:
            candidates = [d for d in top.iterdir() if d.name.startswith("ws-") and d.is_dir() and not d.is_symlink()]
        except FileNotFoundError:
            return []
        if not candidates:
            return []
        alive = collections()
        removed = []
        for d in candidates:
            if d.name in alive or not all(c.name in _OURS for c in d.iterdir()):
                continue
            shutil.rmtree(d, ignore_errors=True)
            removed.append(d.name)
            log.info("removed the saved search index of a deleted workspace (%s)", d.name)
        return removed

    # -- disk --------------------------------------------------------------------------------
    def _dir(self, collection: str) -> Path:
        return self._engine().settings.layout.searcher_dir(collection)

    def _save(self, ws_id: int, built_at: datetime, searcher: Any) -> Path:
        with self._library.session() as s:
            ws = s.get(Workspace, ws_id)
            if ws is None:
                raise RuntimeError("the workspace no longer exists")
            built_from = {"workspace_id": ws_id, "collection": ws.collection, "built_at": built_at.isoformat(),
                          "model_id": ws.model_id, "chunker_key": ws.chunker_key, "chunks": len(searcher),
                          "key_tags": _tags_digest(searcher, searcher.overrides)}
        root = self._dir(built_from["collection"])
        root.mkdir(parents=True, exist_ok=True)
        token = f"{int(time.time())}-{secrets.token_hex(4)}"
        tmp = root / f"tmp-{token}"
        t0 = time.perf_counter()
        try:
            searcher_state.save(searcher, tmp, built_from)
            final = root / f"state-{token}"
            os.replace(tmp, final)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        pointer = root / f"{POINTER}.{token}"
        pointer.write_text(final.name, encoding="utf-8")
        os.replace(pointer, root / POINTER)  # the switch: atomic on every platform
        _remove_old(root, final.name)
        log.info("saved the searcher of workspace %s (%d chunks) in %.0f ms", ws_id, len(searcher),
                 (time.perf_counter() - t0) * 1000)
        return final

    def _load(self, ws_id: int, built_at: datetime, library: Any) -> Any:
        with library.session() as s:
            ws = s.get(Workspace, ws_id)
            if ws is None or ws.status not in _OPENABLE or ws.built_at != built_at:
                raise _Stale("the workspace changed")
            row = {"workspace_id": ws_id, "collection": ws.collection, "built_at": built_at.isoformat(),
                   "model_id": ws.model_id, "chunker_key": ws.chunker_key, "chunks": ws.chunk_count}
            chunking = ws.chunking
        root = self._dir(row["collection"])
        try:
            name = (root / POINTER).read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            raise _Stale("no saved search index yet") from None
        state = root / name
        try:
            manifest = searcher_state.read_manifest(state)
        except searcher_state.StateError as exc:
            raise _Stale(f"the saved search index is unusable: {exc}") from None
        saved = manifest.get("built_from") or {}
        differ = [k for k, v in row.items() if saved.get(k) != v]
        if differ:
            raise _Stale(f"the saved search index is from another build ({', '.join(differ)} differ)")
        engine = self._engine()
        encoder = engine.encoder
        if encoder.model_id != row["model_id"]:
            raise _Stale("the embedding model changed since the build")
        if build_config(engine.settings, chunking).cache_key != row["chunker_key"]:
            raise _Stale("the chunking settings changed since the build")
        collection = None
        if _dense_in_chroma(engine.settings):
            try:
                collection = ChromaCollection(engine.chroma, row["collection"], encoder.model_id, create=False)
                count = collection.count()
            except Exception as exc:  # noqa: BLE001 - missing, other model, broken: the build sorts it out
                raise _Stale(f"the vector collection is not usable ({exc})") from None
            if count != row["chunks"]:
                raise _Stale(f"the vector collection holds {count} vectors, not {row['chunks']}")
        settings = library.settings
        try:
            searcher = searcher_state.load(state, encoder, collection=collection, manifest=manifest,
                                           alpha_model=load_default_model(settings.data_dir if settings else None))
        except searcher_state.StateError as exc:
            raise _Stale(f"the saved search index is unusable: {exc}") from None
        if _tags_digest(searcher, _stored_keys(library, searcher, row)) != saved.get("key_tags"):
            raise _Stale("evolved keys changed since the index was saved")
        return searcher


class _Stale(Exception):
    pass


def _dense_in_chroma(settings: Any) -> bool:
    """Where a saved searcher's dense side runs. The app (Chroma in its helper process, which keeps
    Chroma's GIL-holding calls off the UI thread) and a team's Chroma server: in Chroma. A one-shot
    CLI process with Chroma in-process: exactly, over the saved matrix memory-mapped, so that a
    `spar ws search` never imports chromadb (0.5-3.5 s measured) for a 20 ms query."""
    return bool(getattr(settings, "chroma_url", None)) or bool(getattr(settings, "chroma_process", False))


def _stored_keys(library: Any, searcher: Any, row: dict) -> dict[str, Any]:
    """Chunk key → evolved key as the database has it now (what a build would apply)."""
    if searcher.original_vectors is None or not row["chunker_key"]:
        return {}
    docs_of: dict[str, list[str]] = {}
    for doc_id, (content_hash, _) in searcher.table.doc_refs.items():
        docs_of.setdefault(content_hash, []).append(doc_id)
    with library.session() as s:
        stored = load_keys(s, list(docs_of), row["chunker_key"], row["model_id"],
                           int(searcher.original_vectors.shape[1]))
    out = {}
    for (content_hash, _, chunk_id), (_, _, tag) in stored.items():
        for doc_id in docs_of.get(content_hash, ()):
            key = f"{doc_id}#{chunk_id}"
            if searcher.position(key) is not None:
                out[key] = tag
    return out


def _tags_digest(searcher: Any, keys: dict[str, Any]) -> str:
    """Digest of (chunk key, tag) of the evolved keys; tags are content-addressed (evolved_keys.key_tag)."""
    h = hashlib.blake2b(digest_size=16)
    for k in sorted(keys):
        tag = keys[k] if isinstance(keys[k], str) else keys[k].tag
        h.update(f"{k}\t{tag}\n".encode("utf-8"))
    return h.hexdigest()


def _remove_old(root: Path, live: str) -> None:
    """Older states go at once (a process still reading one keeps its open files on POSIX; on
    Windows the removal fails and is retried at the next save); tmp-* only once abandoned."""
    now = time.time()
    for child in root.iterdir():
        if child.name == live or child.name == POINTER:
            continue
        try:
            abandoned = now - child.stat().st_mtime > _ABANDONED_SECONDS
        except OSError:
            continue
        if child.name.startswith("state-"):
            shutil.rmtree(child, ignore_errors=True)
        elif abandoned and child.name.startswith("tmp-"):
            shutil.rmtree(child, ignore_errors=True)
        elif abandoned and child.name.startswith(f"{POINTER}."):
            child.unlink(missing_ok=True)

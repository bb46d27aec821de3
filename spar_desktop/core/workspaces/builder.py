"""Building a workspace: admitted files → embedding cache → the workspace's Chroma collection.

Only what the cache lacks is extracted and embedded; an update adds and removes only the
difference; a cancelled build keeps every finished batch in the cache and resumes next time.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional

from sqlalchemy import delete, select

from spar_desktop.core.changes import Changes
from spar_desktop.core.documents.reading import OCR_NOTE, ReadOptions, read_document
from spar_desktop.core.documents.virtual import outer_path
from spar_desktop.core.embedding.pipeline import embed_documents
from spar_desktop.core.library.models import File, FileStatus, Folder, utcnow
from spar_desktop.core.library.paths import is_within, os_path
from spar_desktop.core.library.probe import SAMPLED_HASH_PREFIX, storable_mtime_ns
from spar_desktop.core.progress import CancelToken, Cancelled, Progress, ProgressCallback, no_progress
from spar_desktop.core.retrieval.alpha import load_default_model
from spar_desktop.core.retrieval.searcher import HybridSearcher
from spar_desktop.core.retrieval.vector_store import ChromaCollection, ModelMismatchError, delete_collection
from spar_desktop.core.workspaces.build_lock import build_running
from spar_desktop.core.workspaces.chunkings import build_config
from spar_desktop.core.workspaces.enhance import contextual_overlay
from spar_desktop.core.workspaces.errors import ModelChangedError, WorkspaceError
from spar_desktop.core.workspaces.evolved_keys import carry_over, drop_unreferenced, evolved_overrides
from spar_desktop.core.workspaces.freshness import built_files, compare, index_states
from spar_desktop.core.workspaces.models import Workspace, WorkspaceFile, WorkspaceFileState, WorkspaceStatus
from spar_desktop.core.workspaces.selection import admitted_files

if TYPE_CHECKING:  # the manager calls this module: a type only
    from spar_desktop.core.workspaces.manager import Workspaces

log = logging.getLogger(__name__)

UNREADABLE = {FileStatus.ERROR: WorkspaceFileState.FAILED, FileStatus.ENCRYPTED: WorkspaceFileState.FAILED,
              FileStatus.MISSING: WorkspaceFileState.MISSING, FileStatus.EMPTY: WorkspaceFileState.NO_TEXT,
              FileStatus.UNSUPPORTED: WorkspaceFileState.NO_TEXT}


@dataclass
class WorkspaceBuildReport:
    name: str
    admitted: int = 0
    ready: int = 0
    chunks: int = 0
    embedded_chunks: int = 0  # newly embedded in this build (0 when everything came from the cache)
    read_documents: int = 0  # documents read from disk (not in the cache: new or changed content)
    # What the index had changed since the last build (freshness.py): files updated, added, dropped.
    changed_files: int = 0
    new_files: int = 0
    removed_files: int = 0
    carried_keys: int = 0  # learned keys (ERM) that followed a chunk whose text survived an edit
    dropped_keys: int = 0  # learned keys of document versions no workspace holds any more
    reused_documents: int = 0
    added_vectors: int = 0
    removed_vectors: int = 0
    rewritten_vectors: int = 0  # kept their id with a new vector (an edited file's changed passages)
    duplicates: int = 0  # admitted files whose content another admitted file already has
    problems: list[tuple[str, str, str]] = field(default_factory=list)  # (path, state, message)
    notes: list[str] = field(default_factory=list)
    cancelled: bool = False
    seconds: float = 0.0
    chunking: str = ""  # how the collection is cut and scored, chosen from its lengths (keyword_units.py)

    @property
    def changes(self) -> Changes:
        return Changes(workspaces=True)  # however it ended: the row's status, counts and files

    def describe(self) -> str:
        """One line for a status bar."""
        if self.cancelled:
            return f"Build of '{self.name}' stopped; finished files are kept and the next build resumes"
        text = (f"'{self.name}' is ready: {self.ready} of {self.admitted} files, {self.chunks:,} passages "
                f"({self.embedded_chunks:,} newly embedded) in {self.seconds:.1f} s")
        caught_up = ", ".join(f"{n} {what}" for n, what in ((self.changed_files, "changed"),
                                                            (self.new_files, "new"), (self.removed_files, "removed")) if n)
        if caught_up:
            text += f"; updated: {caught_up}"
        if self.problems:
            text += f"; {len(self.problems)} file{'s' if len(self.problems) != 1 else ''} could not be used"
        return text

    def to_json(self) -> dict:
        d = dict(self.__dict__)
        d["problems"] = [{"path": p, "state": st, "message": m} for p, st, m in self.problems]
        return d


def _load_collection(manager: "Workspaces", ws: Workspace, rebuild: bool):
    model_id = manager.engine.encoder.model_id
    try:
        return ChromaCollection(manager.engine.chroma, ws.collection, model_id)
    except ModelMismatchError as exc:
        if not rebuild:
            raise ModelChangedError(f"{exc}. Rebuilding re-embeds every file of '{ws.name}': "
                                    f"run `spar ws build \"{ws.name}\" --rebuild` (or confirm in the app)") from exc
        delete_collection(manager.engine.chroma, ws.collection)
        return ChromaCollection(manager.engine.chroma, ws.collection, model_id)


def _refuse_to_read(real: str, root: Optional[str], content_hash: Optional[str]) -> Optional[str]:
    """Why this file must not be embedded now, or None.

    The scan already refuses links out of a root; a link retargeted since then is caught here.
    A sampled fingerprint is not a document identity (two different files can share one).
    """
    if root is not None and os.path.islink(real) and not is_within(os.path.realpath(real), root):
        return "symbolic link to a file outside the indexed folder: not followed"
    if content_hash is None or content_hash.startswith(SAMPLED_HASH_PREFIX):
        return "no full-content fingerprint yet: re-scan its folder"
    return None


def _read_options(lib) -> ReadOptions:
    settings = lib.settings
    if settings is None:
        return ReadOptions()
    return ReadOptions(budget=settings.extraction_budget(), ocr=settings.ocr_enabled,
                       ocr_cache_path=settings.layout.ocr_cache)


def _on_disk_problem(f: File, container: Optional[tuple[int, int]]) -> Optional[tuple[str, str]]:
    """(state, message) when the file (or, for a child document, its container) is not as the
    last scan saw it; None when it is."""
    real = os_path(f.path, f.raw_path)
    size, mtime = (f.size, f.mtime_ns) if container is None else container
    try:
        st = os.stat(outer_path(real))
    except OSError:
        return WorkspaceFileState.MISSING, "no longer on disk"
    if st.st_size != size or storable_mtime_ns(st.st_mtime_ns) != mtime:  # stored clamped (a file dated 2400)
        return WorkspaceFileState.FAILED, "changed on disk since the last scan: re-scan its folder"
    return None


def build_workspace(manager: "Workspaces", name: str, progress: ProgressCallback = no_progress,
                    cancel: Optional[CancelToken] = None, rebuild: bool = False) -> WorkspaceBuildReport:
    settings = manager.library.settings or manager.engine.settings
    with manager.library.session() as s:
        collection = manager.workspace_row(s, name).collection
    # Another process holding the local store refuses the build here, before anything is marked
    # "building" or embedded (otherwise the workspace ended as "error" and unsearchable).
    manager.engine.hold_store()
    with build_running(getattr(settings, "data_dir", None), collection):
        return _build_workspace(manager, name, progress, cancel, rebuild)


def _build_workspace(manager: "Workspaces", name: str, progress: ProgressCallback,
                     cancel: Optional[CancelToken], rebuild: bool) -> WorkspaceBuildReport:
    start = time.perf_counter()
    report = WorkspaceBuildReport(name)
    lib, eng = manager.library, manager.engine
    flt = manager.current_filter(name)
    report.notes += [p for p in flt.problems if "deleted" in p or "dropped" in p]
    with lib.session() as s:
        ws = manager.workspace_row(s, name)
        ws_id, previous, prev_chunks, was_built = ws.id, ws.status, ws.chunk_count, ws.built_at is not None
        chunking = ws.chunking
        ws.status = WorkspaceStatus.BUILDING
    progress(Progress(0, None, "selecting files"))
    admitted = admitted_files(lib, flt)
    report.admitted = len(admitted)
    with lib.session() as s:
        rows = {f.id: f for f in s.scalars(select(File).where(File.id.in_([a[0] for a in admitted])))} if admitted else {}
        roots = {i: p for i, p in s.execute(select(Folder.id, Folder.path))}
        outers = sorted({outer_path(f.path) for f in rows.values() if f.parent_id is not None})
        containers = {p: (sz, mt) for i in range(0, len(outers), 500) for p, sz, mt in s.execute(
            select(File.path, File.size, File.mtime_ns).where(File.path.in_(outers[i:i + 500])))}
    # What changed since the last build: the admitted files' rows are read above; only files the
    # workspace held and no longer admits are looked up.
    held = built_files(lib, ws_id) if was_built else []
    index = {i: (f.status, f.content_hash, f.path) for i, f in rows.items()}
    index.update(index_states(lib, [r[0] for r in held if r[0] is not None and r[0] not in rows]))
    diff = compare(held, admitted, index)
    report.changed_files, report.new_files, report.removed_files = len(diff.changed), len(diff.new), len(diff.removed)
    states: dict[int, tuple[str, Optional[str]]] = {}
    items = []
    config = build_config(lib.settings, chunking)
    options = _read_options(lib)
    primary: dict[str, str] = {}  # content hash -> the admitted path searched for it (copies collapse)
    for file_id, path, content_hash in admitted:
        f = rows[file_id]
        if f.status in UNREADABLE:
            states[file_id] = (UNREADABLE[f.status], f.error or f.status)
            continue
        real = os_path(f.path, f.raw_path)
        refusal = _refuse_to_read(outer_path(real), roots.get(f.folder_id), content_hash)
        if refusal:
            states[file_id] = (WorkspaceFileState.FAILED, refusal)
            continue
        container = containers.get(outer_path(f.path)) if f.parent_id is not None else None
        if f.parent_id is not None and container is None:
            states[file_id] = (WorkspaceFileState.MISSING, "its container is no longer in the index")
            continue
        problem = _on_disk_problem(f, container)
        if problem:
            states[file_id] = problem
            continue
        if content_hash in primary:  # the same bytes under another name: one document, one set of vectors
            states[file_id] = (WorkspaceFileState.DUPLICATE, f"same content as {primary[content_hash]}")
            continue
        primary[content_hash] = path
        items.append((content_hash, (lambda p=real, fmt=f.format, h=content_hash:
                                     read_document(p, fmt, h, options, cancel, progress))))
    errors: dict[str, str] = {}
    before = getattr(eng.encoder, "texts_encoded", 0)
    cached_before = sum(1 for h, _ in items if eng.cache.has(h, config.cache_key, eng.encoder.model_id))
    try:
        docs = embed_documents(items, config, eng.encoder, eng.cache, progress, cancel,
                               on_error=lambda h, exc: errors.__setitem__(h, str(exc)))
        docs = contextual_overlay(eng.cache, docs, lib.settings, chunking, config)  # enhanced ones swap in
        by_doc, file_ids, ocr_ids = {}, {}, []
        for file_id, path, content_hash in admitted:
            if file_id in states:
                continue
            if content_hash in errors:
                states[file_id] = (WorkspaceFileState.FAILED, errors[content_hash])
                continue
            doc = docs.get(content_hash)
            if doc is None or not doc.children:
                reason = (doc.no_text_reason if doc is not None else None) or "no searchable text"
                states[file_id] = (WorkspaceFileState.NO_TEXT, reason)
                continue
            by_doc[str(file_id)] = doc.with_file_id(file_id)
            file_ids[str(file_id)] = file_id
            from_ocr = any(w.startswith(OCR_NOTE) for w in doc.warnings)
            states[file_id] = (WorkspaceFileState.READY, OCR_NOTE if from_ocr else None)
            if from_ocr:
                ocr_ids.append(file_id)
        report.carried_keys = carry_over(lib, eng.cache, _edits(held, admitted, docs))
        progress(Progress(0, None, "loading vectors into the workspace collection"))
        searcher, had_ids = _fill_collection(manager, ws_id, rebuild, by_doc, file_ids, cancel)
        if not had_ids and prev_chunks > 0 and previous == WorkspaceStatus.ACTIVE:
            report.notes.append("the workspace's vector collection was missing; rebuilt from cached embeddings")
    except Cancelled:
        report.cancelled = True
        with lib.session() as s:
            ws = s.get(Workspace, ws_id)
            # A build left BUILDING by a killed process is not a state to return to.
            ws.status = previous if previous not in (WorkspaceStatus.ACTIVE, WorkspaceStatus.BUILDING) \
                else WorkspaceStatus.DRAFT
            ws.last_error = "build cancelled: build again to finish (finished work is kept in the cache)"
        report.seconds = time.perf_counter() - start
        return report
    except Exception as exc:
        with lib.session() as s:
            ws = s.get(Workspace, ws_id)
            ws.status, ws.last_error = WorkspaceStatus.ERROR, str(exc)
        if isinstance(exc, WorkspaceError):
            raise
        raise WorkspaceError(f"building '{name}' failed: {exc}") from exc
    report.embedded_chunks = getattr(eng.encoder, "texts_encoded", 0) - before
    report.reused_documents = cached_before
    report.read_documents = len({h for h, _ in items}) - cached_before
    report.chunks = len(searcher)
    report.chunking = searcher.chunking.describe()
    report.ready = sum(1 for st, _ in states.values() if st == WorkspaceFileState.READY)
    report.duplicates = sum(1 for st, _ in states.values() if st == WorkspaceFileState.DUPLICATE)
    if report.duplicates:
        report.notes.append(f"{report.duplicates} file(s) with the same content as another admitted file: "
                            "searched once, shown as 'also at'")
    report.added_vectors = len(set(searcher.keys) - had_ids)
    report.removed_vectors = len(had_ids - set(searcher.keys))
    report.rewritten_vectors = getattr(searcher, "rewritten_vectors", 0)
    with lib.session() as s:
        s.execute(delete(WorkspaceFile).where(WorkspaceFile.workspace_id == ws_id))
        for file_id, path, content_hash in admitted:
            state, err = states[file_id]
            n = len(by_doc[str(file_id)].children) if state == WorkspaceFileState.READY else 0
            s.add(WorkspaceFile(workspace_id=ws_id, file_id=file_id, path=path, content_hash=content_hash,
                                state=state, error=err, chunks=n))
            if state not in (WorkspaceFileState.READY, WorkspaceFileState.DUPLICATE):
                report.problems.append((path, state, err or state))
        for f in s.scalars(select(File).where(File.id.in_(ocr_ids))) if ocr_ids else ():
            f.extra = {**(f.extra or {}), "text_source": "ocr"}  # the file's status says "text from OCR"
        ws = s.get(Workspace, ws_id)
        ws.status, ws.built_at, ws.last_used_at = WorkspaceStatus.ACTIVE, utcnow(), utcnow()
        ws.archived_at, ws.last_error = None, None
        ws.model_id, ws.chunker_key, ws.chunk_count = eng.encoder.model_id, config.cache_key, len(searcher)
        built_at = ws.built_at
    report.dropped_keys = drop_unreferenced(lib, {h for _, _, h, _ in held if h} - {h for _, _, h in admitted if h})
    progress(Progress(0, None, "saving the search index"))
    problem = manager.searchers.replace(ws_id, built_at, searcher)  # the next process opens it, no rebuild
    if problem:
        report.notes.append(problem)
    report.notes += eng.notes
    eng.notes.clear()
    report.seconds = time.perf_counter() - start
    progress(Progress(1, 1, f"{report.ready} files, {report.chunks} chunks ready"))
    return report


def _fill_collection(manager: "Workspaces", ws_id: int, rebuild: bool, by_doc: dict, file_ids: dict,
                     cancel: Optional[CancelToken]):
    """Sync the collection to the documents and make the searcher. A vector store that fails
    (deleted or damaged behind our back) is reopened, then set aside, and filled from the cache."""
    eng = manager.engine
    for attempt in range(3):
        try:
            collection = _load_collection(manager, _ws(manager.library, ws_id), rebuild)
            had_ids = collection.ids()
            searcher = HybridSearcher(by_doc, eng.encoder, collection=collection, file_ids=file_ids, cancel=cancel,
                                      key_overrides=_evolved_keys(manager, by_doc), alpha_model=_alpha_model(manager),
                                      present_ids=had_ids)
            return searcher, had_ids
        except (Cancelled, WorkspaceError):
            raise
        except Exception as exc:  # noqa: BLE001 - chromadb raises many kinds for a broken store
            if attempt == 2:
                raise
            log.warning("vector store failed (%s); %s", exc, "reopening" if attempt == 0 else "resetting")
            eng.reopen_chroma() if attempt == 0 else eng.reset_chroma()
    raise AssertionError("unreachable")


def _evolved_keys(manager: "Workspaces", by_doc: dict) -> dict:
    """Keys these chunks evolved to (ERM, core/memory); a build never fails because of them."""
    enc = manager.engine.encoder
    try:
        return evolved_overrides(manager.library, by_doc, enc.model_id, int(enc.dim))
    except Exception as exc:  # noqa: BLE001 - original keys are always a correct fallback
        log.warning("evolved keys not applied (original keys used): %s", exc)
        return {}


def _alpha_model(manager: "Workspaces"):
    """A learned fusion weight (``spar eval --alpha learned --save-alpha DATA_DIR/alpha.json``)
    when one was trained, else None: the fixed weight."""
    return load_default_model(manager.library.settings.data_dir if manager.library.settings else None)


def _edits(held: list, admitted: list, docs: dict) -> list[tuple[str, Any]]:
    """(content hash as built, the new version's document) for every file whose content changed."""
    before = {fid: h for fid, _, h, _ in held if fid is not None and h}
    return [(before[fid], docs[h]) for fid, _, h in admitted
            if fid in before and h and before[fid] != h and h in docs]


def _ws(lib, ws_id: int) -> Workspace:
    with lib.session() as s:
        return s.get(Workspace, ws_id)

"""Building a workspace: admitted files → embedding cache → the workspace's Chroma collection.

Only what the cache lacks is extracted and embedded; an update adds and removes only the
difference; a cancelled build keeps every finished batch in the cache and resumes next time.
The manager resolves the workspace (``BuildTarget``: plain values) and hands over the services
(``BuildServices``); this module never calls back into it. The collection's vectors are written
here (``_fill_collection`` → collection_sync.py), which is also the one place a broken vector
store is reopened or set aside.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any, Optional

from sqlalchemy import delete, select

from spar_desktop.core.embedding.pipeline import embed_documents
from spar_desktop.core.library.models import File, utcnow
from spar_desktop.core.progress import CancelToken, Cancelled, Progress, ProgressCallback, no_progress
from spar_desktop.core.retrieval.alpha import load_default_model
from spar_desktop.core.retrieval.collection_sync import open_store_in_background, sync_collection
from spar_desktop.core.retrieval.searcher import HybridSearcher
from spar_desktop.core.retrieval.vector_store import ChromaCollection, ModelMismatchError, delete_collection
from spar_desktop.core.workspaces.build_lock import build_running
from spar_desktop.core.workspaces.build_plan import ReadPlan, index_rows, plan_reads, read_options
from spar_desktop.core.workspaces.build_report import WorkspaceBuildReport
from spar_desktop.core.workspaces.chunkings import build_config, contextual_overlay
from spar_desktop.core.workspaces.errors import ModelChangedError, WorkspaceError
from spar_desktop.core.workspaces.evolved_keys import carry_over, drop_unreferenced, evolved_overrides
from spar_desktop.core.workspaces.freshness import built_files, compare, index_states
from spar_desktop.core.workspaces.models import Workspace, WorkspaceFile, WorkspaceFileState, WorkspaceStatus
from spar_desktop.core.workspaces.live_build import Growing, Publisher, ReadAhead, assign, embedding_order
from spar_desktop.core.workspaces.ranking import select_files
from spar_desktop.core.workspaces.selection import WorkspaceFilter

__all__ = ["BuildServices", "BuildTarget", "WorkspaceBuildReport", "build_workspace"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BuildTarget:
    """The workspace to build, as the manager resolved it (its live filter: deleted tags dropped)."""
    id: int
    name: str
    collection: str
    filter: WorkspaceFilter


@dataclass(frozen=True)
class BuildServices:
    """What a build uses: the index, the engine (encoder, cache, Chroma) and the searcher cache."""
    library: Any
    engine: Any
    searchers: Any  # searchers.SearcherCache: the finished build's searcher is saved there


def build_workspace(services: BuildServices, target: BuildTarget, progress: ProgressCallback = no_progress,
                    cancel: Optional[CancelToken] = None, rebuild: bool = False,
                    reopen_store: bool = False) -> WorkspaceBuildReport:
    """Build or update ``target``. ``reopen_store``: a search found the vector store failing, so
    the client is reopened before the collection is filled."""
    settings = services.library.settings or services.engine.settings
    # Another process holding the local store refuses the build here, before anything is marked
    # "building" or embedded (otherwise the workspace ended as "error" and unsearchable).
    services.engine.hold_store()
    with build_running(getattr(settings, "data_dir", None), target.collection):
        services.searchers.begin_build(target.id)
        try:
            return _Build(services, target, progress, cancel, rebuild, reopen_store).run()
        finally:  # finished (its searcher replaced the snapshots), cancelled or failed
            services.searchers.end_build(target.id)


@dataclass
class _Indexed:
    """What embedding produced: documents by id, OCR'd files, the searcher and the ids Chroma had."""
    by_doc: dict
    ocr_ids: list[int]
    searcher: Any
    had_ids: set[str]


class _Build:
    def __init__(self, services: BuildServices, target: BuildTarget, progress: ProgressCallback,
                 cancel: Optional[CancelToken], rebuild: bool, reopen_store: bool) -> None:
        self.lib, self.eng, self.searchers = services.library, services.engine, services.searchers
        self.target, self.progress, self.cancel = target, progress, cancel
        self.rebuild, self.reopen_store = rebuild, reopen_store
        self.report = WorkspaceBuildReport(target.name)
        self.chunking = ""  # read with the row in _mark_building
        self.start = time.perf_counter()
        self.publisher = Publisher(services.searchers, target.id, progress)  # a build's snapshots (live_build.py)

    def run(self) -> WorkspaceBuildReport:
        report, flt = self.report, self.target.filter
        report.notes += [p for p in flt.problems if "deleted" in p or "dropped" in p]
        previous, prev_chunks, was_built = self._mark_building()
        self.progress(Progress(0, None, "selecting files"))
        selected = select_files(self.lib, flt)
        admitted = list(selected.rows)
        ranked_ids = [f.file_id for f in selected.ranking.admitted] if selected.ranking else None
        report.admitted = len(admitted)
        index = index_rows(self.lib, admitted)
        # What changed since the last build: the admitted files' rows are read above; only files
        # the workspace held and no longer admits are looked up.
        held = built_files(self.lib, self.target.id) if was_built else []
        states = {i: (f.status, f.content_hash, f.path) for i, f in index.files.items()}
        states.update(index_states(self.lib, [r[0] for r in held if r[0] is not None and r[0] not in index.files]))
        diff = compare(held, admitted, states)
        report.changed_files, report.new_files = len(diff.changed), len(diff.new)
        report.removed_files = len(diff.removed)
        config = build_config(self.lib.settings, self.chunking)
        plan = plan_reads(admitted, index, read_options(self.lib.settings), self.cancel, self.progress)
        before = getattr(self.eng.encoder, "texts_encoded", 0)
        model_id = self.eng.encoder.model_id
        cached_before = sum(1 for h, _ in plan.items if self.eng.cache.has(h, config.cache_key, model_id))
        try:
            done = self._embed_and_index(admitted, held, plan, config, ranked_ids)
        except Cancelled:
            return self._cancelled(previous)
        except Exception as exc:
            failure = self._failed(exc)
            if failure is exc:
                raise
            raise failure from exc
        if not done.had_ids and prev_chunks > 0 and previous == WorkspaceStatus.ACTIVE:
            report.notes.append("the workspace's vector collection was missing; rebuilt from cached embeddings")
        report.embedded_chunks = getattr(self.eng.encoder, "texts_encoded", 0) - before
        report.reused_documents = cached_before
        report.read_documents = len({h for h, _ in plan.items}) - cached_before
        self._count(plan.states, done)
        built_at = self._record(admitted, plan.states, done, config)
        gone = {h for _, _, h, _ in held if h} - {h for _, _, h in admitted if h}
        report.dropped_keys = drop_unreferenced(self.lib, gone)
        self.progress(Progress(0, None, "saving the search index"))
        problem = self.searchers.replace(self.target.id, built_at, done.searcher)  # the next process opens it
        if problem:
            report.notes.append(problem)
        report.notes += self.eng.notes
        self.eng.notes.clear()
        report.seconds = time.perf_counter() - self.start
        self.progress(Progress(1, 1, f"{report.ready} files, {report.chunks} chunks ready"))
        return report

    def _mark_building(self) -> tuple[str, int, bool]:
        """(status before, chunk count before, built before) and the row marked BUILDING."""
        with self.lib.session() as s:
            ws = s.get(Workspace, self.target.id)
            if ws is None:
                raise WorkspaceError(f"the workspace '{self.target.name}' was deleted")
            previous, prev_chunks, was_built = ws.status, ws.chunk_count, ws.built_at is not None
            self.chunking = ws.chunking  # chunkings.CHUNKINGS; empty on rows made before the choice
            ws.status = WorkspaceStatus.BUILDING
        return previous, prev_chunks, was_built

    def _embed_and_index(self, admitted: list, held: list, plan: ReadPlan, config: Any,
                         ranked_ids: Optional[list[int]]) -> _Indexed:
        errors: dict[str, str] = {}
        if not self.reopen_store:
            open_store_in_background(self.eng)  # Chroma's import and start-up overlap the encoding

        def on_error(h: str, exc: Exception) -> None:
            errors[h] = str(exc)

        items = embedding_order(plan.items, admitted, ranked_ids)  # best-ranked files embedded first
        if config.method == "semantic":  # the chunker needs the model: no keyword phase (live_build.py)
            growing = Growing(lambda got, share: self._snapshot(admitted, plan, got, {}, share, got), len(items))
            docs = embed_documents(items, config, self.eng.encoder, self.eng.cache, self.progress, self.cancel,
                                   on_error=on_error, on_documents_ready=growing.add)
        else:
            docs = self._searchable_while_embedding(admitted, plan, config, items, on_error)
        docs = contextual_overlay(self.eng.cache, docs, self.lib.settings, self.chunking, config)  # enhanced ones swap in
        got = assign(admitted, plan.states, docs, errors)
        plan.states.update(got.states)
        self.report.carried_keys = carry_over(self.lib, self.eng.cache, _edits(held, admitted, docs))
        searcher = HybridSearcher(got.by_doc, self.eng.encoder, file_ids=got.file_ids, cancel=self.cancel,
                                  key_overrides=self._evolved_keys(got.by_doc), alpha_model=self._alpha_model())
        self.progress(Progress(0, None, "loading vectors into the workspace collection"))
        searcher, had_ids = self._fill_collection(searcher)
        return _Indexed(got.by_doc, got.ocr_ids, searcher, had_ids)

    def _searchable_while_embedding(self, admitted: list, plan: ReadPlan, config: Any, items: list,
                                    on_error: Any) -> dict:
        """Read and chunk everything, publishing keyword snapshots as files are read (best-ranked
        first), then embed what the cache lacks, publishing the growing dense side (live_build.py).
        The documents returned are those ``embed_documents`` over ``items`` returns."""
        enc = self.eng.encoder
        ahead = ReadAhead(config, enc, self.eng.cache)

        def publish(keyword: float) -> None:  # a keyword snapshot of the files read so far
            self._snapshot(admitted, plan, ahead.documents(), ahead.errors, keyword, ahead.cached)

        self.progress(Progress(0, len(items), "reading files"))
        ahead.run(items, self.progress, self.cancel, on_due=publish)
        publish(1.0)
        publisher = self.publisher
        embedded = embed_documents(ahead.to_embed(items), config, enc, self.eng.cache, publisher.tell, self.cancel,
                                   on_error=on_error, chunk_fn=ahead.chunk_fn(), on_documents_ready=publisher.add)
        publisher.finish()
        return {**ahead.cached, **embedded}

    def _snapshot(self, admitted: list, plan: ReadPlan, docs: dict, errors: dict, keyword: float,
                  embedded: dict) -> None:
        """Publish a snapshot over ``docs`` (``keyword``: the share of files they are), whose
        ``embedded`` ones have their vectors."""
        got = assign(admitted, plan.states, docs, {h: str(e) for h, e in errors.items()}, label=False)
        self.publisher.start(HybridSearcher(got.by_doc, self.eng.encoder, file_ids=got.file_ids, cancel=self.cancel,
                                            alpha_model=self._alpha_model()), embedded, keyword)
        if self.report.searchable_seconds is None:
            self.report.searchable_seconds = time.perf_counter() - self.start

    def _fill_collection(self, searcher: HybridSearcher) -> tuple[HybridSearcher, set[str]]:
        """Write the searcher's vectors into the collection (missing ids added, stale ones
        deleted). The one recovery of a vector store that fails (deleted or damaged behind our
        back): reopen it, then set it aside, and fill it from the cache."""
        if self.reopen_store:
            self.eng.reopen_chroma()
        for attempt in range(3):
            try:
                collection = self._load_collection()
                had_ids = collection.ids()
                searcher_in_chroma, rewritten = sync_collection(searcher, collection, present=had_ids,
                                                                cancel=self.cancel)
                self.report.rewritten_vectors = rewritten
                return searcher_in_chroma, had_ids
            except (Cancelled, WorkspaceError):
                raise
            except Exception as exc:  # noqa: BLE001 - chromadb raises many kinds for a broken store
                if attempt == 2:
                    raise
                log.warning("vector store failed (%s); %s", exc, "reopening" if attempt == 0 else "resetting")
                self.eng.reopen_chroma() if attempt == 0 else self.eng.reset_chroma()
        raise AssertionError("unreachable")

    def _load_collection(self) -> ChromaCollection:
        chroma, name, model_id = self.eng.chroma, self.target.collection, self.eng.encoder.model_id
        try:
            return ChromaCollection(chroma, name, model_id)
        except ModelMismatchError as exc:
            if not self.rebuild:
                ws = self.target.name
                raise ModelChangedError(f"{exc}. Rebuilding re-embeds every file of '{ws}': "
                                        f"run `spar ws build \"{ws}\" --rebuild` (or confirm in the app)") from exc
            delete_collection(chroma, name)
            return ChromaCollection(chroma, name, model_id)

    def _evolved_keys(self, by_doc: dict) -> dict:
        """Keys these chunks evolved to (ERM, core/memory); a build never fails because of them."""
        enc = self.eng.encoder
        try:
            return evolved_overrides(self.lib, by_doc, enc.model_id, int(enc.dim))
        except Exception as exc:  # noqa: BLE001 - original keys are always a correct fallback
            log.warning("evolved keys not applied (original keys used): %s", exc)
            return {}

    def _alpha_model(self) -> Any:
        """A learned fusion weight (``spar eval --alpha learned --save-alpha DATA_DIR/alpha.json``)
        when one was trained, else None: the fixed weight."""
        return load_default_model(self.lib.settings.data_dir if self.lib.settings else None)

    def _cancelled(self, previous: str) -> WorkspaceBuildReport:
        self.report.cancelled = True
        with self.lib.session() as s:
            ws = s.get(Workspace, self.target.id)
            # A build left BUILDING by a killed process is not a state to return to.
            ws.status = previous if previous not in (WorkspaceStatus.ACTIVE, WorkspaceStatus.BUILDING) \
                else WorkspaceStatus.DRAFT
            ws.last_error = "build cancelled: build again to finish (finished work is kept in the cache)"
        self.report.seconds = time.perf_counter() - self.start
        return self.report

    def _failed(self, exc: Exception) -> WorkspaceError:
        """The row marked ERROR; the error to raise (a WorkspaceError as it is)."""
        with self.lib.session() as s:
            ws = s.get(Workspace, self.target.id)
            ws.status, ws.last_error = WorkspaceStatus.ERROR, str(exc)
        if isinstance(exc, WorkspaceError):
            return exc
        return WorkspaceError(f"building '{self.target.name}' failed: {exc}")

    def _count(self, states: dict, done: _Indexed) -> None:
        report, searcher = self.report, done.searcher
        report.chunks = len(searcher)
        report.chunking = searcher.chunking.describe()
        report.ready = sum(1 for st, _ in states.values() if st == WorkspaceFileState.READY)
        report.duplicates = sum(1 for st, _ in states.values() if st == WorkspaceFileState.DUPLICATE)
        if report.duplicates:
            report.notes.append(f"{report.duplicates} file(s) with the same content as another admitted file: "
                                "searched once, shown as 'also at'")
        report.added_vectors = len(set(searcher.keys) - done.had_ids)
        report.removed_vectors = len(done.had_ids - set(searcher.keys))

    def _record(self, admitted: list, states: dict, done: _Indexed, config: Any) -> Any:
        """The workspace's files, its OCR'd files and its row as built; returns built_at."""
        ws_id = self.target.id
        with self.lib.session() as s:
            s.execute(delete(WorkspaceFile).where(WorkspaceFile.workspace_id == ws_id))
            for file_id, path, content_hash in admitted:
                state, err = states[file_id]
                n = len(done.by_doc[str(file_id)].children) if state == WorkspaceFileState.READY else 0
                s.add(WorkspaceFile(workspace_id=ws_id, file_id=file_id, path=path, content_hash=content_hash,
                                    state=state, error=err, chunks=n))
                if state not in (WorkspaceFileState.READY, WorkspaceFileState.DUPLICATE):
                    self.report.problems.append((path, state, err or state))
            for f in s.scalars(select(File).where(File.id.in_(done.ocr_ids))) if done.ocr_ids else ():
                f.extra = {**(f.extra or {}), "text_source": "ocr"}  # the file's status says "text from OCR"
            ws = s.get(Workspace, ws_id)
            ws.status, ws.built_at, ws.last_used_at = WorkspaceStatus.ACTIVE, utcnow(), utcnow()
            ws.archived_at, ws.last_error = None, None
            ws.model_id, ws.chunker_key = self.eng.encoder.model_id, config.cache_key
            ws.chunk_count = len(done.searcher)
            return ws.built_at


def _edits(held: list, admitted: list, docs: dict) -> list[tuple[str, Any]]:
    """(content hash as built, the new version's document) for every file whose content changed."""
    before = {fid: h for fid, _, h, _ in held if fid is not None and h}
    return [(before[fid], docs[h]) for fid, _, h in admitted
            if fid in before and h and before[fid] != h and h in docs]

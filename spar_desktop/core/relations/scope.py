"""The documents a relations build covers: one workspace's files, or the whole index.

Vectors come through the embedding cache (``embed_documents`` embeds only what it lacks, so a
built workspace costs nothing here); TF-IDF needs only text, so it extracts without loading the
encoder at all.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

from sqlalchemy import select

from spar_desktop.core.documents.errors import ExtractionError
from spar_desktop.core.library.models import File, FileStatus, FileTag, Tag
from spar_desktop.core.library.paths import os_path
from spar_desktop.core.progress import CancelToken, Progress, ProgressCallback, check, no_progress
from spar_desktop.core.relations.doc_vectors import DocSet, from_cached
from spar_desktop.core.relations.errors import RelationsError
from spar_desktop.core.workspaces.errors import WorkspaceError
from spar_desktop.core.workspaces.models import WorkspaceFile, WorkspaceFileState

if TYPE_CHECKING:
    from spar_desktop.core.library.database import Library

# The app's main window imports this module (scope_key): imports inside functions
# defer the search stack (workspaces.manager / engine, embedding, extraction: 0.1-0.3 s), which
# the window's start does not otherwise load. Each says so.

SCOPE_INDEX = "index"


class BuildNotConfirmed(RelationsError):
    """Showing the graph would build the whole index's relations (none stored yet, a rebuild, or
    a long ``update`` of stored ones) and nobody has said yes: ``estimate`` (estimate.BuildEstimate) says what it would cost.
    Nothing embeds the whole index unless the user asks for it (service.require_confirmation)."""

    def __init__(self, estimate: Any, rebuild: bool = False, update: bool = False) -> None:
        self.estimate, self.rebuild, self.update = estimate, rebuild, update
        what = ("rebuilding the relations of the whole index" if rebuild else
                "updating the whole index's relations after the files changed takes a while" if update
                else "the whole index has no relations built yet")
        super().__init__(f"{what}: {estimate.summary()}")


@dataclass(frozen=True)
class ScopeFile:
    file_id: int
    path: str
    os_path: str
    content_hash: str
    format: str
    title: Optional[str]
    folder: str
    tags: tuple[str, ...]


def no_documents(ws_id: Optional[int]) -> RelationsError:
    where = "this workspace (build it first: spar ws build NAME)" if ws_id is not None else \
        "the index (add a folder first: spar index DIR)"
    return RelationsError(f"no documents to relate in {where}")


def scope_key(workspace_id: Optional[int]) -> str:
    return SCOPE_INDEX if workspace_id is None else f"workspace-{workspace_id}"


def workspace_id(library: "Library", workspace: Optional[str]) -> Optional[int]:
    if workspace is None:
        return None
    from spar_desktop.core.workspaces.lookup import find_workspace_id  # deferred: workspace models (module note)

    try:
        return find_workspace_id(library, workspace)  # one query: no manager, no search stack
    except WorkspaceError as exc:
        raise RelationsError(str(exc)) from exc


def scope_files(library: "Library", ws_id: Optional[int]) -> list[ScopeFile]:
    """Readable files of the scope (path order), with the metadata the graph shows."""
    with library.session() as s:
        stmt = select(File).where(File.status == FileStatus.OK, File.content_hash.is_not(None))
        if ws_id is not None:
            ready = select(WorkspaceFile.file_id).where(WorkspaceFile.workspace_id == ws_id,
                                                        WorkspaceFile.state == WorkspaceFileState.READY)
            stmt = stmt.where(File.id.in_(ready))
        files = list(s.scalars(stmt.order_by(File.path)))
        ids = [f.id for f in files]
        tags: dict[int, list[tuple[bool, str]]] = {}
        if ids:
            for fid, value, source in s.execute(select(FileTag.file_id, Tag.value, Tag.source)
                                                .join(Tag, Tag.id == FileTag.tag_id).where(FileTag.file_id.in_(ids))):
                # folder tags first: they are what "colour by tag" should show for a file share
                tags.setdefault(fid, []).append((source != "path", value))
        out = []
        for f in files:
            folder = f.rel_path.rsplit("/", 1)[0] if "/" in (f.rel_path or "") else ""
            out.append(ScopeFile(f.id, f.path, os_path(f.path, f.raw_path), f.content_hash, f.format, f.title, folder,
                                 tuple(v for _, v in sorted(tags.get(f.id, [])))))
        return out


def _meta(f: ScopeFile) -> dict[str, Any]:
    return {"path": f.path, "folder": f.folder, "tags": f.tags, "file_id": f.file_id}


def load_documents(library: "Library", ws_id: Optional[int], *, need_vectors: bool = True, encoder: Any = None,
                   progress: ProgressCallback = no_progress, cancel: Optional[CancelToken] = None,
                   files: Optional[list[ScopeFile]] = None) -> tuple[DocSet, list[str]]:
    """DocSet of the scope (ids = str(file id)) and notes about files left out. ``files``: the
    scope's files when the caller has read them already (scope_files)."""
    files = scope_files(library, ws_id) if files is None else files
    if not files:
        raise no_documents(ws_id)
    notes: list[str] = []
    if not need_vectors:
        return _texts_only(files, notes, progress, cancel), notes
    # deferred: extraction, the embedding pipeline and the search engine (module note)
    from spar_desktop.core.documents.extract import extract
    from spar_desktop.core.embedding.pipeline import embed_documents
    from spar_desktop.core.workspaces.engine import chunker_config, engine_for

    eng = engine_for(library.settings, encoder)
    errors: dict[str, str] = {}
    items = [(f.content_hash, (lambda p=f.os_path, fmt=f.format: extract(p, format=fmt))) for f in files]
    by_hash = embed_documents(items, chunker_config(library.settings), eng.encoder, eng.cache, progress, cancel,
                              on_error=lambda h, exc: errors.__setitem__(h, str(exc)))
    docs = {str(f.file_id): by_hash[f.content_hash] for f in files if f.content_hash in by_hash}
    docs = {k: d for k, d in docs.items() if d.children}
    if errors:
        notes.append(f"{len(errors)} files could not be read and were left out")
    left = len(files) - len(docs) - len(errors)
    if left > 0:
        notes.append(f"{left} files have no searchable text and were left out")
    by_id = {str(f.file_id): f for f in files}
    result = from_cached(docs, titles={k: by_id[k].title or os.path.basename(by_id[k].path) for k in docs},
                         meta={k: _meta(by_id[k]) for k in docs})
    if not len(result):
        raise RelationsError("none of the files in scope has searchable text")
    return result, notes


def _texts_only(files: list[ScopeFile], notes: list[str], progress: ProgressCallback,
                cancel: Optional[CancelToken]) -> DocSet:
    from spar_desktop.core.documents.extract import extract  # deferred: the extractors (module note)

    ids, titles, texts, metas, failed = [], [], [], [], 0
    for i, f in enumerate(files):
        if i % 100 == 0:
            check(cancel)
            progress(Progress(i, len(files), "reading documents"))
        try:
            doc = extract(f.os_path, format=f.format)
        except (ExtractionError, OSError):
            failed += 1
            continue
        if doc.no_text_reason or not doc.text.strip():
            continue
        ids.append(str(f.file_id))
        titles.append(f.title or doc.title or os.path.basename(f.path))
        texts.append(doc.text)
        metas.append(_meta(f))
    if failed:
        notes.append(f"{failed} files could not be read and were left out")
    if not ids:
        raise RelationsError("none of the files in scope has text")
    return DocSet(tuple(ids), tuple(titles), tuple(texts), None, tuple(metas))

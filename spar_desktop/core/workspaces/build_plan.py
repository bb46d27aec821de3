"""What a build reads: the admitted files' rows, which of them can be read now, and why not.

A build reads only files as the last scan saw them: a file changed or gone since, a link
retargeted out of its root, a sampled fingerprint or a copy of another admitted file is recorded
with its state instead of being embedded.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from sqlalchemy import select

from spar_desktop.core.documents.reading import ReadOptions, read_document
from spar_desktop.core.documents.virtual import outer_path
from spar_desktop.core.library.models import File, FileStatus, Folder
from spar_desktop.core.library.paths import is_within, os_path
from spar_desktop.core.library.probe import SAMPLED_HASH_PREFIX, storable_mtime_ns
from spar_desktop.core.progress import CancelToken, ProgressCallback
from spar_desktop.core.workspaces.models import WorkspaceFileState

UNREADABLE = {FileStatus.ERROR: WorkspaceFileState.FAILED, FileStatus.ENCRYPTED: WorkspaceFileState.FAILED,
              FileStatus.MISSING: WorkspaceFileState.MISSING, FileStatus.EMPTY: WorkspaceFileState.NO_TEXT,
              FileStatus.UNSUPPORTED: WorkspaceFileState.NO_TEXT}


@dataclass
class IndexRows:
    """The index's rows of the admitted files, their folders' roots and their containers."""
    files: dict[int, File]
    roots: dict[int, str]
    containers: dict[str, tuple[int, int]]  # outer path → (size, mtime) of a child document's container


@dataclass
class ReadPlan:
    """Per admitted file: a state decided without reading it, or a reader in ``items``."""
    states: dict[int, tuple[str, Optional[str]]] = field(default_factory=dict)
    items: list[tuple[str, Callable[[], Any]]] = field(default_factory=list)  # (content hash, reader)


def index_rows(library: Any, admitted: list) -> IndexRows:
    with library.session() as s:
        rows = {f.id: f for f in s.scalars(select(File).where(File.id.in_([a[0] for a in admitted])))} if admitted else {}
        roots = {i: p for i, p in s.execute(select(Folder.id, Folder.path))}
        outers = sorted({outer_path(f.path) for f in rows.values() if f.parent_id is not None})
        containers = {p: (sz, mt) for i in range(0, len(outers), 500) for p, sz, mt in s.execute(
            select(File.path, File.size, File.mtime_ns).where(File.path.in_(outers[i:i + 500])))}
    return IndexRows(rows, roots, containers)


def read_options(settings: Any) -> ReadOptions:
    if settings is None:
        return ReadOptions()
    return ReadOptions(budget=settings.extraction_budget(), ocr=settings.ocr_enabled,
                       ocr_cache_path=settings.layout.ocr_cache)


def plan_reads(admitted: list, index: IndexRows, options: ReadOptions, cancel: Optional[CancelToken],
               progress: ProgressCallback) -> ReadPlan:
    plan = ReadPlan()
    primary: dict[str, str] = {}  # content hash -> the admitted path searched for it (copies collapse)
    for file_id, path, content_hash in admitted:
        f = index.files[file_id]
        real = os_path(f.path, f.raw_path)
        problem = _why_not_read(f, real, index, content_hash)
        if problem is None and content_hash in primary:  # the same bytes under another name: one document
            problem = (WorkspaceFileState.DUPLICATE, f"same content as {primary[content_hash]}")
        if problem is not None:
            plan.states[file_id] = problem
            continue
        primary[content_hash] = path
        plan.items.append((content_hash, (lambda p=real, fmt=f.format, h=content_hash:
                                          read_document(p, fmt, h, options, cancel, progress))))
    return plan


def _why_not_read(f: File, real: str, index: IndexRows, content_hash: Optional[str]) -> Optional[tuple[str, str]]:
    if f.status in UNREADABLE:
        return UNREADABLE[f.status], f.error or f.status
    refusal = _refuse_to_read(outer_path(real), index.roots.get(f.folder_id), content_hash)
    if refusal:
        return WorkspaceFileState.FAILED, refusal
    container = index.containers.get(outer_path(f.path)) if f.parent_id is not None else None
    if f.parent_id is not None and container is None:
        return WorkspaceFileState.MISSING, "its container is no longer in the index"
    return _on_disk_problem(f, container)


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

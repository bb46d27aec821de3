"""`.sparws` files: a workspace shared without its vectors.

A zip holding one `manifest.json`: format + version, name, filter, files (path, relative path,
content hash), threads, query history. Import validates everything before touching the index:
size limits, only known member names (no path traversal), known version, well-formed fields.
Files are matched to the importer's index by content hash first, then by relative path.
"""

from __future__ import annotations

import json
import os
import zipfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from spar_desktop.core.library.models import File, Tag
from spar_desktop.core.workspaces.errors import WorkspaceError
from spar_desktop.core.workspaces.models import QueryLogEntry, Workspace, WorkspaceFile, WorkspaceFileState
from spar_desktop.core.workspaces.selection import TagChoice, TagGroup, WorkspaceFilter

if TYPE_CHECKING:
    from spar_desktop.core.workspaces.manager import Workspaces

FORMAT = "sparws"
VERSION = 1
MANIFEST = "manifest.json"
MAX_ARCHIVE_BYTES = 64 * 1024 * 1024
MAX_MANIFEST_BYTES = 32 * 1024 * 1024
MAX_FILES = 200_000


class SparwsError(WorkspaceError):
    """The .sparws file cannot be imported; the message says why."""


@dataclass
class ImportReport:
    name: str
    files_total: int = 0
    matched_by_hash: int = 0
    matched_by_path: int = 0
    not_found: list[str] = field(default_factory=list)
    threads: int = 0
    queries: int = 0


def _collection_name(name: str) -> str:
    from spar_desktop.core.workspaces.manager import collection_name  # manager imports this module lazily

    return collection_name(name)


def export_workspace(manager: "Workspaces", name: str, out: str | Path) -> Path:
    info = manager.get(name)
    files = manager.files(name)
    with manager.library.session() as s:
        rel = dict(s.execute(select(File.id, File.rel_path).where(File.id.in_([f.file_id for f in files if f.file_id]))).all())
        history = [
            {"query": q.query, "source": q.source, "session": q.session_key, "at": q.created_at.isoformat()}
            for q in s.scalars(select(QueryLogEntry).where(QueryLogEntry.workspace_id == info.id).order_by(QueryLogEntry.id))
        ]
    manifest = {
        "format": FORMAT, "version": VERSION, "name": info.name, "filter": info.filter.to_json(),
        "files": [{"path": f.path, "rel_path": rel.get(f.file_id), "content_hash": f.content_hash} for f in files],
        "threads": _export_threads(manager, info.id),
        "query_history": history,
    }
    out = Path(out)
    tmp = out.with_name(out.name + ".tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(MANIFEST, json.dumps(manifest, ensure_ascii=False, indent=1))
    os.replace(tmp, out)
    return out


def _export_threads(manager: "Workspaces", ws_id: int) -> list[dict]:
    from spar_desktop.core.chat.share import export_threads  # the chat layer builds on workspaces

    return export_threads(manager.library, ws_id)


def read_manifest(path: str | Path) -> dict[str, Any]:
    """Open and validate a .sparws file; SparwsError with a clear reason for anything off."""
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise SparwsError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if size > MAX_ARCHIVE_BYTES:
        raise SparwsError(f"{path.name} is {size // 1_000_000} MB; workspace files are limited to 64 MB")
    try:
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
            for info in infos:
                n = info.filename
                if n.startswith(("/", "\\")) or ".." in n.replace("\\", "/").split("/") or ":" in n:
                    raise SparwsError(f"refused: the archive contains an unsafe path '{n}'")
                if n != MANIFEST:
                    raise SparwsError(f"refused: unexpected member '{n}' (a .sparws holds only {MANIFEST})")
            if not infos:
                raise SparwsError(f"{path.name} is empty: no {MANIFEST}")
            info = infos[0]
            if info.file_size > MAX_MANIFEST_BYTES:
                raise SparwsError(f"refused: the manifest would unpack to {info.file_size // 1_000_000} MB")
            with zf.open(info) as fh:
                raw = fh.read(MAX_MANIFEST_BYTES + 1)
    except zipfile.BadZipFile as exc:
        raise SparwsError(f"{path.name} is not a .sparws file (not a valid zip: {exc})") from exc
    except (EOFError, zipfile.LargeZipFile, RuntimeError, OSError) as exc:
        raise SparwsError(f"{path.name} is truncated or damaged: {exc}") from exc
    if len(raw) > MAX_MANIFEST_BYTES:
        raise SparwsError("refused: the manifest is larger than it claims")
    try:
        manifest = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SparwsError(f"the manifest is not valid JSON: {exc}") from exc
    _validate(manifest)
    return manifest


def _validate(m: Any) -> None:
    if not isinstance(m, dict) or m.get("format") != FORMAT:
        raise SparwsError("not a SPAR workspace manifest")
    version = m.get("version")
    if not isinstance(version, int) or version < 1:
        raise SparwsError(f"invalid version {version!r}")
    if version > VERSION:
        raise SparwsError(f"this workspace was exported by a newer SPAR Desktop (format version {version}); "
                          f"this version reads up to {VERSION}: please update the app")
    if not isinstance(m.get("name"), str) or not m["name"].strip() or len(m["name"]) > 200:
        raise SparwsError("the workspace name is missing or too long")
    if not isinstance(m.get("filter"), dict):
        raise SparwsError("the filter is missing")
    files = m.get("files")
    if not isinstance(files, list) or len(files) > MAX_FILES:
        raise SparwsError("the file list is missing or too long")
    for f in files:
        if not isinstance(f, dict) or not isinstance(f.get("path"), str):
            raise SparwsError("a file entry has no path")
        for key in ("rel_path", "content_hash"):
            if f.get(key) is not None and not isinstance(f[key], str):
                raise SparwsError(f"a file entry has an invalid {key}")
    for key in ("threads", "query_history"):
        if not isinstance(m.get(key, []), list):
            raise SparwsError(f"'{key}' must be a list")
    try:
        WorkspaceFilter.from_json(m["filter"])
    except (TypeError, ValueError, KeyError) as exc:
        raise SparwsError(f"the filter is malformed: {exc}") from exc


def import_workspace(manager: "Workspaces", path: str | Path, name: str | None = None) -> ImportReport:
    m = read_manifest(path)
    flt = WorkspaceFilter.from_json(m["filter"])
    base = (name or m["name"]).strip()
    with manager.library.session() as s:
        taken = set(s.scalars(select(Workspace.name)))
    final, n = base, 2
    while final in taken:
        final, n = f"{base} ({n})", n + 1
    report = ImportReport(final, files_total=len(m["files"]))
    # The filter's tag ids are the exporter's: map them to ours by tag key.
    with manager.library.session() as s:
        ours = dict(s.execute(select(Tag.key, Tag.id)).all())
    groups = []
    for g in flt.groups:
        tags = tuple(TagChoice(ours[t.key], t.key, t.value, t.score, t.how) for t in g.tags if t.key in ours)
        if tags:
            groups.append(TagGroup(g.label, tags))
    with manager.library.session() as s:
        ws = Workspace(name=final, collection=_collection_name(final), filter_json={})
        s.add(ws)
        s.flush()
        pinned: list[int] = []
        for f in m["files"]:
            fid = None
            if f.get("content_hash"):
                fid = s.scalar(select(File.id).where(File.content_hash == f["content_hash"]).limit(1))
                report.matched_by_hash += fid is not None
            if fid is None and f.get("rel_path"):
                fid = s.scalar(select(File.id).where(File.rel_path == f["rel_path"]).limit(1))
                report.matched_by_path += fid is not None
            if fid is None:
                report.not_found.append(f["path"])
            else:
                pinned.append(fid)
            s.add(WorkspaceFile(workspace_id=ws.id, file_id=fid, path=f["path"], content_hash=f.get("content_hash"),
                                state=WorkspaceFileState.PENDING if fid else WorkspaceFileState.MISSING,
                                error=None if fid else "not in this index"))
        # The shared workspace is exactly its file list; the original filter stays for editing.
        ws.filter_json = replace(flt, groups=tuple(groups), pinned=tuple(dict.fromkeys(pinned)), only_pinned=True).to_json()
        for q in m.get("query_history", [])[:10_000]:
            if isinstance(q, dict) and isinstance(q.get("query"), str):
                s.add(QueryLogEntry(workspace_id=ws.id, session_key=str(q.get("session", "imported"))[:80],
                                    query=q["query"][:2000], source="import"))
                report.queries += 1
    if m.get("threads"):
        from spar_desktop.core.chat.share import import_threads

        report.threads = import_threads(manager.library, final, m["threads"])
    return report

"""`.sparws` files: a workspace shared without its vectors.

A zip holding one `manifest.json`: format + version, name, filter, files (path, relative path,
content hash), threads, query history. Import validates everything before touching the index:
size limits, only known member names (no path traversal), known version, well-formed fields.
Files are matched to the importer's index by content hash first, then by relative path.

A .sparws comes from someone else: every way it can be malformed (a broken zip, JSON nested
100,000 deep, a 5,000-digit number, NaN, a wrong type anywhere) ends as a SparwsError with a
message, and the import is one transaction: a failure leaves no workspace, file row, query or
thread behind. Paths in an export are absolute (the exporter's): the importer only matches them
against its own index and never opens them.

Threads are chat's part of the file: chat sits above workspaces, so the caller hands its
``ThreadPorter`` in (``threads=chat.share``); without one a workspace travels without threads.
"""

from __future__ import annotations

import json
import math
import os
import zipfile
import zlib
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path
from typing import Any, Iterator, Optional, Protocol

from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError

from spar_desktop.core.changes import Changes
from spar_desktop.core.file_format import BadVersion, NewerVersion, NotThisFormat, check_version, format_header
from spar_desktop.core.library.models import File, Folder, Tag
from spar_desktop.core.library.paths import is_within
from spar_desktop.core.workspaces.chunkings import CHUNKINGS, chunking_of
from spar_desktop.core.workspaces.errors import WorkspaceError
from spar_desktop.core.workspaces.manager import Workspaces, check_name, clean_name, collection_name, name_taken
from spar_desktop.core.workspaces.models import QueryLogEntry, Workspace, WorkspaceFile, WorkspaceFileState
from spar_desktop.core.workspaces.selection import TagChoice, WorkspaceFilter

FORMAT = "sparws"
VERSION = 1
MANIFEST = "manifest.json"
MAX_ARCHIVE_BYTES = 64 * 1024 * 1024
MAX_MANIFEST_BYTES = 32 * 1024 * 1024
MAX_FILES = 200_000
MAX_DEPTH = 20  # a real manifest nests ~6 deep (threads → messages → passages → fields)
MAX_INT = 2**63 - 1  # nothing in a manifest is bigger (ids, pages, counts); beyond, a database refuses it
MAX_PATH_CHARS = 32_768
MAX_HASH_CHARS = 80  # the content hash column's width
PATHS_NOTE = ("paths in the export are absolute (the exporter's): the importer matches files by content "
              "hash, then relative path, against its own index and never opens these paths")


class SparwsError(WorkspaceError):
    """The .sparws file cannot be imported; the message says why."""


class ThreadPorter(Protocol):
    """The thread part of a .sparws, provided by the chat layer (``spar_desktop.core.chat.share``)."""

    def export_threads(self, library: Any, workspace_id: int) -> list[dict]: ...

    def import_threads(self, library: Any, workspace_name: str, threads: Any) -> int: ...


@dataclass
class WorkspaceImportReport:
    name: str
    files_total: int = 0
    matched_by_hash: int = 0
    matched_by_path: int = 0
    not_found: list[str] = field(default_factory=list)  # dropped: not in this index
    outside_roots: list[str] = field(default_factory=list)  # dropped: in the index, not under an indexed folder
    threads: int = 0
    queries: int = 0
    renamed_from: Optional[str] = None  # the manifest's name when it had to be cleaned or suffixed

    @property
    def matched(self) -> int:
        return self.matched_by_hash + self.matched_by_path

    @property
    def changes(self) -> Changes:
        return Changes(workspaces=True)

    def describe(self) -> str:
        """One paragraph for a status bar: what was imported and what the file named that was dropped."""
        text = f"Imported '{self.name}': {self.matched} of {self.files_total} files found in this index"
        if self.threads:
            text += f", {self.threads} chat thread{'s' if self.threads != 1 else ''}"
        dropped = []
        if self.not_found:
            dropped.append(f"{len(self.not_found)} not in this index")
        if self.outside_roots:
            dropped.append(f"{len(self.outside_roots)} outside the folders indexed here")
        if dropped:
            text += f"; dropped {' and '.join(dropped)}"
        if self.renamed_from:
            text += f" (the file named it '{self.renamed_from}')"
        return text + ". Build it to search."


def export_workspace(manager: Workspaces, name: str, out: str | Path, threads: Optional[ThreadPorter] = None) -> Path:
    with manager.lock(name):  # one state of it: not half a build's file list
        return _export(manager, name, Path(out), threads)


def _export(manager: Workspaces, name: str, out: Path, threads: Optional[ThreadPorter]) -> Path:
    info = manager.get(name)
    files = manager.files(name)
    with manager.library.session() as s:
        rel = dict(s.execute(select(File.id, File.rel_path).where(File.id.in_([f.file_id for f in files if f.file_id]))).all())
        history = [
            {"query": q.query, "source": q.source, "session": q.session_key, "at": q.created_at.isoformat()}
            for q in s.scalars(select(QueryLogEntry).where(QueryLogEntry.workspace_id == info.id).order_by(QueryLogEntry.id))
        ]
    manifest = {
        **format_header(FORMAT, VERSION), "name": info.name, "filter": info.filter.to_json(),
        "chunking": info.chunking,
        "files": [{"path": f.path, "rel_path": rel.get(f.file_id), "content_hash": f.content_hash} for f in files],
        "paths": PATHS_NOTE,
        "threads": threads.export_threads(manager.library, info.id) if threads is not None else [],
        "query_history": history,
    }
    tmp = out.with_name(out.name + ".tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(MANIFEST, json.dumps(manifest, ensure_ascii=False, indent=1))
    os.replace(tmp, out)
    return out


def read_manifest(path: str | Path) -> dict[str, Any]:
    """Open and validate a .sparws file; SparwsError with a clear reason for anything off."""
    path = Path(path)
    try:
        if not path.is_file():
            raise SparwsError(f"{path.name} is not a file")
        size = path.stat().st_size
    except OSError as exc:
        raise SparwsError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if size > MAX_ARCHIVE_BYTES:
        raise SparwsError(f"{path.name} is {size // 1_000_000} MB; workspace files are limited to 64 MB")
    raw = _read_member(path)
    manifest = parse_manifest(raw)
    _validate(manifest)
    return manifest


def _read_member(path: Path) -> bytes:
    """The manifest's bytes, read at most MAX_MANIFEST_BYTES + 1 whatever the zip claims."""
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
            if len(infos) > 1:
                raise SparwsError(f"refused: the archive holds {MANIFEST} {len(infos)} times")
            info = infos[0]
            if info.file_size > MAX_MANIFEST_BYTES:
                raise SparwsError(f"refused: the manifest would unpack to {info.file_size // 1_000_000} MB")
            with zf.open(info) as fh:
                raw = fh.read(MAX_MANIFEST_BYTES + 1)
    except zipfile.BadZipFile as exc:
        raise SparwsError(f"{path.name} is not a .sparws file (not a valid zip: {exc})") from exc
    except NotImplementedError as exc:  # a compression method zipfile lacks
        raise SparwsError(f"{path.name} cannot be unpacked: {exc}") from exc
    except (EOFError, zipfile.LargeZipFile, RuntimeError, OSError, zlib.error, ValueError) as exc:
        raise SparwsError(f"{path.name} is truncated or damaged: {exc}") from exc
    if len(raw) > MAX_MANIFEST_BYTES:
        raise SparwsError("refused: the manifest is larger than it claims")
    return raw


def _refuse_constant(name: str) -> Any:
    raise SparwsError(f"the manifest holds {name}, which is not a number a workspace can use")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # '1e999' parses as infinity
        raise SparwsError(f"the manifest holds the number {text[:40]}, which is out of range")
    return value


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > 19:  # cheap before int(): also keeps clear of the 4,300-digit limit
        raise SparwsError(f"the manifest holds a {len(text)}-digit number, which is out of range")
    value = int(text)
    if abs(value) > MAX_INT:
        raise SparwsError(f"the manifest holds the number {text}, which is out of range")
    return value


def parse_manifest(raw: bytes) -> Any:
    """The manifest's JSON, refusing NaN/Infinity, out-of-range numbers and absurd nesting."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SparwsError(f"the manifest is not valid JSON: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    try:
        data = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float, parse_int=_bounded_int)
    except RecursionError as exc:
        raise SparwsError("the manifest is not valid JSON: nested too deeply") from exc
    except json.JSONDecodeError as exc:
        raise SparwsError(f"the manifest is not valid JSON: {exc}") from exc
    except ValueError as exc:  # a number json itself could not convert
        raise SparwsError(f"the manifest is not valid JSON: {exc}") from exc
    _check_values(data)
    return data


def _check_values(data: Any) -> None:
    """Walk every value (iteratively): nesting within MAX_DEPTH, and no string a database cannot
    store (NUL, an unpaired surrogate from a '\\udc80' escape)."""
    stack: list[tuple[Any, str, int]] = [(data, "manifest", 0)]
    while stack:
        value, where, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise SparwsError(f"the manifest is nested too deeply (at {where})")
        if isinstance(value, str):
            _check_text(value, where)
        elif isinstance(value, dict):
            for k, v in value.items():
                _check_text(k, where)
                stack.append((v, f"{where}.{k[:40]}", depth + 1))
        elif isinstance(value, list):
            stack.extend((v, f"{where}[{i}]", depth + 1) for i, v in enumerate(value))


def _check_text(text: str, where: str) -> None:
    if "\x00" in text:
        raise SparwsError(f"the manifest holds a NUL character (at {where})")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise SparwsError(f"the manifest holds an unpaired surrogate escape (at {where})") from exc


def _validate(m: Any) -> None:
    try:
        check_version(m, FORMAT, VERSION)
    except NotThisFormat:
        raise SparwsError("not a SPAR workspace manifest") from None
    except NewerVersion as exc:
        raise SparwsError(f"this workspace was exported by a newer SPAR Desktop (format version {exc.version}); "
                          f"this version reads up to {VERSION}: please update the app") from None
    except BadVersion as exc:
        raise SparwsError(str(exc)) from None
    if not isinstance(m.get("name"), str) or not m["name"].strip() or len(m["name"]) > 200:
        raise SparwsError("the workspace name is missing or too long")
    if not isinstance(m.get("filter"), dict):
        raise SparwsError("the filter is missing")
    if m.get("chunking") is not None and m["chunking"] not in CHUNKINGS:  # absent: exported before the choice
        raise SparwsError("the passage chunking is not one this version knows")
    files = m.get("files")
    if not isinstance(files, list) or len(files) > MAX_FILES:
        raise SparwsError("the file list is missing or too long")
    for i, f in enumerate(files):
        if not isinstance(f, dict) or not isinstance(f.get("path"), str) or not f["path"].strip():
            raise SparwsError(f"file entry {i + 1} has no path")
        if len(f["path"]) > MAX_PATH_CHARS:
            raise SparwsError(f"file entry {i + 1} has a path longer than {MAX_PATH_CHARS} characters")
        for key in ("rel_path", "content_hash"):
            if f.get(key) is not None and not isinstance(f[key], str):
                raise SparwsError(f"file entry {i + 1} has an invalid {key}")
        if len(f.get("rel_path") or "") > MAX_PATH_CHARS or len(f.get("content_hash") or "") > MAX_HASH_CHARS:
            raise SparwsError(f"file entry {i + 1} has a rel_path or content_hash that is too long")
    for key in ("threads", "query_history"):
        if not isinstance(m.get(key, []), list):
            raise SparwsError(f"'{key}' must be a list")
    _check_filter(m["filter"])
    try:
        WorkspaceFilter.from_json(m["filter"])
    except (TypeError, ValueError, KeyError, OverflowError) as exc:
        raise SparwsError(f"the filter is malformed: {exc}") from exc


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


_TEXT_LISTS = ("formats", "authors", "unmatched", "notes", "problems")
_FLAGS = ("only_pinned", "all_files", "ranked", "include_unconfirmed")
_TAG_FIELDS = {"tag_id": _is_int, "key": lambda v: isinstance(v, str), "value": lambda v: isinstance(v, str),
               "score": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
               "how": lambda v: isinstance(v, str)}


def _check_filter(d: dict) -> None:
    """Every field of the filter has the type WorkspaceFilter.from_json expects: a wrong type
    must be refused here, not fail later in a search or a build."""
    def bad(what: str) -> SparwsError:
        return SparwsError(f"the filter is malformed: {what}")

    for key in _TEXT_LISTS:
        v = d.get(key, [])
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise bad(f"'{key}' must be a list of texts")
    for key in _FLAGS:
        if not isinstance(d.get(key, False), bool):
            raise bad(f"'{key}' must be true or false")
    if not isinstance(d.get("request", ""), str):
        raise bad("'request' must be a text")
    for key in ("tolerance", "budget"):
        if d.get(key) is not None and (not _is_int(d[key]) or d[key] < 0):
            raise bad(f"'{key}' must be a whole number, 0 or more")
    for key, limit in (("request_vector", 65_536), ("vector_model", 400)):  # ranked filters (issue 16)
        if not isinstance(d.get(key) or "", str) or len(d.get(key) or "") > limit:
            raise bad(f"'{key}' must be a text of at most {limit} characters")
    pinned = d.get("pinned", [])
    if not isinstance(pinned, list) or not all(_is_int(x) for x in pinned):
        raise bad("'pinned' must be a list of file ids")
    for key in ("since", "until"):
        v = d.get(key)
        if v is None:
            continue
        try:
            date.fromisoformat(v) if isinstance(v, str) else None
        except ValueError:
            v = None
        if not isinstance(v, str):
            raise bad(f"'{key}' must be a date (YYYY-MM-DD) or null")
    for key in ("groups", "dropped"):
        groups = d.get(key, [])
        if not isinstance(groups, list):
            raise bad(f"'{key}' must be a list")
        for g in groups:
            if not isinstance(g, dict) or not isinstance(g.get("label"), str):
                raise bad(f"a tag group in '{key}' has no label")
            if not isinstance(g.get("required", False), bool):
                raise bad(f"tag group '{g['label'][:80]}': 'required' must be true or false")
            for part in ("tags", "pruned"):
                tags = g.get(part, [])
                if not isinstance(tags, list):
                    raise bad(f"tag group '{g['label'][:80]}': '{part}' must be a list")
                for t in tags:
                    if not isinstance(t, dict) or not {"tag_id", "key", "value"} <= t.keys() \
                            or not t.keys() <= _TAG_FIELDS.keys() or not all(_TAG_FIELDS[k](v) for k, v in t.items()):
                        raise bad(f"tag group '{g['label'][:80]}' holds a malformed tag")


class _InTransaction:
    """The library as seen from inside one open session: code that opens ``library.session()``
    (import_threads) joins it, so the whole import commits together or not at all."""

    def __init__(self, library: Any, session: Any) -> None:
        self._library, self._session = library, session

    @contextmanager
    def session(self) -> Iterator[Any]:
        yield self._session

    def __getattr__(self, name: str) -> Any:
        return getattr(self._library, name)


def import_workspace(manager: Workspaces, path: str | Path, name: str | None = None,
                     threads: Optional[ThreadPorter] = None) -> WorkspaceImportReport:
    """Import a .sparws as a new workspace, in one transaction. ``name`` (one the user typed) must
    be valid and free; the manifest's own name is cleaned and, when taken, suffixed ' (2)'...
    File entries not in this index, or matching a file that is not under an indexed folder, are
    dropped and listed in the report. ``threads``: chat's porter; None leaves the threads out."""
    m = read_manifest(path)
    flt = WorkspaceFilter.from_json(m["filter"])
    if name is not None:
        try:
            name = check_name(name)
        except WorkspaceError as exc:
            raise SparwsError(str(exc)) from exc
    try:
        with manager.library.session() as s:
            if name is not None:
                final = name
                if name_taken(s, final):
                    raise SparwsError(f"a workspace named '{final}' already exists: choose another name")
            else:
                base = clean_name(m["name"])[:190]
                final, n = base, 2
                while name_taken(s, final):
                    final, n = f"{base} ({n})", n + 1
            report = WorkspaceImportReport(final, files_total=len(m["files"]),
                                  renamed_from=m["name"] if name is None and final != m["name"] else None)
            _import_into(manager, s, m, flt, report, threads)
    except SQLAlchemyError as exc:  # e.g. the database is locked or full: the transaction was rolled back
        raise SparwsError(f"importing failed and was undone, nothing was saved: {exc}") from exc
    return report


def _import_into(manager: Workspaces, s: Any, m: dict[str, Any], flt: WorkspaceFilter, report: WorkspaceImportReport,
                 threads: Optional[ThreadPorter]) -> None:
    # The filter's tag ids are the exporter's: map them to ours by tag key.
    ours = dict(s.execute(select(Tag.key, Tag.id)).all())
    groups = []
    for g in flt.groups:
        tags = tuple(TagChoice(ours[t.key], t.key, t.value, t.score, t.how) for t in g.tags if t.key in ours)
        if tags:
            groups.append(replace(g, tags=tags, pruned=()))  # keeps 'required' (ranked filters rank the others)
    roots = dict(s.execute(select(Folder.id, Folder.path)).all())
    ws = Workspace(name=report.name, collection=collection_name(report.name), filter_json={},
                   chunking=chunking_of(m.get("chunking")))
    s.add(ws)
    s.flush()
    pinned: list[int] = []
    for f in m["files"]:
        found, outside = None, False
        for key, column in (("content_hash", File.content_hash), ("rel_path", File.rel_path)):
            if found is None and f.get(key):
                candidates = s.execute(select(File.id, File.path, File.folder_id, File.content_hash)
                                       .where(column == f[key]).limit(20)).all()
                inside = [c for c in candidates if c.folder_id in roots and is_within(c.path, roots[c.folder_id])]
                outside = outside or bool(candidates and not inside)
                if inside:
                    found = inside[0]
                    if key == "content_hash":
                        report.matched_by_hash += 1
                    else:
                        report.matched_by_path += 1
        if found is None:
            (report.outside_roots if outside else report.not_found).append(f["path"])
            continue
        pinned.append(found.id)
        # The exporter's path is kept until the first build (threads are remapped through it).
        s.add(WorkspaceFile(workspace_id=ws.id, file_id=found.id, path=f["path"], content_hash=found.content_hash,
                            state=WorkspaceFileState.PENDING))
    # The shared workspace is exactly its file list; the original filter stays for editing.
    ws.filter_json = replace(flt, groups=tuple(groups), pinned=tuple(dict.fromkeys(pinned)), only_pinned=True).to_json()
    for q in m.get("query_history", [])[:10_000]:
        if isinstance(q, dict) and isinstance(q.get("query"), str):
            s.add(QueryLogEntry(workspace_id=ws.id, session_key=str(q.get("session", "imported"))[:80],
                                query=q["query"][:2000], source="import"))
            report.queries += 1
    if m.get("threads") and threads is not None:
        s.flush()
        report.threads = threads.import_threads(_InTransaction(manager.library, s), report.name, m["threads"])

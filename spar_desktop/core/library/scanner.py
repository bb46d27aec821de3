"""Incremental folder scanning into the Metadata Index.

A scan walks a root with os.scandir, compares each file's size+mtime with the index (unchanged
files cost one stat and a dict lookup), probes new/changed files cheaply (format, hash, PDF/DOCX
metadata), and writes in batched transactions. A killed scan resumes without duplicates because
paths are unique and committed batches are simply seen as unchanged next time. Files that
disappeared are marked missing, never deleted. Nothing is ever written into the scanned folders.
"""

from __future__ import annotations

import errno
import logging
import os
import stat as stat_mod
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Iterator, Optional, Sequence

from sqlalchemy import delete, insert, select, update

from spar_desktop.core.library.database import Library
from spar_desktop.core.library.models import File, FileStatus, FileTag, Folder, ScanIssue, TagSource, utcnow
from spar_desktop.core.library.paths import (
    DEFAULT_IGNORE_PATTERNS, IgnoreMatcher, display_path, is_within, normalize_root, raw_path_bytes,
)
from spar_desktop.core.library.probe import (
    READABLE_FORMATS, SAMPLED_HASH_PREFIX, ProbeResult, format_from_name, probe_file,
)
from spar_desktop.core.library.tags import TagCache, date_tag_specs, path_tag_specs
from spar_desktop.core.progress import CancelToken, Progress, ProgressCallback, no_progress

log = logging.getLogger(__name__)


@dataclass
class ScanReport:
    """What one scan of one root did; ``problems`` are (path, message) lines for the user."""

    root: str
    new: int = 0
    changed: int = 0
    unchanged: int = 0
    missing: int = 0
    restored: int = 0
    problems: list[tuple[str, str]] = field(default_factory=list)
    cancelled: bool = False
    seconds: float = 0.0
    note: Optional[str] = None

    @property
    def seen(self) -> int:
        return self.new + self.changed + self.unchanged


@dataclass
class _Known:
    id: int
    size: int
    mtime_ns: int
    status: str
    content_hash: Optional[str]


def _os_error_message(exc: OSError, is_link: bool) -> str:
    if exc.errno == errno.ENOENT and is_link:
        return "broken symbolic link (its target does not exist)"
    if exc.errno == errno.ELOOP:
        return "symbolic link loop"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied: cannot read this file"
    if exc.errno == errno.ENAMETOOLONG:
        return "path too long for the operating system"
    return f"cannot read: {exc.strerror or exc}"


class Scanner:
    def __init__(self, library: Library, batch_size: int = 500) -> None:
        self.library = library
        self.batch_size = batch_size
        data_dir = library.settings.data_dir if library.settings else None
        # Never index our own data dir if a user adds a folder that contains it.
        self._excluded = {normalize_root(str(data_dir))} if data_dir else set()

    # ---------------------------------------------------------------- roots
    def add_root(self, path: str, ignore_patterns: Sequence[str] = ()) -> tuple[Folder, str, Optional[str]]:
        """Register a folder (or a single file); returns (root, subtree to scan, note for the user).

        A path inside an existing root is scanned as part of that root; a folder that
        contains existing roots absorbs them (their files keep their rows).
        """
        real = normalize_root(path)
        with self.library.session() as s:
            roots = list(s.scalars(select(Folder)))
            for root in roots:
                if real == root.path:
                    if ignore_patterns:
                        root.ignore_patterns = sorted(set(root.ignore_patterns or []) | set(ignore_patterns))
                    return root, real, None
                if is_within(real, root.path):
                    return root, real, f"{real} is inside the indexed folder {root.path}; scanned as part of it"
            folder = Folder(path=real, ignore_patterns=list(ignore_patterns))
            s.add(folder)
            s.flush()
            inner = [r for r in roots if is_within(r.path, real)]
            note = None
            if inner:
                for r in inner:
                    s.execute(update(File).where(File.folder_id == r.id).values(folder_id=folder.id))
                    s.delete(r)
                note = "absorbed previously added folders: " + ", ".join(r.path for r in inner)
                # Their rel_paths and folder tags now hang off the new root: force a re-probe.
                s.execute(update(File).where(File.folder_id == folder.id).values(mtime_ns=-1))
            return folder, real, note

    # ---------------------------------------------------------------- scanning
    def scan(self, paths: Sequence[str], ignore_patterns: Sequence[str] = (),
             progress: ProgressCallback = no_progress, cancel: Optional[CancelToken] = None) -> list[ScanReport]:
        reports = []
        for path in paths:
            if cancel is not None and cancel.cancelled:
                break
            reports.append(self.scan_one(path, ignore_patterns, progress, cancel))
        return reports

    def scan_one(self, path: str, ignore_patterns: Sequence[str] = (),
                 progress: ProgressCallback = no_progress, cancel: Optional[CancelToken] = None) -> ScanReport:
        start = time.perf_counter()
        real = normalize_root(path)
        report = ScanReport(root=display_path(real))
        if not os.path.exists(real):
            report.problems.append((display_path(real), "folder not found"))
            return report
        if not (os.path.isdir(real) or os.path.isfile(real)):
            report.problems.append((display_path(real), "not a folder or a regular file"))
            return report
        # A file is scanned alone: inside an indexed folder as part of it, else as its own root
        # (the user dropped one document; indexing its siblings too would surprise them).
        folder, subtree, report.note = self.add_root(real, ignore_patterns)
        run = _ScanRun(self, folder, subtree, report, progress, cancel)
        run.execute()
        report.seconds = time.perf_counter() - start
        return report

    def rescan_all(self, progress: ProgressCallback = no_progress,
                   cancel: Optional[CancelToken] = None) -> list[ScanReport]:
        with self.library.session() as s:
            roots = [f.path for f in s.scalars(select(Folder))]
        return self.scan(roots, progress=progress, cancel=cancel)


class _ScanRun:
    """State of one scan of one subtree of a root (kept out of Scanner so Scanner is reusable)."""

    def __init__(self, scanner: Scanner, folder: Folder, subtree: str, report: ScanReport,
                 progress: ProgressCallback, cancel: Optional[CancelToken]) -> None:
        self.lib = scanner.library
        self.batch_size = scanner.batch_size
        self.excluded = scanner._excluded
        self.folder = folder
        self.root = folder.path
        self.subtree = subtree
        self.report = report
        self.progress = progress
        self.cancel = cancel
        self.ignore = IgnoreMatcher(list(DEFAULT_IGNORE_PATTERNS) + list(folder.ignore_patterns or []))
        self.known: dict[str, _Known] = {}
        self.seen: set[str] = set()
        self.failed_dirs: list[str] = []
        self.pending_new: list[tuple[dict, str, ProbeResult]] = []
        self.pending_changed: list[tuple[_Known, dict, str, ProbeResult]] = []
        self.pending_unchanged = 0
        self.issues: list[tuple[str, str]] = []
        self.tag_cache: Optional[TagCache] = None
        self.chain_ids: dict[tuple[str, str], int] = {}  # (source, deepest key) → tag id, for the whole run

    def execute(self) -> None:
        with self.lib.session() as s:
            prefix = self.subtree.rstrip(os.sep) + os.sep
            q = select(File.id, File.path, File.size, File.mtime_ns, File.status, File.content_hash).where(
                (File.path == self.subtree) | (File.path.startswith(prefix, autoescape=True))
            )
            self.known = {p: _Known(i, sz, mt, st, h) for i, p, sz, mt, st, h in s.execute(q)}
            s.execute(delete(ScanIssue).where(ScanIssue.folder_id == self.folder.id))
        complete = False
        try:
            for entry_path, rel, is_link in self._walk(self.subtree):
                self._visit(entry_path, rel, is_link)
                if len(self.pending_new) + len(self.pending_changed) >= self.batch_size or self.pending_unchanged >= 5000:
                    self._flush()
            self._flush()
            complete = not (self.cancel is not None and self.cancel.cancelled)
        finally:
            if not complete:
                self._flush()
                self.report.cancelled = True
            self._finish(complete)

    # Walk iteratively (deep trees must not hit the recursion limit); yields regular files and
    # file symlinks; folder symlinks are not followed (loops, duplicates) but are reported.
    def _walk(self, top: str) -> Iterator[tuple[str, str, bool]]:
        if os.path.isfile(top):  # single-file mode: the user named this file, ignore patterns aside
            rel = os.path.basename(top) if top == self.root else os.path.relpath(top, self.root).replace(os.sep, "/")
            yield top, rel, False
            return
        stack = [top]
        while stack:
            if self.cancel is not None and self.cancel.cancelled:
                return
            current = stack.pop()
            try:
                with os.scandir(current) as it:
                    entries = list(it)
            except OSError as exc:
                self.failed_dirs.append(current)
                self.issues.append((display_path(current), f"folder skipped: {_os_error_message(exc, False)}"))
                continue
            entries.sort(key=lambda e: e.name)
            rel_dir = os.path.relpath(current, self.root).replace(os.sep, "/")
            rel_prefix = "" if rel_dir == "." else rel_dir + "/"
            for entry in entries:
                rel = rel_prefix + entry.name
                if self.ignore.ignored(entry.name, rel):
                    continue
                try:
                    is_link = entry.is_symlink()
                    if entry.is_dir(follow_symlinks=False):
                        if normalize_root(entry.path) not in self.excluded:
                            stack.append(entry.path)
                        continue
                    if is_link:
                        try:
                            if os.path.isdir(entry.path):
                                self.issues.append((display_path(entry.path), "symbolic link to a folder: not followed"))
                                continue
                        except OSError:
                            pass
                        yield entry.path, rel, True
                    elif entry.is_file(follow_symlinks=False):
                        yield entry.path, rel, False
                except OSError as exc:
                    self.issues.append((display_path(entry.path), _os_error_message(exc, False)))
            self.progress(Progress(len(self.seen), None, f"scanning {display_path(current)}"))

    def _visit(self, path: str, rel: str, is_link: bool) -> None:
        shown = display_path(path)
        self.seen.add(shown)
        known = self.known.get(shown)
        target = path
        if is_link:
            # A file link is read only when it lands inside the root: a link to /etc/passwd (or to
            # another user's share) must not put that file's text into search results.
            target = os.path.realpath(path)
            if os.path.exists(target) and not is_within(target, self.root):
                self._record_outside_link(path, rel, shown, known, target)
                return
        try:
            st = os.stat(target)
        except OSError as exc:
            self._record_error(path, rel, shown, known, exc, is_link)
            return
        if not stat_mod.S_ISREG(st.st_mode):
            return  # sockets, fifos, devices: not documents
        if (known and known.size == st.st_size and known.mtime_ns == st.st_mtime_ns
                and known.status != FileStatus.MISSING and not self._sampled_but_readable(known, path)):
            self.pending_unchanged += 1
            return
        try:
            result = probe_file(target, os.path.basename(path))  # O_NOFOLLOW: target is resolved
        except FileNotFoundError as exc:
            self._record_error(path, rel, shown, known, exc, is_link)
            return
        except OSError as exc:
            # Readable metadata (stat) but unreadable content: index it with the error.
            result = ProbeResult(st.st_size, st.st_mtime_ns, format_from_name(path), None,
                                 FileStatus.ERROR, _os_error_message(exc, is_link))
        row = self._row(path, rel, shown, result)
        if known is None:
            self.pending_new.append((row, shown, result))
        else:
            self.pending_changed.append((known, row, shown, result))

    @staticmethod
    def _sampled_but_readable(known: _Known, path: str) -> bool:
        """An index from before full hashing (or a format that became readable) holds a sampled
        fingerprint for a file we now embed: re-probe it so it gets its full-content hash."""
        return bool(known.content_hash and known.content_hash.startswith(SAMPLED_HASH_PREFIX)
                    and format_from_name(path) in READABLE_FORMATS)

    def _record_outside_link(self, path: str, rel: str, shown: str, known: Optional[_Known], target: str) -> None:
        message = f"symbolic link to a file outside the indexed folder ({display_path(target)}): not followed"
        if known is not None and known.status == FileStatus.UNSUPPORTED and known.content_hash is None:
            self.pending_unchanged += 1  # reported already; it stays a problem in the index
            return
        result = ProbeResult(0, 0, format_from_name(path), None, FileStatus.UNSUPPORTED, message)
        row = self._row(path, rel, shown, result)
        if known is None:
            self.pending_new.append((row, shown, result))
        else:
            self.pending_changed.append((known, row, shown, result))

    def _record_error(self, path: str, rel: str, shown: str, known: Optional[_Known], exc: OSError, is_link: bool) -> None:
        message = _os_error_message(exc, is_link)
        if isinstance(exc, FileNotFoundError) and not is_link:
            # Vanished between listing and reading: gone, not broken.
            self.seen.discard(shown)
            self.report.problems.append((shown, "vanished during the scan"))
            return
        result = ProbeResult(0, 0, format_from_name(path), None, FileStatus.ERROR, message)
        row = self._row(path, rel, shown, result)
        if known is None:
            self.pending_new.append((row, shown, result))
        elif known.status != FileStatus.ERROR:
            self.pending_changed.append((known, row, shown, result))
        else:
            self.pending_unchanged += 1

    def _row(self, path: str, rel: str, shown: str, r: ProbeResult) -> dict:
        return {
            "path": shown, "raw_path": raw_path_bytes(path), "folder_id": self.folder.id,
            "rel_path": display_path(rel), "name": display_path(os.path.basename(path)),
            "size": r.size, "mtime_ns": r.mtime_ns, "content_hash": r.content_hash, "format": r.format,
            "title": r.title, "author": r.author, "created_at": r.created_at,
            "modified_at": datetime.fromtimestamp(r.mtime_ns / 1e9) if r.mtime_ns > 0 else None,
            "page_count": r.page_count, "status": r.status, "error": r.error, "extra": r.extra or None,
        }

    def _flush(self) -> None:
        if not (self.pending_new or self.pending_changed or self.pending_unchanged):
            return
        now = utcnow()
        with self.lib.session() as s:
            if self.pending_new:
                rows = [dict(row, first_seen_at=now) for row, _, _ in self.pending_new]
                conn = s.connection()
                # Plain executemany (no RETURNING) is several times faster on SQLite; ids are
                # then read back by path, which is unique.
                conn.execute(insert(File.__table__), rows)
                paths = [r["path"] for r in rows]
                id_of: dict[str, int] = {}
                for i in range(0, len(paths), 500):
                    id_of.update((p, i_) for i_, p in conn.execute(
                        select(File.id, File.path).where(File.path.in_(paths[i:i + 500]))))
                ids = [id_of[p] for p in paths]
                links = []
                for file_id, (row, shown, result) in zip(ids, self.pending_new):
                    links.extend(self._tag_links(s, file_id, row))
                    if result.status != FileStatus.OK:
                        self.report.problems.append((shown, result.error or result.status))
                if links:
                    conn.execute(insert(FileTag.__table__), links)
                self.report.new += len(ids)
            for known, row, shown, result in self.pending_changed:
                values = dict(row)
                if known.status == FileStatus.MISSING and row["content_hash"] == known.content_hash:
                    self.report.restored += 1
                else:
                    self.report.changed += 1
                if row["content_hash"] != known.content_hash and known.content_hash is not None:
                    values["content_version"] = File.content_version + 1
                    values["changed_at"] = now
                s.execute(update(File).where(File.id == known.id).values(**values))
                s.execute(delete(FileTag).where(FileTag.file_id == known.id,
                                                FileTag.source.in_([TagSource.PATH, TagSource.DATE])))
                links = self._tag_links(s, known.id, row)
                if links:
                    s.execute(insert(FileTag), links)
                if result.status != FileStatus.OK:
                    self.report.problems.append((shown, result.error or result.status))
            self.report.unchanged += self.pending_unchanged
        done = self.report.seen
        self.progress(Progress(done, None, f"{done} files"))
        self.pending_new, self.pending_changed, self.pending_unchanged = [], [], 0

    def _tag_links(self, s, file_id: int, row: dict) -> list[dict]:
        links = []
        rel_dir = row["rel_path"].rpartition("/")[0]
        if rel_dir:
            links.append(self._link(s, file_id, TagSource.PATH, rel_dir, path_tag_specs))
        when = row["created_at"] or row["modified_at"]
        if when is not None and row["status"] != FileStatus.ERROR:
            links.append(self._link(s, file_id, TagSource.DATE, when, date_tag_specs))
        return links

    def _link(self, s, file_id: int, source: str, what, specs) -> dict:
        chain = specs(what)
        tag_id = self.chain_ids.get((source, chain[-1][0]))
        if tag_id is None:
            if self.tag_cache is None:  # loaded once per run, on the first folder/date not yet seen
                self.tag_cache = TagCache(s)
            tag_id = self.chain_ids[(source, chain[-1][0])] = self.tag_cache.ensure_chain(s, chain, source)
        return {"file_id": file_id, "tag_id": tag_id, "source": source, "score": 1.0, "confirmed": True}

    def _finish(self, complete: bool) -> None:
        with self.lib.session() as s:
            if complete:
                # Not seen, not under a folder we could not read: gone from disk.
                gone = [
                    k for p, k in self.known.items()
                    if p not in self.seen and k.status != FileStatus.MISSING
                    and not any(is_within(p, d) for d in map(display_path, self.failed_dirs))
                ]
                for i in range(0, len(gone), 500):
                    ids = [k.id for k in gone[i:i + 500]]
                    s.execute(update(File).where(File.id.in_(ids)).values(
                        status=FileStatus.MISSING, error="no longer found on disk"))
                self.report.missing = len(gone)
            for path, message in self.issues:
                s.add(ScanIssue(folder_id=self.folder.id, path=path, message=message))
            s.execute(update(Folder).where(Folder.id == self.folder.id).values(
                last_scan_at=utcnow(), last_scan_complete=complete))
        self.report.problems.extend(self.issues)

"""Incremental folder scanning into the Metadata Index.

A scan walks a root with os.scandir, compares each file's size+mtime with the index (unchanged
files cost one stat and a dict lookup), probes new/changed files cheaply (format, hash, PDF/DOCX
metadata), and writes in batched transactions. A killed scan resumes without duplicates because
paths are unique and committed batches are simply seen as unchanged next time. Files that
disappeared are marked missing, never deleted. Nothing is ever written into the scanned folders.

This module is the orchestrator: roots, the per-file comparison and probing. Reading the tree is
``scan_walk``, writing rows in batches (with containers' members) ``scan_write``, the report and
its messages ``scan_report``.
"""

from __future__ import annotations

import logging
import os
import stat as stat_mod
import time
from contextlib import nullcontext
from typing import Optional, Sequence

from sqlalchemy import delete, func, select, update

from spar_desktop.core.documents.budget import ExtractionBudget
from spar_desktop.core.file_lock import file_lock
from spar_desktop.core.library import count_store, known_files, planner_stats, probe_ahead
from spar_desktop.core.library.children import mark_children_missing
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.models import File, FileStatus, Folder, ScanIssue, utcnow
from spar_desktop.core.library.paths import (
    DEFAULT_IGNORE_PATTERNS, IgnoreMatcher, display_path, is_within, normalize_root, raw_path_bytes,
)
from spar_desktop.core.library.probe import (
    CONTAINER_FORMATS, NotRegularFile, format_from_name, mtime_datetime, probe_file, special_file_message,
    special_kind, storable_mtime_ns,
)
from spar_desktop.core.library.probe_result import ProbeResult
from spar_desktop.core.library.query_indexes import BULK_MAX_EXISTING, ensure_query_indexes
from spar_desktop.core.library.scan_report import UNEXPECTED_READ, UNEXPECTED_RECORD, ScanReport, os_error_message
from spar_desktop.core.library.scan_walk import TreeWalk
from spar_desktop.core.library.scan_write import BatchWriter
from spar_desktop.core.progress import CancelToken, Progress, ProgressCallback, no_progress

log = logging.getLogger(__name__)


class RootRefused(ValueError):
    """A folder that cannot be added as a root; the message says why, for the user."""


class Scanner:
    def __init__(self, library: Library, batch_size: int = 2000, bulk_load: bool = True,
                 probe_ahead_after: int = probe_ahead.START_AFTER) -> None:
        self.library = library
        self.batch_size = batch_size
        self.bulk_load = bulk_load  # a first scan into an (almost) empty index: see query_indexes.py
        self.probe_ahead_after = probe_ahead_after  # new files met before a second process probes (probe_ahead.py)
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
                    return root, real, f"{display_path(real)} is inside the indexed folder {root.path}; scanned as part of it"
            if display_path(real) != real:
                # A root's path is walked as stored; one with undecodable bytes cannot be stored.
                raise RootRefused("its name has bytes that are not valid text: add the folder that contains it instead")
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
            try:
                kind = f" ({special_kind(os.stat(real).st_mode)})"
            except OSError:
                kind = ""
            report.problems.append((display_path(real), f"not a folder or a regular file{kind}"))
            return report
        # A file is scanned alone: inside an indexed folder as part of it, else as its own root
        # (the user dropped one document; indexing its siblings too would surprise them).
        with self._turn(progress):
            try:
                folder, subtree, report.note = self.add_root(real, ignore_patterns)
            except RootRefused as exc:
                report.problems.append((display_path(real), f"folder not added: {exc}"))
                return report
            run = _ScanRun(self, folder, subtree, report, progress, cancel)
            run.execute()
            self._refresh_counts()
        report.seconds = time.perf_counter() - start
        return report

    def _refresh_counts(self) -> None:
        """The tag tree's stored counts, once the scan's batches are written (count_store.py;
        nothing when the scan wrote nothing)."""
        with self.library.session() as s:
            count_store.refresh(s)

    def _turn(self, progress: ProgressCallback):
        """One scan of an index at a time, across processes (the app's scan worker, `spar index`):
        two scans of one new folder both inserted its files, and one died on the unique path."""
        if self.library.settings is None:
            return nullcontext()
        return file_lock(self.library.settings.layout.scan_lock,
                         on_wait=lambda: progress(Progress(0, None, "waiting for another scan of this index to finish")))

    def rescan_all(self, progress: ProgressCallback = no_progress,
                   cancel: Optional[CancelToken] = None) -> list[ScanReport]:
        with self.library.session() as s:
            roots = [f.path for f in s.scalars(select(Folder))]
        return self.scan(roots, progress=progress, cancel=cancel)


class _ScanRun:
    """State of one scan of one subtree of a root (kept out of Scanner so Scanner is reusable).

    ``unseen``: the known files' keys ``(path, size, mtime_ns)`` (known_files.py); it loses each path the
    walk finds, so what is left at the end of a complete scan is gone from disk.
    """

    def __init__(self, scanner: Scanner, folder: Folder, subtree: str, report: ScanReport,
                 progress: ProgressCallback, cancel: Optional[CancelToken]) -> None:
        self.lib = scanner.library
        self.batch_size = scanner.batch_size
        self.bulk_load = scanner.bulk_load
        self.folder = folder
        self.root = folder.path
        self.subtree = subtree
        self.report = report
        self.progress = progress
        self.cancel = cancel
        self.unseen: dict[str, tuple] = {}
        self.n_seen = 0
        ignore = IgnoreMatcher(list(DEFAULT_IGNORE_PATTERNS) + list(folder.ignore_patterns or []))
        self.walker = TreeWalk(self.root, ignore, scanner._excluded, progress, cancel, lambda: self.n_seen)
        self.issues = self.walker.issues  # one list: the walk's and the files' issues in the order met
        settings = scanner.library.settings
        budget = settings.extraction_budget() if settings is not None else ExtractionBudget()
        self.writer = BatchWriter(self.lib, folder.id, report, progress, budget)
        self.ahead = probe_ahead.ProbeAhead(scanner.probe_ahead_after)

    def _load_known(self) -> None:
        shown = display_path(self.subtree)  # stored paths are display text
        prefix = shown.rstrip(os.sep) + os.sep
        self.whole_root = shown.rstrip(os.sep) == self.root.rstrip(os.sep)
        with self.lib.engine.begin() as conn:
            # The walk pops what it finds (one dict, not a copy: at 1M files a second dict is ~60 MB).
            self.unseen = known_files.load_keys(conn, shown, prefix)
            # A subtree scan replaces only its own issues: the rest of the root was not looked at.
            issues = ScanIssue.folder_id == self.folder.id
            if not self.whole_root:
                issues &= (ScanIssue.path == shown) | ScanIssue.path.startswith(prefix, autoescape=True)
            conn.execute(delete(ScanIssue).where(issues))
        if self.bulk_load and not self.unseen:
            with self.lib.engine.connect() as conn:
                if conn.execute(select(func.count()).select_from(File)).scalar() <= BULK_MAX_EXISTING:
                    self.writer.bulk_min = self.batch_size  # from the first full batch on

    def _stored(self, paths: list[str]) -> dict[str, tuple]:
        """The stored rows of known files that differ from disk (known_files.STORED_COLUMNS)."""
        with self.lib.engine.connect() as conn:
            return known_files.stored_rows(conn, paths)

    def execute(self) -> None:
        self._load_known()
        complete = False
        try:
            listings = self.ahead.listings(self.walker.walk(self.subtree),
                                           lambda regular: probe_ahead.new_entries(regular, self.unseen))
            for rel_prefix, regular, links in listings:
                self._visit_dir(rel_prefix, regular, links)
                if self.writer.pending_unchanged >= 5000:
                    self.writer.flush()
            self.writer.flush()
            complete = not (self.cancel is not None and self.cancel.cancelled)
        finally:
            self.ahead.close()
            try:
                if not complete:
                    self.writer.flush()
                    self.report.cancelled = True
                self._finish(complete)
            finally:
                if self.writer.dropped_indexes:
                    self.progress(Progress(self.n_seen, None, "building the index's lookup indexes"))
                    ensure_query_indexes(self.lib.engine)
        r = self.report
        if planner_stats.applies(self.lib.engine) and r.new + r.changed + r.missing + r.restored + r.children:
            self.progress(Progress(self.n_seen, None, "updating the database's statistics"))
            planner_stats.refresh_after_scan(self.lib.engine, bulk=self.writer.dropped_indexes)

    def _visit_dir(self, rel_prefix: str, regular: list, links: list) -> None:
        """The per-file loop, kept tight: an unchanged file costs one lstat and one dict pop; a new
        file is not stat'ed (probe_file's fstat describes it); known files that differ come after."""
        unseen_pop = self.unseen.pop
        batch_size = self.batch_size
        unchanged = 0
        differ: list[tuple] = []
        self.n_seen += len(regular) + len(links)
        for entry in regular:
            try:  # the per-file error boundary: whatever one file raises is that file's status
                if entry.__class__ is str:  # single-file mode
                    path, st_of = entry, os.stat
                else:
                    path, st_of = entry.path, None
                shown = path if path.isascii() else display_path(path)
                key = unseen_pop(shown, None)
                if key is None:
                    self._probe(path, rel_prefix + path.rpartition(os.sep)[2], shown, None, False, None)
                else:
                    try:
                        st = entry.stat(follow_symlinks=False) if st_of is None else st_of(path)
                    except OSError as exc:
                        differ.append((path, shown, key, None, exc))
                        continue
                    # The second test only runs for a changed file: an mtime after 2262 is
                    # stored clamped to 64 bits and must still read as unchanged.
                    if key[1] == st.st_size and (key[2] == st.st_mtime_ns or key[2] == storable_mtime_ns(st.st_mtime_ns)):
                        unchanged += 1
                        continue
                    differ.append((path, shown, key, st, None))
            except Exception as exc:  # noqa: BLE001
                self._record_unexpected(entry if entry.__class__ is str else entry.path, rel_prefix, None, exc)
            if self.writer.pending >= batch_size:
                self.writer.pending_unchanged += unchanged
                unchanged = 0
                self.writer.flush()
        self.writer.pending_unchanged += unchanged
        if differ:
            self._visit_differing(rel_prefix, differ)
        for entry in links:
            known = None
            try:
                path = entry.path
                shown = display_path(path)
                if unseen_pop(shown, None) is not None:
                    known = self._stored([shown]).get(shown)
                self._visit_link(path, rel_prefix + entry.name, shown, known)
            except Exception as exc:  # noqa: BLE001
                self._record_unexpected(entry.path, rel_prefix, known, exc)
            if self.writer.pending >= batch_size:
                self.writer.flush()

    def _visit_differing(self, rel_prefix: str, differ: list[tuple]) -> None:
        """Known files of one folder whose size or mtime changed, or that could not be stat'ed:
        (path, shown path, key, stat or None, OSError or None)."""
        stored = self._stored([d[1] for d in differ])
        for path, shown, key, st, exc in differ:
            known = stored.get(shown)  # None: its row went away meanwhile; then it is new
            rel = rel_prefix + path.rpartition(os.sep)[2]
            try:
                if exc is not None:
                    self._record_error(path, rel, shown, known, exc, False)
                elif stat_mod.S_ISREG(st.st_mode):
                    self._probe(path, rel, shown, known, False, st)
                else:  # replaced by a FIFO/device since the listing: the file is gone
                    self.unseen[shown] = key
                    self.issues.append((shown, special_file_message(st.st_mode)))
            except Exception as e:  # noqa: BLE001
                self._record_unexpected(path, rel_prefix, known, e)
            if self.writer.pending >= self.batch_size:
                self.writer.flush()

    def _visit_link(self, path: str, rel: str, shown: str, known: Optional[tuple]) -> None:
        # A file link is read only when it lands inside the root: a link to /etc/passwd (or to
        # another user's share) must not put that file's text into search results.
        target = os.path.realpath(path)
        if os.path.exists(target) and not is_within(target, self.root):
            self._record_outside_link(path, rel, shown, known, target)
            return
        try:
            st = os.stat(target)
        except OSError as exc:
            self._record_error(path, rel, shown, known, exc, True)
            return
        if not stat_mod.S_ISREG(st.st_mode):  # sockets, fifos, devices: not documents
            if known is not None:
                self.unseen[shown] = known
            self.issues.append((shown, f"symbolic link to something that is {special_file_message(st.st_mode)}"))
            return
        if known and known[2] == st.st_size and known[3] == storable_mtime_ns(st.st_mtime_ns):
            self.writer.pending_unchanged += 1
            return
        self._probe(target, rel, shown, known, True, st, link_path=path)

    def _probe(self, target: str, rel: str, shown: str, known: Optional[tuple], is_link: bool,
               st: Optional[os.stat_result], link_path: Optional[str] = None) -> None:
        path = link_path or target
        try:
            result = self.ahead.take(target) if link_path is None else None  # probed ahead?
            if result is None:
                result = probe_file(target, os.path.basename(path))  # O_NOFOLLOW: target is resolved
        except FileNotFoundError as exc:
            self._record_error(path, rel, shown, known, exc, is_link)
            return
        except NotRegularFile as exc:  # replaced by a FIFO or device since the listing: not a document
            self._skip_special(shown, known, str(exc))
            return
        except OSError as exc:
            # Readable metadata (stat) but unreadable content: index it with the error.
            if st is None:
                try:
                    st = os.lstat(target)
                except OSError:
                    st = None
                if st is not None and not stat_mod.S_ISREG(st.st_mode):  # a socket cannot even be opened
                    self._skip_special(shown, known, special_file_message(st.st_mode))
                    return
            result = ProbeResult(st.st_size if st else 0, st.st_mtime_ns if st else 0, format_from_name(path), None,
                                 FileStatus.ERROR, os_error_message(exc, is_link))
        except Exception:  # noqa: BLE001 - a parser's surprise (MuPDF, zip, XML) is this file's status
            log.exception("unexpected problem reading %s", shown)
            result = self._error_result(target, path, st, UNEXPECTED_READ)
        row = self._row(path, rel, shown, result)
        self.writer.add(known, row, shown, result)

    def _skip_special(self, shown: str, known: Optional[tuple], message: str) -> None:
        if known is not None:
            self.unseen[shown] = known  # the regular file it replaced is gone
        self.issues.append((shown, message))

    @staticmethod
    def _error_result(target: str, path: str, st: Optional[os.stat_result], message: str) -> ProbeResult:
        """An ERROR result with the file's real size and mtime, so the next scan sees it unchanged
        (and does not stumble over it again) until the file itself changes."""
        if st is None:
            try:
                st = os.lstat(target)
            except OSError:
                st = None
        return ProbeResult(st.st_size if st else 0, st.st_mtime_ns if st else 0, format_from_name(path), None,
                           FileStatus.ERROR, message)

    def _record_unexpected(self, path: str, rel_prefix: str, known: Optional[tuple], exc: Exception) -> None:
        """The per-file error boundary: an exception nobody foresaw, from one file, becomes that
        file's ERROR status with a plain message and a log line; the scan goes on."""
        shown = display_path(path)
        log.error("unexpected problem scanning %s", shown, exc_info=exc)
        try:
            row = self._row(path, rel_prefix + path.rpartition(os.sep)[2], shown,
                            self._error_result(path, path, None, UNEXPECTED_READ))
        except Exception:  # noqa: BLE001 - cannot even describe it: say so and go on
            log.exception("cannot record %s", shown)
            self.report.problems.append((shown, UNEXPECTED_RECORD))
            return
        result = ProbeResult(row["size"], row["mtime_ns"], row["format"], None, FileStatus.ERROR, UNEXPECTED_READ)
        self.writer.add(known, row, shown, result)

    def _record_outside_link(self, path: str, rel: str, shown: str, known: Optional[tuple], target: str) -> None:
        message = f"symbolic link to a file outside the indexed folder ({display_path(target)}): not followed"
        if known is not None and known[4] == FileStatus.UNSUPPORTED and known[5] is None:
            self.writer.pending_unchanged += 1  # reported already; it stays a problem in the index
            return
        result = ProbeResult(0, 0, format_from_name(path), None, FileStatus.UNSUPPORTED, message)
        row = self._row(path, rel, shown, result)
        self.writer.add(known, row, shown, result)

    def _record_error(self, path: str, rel: str, shown: str, known: Optional[tuple], exc: OSError, is_link: bool) -> None:
        message = os_error_message(exc, is_link)
        if isinstance(exc, FileNotFoundError) and not is_link:
            # Vanished between listing and reading: gone, not broken.
            self.n_seen -= 1
            if known is not None:
                self.unseen[shown] = known
            self.report.problems.append((shown, "vanished during the scan"))
            return
        result = ProbeResult(0, 0, format_from_name(path), None, FileStatus.ERROR, message)
        row = self._row(path, rel, shown, result)
        if known is not None and known[4] == FileStatus.ERROR:
            self.writer.pending_unchanged += 1  # the same error as last time
        else:
            self.writer.add(known, row, shown, result)

    def _row(self, path: str, rel: str, shown: str, r: ProbeResult) -> dict:
        name = path.rpartition(os.sep)[2]
        return {
            "path": shown, "raw_path": None if shown == path else raw_path_bytes(path), "folder_id": self.folder.id,
            "rel_path": rel if rel.isascii() else display_path(rel),
            "name": name if name.isascii() else display_path(name),
            "size": r.size, "mtime_ns": storable_mtime_ns(r.mtime_ns), "content_hash": r.content_hash,
            "format": r.format, "title": r.title, "author": r.author, "created_at": r.created_at,
            "modified_at": mtime_datetime(r.mtime_ns),
            "page_count": r.page_count, "status": r.status, "error": r.error, "extra": r.extra or None,
        }

    def _finish(self, complete: bool) -> None:
        with self.lib.session() as s:
            if complete:
                # Not seen, not under a folder we could not read: gone from disk.
                failed = [display_path(d) for d in self.walker.failed_dirs]
                left = [p for p in self.unseen if not any(is_within(p, d) for d in failed)]
                gone = [k for k in self._stored(left).values() if k[4] != FileStatus.MISSING]
                for i in range(0, len(gone), 500):
                    ids = [k[1] for k in gone[i:i + 500]]
                    s.execute(update(File).where(File.id.in_(ids)).values(
                        status=FileStatus.MISSING, error="no longer found on disk"))
                mark_children_missing(s, [k[0] for k in gone if k[6] in CONTAINER_FORMATS])
                self.report.missing = len(gone)
            for path, message in self.issues:
                s.add(ScanIssue(folder_id=self.folder.id, path=path, message=message))
            # Only a scan of the whole root can vouch for the whole root; an interrupted subtree
            # scan still leaves the root incomplete.
            if self.whole_root or not complete:
                s.execute(update(Folder).where(Folder.id == self.folder.id).values(
                    last_scan_at=utcnow(), last_scan_complete=complete))
        self.report.problems.extend(self.issues)


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
from contextlib import nullcontext
from dataclasses import dataclass, field
from operator import attrgetter, itemgetter
from typing import Iterator, Optional, Sequence

from sqlalchemy import delete, func, select, update
from sqlalchemy.exc import OperationalError

from spar_desktop.core.documents.budget import ExtractionBudget
from spar_desktop.core.documents.virtual import VIRTUAL_SEP
from spar_desktop.core.file_lock import file_lock
from spar_desktop.core.library.bulk import fetch_rows, insert_rows
from spar_desktop.core.library.children import (
    ContainerListing, mark_children_missing, read_container, remove_children, sync_children,
)
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.models import File, FileStatus, FileTag, Folder, ScanIssue, TagSource, utcnow
from spar_desktop.core.library.paths import (
    DEFAULT_IGNORE_PATTERNS, IgnoreMatcher, display_path, is_virtualenv, is_within, normalize_root, raw_path_bytes,
)
from spar_desktop.core.library.probe import (
    CONTAINER_FORMATS, READABLE_FORMATS, SAMPLED_HASH_PREFIX, NotRegularFile, ProbeResult, format_from_name,
    mtime_datetime, probe_file, special_file_message, special_kind, storable_mtime_ns,
)
from spar_desktop.core.library.tags import TagCache, date_tag_specs, path_tag_specs
from spar_desktop.core.progress import CancelToken, Progress, ProgressCallback, no_progress

log = logging.getLogger(__name__)

_entry_name = attrgetter("name")

# What the user reads when something nobody foresaw goes wrong with one file; the log has the rest.
UNEXPECTED_READ = "SPAR could not read this file (an unexpected problem; the details are in the log)"
UNEXPECTED_RECORD = "SPAR could not record this file in the index (an unexpected problem; the details are in the log)"
NAME_CLASH_FILE = ("another file shows under this same name: its real name has bytes that are not valid text, "
                   "written here as \\xNN; skipped, rename one of the two")
NAME_CLASH_FOLDER = ("another folder shows under this same name: its real name has bytes that are not valid text, "
                     "written here as \\xNN; skipped with everything in it, rename one of the two")


class RootRefused(ValueError):
    """A folder that cannot be added as a root; the message says why, for the user."""


@dataclass
class ScanReport:
    """What one scan of one root did; ``problems`` are (path, message) lines for the user."""

    root: str
    new: int = 0
    changed: int = 0
    unchanged: int = 0
    missing: int = 0
    restored: int = 0
    children: int = 0  # archive members, attachments and mbox messages added or updated
    problems: list[tuple[str, str]] = field(default_factory=list)
    cancelled: bool = False
    seconds: float = 0.0
    note: Optional[str] = None

    @property
    def seen(self) -> int:
        return self.new + self.changed + self.unchanged


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
    def __init__(self, library: Library, batch_size: int = 2000) -> None:
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
        report.seconds = time.perf_counter() - start
        return report

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

    Known rows are plain tuples ``(path, id, size, mtime_ns, status, content_hash)`` in a dict loaded by
    one select; a row that must be re-probed whatever its size/mtime (missing, or a sampled
    fingerprint on a readable format) is stored with size -1 so the one comparison per file
    fails. ``unseen`` starts as a copy of it and loses each path the walk finds: what is left
    at the end of a complete scan is gone from disk.
    """

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
        self.known: dict[str, tuple] = {}
        self.unseen: dict[str, tuple] = {}
        self.n_seen = 0
        self.failed_dirs: list[str] = []
        self.pending_new: list[tuple[dict, str, ProbeResult]] = []
        self.pending_changed: list[tuple[tuple, dict, str, ProbeResult]] = []
        self.pending_unchanged = 0
        self.issues: list[tuple[str, str]] = []
        self.tag_cache: Optional[TagCache] = None
        self.listings: dict[str, ContainerListing] = {}  # path -> members of containers in the batch being written
        settings = scanner.library.settings
        self.budget = settings.extraction_budget() if settings is not None else ExtractionBudget()
        self.chain_ids: dict[tuple[str, object], int] = {}  # (source, folder path or (year, month)) → tag id

    def _load_known(self) -> None:
        shown = display_path(self.subtree)  # stored paths are display text
        prefix = shown.rstrip(os.sep) + os.sep
        self.whole_root = shown.rstrip(os.sep) == self.root.rstrip(os.sep)
        # Child documents (parent_id set) are not on disk: their container's scan keeps them.
        q = select(File.path, File.id, File.size, File.mtime_ns, File.status, File.content_hash, File.format).where(
            ((File.path == shown) | (File.path.startswith(prefix, autoescape=True))) & File.parent_id.is_(None)
        )
        with self.lib.engine.begin() as conn:
            rows = fetch_rows(conn, q)
            # A subtree scan replaces only its own issues: the rest of the root was not looked at.
            issues = ScanIssue.folder_id == self.folder.id
            if not self.whole_root:
                issues &= (ScanIssue.path == shown) | ScanIssue.path.startswith(prefix, autoescape=True)
            conn.execute(delete(ScanIssue).where(issues))
        known = dict(zip(map(itemgetter(0), rows), rows))  # path → row, built in C
        missing, sampled, n = FileStatus.MISSING, SAMPLED_HASH_PREFIX, len(SAMPLED_HASH_PREFIX)
        for p, i, sz, mt, st, h, fmt in [r for r in rows if r[4] == missing or (r[5] is not None and r[5][:n] == sampled)]:
            if st == missing or format_from_name(p) in READABLE_FORMATS:
                # Missing: re-probe to tell restored from changed. Sampled fingerprint on a
                # readable format (an index from before full hashing, or a format that became
                # readable): re-probe so it gets its full-content hash.
                known[p] = (p, i, -1, mt, st, h, fmt)
        self.known = known
        self.unseen = dict(known)

    def execute(self) -> None:
        self._load_known()
        complete = False
        try:
            for rel_prefix, regular, links in self._walk(self.subtree):
                self._visit_dir(rel_prefix, regular, links)
                if self.pending_unchanged >= 5000:
                    self._flush()
            self._flush()
            complete = not (self.cancel is not None and self.cancel.cancelled)
        finally:
            if not complete:
                self._flush()
                self.report.cancelled = True
            self._finish(complete)

    # Walk iteratively (deep trees must not hit the recursion limit); yields, per folder, the
    # '/'-terminated path of the folder relative to the root, its regular files (DirEntries, or
    # a path in single-file mode) and its file symlinks; folder symlinks are not followed (loops,
    # duplicates) but are reported. The walk starts at a real path and never enters a link, so
    # every folder path it builds is real (the data-dir check needs no realpath).
    def _walk(self, top: str) -> Iterator[tuple[str, list, list]]:
        if os.path.isfile(top):  # single-file mode: the user named this file, ignore patterns aside
            shown = display_path(top)
            if shown != top and os.path.lexists(shown):
                self.issues.append((shown, NAME_CLASH_FILE))
                return
            rel = os.path.basename(top) if top == self.root else os.path.relpath(top, self.root).replace(os.sep, "/")
            yield rel.rpartition("/")[0] + "/" if "/" in rel else "", [top], []
            return
        exact, glob_re, path_re = self.ignore.name_rules
        glob_match = glob_re.match if glob_re is not None else None
        path_match = path_re.match if path_re is not None else None
        excluded = self.excluded
        root_prefix = self.root.rstrip(os.sep) + os.sep
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
            entries.sort(key=_entry_name)
            if current == self.root:
                rel_prefix = ""
            else:
                rel_prefix = current[len(root_prefix):] + "/"
                if os.sep != "/":
                    rel_prefix = rel_prefix.replace(os.sep, "/")
            regular, links = [], []
            pushed = len(stack)
            odd_names = False
            for entry in entries:
                name = entry.name
                if name in exact or (glob_match is not None and glob_match(name)) or (
                        path_match is not None and path_match(rel_prefix + name)):
                    continue
                if not name.isascii():
                    odd_names = True
                try:
                    if entry.is_file(follow_symlinks=False):
                        regular.append(entry)
                    elif entry.is_dir(follow_symlinks=False):
                        if entry.path not in excluded and not is_virtualenv(entry.path):
                            stack.append(entry.path)
                    elif entry.is_symlink():
                        try:
                            if os.path.isdir(entry.path):
                                self.issues.append((display_path(entry.path), "symbolic link to a folder: not followed"))
                                continue
                        except OSError:
                            pass
                        links.append(entry)
                    else:  # FIFO, socket, device: never opened (a FIFO would block), but said
                        self.issues.append((display_path(entry.path),
                                            special_file_message(entry.stat(follow_symlinks=False).st_mode)))
                except OSError as exc:
                    self.issues.append((display_path(entry.path), _os_error_message(exc, False)))
            if odd_names:
                regular, links = self._drop_name_clashes(regular, links, stack, pushed)
            yield rel_prefix, regular, links
            self.progress(Progress(self.n_seen, None, f"scanning {display_path(current)}"))

    def _drop_name_clashes(self, regular: list, links: list, stack: list[str], pushed: int) -> tuple[list, list]:
        """Drop the entries of one folder whose stored name would be another's.

        A name that is not valid UTF-8 is stored with its undecodable bytes written as \\xNN, so
        b'a\\xff.txt' and a file literally named 'a\\xff.txt' (or b'\\xff\\\\xfe' and b'\\\\xff\\xfe')
        would be one path, and the index refuses the second row (it stopped the whole scan).
        A name that is exact text keeps its path; of two escaped names, the first in name order
        does. The other one is reported and skipped, on every scan, until one is renamed.
        """
        dirs = stack[pushed:]
        named = [(e.name, e) for e in regular] + [(e.name, e) for e in links] + [(os.path.basename(d), d) for d in dirs]
        taken = {name for name, _ in named if display_path(name) is name}
        dropped: set[int] = set()
        for name, item in sorted(((n, i) for n, i in named if display_path(n) is not n), key=itemgetter(0)):
            shown = display_path(name)
            if shown in taken:
                dropped.add(id(item))
                path = item if item.__class__ is str else item.path
                self.issues.append((display_path(path), NAME_CLASH_FOLDER if item.__class__ is str else NAME_CLASH_FILE))
                log.warning("skipped %s: its name reads the same as another once undecodable bytes are escaped",
                            display_path(path))
            else:
                taken.add(shown)
        if not dropped:
            return regular, links
        stack[pushed:] = [d for d in dirs if id(d) not in dropped]
        return [e for e in regular if id(e) not in dropped], [e for e in links if id(e) not in dropped]

    def _visit_dir(self, rel_prefix: str, regular: list, links: list) -> None:
        """The per-file loop, kept tight: an unchanged file costs one lstat and one dict pop; a
        new file is not stat'ed at all (probe_file's fstat on the open descriptor describes it)."""
        unseen_pop = self.unseen.pop
        batch_size = self.batch_size
        unchanged = 0
        self.n_seen += len(regular) + len(links)
        for entry in regular:
            known = None
            try:  # the per-file error boundary: whatever one file raises is that file's status
                if entry.__class__ is str:  # single-file mode
                    path, st_of = entry, os.stat
                else:
                    path, st_of = entry.path, None
                shown = path if path.isascii() else display_path(path)
                known = unseen_pop(shown, None)
                if known is None:
                    self._probe(path, rel_prefix + path.rpartition(os.sep)[2], shown, None, False, None)
                else:
                    try:
                        st = entry.stat(follow_symlinks=False) if st_of is None else st_of(path)
                    except OSError as exc:
                        self._record_error(path, rel_prefix + path.rpartition(os.sep)[2], shown, known, exc, False)
                    else:
                        # The second test only runs for a changed file: an mtime after 2262 is
                        # stored clamped to 64 bits and must still read as unchanged.
                        if known[2] == st.st_size and (known[3] == st.st_mtime_ns
                                                       or known[3] == storable_mtime_ns(st.st_mtime_ns)):
                            unchanged += 1
                            continue
                        if stat_mod.S_ISREG(st.st_mode):
                            self._probe(path, rel_prefix + path.rpartition(os.sep)[2], shown, known, False, st)
                        else:  # replaced by a FIFO/device since the listing: the file is gone
                            self.unseen[shown] = known
                            self.issues.append((shown, special_file_message(st.st_mode)))
            except Exception as exc:  # noqa: BLE001
                self._record_unexpected(entry if entry.__class__ is str else entry.path, rel_prefix, known, exc)
            if len(self.pending_new) + len(self.pending_changed) >= batch_size:
                self.pending_unchanged += unchanged
                unchanged = 0
                self._flush()
        self.pending_unchanged += unchanged
        for entry in links:
            known = None
            try:
                path = entry.path
                shown = display_path(path)
                known = unseen_pop(shown, None)
                self._visit_link(path, rel_prefix + entry.name, shown, known)
            except Exception as exc:  # noqa: BLE001
                self._record_unexpected(entry.path, rel_prefix, known, exc)
            if len(self.pending_new) + len(self.pending_changed) >= batch_size:
                self._flush()

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
            self.pending_unchanged += 1
            return
        self._probe(target, rel, shown, known, True, st, link_path=path)

    def _probe(self, target: str, rel: str, shown: str, known: Optional[tuple], is_link: bool,
               st: Optional[os.stat_result], link_path: Optional[str] = None) -> None:
        path = link_path or target
        try:
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
                                 FileStatus.ERROR, _os_error_message(exc, is_link))
        except Exception:  # noqa: BLE001 - a parser's surprise (MuPDF, zip, XML) is this file's status
            log.exception("unexpected problem reading %s", shown)
            result = self._error_result(target, path, st, UNEXPECTED_READ)
        row = self._row(path, rel, shown, result)
        if known is None:
            self.pending_new.append((row, shown, result))
        else:
            self.pending_changed.append((known, row, shown, result))

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
        if known is None:
            self.pending_new.append((row, shown, result))
        else:
            self.pending_changed.append((known, row, shown, result))

    def _record_outside_link(self, path: str, rel: str, shown: str, known: Optional[tuple], target: str) -> None:
        message = f"symbolic link to a file outside the indexed folder ({display_path(target)}): not followed"
        if known is not None and known[4] == FileStatus.UNSUPPORTED and known[5] is None:
            self.pending_unchanged += 1  # reported already; it stays a problem in the index
            return
        result = ProbeResult(0, 0, format_from_name(path), None, FileStatus.UNSUPPORTED, message)
        row = self._row(path, rel, shown, result)
        if known is None:
            self.pending_new.append((row, shown, result))
        else:
            self.pending_changed.append((known, row, shown, result))

    def _record_error(self, path: str, rel: str, shown: str, known: Optional[tuple], exc: OSError, is_link: bool) -> None:
        message = _os_error_message(exc, is_link)
        if isinstance(exc, FileNotFoundError) and not is_link:
            # Vanished between listing and reading: gone, not broken.
            self.n_seen -= 1
            if known is not None:
                self.unseen[shown] = known
            self.report.problems.append((shown, "vanished during the scan"))
            return
        result = ProbeResult(0, 0, format_from_name(path), None, FileStatus.ERROR, message)
        row = self._row(path, rel, shown, result)
        if known is None:
            self.pending_new.append((row, shown, result))
        elif known[4] != FileStatus.ERROR:
            self.pending_changed.append((known, row, shown, result))
        else:
            self.pending_unchanged += 1

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

    def _flush(self) -> None:
        if not (self.pending_new or self.pending_changed):
            if self.pending_unchanged:
                self.report.unchanged += self.pending_unchanged
                self.pending_unchanged = 0
                done = self.report.seen
                self.progress(Progress(done, None, f"{done} files"))
            return
        new, changed = self.pending_new, self.pending_changed
        self.pending_new, self.pending_changed = [], []
        # Archives and mails are listed (every member streamed and hashed) before the write
        # transaction opens: a large archive must not hold the index's write lock meanwhile.
        self.listings = {row["path"]: self._list(row) for row in [r for r, _, _ in new] + [r for _, r, _, _ in changed]
                         if row["format"] in CONTAINER_FORMATS and row["status"] == FileStatus.OK}
        try:
            self._write(new, changed)
        except OperationalError:
            raise  # disk full, database locked or gone: the whole job's problem, not one file's
        except Exception:  # noqa: BLE001 - one row the database refuses must not lose the batch
            log.exception("writing a batch of %d files failed; writing them one by one", len(new) + len(changed))
            for item in new:
                self._write_alone([item], [])
            for item in changed:
                self._write_alone([], [item])
        self.report.unchanged += self.pending_unchanged
        self.pending_unchanged = 0
        done = self.report.seen
        self.progress(Progress(done, None, f"{done} files"))

    def _write_alone(self, new: list, changed: list) -> None:
        """One file of a batch that failed: as probed, else as an ERROR row, else a problem line."""
        _, row, shown, result = (None, *new[0]) if new else changed[0]
        try:
            self._write(new, changed)
            return
        except OperationalError:
            raise
        except Exception:  # noqa: BLE001
            log.exception("cannot record %s in the index as probed", shown)
        failed = dict(row, status=FileStatus.ERROR, error=UNEXPECTED_RECORD, content_hash=None, title=None,
                      author=None, created_at=None, page_count=None, extra=None)
        failed_result = ProbeResult(row["size"], row["mtime_ns"], row["format"], None, FileStatus.ERROR, UNEXPECTED_RECORD)
        try:
            if new:
                self._write([(failed, shown, failed_result)], [])
            else:
                self._write([], [(changed[0][0], failed, shown, failed_result)])
        except OperationalError:
            raise
        except Exception:  # noqa: BLE001 - not even as an error (its path is taken?): a problem line
            log.exception("cannot record %s in the index at all", shown)
            self.report.problems.append((shown, UNEXPECTED_RECORD))

    def _write(self, new: list[tuple[dict, str, ProbeResult]], changed: list[tuple[tuple, dict, str, ProbeResult]]) -> None:
        """Write new and changed rows (with their tags and child documents) in one transaction;
        the report counts them only once it is committed."""
        tally = ScanReport(root="")
        try:
            self._write_rows(new, changed, tally)
        except BaseException:
            # Tags created in the rolled-back transaction do not exist: forget their cached ids.
            self.chain_ids, self.tag_cache = {}, None
            raise
        report = self.report
        report.new += tally.new
        report.changed += tally.changed
        report.restored += tally.restored
        report.children += tally.children
        report.problems.extend(tally.problems)

    def _write_rows(self, pending_new: list, pending_changed: list, tally: ScanReport) -> None:
        now = utcnow()
        with self.lib.session() as s:
            conn = s.connection()
            if pending_new:
                rows = [row for row, _, _ in pending_new]
                for row in rows:
                    row["first_seen_at"] = now
                # Plain executemany (no RETURNING: several times faster on SQLite); the new ids
                # are then read back in one select of the ids above the largest id before the
                # insert, matched by path (unique). Rows another writer added meanwhile are
                # ignored; a path not found that way (ids not assigned in order) is looked up.
                top = conn.execute(select(func.max(File.id))).scalar() or 0
                insert_rows(conn, File.__table__, rows)
                paths = [r["path"] for r in rows]
                id_of = dict(conn.execute(select(File.path, File.id).where(File.id > top)).all())
                lost = [p for p in paths if p not in id_of]
                for i in range(0, len(lost), 500):
                    id_of.update(conn.execute(
                        select(File.path, File.id).where(File.path.in_(lost[i:i + 500]))).all())
                ids = [id_of[p] for p in paths]
                insert_rows(conn, FileTag.__table__, self._tag_links(s, ids, rows))
                for row, shown, result in pending_new:
                    if result.status != FileStatus.OK:
                        tally.problems.append((shown, result.error or result.status))
                tally.new += len(ids)
                for file_id, (row, shown, result) in zip(ids, pending_new):
                    if row["format"] in CONTAINER_FORMATS and row["status"] == FileStatus.OK:
                        self._sync_children(s, file_id, row, tally)
            if pending_changed:
                changed_ids = []
                for known, row, shown, result in pending_changed:
                    values = dict(row)
                    if known[4] == FileStatus.MISSING and row["content_hash"] == known[5]:
                        tally.restored += 1
                    else:
                        tally.changed += 1
                    if row["content_hash"] != known[5] and known[5] is not None:
                        values["content_version"] = File.content_version + 1
                        values["changed_at"] = now
                    conn.execute(update(File).where(File.id == known[1]).values(**values))
                    changed_ids.append(known[1])
                    if result.status != FileStatus.OK:
                        tally.problems.append((shown, result.error or result.status))
                for i in range(0, len(changed_ids), 500):
                    conn.execute(delete(FileTag).where(FileTag.file_id.in_(changed_ids[i:i + 500]),
                                                       FileTag.source.in_([TagSource.PATH, TagSource.DATE])))
                insert_rows(conn, FileTag.__table__,
                            self._tag_links(s, changed_ids, [row for _, row, _, _ in pending_changed]))
                for known, row, shown, result in pending_changed:
                    if row["format"] in CONTAINER_FORMATS and row["status"] == FileStatus.OK:
                        self._sync_children(s, known[1], row, tally)
                    elif known[6] in CONTAINER_FORMATS or known[6] == "email":
                        remove_children(s, row["path"])

    def _list(self, row: dict) -> ContainerListing:
        self.progress(Progress(self.report.seen, None, f"reading inside {row['name']}"))
        return read_container(row["raw_path"] and os.fsdecode(row["raw_path"]) or row["path"], row["format"], self.budget)

    def _sync_children(self, s, file_id: int, row: dict, tally: ScanReport) -> None:
        """A new or changed container's members (listed by _flush) into child rows with its tags."""
        listing = self.listings.get(row["path"]) or self._list(row)
        sync = sync_children(s, file_id, row, listing)
        changed = sync.added + sync.updated
        if sync.updated:
            ids = [i for i, _ in sync.updated]
            for k in range(0, len(ids), 500):
                s.execute(delete(FileTag).where(FileTag.file_id.in_(ids[k:k + 500]),
                                                FileTag.source.in_([TagSource.PATH, TagSource.DATE])))
        if changed:
            insert_rows(s.connection(), FileTag.__table__, self._tag_links(s, [i for i, _ in changed],
                                                                           [r for _, r in changed]))
        tally.children += len(changed)
        tally.problems.extend(sync.problems)

    def _tag_links(self, s, file_ids: list[int], rows: list[dict]) -> list[dict]:
        """Folder and date tag links of a batch; tags not seen yet in this run are resolved (and
        created when new) for the whole batch at once."""
        chain_ids = self.chain_ids
        wanted: list[tuple[int, str, object]] = []
        missing: dict[tuple[str, object], list[tuple[str, str]]] = {}
        for file_id, row in zip(file_ids, rows):
            # A child document is filed under its container's folder, not the archive's own ones.
            rel_dir = row["rel_path"].partition(VIRTUAL_SEP)[0].rpartition("/")[0]
            if rel_dir:
                key = (TagSource.PATH, rel_dir)
                wanted.append((file_id, TagSource.PATH, key))
                if key not in chain_ids and key not in missing:
                    missing[key] = path_tag_specs(rel_dir)
            when = row["created_at"] or row["modified_at"]
            if when is not None and row["status"] != FileStatus.ERROR:
                key = (TagSource.DATE, (when.year, when.month))
                wanted.append((file_id, TagSource.DATE, key))
                if key not in chain_ids and key not in missing:
                    missing[key] = date_tag_specs(when)
        if missing:
            if self.tag_cache is None:  # loaded once per run, on the first folder/date not yet seen
                self.tag_cache = TagCache(s)
            keys = list(missing)
            ids = self.tag_cache.ensure_chains(s, [(missing[k], k[0]) for k in keys])
            chain_ids.update(zip(keys, ids))
        return [{"file_id": file_id, "tag_id": chain_ids[key], "source": source, "score": 1.0, "confirmed": True}
                for file_id, source, key in wanted]

    def _finish(self, complete: bool) -> None:
        with self.lib.session() as s:
            if complete:
                # Not seen, not under a folder we could not read: gone from disk.
                failed = [display_path(d) for d in self.failed_dirs]
                gone = [
                    k for p, k in self.unseen.items()
                    if k[4] != FileStatus.MISSING and not any(is_within(p, d) for d in failed)
                ]
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

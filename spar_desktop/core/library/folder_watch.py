"""Linux folder watching on inotify, limited to what the scan indexes.

Why not watchdog's recursive inotify observer: it watches every folder under a root, ignored ones
included (a checkout's .venv: 5,456 folders), and asks for open/close events too. Our own scan and
watchdog's own re-walk after a queue overflow open thousands of folders, each open is an event, the
queue overflows again, and the idle app spun at 35-80% CPU forever. Here:
- only folders the scan would enter get a watch (the same ignore patterns, data dir excluded);
- only real changes are asked for (create, delete, write-close, modify, move), never open/access;
- a queue overflow means "something changed": one rescan of each root, no re-walk loop;
- the number of watches is bounded; a root past the bound is reported as not fully watched,
  and the app falls back to re-scanning it periodically.
Qt-free: changes are reported through a callback from the watch thread (ui/library/watcher.py debounces).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import logging
import os
import select
import struct
import sys
import threading
from dataclasses import dataclass
from typing import Callable, Iterable, Optional

from spar_desktop.core.library.paths import DEFAULT_IGNORE_PATTERNS, IgnoreMatcher, is_virtualenv

log = logging.getLogger(__name__)

IN_MODIFY, IN_CLOSE_WRITE, IN_MOVED_FROM, IN_MOVED_TO = 0x2, 0x8, 0x40, 0x80
IN_CREATE, IN_DELETE, IN_DELETE_SELF, IN_MOVE_SELF = 0x100, 0x200, 0x400, 0x800
IN_Q_OVERFLOW, IN_IGNORED, IN_ISDIR = 0x4000, 0x8000, 0x40000000
IN_ONLYDIR, IN_DONT_FOLLOW = 0x01000000, 0x02000000
IN_NONBLOCK, IN_CLOEXEC = 0o4000, 0o2000000
CHANGE_MASK = (IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
               | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW)
_EVENT = struct.Struct("iIII")

# A share bigger than this many folders is re-scanned periodically instead: inotify watches are a
# per-user kernel resource other programs (IDEs, sync clients) need too.
DEFAULT_MAX_WATCHES = 20_000


def available() -> bool:
    return sys.platform.startswith("linux") and _libc() is not None


def max_watches_allowed(limit: int = DEFAULT_MAX_WATCHES) -> int:
    """Our bound: the configured limit, and never more than half the user's kernel allowance."""
    try:
        with open("/proc/sys/fs/inotify/max_user_watches", encoding="ascii") as fh:
            return max(1, min(limit, int(fh.read()) // 2))
    except (OSError, ValueError):
        return limit


_LIBC: Optional[ctypes.CDLL] = None


def _libc() -> Optional[ctypes.CDLL]:
    global _LIBC
    if _LIBC is None:
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            libc.inotify_init1, libc.inotify_add_watch, libc.inotify_rm_watch  # noqa: B018 - all three exist
        except (OSError, AttributeError):
            return None
        _LIBC = libc
    return _LIBC


@dataclass(frozen=True)
class RootWatch:
    """How well a root is watched: ``complete`` False means some folders had no watch left."""

    root: str
    folders: int
    complete: bool


class InotifyWatcher:
    """Watches indexed roots; calls ``on_change(root)`` from its own thread on any real change."""

    def __init__(self, on_change: Callable[[str], None], max_watches: Optional[int] = None,
                 excluded: Iterable[str] = (), allowed: Iterable[str] = ()) -> None:
        libc = _libc()
        if libc is None:
            raise OSError("inotify is not available on this system")
        self._libc = libc
        self._on_change = on_change
        self.max_watches = max_watches or max_watches_allowed()
        self._excluded = tuple(os.path.realpath(p) for p in excluded)  # e.g. our data dir...
        self._allowed = tuple(os.path.realpath(p) for p in allowed)  # ...except the sample corpus in it
        fd = libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1 failed")
        self._fd = fd
        self._lock = threading.Lock()
        self._dirs: dict[int, tuple[str, str]] = {}  # watch descriptor → (root, folder)
        self._wd_of: dict[str, int] = {}
        self._roots: dict[str, tuple[IgnoreMatcher, bool]] = {}  # root → (ignore rules, complete)
        self._wake_r, self._wake_w = os.pipe()
        self._thread = threading.Thread(target=self._run, name="folder watch", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------ roots
    def add_root(self, root: str, ignore_patterns: Iterable[str] = ()) -> RootWatch:
        """Watch every folder under ``root`` that the scan would enter (walks the tree: call it
        off the UI thread). A file root is watched through its folder, for that file only."""
        root = os.path.realpath(root)
        ignore = IgnoreMatcher(list(DEFAULT_IGNORE_PATTERNS) + list(ignore_patterns))
        with self._lock:
            self._roots[root] = (ignore, True)
        if os.path.isfile(root):
            self._add(root, os.path.dirname(root))
            return self.status(root)
        self._add_tree(root, root)
        return self.status(root)

    def remove_root(self, root: str) -> None:
        root = os.path.realpath(root)
        with self._lock:
            self._roots.pop(root, None)
            gone = [wd for wd, (r, _) in self._dirs.items() if r == root]
            for wd in gone:
                folder = self._dirs.pop(wd)[1]
                self._wd_of.pop(folder, None)
                self._libc.inotify_rm_watch(self._fd, wd)

    def status(self, root: str) -> RootWatch:
        root = os.path.realpath(root)
        with self._lock:
            folders = sum(1 for r, _ in self._dirs.values() if r == root)
            complete = self._roots.get(root, (None, False))[1]
        return RootWatch(root, folders, complete)

    @property
    def watch_count(self) -> int:
        with self._lock:
            return len(self._dirs)

    def close(self) -> None:
        if self._fd < 0:
            return
        os.write(self._wake_w, b"x")
        self._thread.join(timeout=3)
        for fd in (self._fd, self._wake_r, self._wake_w):
            os.close(fd)
        self._fd = -1

    # ------------------------------------------------------------------ watches
    def _skipped(self, path: str) -> bool:
        under = lambda p, folders: any(p == f or p.startswith(f + os.sep) for f in folders)  # noqa: E731
        return under(path, self._excluded) and not any(under(a, (path,)) or under(path, (a,)) for a in self._allowed)

    def _add_tree(self, root: str, top: str) -> None:
        ignore = self._roots.get(root, (None, True))[0]
        if ignore is None:
            return
        stack = [top]
        while stack:
            folder = stack.pop()
            if self._skipped(folder):
                continue
            if not self._add(root, folder):
                return
            try:
                with os.scandir(folder) as it:
                    entries = [e for e in it if e.is_dir(follow_symlinks=False)]
            except OSError:
                continue
            rel_dir = os.path.relpath(folder, root).replace(os.sep, "/")
            prefix = "" if rel_dir == "." else rel_dir + "/"
            stack.extend(e.path for e in entries
                         if not ignore.ignored(e.name, prefix + e.name) and not is_virtualenv(e.path))

    def _add(self, root: str, folder: str) -> bool:
        """Add one folder's watch; False once the bound is reached (the root is then incomplete)."""
        with self._lock:
            if folder in self._wd_of:
                return True
            if len(self._dirs) >= self.max_watches:
                self._mark_incomplete(root)
                return False
            wd = self._libc.inotify_add_watch(self._fd, os.fsencode(folder), CHANGE_MASK)
            if wd < 0:
                err = ctypes.get_errno()
                if err == errno.ENOSPC:  # the kernel's per-user allowance is used up (by others too)
                    self._mark_incomplete(root)
                    return False
                return True  # vanished or unreadable folder: nothing to watch, go on
            self._dirs[wd] = (root, folder)
            self._wd_of[folder] = wd
            return True

    def _mark_incomplete(self, root: str) -> None:
        ignore, complete = self._roots.get(root, (None, True))
        if ignore is not None and complete:
            self._roots[root] = (ignore, False)
            log.warning("%s has more folders than can be watched (%d watches): it is re-scanned periodically",
                        root, self.max_watches)

    # ------------------------------------------------------------------ events
    def _run(self) -> None:
        poller = select.poll()
        poller.register(self._fd, select.POLLIN)
        poller.register(self._wake_r, select.POLLIN)
        while True:
            ready = dict(poller.poll())
            if self._wake_r in ready:
                return
            try:
                data = os.read(self._fd, 64 * 1024)
            except BlockingIOError:
                continue
            except OSError as exc:
                log.warning("folder watch stopped: %s", exc)
                return
            try:
                self._dispatch(data)
            except Exception:  # noqa: BLE001 - a bug here must not end watching silently
                log.exception("folder watch: cannot handle an event")

    def _dispatch(self, data: bytes) -> None:
        changed: set[str] = set()
        offset = 0
        while offset + _EVENT.size <= len(data):
            wd, mask, _cookie, length = _EVENT.unpack_from(data, offset)
            name = data[offset + _EVENT.size: offset + _EVENT.size + length].rstrip(b"\0")
            offset += _EVENT.size + length
            if mask & IN_Q_OVERFLOW:
                with self._lock:
                    changed.update(self._roots)  # events were lost: rescan everything once
                continue
            with self._lock:
                where = self._dirs.get(wd)
                if mask & IN_IGNORED and where is not None:
                    del self._dirs[wd]
                    self._wd_of.pop(where[1], None)
            if where is None or mask & IN_IGNORED:
                continue
            root, folder = where
            path = os.path.join(folder, os.fsdecode(name)) if name else folder
            if os.path.isfile(root) and path != root:
                continue  # a sibling of a file indexed alone
            ignore = self._roots.get(root, (None, True))[0]
            if ignore is None or self._skipped(path):
                continue
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            if name and ignore.ignored(os.fsdecode(name), rel):
                continue  # editor swap files, temp downloads, a new .venv: the scan skips them too
            if mask & IN_ISDIR and mask & (IN_CREATE | IN_MOVED_TO):
                self._add_tree(root, path)  # a new folder: watch it (and what was copied into it)
            changed.add(root)
        for root in changed:
            self._on_change(root)

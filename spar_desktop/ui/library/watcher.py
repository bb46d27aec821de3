"""Watched folders, debounced into one rescan per burst of changes.

On Linux the watching is core/library/folder_watch.py (inotify on exactly the folders the scan
indexes, bounded; a root with more folders than the bound is re-scanned every
``poll_minutes`` instead, and ``not_fully_watched`` says so). Elsewhere a watchdog Observer
per root. Either calls back on its own thread; the handler only emits a Qt signal carrying the
root (a str), queued to the UI thread, where a per-root single-shot timer restarts on every event.
The rescan starts once the folder has been quiet for ``debounce_ms``.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import Optional

from PySide6.QtCore import QObject, Qt, QTimer, Signal

log = logging.getLogger(__name__)

# Reading a file (which our own scan does) produces open/close events on Linux: reacting to
# them would rescan forever. Only real changes count.
_CHANGE_EVENTS = {"created", "deleted", "modified", "moved", "closed"}


class _Bridge(QObject):
    event_seen = Signal(str)
    watching = Signal(str)
    incomplete = Signal(str)


class FolderWatcher(QObject):
    """Emits ``changed(root)`` once per quiet period after files under ``root`` changed."""

    changed = Signal(str)
    watching = Signal(str)  # a root's watch is active (set up off the UI thread)
    not_fully_watched = Signal(str)  # too many folders to watch: re-scanned every poll_minutes

    def __init__(self, debounce_ms: int = 2000, ignore: tuple[str, ...] = (), allow: tuple[str, ...] = (),
                 parent: Optional[QObject] = None, max_watches: Optional[int] = None,
                 poll_minutes: float = 15.0) -> None:
        super().__init__(parent)
        self.debounce_ms = debounce_ms
        self.poll_minutes = poll_minutes
        self._max_watches = max_watches
        self._inotify = None  # core.library.folder_watch.InotifyWatcher, created on first watch
        self._polls: dict[str, QTimer] = {}
        self._ignore = tuple(os.path.realpath(p) for p in ignore)  # e.g. our own data dir ...
        self._allow = tuple(os.path.realpath(p) for p in allow)  # ... except these folders in it
        self._bridge = _Bridge(self)
        self._bridge.event_seen.connect(self._event, Qt.ConnectionType.QueuedConnection)
        self._bridge.watching.connect(self.watching, Qt.ConnectionType.QueuedConnection)
        self._bridge.incomplete.connect(self._poll_instead, Qt.ConnectionType.QueuedConnection)
        self._lock = threading.Lock()
        self._timers: dict[str, QTimer] = {}
        self._watches: dict[str, object] = {}
        self._observer = None

    @property
    def roots(self) -> list[str]:
        return sorted(self._watches)

    @property
    def active_roots(self) -> list[str]:
        """Roots whose watch is set up (watch() returns before that happens)."""
        with self._lock:
            return sorted(r for r, w in self._watches.items() if w is not None)

    def watch(self, root: str, ignore_patterns: tuple[str, ...] = ()) -> bool:
        """Watch an indexed root: a folder recursively, a single indexed file through its folder."""
        root = os.path.realpath(root)
        single = os.path.isfile(root)
        if root in self._watches or not (single or os.path.isdir(root)):
            return False
        from spar_desktop.core.library import folder_watch

        if folder_watch.available():
            return self._watch_inotify(root, ignore_patterns)
        try:
            from watchdog.events import FileSystemEventHandler
            from watchdog.observers import Observer
        except ImportError:  # watching is a convenience; indexing works without it
            log.warning("watchdog not installed: folders are not watched")
            return False
        bridge, ignore, allow = self._bridge, self._ignore, self._allow

        def under(path: str, folders: tuple[str, ...]) -> bool:
            return any(path == f or path.startswith(f + os.sep) for f in folders)

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event) -> None:  # watchdog thread
                if event.event_type not in _CHANGE_EVENTS:
                    return
                if event.is_directory and event.event_type == "modified":
                    return  # a folder's mtime changes with its entries, which report themselves
                path = os.fsdecode(event.src_path)
                dest = os.fsdecode(getattr(event, "dest_path", "") or "")
                if single and root not in (path, dest):
                    return  # a sibling of a file indexed alone
                if under(path, ignore) and not under(path, allow) and not (dest and under(dest, allow)):
                    return
                bridge.event_seen.emit(root)

        if self._observer is None:
            self._observer = Observer()
            self._observer.daemon = True
            self._observer.start()
        with self._lock:
            self._watches[root] = None  # reserved; the watch object arrives from the thread below
        observer, watches, lock = self._observer, self._watches, self._lock

        def schedule() -> None:
            # Adding inotify watches walks the whole tree (synchronously inside schedule()):
            # seconds on a big share, so never on the UI thread.
            try:
                watch = observer.schedule(Handler(), os.path.dirname(root) if single else root, recursive=not single)
            except (OSError, RuntimeError) as exc:  # inotify watch limit on a huge share; shutdown
                log.warning("cannot watch %s: %s", root, exc)
                with lock:
                    if watches.get(root, 0) is None:
                        del watches[root]  # free the reservation: a later watch() may retry
                return
            with lock:
                if root in watches:
                    watches[root] = watch
                    bridge.watching.emit(root)
                    return
            observer.unschedule(watch)  # unwatched meanwhile

        threading.Thread(target=schedule, name=f"watch {os.path.basename(root)}", daemon=True).start()
        return True

    def _watch_inotify(self, root: str, ignore_patterns: tuple[str, ...]) -> bool:
        from spar_desktop.core.library.folder_watch import InotifyWatcher

        if self._inotify is None:
            try:
                self._inotify = InotifyWatcher(self._bridge.event_seen.emit, self._max_watches,
                                               excluded=self._ignore, allowed=self._allow)
            except OSError as exc:
                log.warning("folders are not watched: %s", exc)
                return False
        with self._lock:
            self._watches[root] = None
        inotify, bridge, watches, lock = self._inotify, self._bridge, self._watches, self._lock

        def schedule() -> None:  # walks the tree: seconds on a big share, so never on the UI thread
            status = inotify.add_root(root, ignore_patterns)
            with lock:
                if root not in watches:
                    inotify.remove_root(root)  # unwatched meanwhile
                    return
                watches[root] = status
            if not status.complete:
                bridge.incomplete.emit(root)
            bridge.watching.emit(root)

        threading.Thread(target=schedule, name=f"watch {os.path.basename(root)}", daemon=True).start()
        return True

    def _poll_instead(self, root: str) -> None:
        """A root with more folders than can be watched: re-scan it on a timer instead."""
        if root not in self._watches or root in self._polls:
            return
        timer = self._polls[root] = QTimer(self)
        timer.setInterval(int(self.poll_minutes * 60_000))
        timer.timeout.connect(lambda r=root: self.changed.emit(r))
        timer.start()
        self.not_fully_watched.emit(root)

    def stop(self) -> None:
        for timer in list(self._timers.values()) + list(self._polls.values()):
            timer.stop()
        self._timers.clear()
        self._polls.clear()
        if self._inotify is not None:
            self._inotify.close()
            self._inotify = None
        with self._lock:
            self._watches.clear()
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=3)
            self._observer = None

    def _event(self, root: str) -> None:
        if root not in self._watches:
            return
        timer = self._timers.get(root)
        if timer is None:
            timer = self._timers[root] = QTimer(self)
            timer.setSingleShot(True)
            timer.setInterval(self.debounce_ms)
            timer.timeout.connect(lambda r=root: self.changed.emit(r))
        timer.start()  # restart: a copy of 1,000 files is one rescan, not 1,000

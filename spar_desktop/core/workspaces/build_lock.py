"""Whether a workspace is being built: in this process (a registry: the app builds in worker
threads, and its own UI must never see that build as interrupted) or in another process on the same
data dir (an OS lock on ``workspaces/<collection>/build.lock``, dropped even when the process is
killed). A workspace left "building" with neither is an interrupted build (manager.py)."""

from __future__ import annotations

import logging
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Optional

from spar_desktop.core.data_layout import DataLayout
from spar_desktop.core.file_lock import try_lock, unlock

log = logging.getLogger(__name__)

# Builds running in this process, by (data dir, collection): the app builds in worker threads,
# and a workspace it is building must never read as interrupted to its own UI.
_running: dict[tuple[str, str], int] = {}
_running_lock = threading.Lock()


def _lock_path(data_dir: str | Path, collection: str) -> Path:
    """Held by the process building the workspace (DataLayout.build_lock)."""
    return DataLayout(Path(data_dir)).build_lock(collection)


@contextmanager
def build_running(data_dir: Optional[str], collection: str):
    """Mark this workspace's build as running: in this process (the registry) and for other
    processes on the data dir (a lock the OS drops when the process dies, even by SIGKILL)."""
    key = (str(data_dir), collection)
    with _running_lock:
        _running[key] = _running.get(key, 0) + 1
    fh = None
    try:
        if data_dir is not None:
            try:
                path = _lock_path(data_dir, collection)
                path.parent.mkdir(parents=True, exist_ok=True)
                fh = open(path, "a+b")
                try_lock(fh)  # a second build of it in this process already holds it: fine
            except OSError as exc:  # a read-only data dir must not stop a build
                log.warning("could not take the build lock of %s: %s", collection, exc)
        yield
    finally:
        if fh is not None:
            unlock(fh)
            fh.close()
        with _running_lock:
            _running[key] -= 1
            if not _running[key]:
                del _running[key]


def build_in_progress(data_dir: Optional[str], collection: str) -> bool:
    """Is a build of this workspace running now, in this process or another on the data dir?"""
    with _running_lock:
        if _running.get((str(data_dir), collection)):
            return True
    if data_dir is None:
        return False
    path = _lock_path(data_dir, collection)
    if not path.exists():
        return False
    try:
        with open(path, "a+b") as fh:
            if try_lock(fh):
                unlock(fh)
                return False
            return True
    except OSError:
        return False  # cannot tell: the status says what it was left at

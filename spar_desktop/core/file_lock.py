"""An exclusive lock between processes on a file in the data dir (flock; msvcrt on Windows).

Used where two processes on one data dir must take turns: the first open of an index (schema
migrations) and scans (two `spar index` of one new folder both inserted its files); and, without
waiting (``try_lock``/``unlock``), to tell whether another process is building a workspace.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

if os.name == "nt":  # pragma: no cover - each platform has only its own locking module
    import msvcrt
else:
    import fcntl


@contextmanager
def file_lock(lock_path: Path, on_wait: Callable[[], None] = lambda: None) -> Iterator[None]:
    """An exclusive lock between processes, held until the block ends (waits as long as needed).
    The file stays: removing a lock file lets a third process lock a different inode."""
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "a+b") as fh:
        if os.name == "nt":  # pragma: no cover - exercised on Windows only
            while True:
                try:
                    fh.seek(0)
                    msvcrt.locking(fh.fileno(), msvcrt.LK_LOCK, 1)  # retries for 10 s, then raises
                    break
                except OSError:
                    continue
            try:
                yield
            finally:
                fh.seek(0)
                msvcrt.locking(fh.fileno(), msvcrt.LK_UNLCK, 1)
        else:
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                on_wait()  # say why nothing happens yet, then wait our turn
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def try_lock(fh) -> bool:
    """Take the exclusive lock of an open file without waiting; False when another holder has it."""
    try:
        if os.name == "nt":  # pragma: no cover - exercised on Windows only
            fh.seek(0)
            msvcrt.locking(fh.fileno(), msvcrt.LK_NBLCK, 1)
        else:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError:
        return False


def unlock(fh) -> None:
    try:
        if os.name == "nt":  # pragma: no cover
            fh.seek(0)
            msvcrt.locking(fh.fileno(), msvcrt.LK_UNLCK, 1)
        else:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
    except OSError:
        pass

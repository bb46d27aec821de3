"""One process at a time opens a data dir's local vector store (``DATA_DIR/chroma``).

Chroma's PersistentClient keeps each collection's HNSW index in memory, and is not safe for two
processes on the same files (``benchmarks/concurrent_clients.py``, Chroma 1.5): after a CLI build
updated a collection the app had open, the app's queries of it failed ("Error finding id"); two
processes writing one collection at once left it unreadable for good ("Error getting embedding").
So whoever opens the store holds an OS lock on ``DATA_DIR/chroma.lock`` for as long as it is open;
the OS drops it when the process ends, even by SIGKILL, so a crashed holder never blocks anyone.
The file also says who holds it, for the message the next one gets. A Chroma server needs none
of this: it is the one process that owns its files.

Within a process the lock is counted (several Engines on one data dir share it): flock and
msvcrt locks conflict between two opens of the same file even in one process.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any, Optional

from spar_desktop.core.data_layout import DataLayout
from spar_desktop.core.file_lock import try_lock, unlock

_OPTIONS_WITH_VALUE = {"--data-dir", "--database-url"}

_program: Optional[str] = None
_held: dict[str, list[Any]] = {}  # lock path -> [open file, count]
_guard = threading.Lock()


class StoreInUseError(RuntimeError):
    """Another process has the local vector store open; the message names it."""

    def __init__(self, store: Path, holder: Optional[dict]) -> None:
        self.store = store
        self.holder = holder or {}
        super().__init__(
            f"the vector store in {store} is in use by {describe(self.holder)}; close it or wait for it "
            "to finish, then try again. Indexing, listing and searching built workspaces from the command "
            "line still work; to use one store from several programs at once, share a Chroma server "
            "(SPAR_CHROMA_URL)")


def set_program(name: str) -> None:
    """How this process is named to the others (the desktop app says "SPAR Desktop")."""
    global _program
    _program = name


def program_name(argv: Optional[list[str]] = None) -> str:
    if _program:
        return _program
    argv = list(sys.argv if argv is None else argv)
    exe = Path(argv[0]).name if argv and argv[0] else ""
    if exe.startswith("spar-desktop") or exe.lower().startswith("spar desktop"):
        return "SPAR Desktop"
    if exe in ("spar", "spar.exe", "cli.py", "__main__.py"):
        words, skip = [], False
        for a in argv[1:]:
            if skip:
                skip = False
            elif a in _OPTIONS_WITH_VALUE:
                skip = True
            elif not a.startswith("-"):
                words.append(a)
        return " ".join(["spar", *words[:3]])  # "spar ws build ops"
    return f"another program ({'python' if exe in ('', '-c') else exe})"


def describe(holder: dict) -> str:
    if not holder:
        return "another program"
    who = str(holder.get("program") or "another program")
    details = [f"pid {holder['pid']}"] if holder.get("pid") else []
    if holder.get("host") and holder["host"] != socket.gethostname():
        details.append(f"on {holder['host']}")
    if holder.get("since"):
        details.append(f"since {holder['since']}")
    return f"{who} ({', '.join(details)})" if details else who


def lock_path(store: Path) -> Path:
    """The lock of the data dir whose store this is (DataLayout.chroma_lock)."""
    return DataLayout(Path(store).parent).chroma_lock


def acquire(store: Path) -> None:
    """Hold the store's lock for this process (counted); raise StoreInUseError naming the holder."""
    path = lock_path(store)
    key = str(path.resolve())
    with _guard:
        held = _held.get(key)
        if held is not None:
            held[1] += 1
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        fh = os.fdopen(fd, "r+b")
        if not try_lock(fh):
            holder = _read_holder(fh)
            fh.close()
            raise StoreInUseError(Path(store), holder)
        _write_holder(fh)
        _held[key] = [fh, 1]


def release(store: Path) -> None:
    key = str(lock_path(store).resolve())
    with _guard:
        held = _held.get(key)
        if held is None:
            return
        held[1] -= 1
        if held[1] <= 0:
            del _held[key]
            unlock(held[0])
            held[0].close()


def holder(store: Path) -> Optional[dict]:
    """Who has the store open now (None: nobody; this process: its own description)."""
    path = lock_path(store)
    if not path.exists():
        return None
    with _guard:
        if str(path.resolve()) in _held:
            return {"pid": os.getpid(), "program": program_name()}
    with open(path, "r+b") as fh:
        if try_lock(fh):
            unlock(fh)
            return None
        return _read_holder(fh) or {}


# Byte 0 is the one msvcrt locks (and then nobody may read); who holds it is written after it.
def _write_holder(fh) -> None:
    info = {"pid": os.getpid(), "program": program_name(), "host": socket.gethostname(),
            "since": time.strftime("%Y-%m-%d %H:%M")}
    try:
        fh.seek(0)
        fh.truncate()
        fh.write(b"\n" + json.dumps(info).encode("utf-8"))
        fh.flush()
    except OSError:
        pass  # who holds it is only for the message; the lock is what counts


def _read_holder(fh) -> Optional[dict]:
    try:
        fh.seek(1)
        data = json.loads(fh.read(4096).decode("utf-8", "replace"))
        return data if isinstance(data, dict) else None
    except (OSError, ValueError):
        return None

"""Failures of the machine rather than of one file — a full disk, a read-only data dir, a store
another program holds locked — said in words a user can act on, for the CLI and the app alike.

These end the job (there is nowhere to write its results), but they never lose work: every step
commits in batches, so running the command again after freeing space carries on where it stopped.
"""

from __future__ import annotations

import errno
import shutil
from typing import Optional

_FULL = ("database or disk is full", "no space left on device", "disk quota exceeded")
_READ_ONLY = ("attempt to write a readonly database", "read-only file system")
_LOCKED = ("database is locked",)


def _chain(exc: BaseException):
    """The exception and what it wraps (SQLAlchemy keeps sqlite3's error in ``orig``)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = getattr(exc, "orig", None) or exc.__cause__ or exc.__context__


def _free_mb(path: str) -> Optional[float]:
    try:
        return shutil.disk_usage(path).free / (1 << 20)
    except OSError:
        return None


def storage_failure(exc: BaseException, data_dir: Optional[str] = None) -> Optional[str]:
    """A message for ``exc`` when the machine, not the input, is what failed; else None."""
    where = f"the data folder {data_dir}" if data_dir else "SPAR's data folder"
    for e in _chain(exc):
        code = getattr(e, "errno", None)
        text = str(e).lower()
        if code in (errno.ENOSPC, errno.EDQUOT) or any(s in text for s in _FULL):
            free = _free_mb(data_dir) if data_dir else None
            left = f" ({free:.0f} MB free)" if free is not None else ""
            return (f"the disk holding {where} is full{left}. Free some space (or move the data "
                    "folder with --data-dir / SPAR_DATA_DIR) and run it again: what was already done is kept "
                    "and the work carries on where it stopped.")
        if code == errno.EROFS or any(s in text for s in _READ_ONLY):
            return (f"{where} cannot be written (read-only disk or no permission). "
                    "Choose a data folder you can write to with --data-dir or SPAR_DATA_DIR.")
        if any(s in text for s in _LOCKED):
            return (f"the index in {where} is busy: another SPAR process held it locked for too long. "
                    "Wait for it to finish (or close it) and run the command again.")
    return None

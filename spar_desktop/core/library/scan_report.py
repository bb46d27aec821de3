"""What a scan tells the user: its report per root and the plain messages for one file's trouble."""

from __future__ import annotations

import errno
from dataclasses import dataclass, field
from typing import Optional

# What the user reads when something nobody foresaw goes wrong with one file; the log has the rest.
UNEXPECTED_READ = "SPAR could not read this file (an unexpected problem; the details are in the log)"
UNEXPECTED_RECORD = "SPAR could not record this file in the index (an unexpected problem; the details are in the log)"
NAME_CLASH_FILE = ("another file shows under this same name: its real name has bytes that are not valid text, "
                   "written here as \\xNN; skipped, rename one of the two")
NAME_CLASH_FOLDER = ("another folder shows under this same name: its real name has bytes that are not valid text, "
                     "written here as \\xNN; skipped with everything in it, rename one of the two")


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


def os_error_message(exc: OSError, is_link: bool) -> str:
    """An OSError on one file or folder as a line the user can act on."""
    if exc.errno == errno.ENOENT and is_link:
        return "broken symbolic link (its target does not exist)"
    if exc.errno == errno.ELOOP:
        return "symbolic link loop"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied: cannot read this file"
    if exc.errno == errno.ENAMETOOLONG:
        return "path too long for the operating system"
    return f"cannot read: {exc.strerror or exc}"

"""The header of every versioned JSON file SPAR writes: ``{"format": <kind>, "version": <n>, ...}``
(DESIGN.md, "On-disk formats"). ``check_version`` is the one reading of it; each caller turns its
three refusals into its own error and words (a .sparws, a topic proposal, settings.json...).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Optional


class FormatRefused(ValueError):
    """``data`` cannot be read as this format; subclasses say why."""


class NotThisFormat(FormatRefused):
    """Not a JSON object, or its "format" names another kind of file."""


class BadVersion(FormatRefused):
    """The version is not a whole number from 1 (or not one this code reads, with ``exact``)."""

    def __init__(self, version: Any) -> None:
        super().__init__(f"invalid version {str(version)[:40]!r}")
        self.version = version


class NewerVersion(FormatRefused):
    """Written by a newer SPAR Desktop: this one must not guess at it (nor overwrite it)."""

    def __init__(self, version: int, newest: int) -> None:
        super().__init__(f"format version {version}; this version reads up to {newest}")
        self.version, self.newest = version, newest


def write_text_atomically(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` through a temp file, fsync and rename: a crash leaves the old file
    or the new one, never half of either (proposals, calibrations)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    return path


def format_header(kind: str, version: int) -> dict[str, Any]:
    return {"format": kind, "version": version}


def check_version(data: Any, kind: Optional[str], newest: int, *, default: Optional[int] = None,
                  exact: bool = False) -> int:
    """The version of ``data`` (parsed JSON) when this code reads it. ``kind`` None: the file has no
    "format" key (settings.json); ``default``: the version a file without one has (files 0.1.0
    wrote); ``exact``: derived data, read only at ``newest`` (anything else is rebuilt)."""
    if not isinstance(data, dict) or (kind is not None and data.get("format") != kind):
        raise NotThisFormat(f"not a {kind} file" if kind else "not a JSON object")
    version = data.get("version", default)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise BadVersion(version)
    if version > newest:
        raise NewerVersion(version, newest)
    if exact and version != newest:
        raise BadVersion(version)
    return version

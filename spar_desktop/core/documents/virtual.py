"""Virtual paths of child documents: ``Reports.zip!/2019/audit.pdf``, ``mail.eml!/budget.xlsx``.

A member of an archive or an attachment of a mail is its own document with a path made of the
container's real path, ``!/`` and the member's name inside it (nested: ``a.zip!/b.eml!/c.pdf``).
Names only (no I/O): reading a member into a temporary file is materialize.py.
"""

from __future__ import annotations

import os
from typing import Optional

VIRTUAL_SEP = "!/"
CONTAINER_FORMATS = frozenset({"zip", "eml", "msg", "mbox"})
_CONTAINER_SUFFIXES = {".zip": "zip", ".eml": "eml", ".msg": "msg", ".mbox": "mbox", ".mbx": "mbox"}


def is_virtual(path: str) -> bool:
    return VIRTUAL_SEP in path


def split_virtual(path: str) -> tuple[str, tuple[str, ...]]:
    """(outer real path, members from the outside in); a plain path has no members."""
    outer, *members = path.split(VIRTUAL_SEP)
    return outer, tuple(members)


def outer_path(path: str) -> str:
    return path.split(VIRTUAL_SEP, 1)[0]


def container_format_of(name: str) -> Optional[str]:
    """The container format a (member) name says it is, by extension."""
    return _CONTAINER_SUFFIXES.get(os.path.splitext(name)[1].lower())

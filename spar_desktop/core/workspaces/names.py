"""Workspace names: what a user may type, how one from a shared file is cleaned, uniqueness, and
the Chroma collection name made from it."""

from __future__ import annotations

import re
import secrets
from typing import Optional

from sqlalchemy import func, select

from spar_desktop.core.workspaces.errors import WorkspaceError
from spar_desktop.core.workspaces.models import Workspace

MAX_NAME_LENGTH = 200
# Control characters (C0, DEL, C1: a name is printed in terminals and lists), line and paragraph
# separators, bidi overrides and isolates (they reorder what is shown), path separators (a name
# must never read as a path), and lone surrogates (undecodable bytes: no database stores them).
_BAD_NAME_CHAR = re.compile("[\x00-\x1f\x7f-\x9f/\\\\\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def name_problem(name: str) -> Optional[str]:
    """Why ``name`` (already stripped) cannot name a workspace, or None."""
    if not name:
        return "a workspace needs a name"
    if len(name) > MAX_NAME_LENGTH:
        return f"a workspace name is limited to {MAX_NAME_LENGTH} characters"
    bad = _BAD_NAME_CHAR.search(name)
    if bad:
        c = bad[0]
        what = ("a path separator ('/' or '\\')" if c in "/\\" else
                f"the control character U+{ord(c):04X}" if ord(c) <= 0x9F else
                "an undecodable byte" if 0xD800 <= ord(c) <= 0xDFFF else f"the invisible character U+{ord(c):04X}")
        return f"a workspace name cannot contain {what}"
    return None


def check_name(name: str) -> str:
    """``name`` stripped, or WorkspaceError saying what is wrong with it (names a user typed)."""
    name = (name or "").strip()
    problem = name_problem(name)
    if problem:
        raise WorkspaceError(problem)
    return name


def clean_name(name: str, fallback: str = "imported workspace") -> str:
    """A usable name from one someone else chose (a shared file): control characters become
    spaces, path separators '-', runs of spaces one; ``fallback`` when nothing is left."""
    cleaned = _BAD_NAME_CHAR.sub(lambda m: "-" if m[0] in "/\\" else " ", name or "")
    cleaned = " ".join(cleaned.split())[:MAX_NAME_LENGTH].strip()
    return cleaned or fallback


def name_taken(s, name: str) -> bool:
    """Names are unique ignoring case ('Falcon' and 'falcon' would be the same workspace to a user)."""
    return s.scalar(select(Workspace.id).where(func.lower(Workspace.name) == name.lower()).limit(1)) is not None


def collection_name(name: str) -> str:
    """Safe, unique and recognisable: 'ws-<slug>-<random>' (names may repeat after a delete)."""
    slug = re.sub(r"[^a-zA-Z0-9]+", "-", name).strip("-").lower()[:40] or "workspace"
    return f"ws-{slug}-{secrets.token_hex(4)}"

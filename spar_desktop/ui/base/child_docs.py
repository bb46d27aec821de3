"""How the UI names child documents, copies and workspace file states (plain functions, no Qt).

A child document (an archive member, a mail attachment) has a virtual path
``share/Reports.zip!/2019/audit.pdf``; people know it as "audit.pdf in Reports.zip", filed in the
container's folder.
"""

from __future__ import annotations

import os
from typing import Optional, Sequence

from spar_desktop.core.documents.virtual import split_virtual

ALSO_AT_SHOWN = 2
PATH_CHARS = 70


def _basename(path: str) -> str:
    return os.path.basename(path.replace("\\", "/").rstrip("/")) or path


def member_name(path: str) -> str:
    """The document's own name: 'audit.pdf' for 'x/Reports.zip!/2019/audit.pdf'."""
    return _basename(path.rsplit("!/", 1)[-1])


def container_name(path: str) -> Optional[str]:
    """The name of the archive or mail that directly holds a child document; None for a file."""
    outer, members = split_virtual(path)
    if not members:
        return None
    return _basename(members[-2]) if len(members) > 1 else _basename(outer)


def document_title(path: str) -> str:
    """'audit.pdf in Reports.zip' for a child document, the file name otherwise."""
    container = container_name(path)
    return f"{member_name(path)} in {container}" if container else member_name(path)


def elide_middle(text: str, limit: int = PATH_CHARS) -> str:
    """Keep both ends of a long path: the share and the file name are what people recognise."""
    if len(text) <= limit:
        return text
    head = (limit - 1) // 2
    return text[:head] + "…" + text[len(text) - (limit - 1 - head):]


def plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def copies_summary(copies: Sequence[str]) -> str:
    return f"{plural(len(copies), 'other file')} with the same content"


def also_at_text(paths: Sequence[str], shown: int = ALSO_AT_SHOWN) -> str:
    """'also at: a.pdf, b.pdf and 3 more' under a search hit whose copies collapsed into it."""
    if not paths:
        return ""
    names = ", ".join(elide_middle(p, 48) for p in paths[:shown])
    rest = len(paths) - shown
    return f"also at: {names}" + (f" and {rest:,} more" if rest > 0 else "")


def workspace_state_text(state: str, error: Optional[str]) -> str:
    """A workspace file's state in plain words: 'duplicate of <path>', 'ready (text from OCR)'."""
    if state == "duplicate":
        prefix = "same content as "
        other = error[len(prefix):] if error and error.startswith(prefix) else error
        return f"duplicate of {other}" if other else "duplicate"
    words = {"no_text": "no text", "ready": "ready", "pending": "not built yet", "failed": "failed",
             "missing": "missing"}.get(state, state)
    return f"{words} ({error})" if error else words

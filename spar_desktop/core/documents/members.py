"""A direct child of a container (``Member``) and the notes listing it writes: shared by the zip
reader (containers.py) and the mail readers (mail_members.py), which containers.py dispatches to.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Optional

from spar_desktop.core.documents.budget import ExtractionBudget
from spar_desktop.core.documents.errors import ExtractionError

HEAD_BYTES = 8192  # a member's first bytes, kept to sniff its format


@dataclass(frozen=True)
class Member:
    """A direct child of a container. ``name`` is its '/'-separated path inside the container,
    unique and stable across runs; ``content_hash`` is hashed like a loose file (probe.py), so a
    zipped copy and the loose file share it (None when the member was not read)."""

    name: str
    size: int
    content_hash: Optional[str]
    head: bytes = b""
    status: str = "ok"  # ok | error | encrypted | unsupported | empty
    error: Optional[str] = None
    title: Optional[str] = None
    author: Optional[str] = None
    created_at: Optional[datetime] = None
    mtime: Optional[datetime] = None


def not_found(member: str, container: Path) -> ExtractionError:
    return ExtractionError(f"{member} is not in {container.name} (any more)")


def limit_note(notes: list[str], more: bool, budget: ExtractionBudget) -> None:
    if more:
        notes.append(f"only the first {budget.max_members:,} members are indexed")

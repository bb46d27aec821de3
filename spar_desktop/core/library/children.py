"""Child documents in the index: archive members, mail attachments and mbox messages.

A container (``.zip``, ``.eml``, ``.msg``, ``.mbox``) is listed when the scan finds it new or
changed; each member becomes a ``files`` row of its own with a virtual path
(``Reports.zip!/2019/audit.pdf``), a parent link, its own full-content hash (so a zipped copy of
a loose file is the same document) and its container's folder and date tags. Listing streams
every member once through the per-file budget (zip bombs, encrypted members and unsafe names get
a status, not a crash); nothing is extracted into the user's folders. Rows are synced by path:
members that stay keep their rows (and the tags and workspace entries that point at them).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Optional

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from spar_desktop.core.documents.budget import ExtractionBudget
from spar_desktop.core.documents.containers import walk_children
from spar_desktop.core.documents.errors import ExtractionError
from spar_desktop.core.documents.virtual import VIRTUAL_SEP
from spar_desktop.core.library.models import File, FileStatus, utcnow
from spar_desktop.core.library.probe import FORMAT_NAMES, READABLE_FORMATS, sniff_format

log = logging.getLogger(__name__)

_MEMBER_STATUS = {"ok": FileStatus.OK, "error": FileStatus.ERROR, "encrypted": FileStatus.ENCRYPTED,
                  "unsupported": FileStatus.UNSUPPORTED, "empty": FileStatus.EMPTY}


@dataclass
class ChildSync:
    """What listing one container did to the index."""

    added: list[tuple[int, dict]] = field(default_factory=list)  # (file id, row) of new children
    updated: list[tuple[int, dict]] = field(default_factory=list)
    removed: int = 0
    problems: list[tuple[str, str]] = field(default_factory=list)  # (path, message)
    unreadable: Optional[str] = None  # the container itself could not be listed: its status says why


def descendants_prefix(path: str) -> str:
    return path + VIRTUAL_SEP


def child_row(container: dict, chain: str, member) -> dict:
    """The files row of one member (``member``: containers.Member) of ``container`` (its row)."""
    name = chain.rpartition(VIRTUAL_SEP)[2].rpartition("/")[2] or chain
    status = _MEMBER_STATUS.get(member.status, FileStatus.ERROR)
    error = member.error
    fmt = "other"
    if status in (FileStatus.OK, FileStatus.EMPTY):
        fmt, problem = sniff_format(name, member.head or b"")
        if problem:
            status, error = FileStatus.UNSUPPORTED, problem
        elif status == FileStatus.OK and fmt == "archive":
            status, error = FileStatus.UNSUPPORTED, "compressed archive of a kind SPAR does not open (only .zip)"
        elif status == FileStatus.OK and fmt not in READABLE_FORMATS:
            status = FileStatus.UNSUPPORTED
            error = f"no text extraction for {FORMAT_NAMES.get(fmt, fmt + ' files')}"
    else:
        fmt = sniff_format(name, b"")[0]
    when: Optional[datetime] = member.created_at
    return {
        "path": container["path"] + VIRTUAL_SEP + chain,
        "raw_path": (container["raw_path"] + (VIRTUAL_SEP + chain).encode("utf-8", "surrogateescape")
                     if container.get("raw_path") else None),
        "folder_id": container["folder_id"],
        "rel_path": container["rel_path"] + VIRTUAL_SEP + chain,
        "name": name, "size": member.size or 0, "mtime_ns": container["mtime_ns"],
        "content_hash": member.content_hash, "format": fmt,
        "title": member.title, "author": member.author, "created_at": when,
        "modified_at": getattr(member, "mtime", None) or container.get("modified_at"),
        "page_count": None, "status": status, "error": error if status != FileStatus.OK else None, "extra": None,
    }


def list_container(real_path: str, fmt: str, budget: ExtractionBudget) -> tuple[list[tuple[str, object]], list[str]]:
    """(chain, member) for every descendant of a container, parents before their children."""
    with walk_children(Path(real_path), fmt, budget) as walk:
        items = list(walk)
    items.sort(key=lambda cm: cm[0].count(VIRTUAL_SEP))  # stable: parents before their children
    return items, list(walk.notes)


def read_container(real_path: str, fmt: str, budget: ExtractionBudget) -> "ContainerListing":
    """List a container (outside any database transaction: hashing its members takes time)."""
    try:
        items, notes = list_container(real_path, fmt, budget)
        return ContainerListing(items, notes, None)
    except ExtractionError as exc:
        return ContainerListing([], [], exc.message)
    except Exception as exc:  # noqa: BLE001 - one broken container must not stop a scan
        log.warning("listing %s failed", real_path, exc_info=True)
        return ContainerListing([], [], f"could not list its contents ({type(exc).__name__})")


@dataclass
class ContainerListing:
    items: list[tuple[str, object]]
    notes: list[str]
    unreadable: Optional[str]


def sync_children(s: Session, container_id: int, container: dict, listing: "ContainerListing") -> ChildSync:
    """Make the container's child rows match its listing (add, update, remove)."""
    sync = ChildSync(unreadable=listing.unreadable)
    prefix = descendants_prefix(container["path"])
    existing = {p: (i, h, st) for p, i, h, st in s.execute(
        select(File.path, File.id, File.content_hash, File.status).where(File.path.startswith(prefix, autoescape=True)))}
    if sync.unreadable:
        s.execute(update(File).where(File.id == container_id).values(status=FileStatus.ERROR, error=sync.unreadable))
        sync.problems.append((container["path"], sync.unreadable))
    for note in listing.notes:
        sync.problems.append((container["path"], note))
    id_of = {container["path"]: container_id}
    seen: set[str] = set()
    for chain, member in listing.items:
        row = child_row(container, chain, member)
        path = row["path"]
        if path in seen:
            continue
        seen.add(path)
        row["parent_id"] = id_of.get(path.rpartition(VIRTUAL_SEP)[0], container_id)
        old = existing.get(path)
        if old is None:
            row["first_seen_at"] = utcnow()
            child = File(**row)
            s.add(child)
            s.flush()
            id_of[path] = child.id
            sync.added.append((child.id, row))
        else:
            id_of[path] = old[0]
            values = dict(row)
            if old[1] != row["content_hash"] and old[1] is not None:
                values["content_version"] = File.content_version + 1
                values["changed_at"] = utcnow()
            s.execute(update(File).where(File.id == old[0]).values(**values))
            sync.updated.append((old[0], row))
        if row["status"] != FileStatus.OK:
            sync.problems.append((path, row["error"] or row["status"]))
    gone = [i for p, (i, _, _) in existing.items() if p not in seen]
    for k in range(0, len(gone), 500):
        s.execute(delete(File).where(File.id.in_(gone[k:k + 500])))
    sync.removed = len(gone)
    return sync


def remove_children(s: Session, container_path: str) -> int:
    """A container that changed into something unreadable (or another kind) loses its children."""
    prefix = descendants_prefix(container_path)
    ids = list(s.scalars(select(File.id).where(File.path.startswith(prefix, autoescape=True))))
    for k in range(0, len(ids), 500):
        s.execute(delete(File).where(File.id.in_(ids[k:k + 500])))
    return len(ids)


def mark_children_missing(s: Session, container_paths: list[str]) -> None:
    for path in container_paths:
        s.execute(update(File).where(File.path.startswith(descendants_prefix(path), autoescape=True))
                  .values(status=FileStatus.MISSING, error="its container is no longer found on disk"))

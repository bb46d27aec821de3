"""A proposed two-level topic hierarchy: immutable values, edits, versioned JSON, and accepting it.

Induction (``hierarchy.py``) writes one proposal to DATA_DIR/tagging/topic_proposal.json; the user
looks at it, renames or removes nodes, moves sub-topics, then accepts it into the tag DAG or
discards it. Every edit returns a new Proposal (frozen dataclasses): the UI hands them across
threads and the CLI edits the saved file by load → edit → save.

Accepting creates tags 'topic:<Top>' and 'topic:<Top>/<Sub>' (source auto), parent→child edges,
and confirmed 'auto' file_tags with the file's score — confirmed because the user accepted them.
It is idempotent (tags by key, edges and file_tags by pair) and skips files that have vanished
since induction.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Optional

from sqlalchemy import select
from sqlalchemy.orm import Session

from spar_desktop.core.data_layout import DataLayout
from spar_desktop.core.file_format import (
    BadVersion, NewerVersion, NotThisFormat, check_version, format_header, write_text_atomically,
)
from spar_desktop.core.library.models import File, FileStatus, FileTag, Tag, TagSource
from spar_desktop.core.library.tags import add_edge, create_tag

FORMAT = "spar-topic-proposal"
VERSION = 1
TOPIC_PREFIX = "topic:"
MAX_NAME = 80
_BAD_NAME = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


class ProposalError(ValueError):
    """An edit or file the proposal cannot take (unknown node, bad name, newer format...)."""


@dataclass(frozen=True)
class TopicNode:
    """A topic. ``files`` are (file id, score) pairs placed directly at this node: a leaf's
    files, or a top topic's own files when it has no (or not all its files in) sub-topics."""

    id: str
    name: str
    phrases: tuple[str, ...] = ()
    files: tuple[tuple[int, float], ...] = ()
    children: tuple["TopicNode", ...] = ()

    @property
    def file_count(self) -> int:
        """Files at this node and under it."""
        return len(self.files) + sum(c.file_count for c in self.children)

    def all_file_ids(self) -> set[int]:
        out = {f for f, _ in self.files}
        for c in self.children:
            out |= c.all_file_ids()
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "phrases": list(self.phrases),
                "files": [[f, round(s, 4)] for f, s in self.files], "children": [c.to_dict() for c in self.children]}

    @classmethod
    def from_dict(cls, data: Any) -> "TopicNode":
        if not isinstance(data, dict):
            raise ProposalError("a topic is not an object")
        try:
            return cls(str(data["id"]), check_name(str(data["name"])),
                       tuple(str(p) for p in data.get("phrases", ())),
                       tuple((int(f), float(s)) for f, s in data.get("files", ())),
                       tuple(cls.from_dict(c) for c in data.get("children", ())))
        except (KeyError, TypeError, ValueError) as exc:
            raise ProposalError(f"a topic cannot be read: {exc}") from exc


@dataclass(frozen=True)
class Proposal:
    nodes: tuple[TopicNode, ...]
    file_count: int  # files with text the induction saw
    unplaced: int = 0  # files that had no key phrase (and no vector) to place them by
    method: str = ""
    named_by: str = "phrases"  # or "ollama"
    created_at: str = field(default_factory=lambda: datetime.now(timezone.utc).isoformat(timespec="seconds"))
    accepted_at: Optional[str] = None

    # ---------------------------------------------------------------- reading
    def walk(self) -> list[tuple[TopicNode, Optional[TopicNode]]]:
        """(node, parent) for every node, parents first."""
        return [(top, None) for top in self.nodes] + [(c, top) for top in self.nodes for c in top.children]

    def find(self, node: str) -> tuple[TopicNode, Optional[TopicNode]]:
        """A node by id ('2', '2.1') or, failing that, by name (case-insensitive, unique)."""
        pairs = self.walk()
        for n, parent in pairs:
            if n.id == node:
                return n, parent
        named = [(n, p) for n, p in pairs if n.name.casefold() == node.strip().casefold()]
        if len(named) == 1:
            return named[0]
        raise ProposalError(f"no topic {node!r}" if not named else f"several topics are named {node!r}: use its id")

    # ---------------------------------------------------------------- edits (each returns a new Proposal)
    def rename(self, node: str, name: str) -> "Proposal":
        target, parent = self.find(node)
        name = check_name(name)
        siblings = parent.children if parent else self.nodes
        if any(s.id != target.id and s.name.casefold() == name.casefold() for s in siblings):
            raise ProposalError(f"another topic here is already named {name!r}")
        return self._map(lambda n: replace(n, name=name) if n.id == target.id else n)

    def remove(self, node: str) -> "Proposal":
        """Drop a top topic with its sub-topics; a removed sub-topic's files stay in its topic."""
        target, parent = self.find(node)
        if parent is None:
            return replace(self, nodes=tuple(n for n in self.nodes if n.id != target.id))
        merged = replace(parent, files=parent.files + _all_files(target),
                         children=tuple(c for c in parent.children if c.id != target.id))
        return self._map(lambda n: merged if n.id == parent.id else n)

    def move(self, node: str, new_parent: str) -> "Proposal":
        """Move a sub-topic under another top topic."""
        target, parent = self.find(node)
        dest, dest_parent = self.find(new_parent)
        if parent is None or dest_parent is not None:
            raise ProposalError("only a sub-topic moves, and only under a top topic")
        if dest.id == parent.id:
            return self
        if any(c.name.casefold() == target.name.casefold() for c in dest.children):
            raise ProposalError(f"{dest.name!r} already has a sub-topic named {target.name!r}")
        new_id = _free_id(dest)
        moved = replace(target, id=new_id)

        def edit(n: TopicNode) -> TopicNode:
            if n.id == parent.id:
                return replace(n, children=tuple(c for c in n.children if c.id != target.id))
            if n.id == dest.id:
                return replace(n, children=n.children + (moved,))
            return n
        return replace(self, nodes=tuple(edit(n) for n in self.nodes))

    def _map(self, fn: Callable[[TopicNode], TopicNode]) -> "Proposal":
        def one(top: TopicNode) -> TopicNode:
            top = fn(top)
            return replace(top, children=tuple(fn(c) for c in top.children))
        return replace(self, nodes=tuple(one(t) for t in self.nodes))

    # ---------------------------------------------------------------- JSON
    def to_json(self) -> str:
        return json.dumps({**format_header(FORMAT, VERSION), "created_at": self.created_at,
                           "accepted_at": self.accepted_at, "method": self.method, "named_by": self.named_by,
                           "file_count": self.file_count, "unplaced": self.unplaced,
                           "nodes": [n.to_dict() for n in self.nodes]}, ensure_ascii=False, indent=1)

    @classmethod
    def from_json(cls, text: str) -> "Proposal":
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise ProposalError(f"the proposal is not valid JSON: {exc}") from exc
        try:
            check_version(data, FORMAT, VERSION)
        except NotThisFormat:
            raise ProposalError("not a topic proposal") from None
        except NewerVersion as exc:
            raise ProposalError(f"the proposal is format version {exc.version}; "
                                f"this SPAR Desktop reads up to {VERSION}") from None
        except BadVersion as exc:
            raise ProposalError(f"the proposal has an {exc}") from None
        try:
            return cls(tuple(TopicNode.from_dict(n) for n in data.get("nodes", ())), int(data.get("file_count", 0)),
                       int(data.get("unplaced", 0)), str(data.get("method", "")), str(data.get("named_by", "phrases")),
                       str(data.get("created_at", "")), data.get("accepted_at"))
        except (TypeError, ValueError) as exc:
            raise ProposalError(f"the proposal cannot be read: {exc}") from exc


def check_name(name: str) -> str:
    """A topic name as a tag label: one line, no control or bidi characters, not empty, ≤ 80."""
    name = " ".join(name.split())
    if not name:
        raise ProposalError("a topic name cannot be empty")
    if _BAD_NAME.search(name):
        raise ProposalError("a topic name cannot hold control or direction-override characters")
    return name[:MAX_NAME]


def _all_files(node: TopicNode) -> tuple[tuple[int, float], ...]:
    return node.files + tuple(f for c in node.children for f in _all_files(c))


def _free_id(parent: TopicNode) -> str:
    used = {c.id for c in parent.children}
    k = len(parent.children) + 1
    while f"{parent.id}.{k}" in used:
        k += 1
    return f"{parent.id}.{k}"


# -------------------------------------------------------------------- the file in the data dir
def proposal_path(data_dir: Path) -> Path:
    return DataLayout(Path(data_dir)).topic_proposal


def save_proposal(data_dir: Path, proposal: Proposal) -> Path:
    """Write atomically (temp file + fsync + rename): a crash leaves the old or the new proposal."""
    return write_text_atomically(proposal_path(data_dir), proposal.to_json())


def load_proposal(data_dir: Path) -> Optional[Proposal]:
    """The saved proposal, None when there is none; ProposalError when it cannot be read."""
    path = proposal_path(data_dir)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise ProposalError(f"cannot read {path}: {exc}") from exc
    return Proposal.from_json(text)


def discard_proposal(data_dir: Path) -> bool:
    try:
        proposal_path(data_dir).unlink()
        return True
    except FileNotFoundError:
        return False


# -------------------------------------------------------------------- accepting into the tag DAG
@dataclass(frozen=True)
class AcceptReport:
    tags_created: int
    tags_existing: int
    edges_created: int
    assigned: int  # new file_tags
    files_skipped: int  # in the proposal but no longer in the index (deleted or missing)

    def message(self) -> str:
        text = (f"{self.tags_created} topic tags created ({self.tags_existing} already there), "
                f"{self.edges_created} links, {self.assigned} file assignments")
        skipped = f"; {self.files_skipped} files no longer in the index were skipped" if self.files_skipped else ""
        return text + skipped


def topic_key(names: tuple[str, ...], prefix: str = TOPIC_PREFIX) -> str:
    return prefix + "/".join(names)


def accept_proposal(session: Session, proposal: Proposal, prefix: str = TOPIC_PREFIX) -> AcceptReport:
    """Create the proposal's tags, edges and confirmed file assignments (see the module doc)."""
    wanted = set()
    for top in proposal.nodes:
        wanted |= top.all_file_ids()
    present: set[int] = set()
    ids = sorted(wanted)
    for i in range(0, len(ids), 500):
        present.update(session.scalars(select(File.id).where(File.id.in_(ids[i:i + 500]),
                                                             File.status != FileStatus.MISSING)))
    created = existing = edges = assigned = 0
    for top in proposal.nodes:
        parent_tag: Optional[Tag] = None
        for node, path in [(top, (top.name,))] + [(c, (top.name, c.name)) for c in top.children]:
            key = topic_key(path, prefix)
            tag = session.scalar(select(Tag).where(Tag.key == key))
            if tag is None:
                tag = create_tag(session, key, node.name, TagSource.AUTO)
                created += 1
            else:
                existing += 1
            if node is top:
                parent_tag = tag
            elif parent_tag is not None and add_edge(session, parent_tag.id, tag.id):
                edges += 1
            assigned += _assign(session, tag.id, [(f, s) for f, s in node.files if f in present])
    session.flush()
    return AcceptReport(created, existing, edges, assigned, len(wanted - present))


def _assign(session: Session, tag_id: int, files: list[tuple[int, float]]) -> int:
    if not files:
        return 0
    have: set[int] = set()
    ids = [f for f, _ in files]
    for i in range(0, len(ids), 500):
        have.update(session.scalars(select(FileTag.file_id).where(FileTag.tag_id == tag_id,
                                                                  FileTag.file_id.in_(ids[i:i + 500]))))
    new = [(f, s) for f, s in files if f not in have]
    session.add_all(FileTag(file_id=f, tag_id=tag_id, source=TagSource.AUTO, score=max(0.0, min(1.0, s)),
                            confirmed=True) for f, s in new)
    return len(new)

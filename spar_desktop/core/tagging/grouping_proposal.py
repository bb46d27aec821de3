"""A proposed grouping of sibling tags under new intermediate tags: the selection it was made for,
immutable values with edits, a versioned JSON file, and accepting it into the tag DAG.

``grouping.py`` proposes; the user renames groups, moves tags between groups (or out of every
group) and drops groups; accepting creates one tag per group under the tags' common parent and
re-parents the grouped tags under it (the parent→tag edge is replaced by parent→group→tag; a
tag's other parents stay). File assignments are never touched: a file tagged "Pumps" is still
tagged "Pumps", and now also found under "Mechanical" because the tree is DAG-expanded.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable, Optional

from sqlalchemy import select
from sqlalchemy.orm import Session

from spar_desktop.core.data_layout import DataLayout
from spar_desktop.core.file_format import (
    BadVersion, NewerVersion, NotThisFormat, check_version, format_header, write_text_atomically,
)
from spar_desktop.core.library.models import Tag, TagEdge, TagSource
from spar_desktop.core.library.tags import TagError, add_edge, create_tag, remove_edge, resolve_tags

FORMAT = "spar-tag-grouping"
VERSION = 1
GROUP_PREFIX = "group:"
MAX_NAME = 60
MIN_TAGS = 3  # fewer siblings need no intermediate level
_BAD_NAME = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


class GroupingError(ValueError):
    """A selection, edit or file the grouping cannot take (not siblings, unknown group...)."""


@dataclass(frozen=True)
class TagRef:
    id: int
    label: str
    description: Optional[str] = None


@dataclass(frozen=True)
class TagGroup:
    id: str  # "1", "2"...: stable across edits, what the CLI and the dialog name a group by
    name: str
    tag_ids: tuple[int, ...]


@dataclass(frozen=True)
class Selection:
    """Sibling tags: children of ``parent_id``, or root tags when it is None."""

    parent_id: Optional[int]
    parent_label: str  # "" for root tags
    tags: tuple[TagRef, ...]

    def label_of(self, tag_id: int) -> str:
        return next(t.label for t in self.tags if t.id == tag_id)


def clean_group_name(name: str) -> str:
    """A group name as a tag label: one line, no control or bidi characters, not empty, bounded."""
    name = " ".join(str(name).split()).strip(" \"'*`“”.:")
    if not name:
        raise GroupingError("a group name cannot be empty")
    if _BAD_NAME.search(name):
        raise GroupingError("a group name cannot hold control or direction-override characters")
    return name[:MAX_NAME].strip()


@dataclass(frozen=True)
class GroupingProposal:
    selection: Selection
    groups: tuple[TagGroup, ...]
    method: str  # "ollama" or "clusters"
    note: str = ""  # why the model was not used, when it was asked
    created_at: str = ""
    accepted_at: Optional[str] = None

    @property
    def ungrouped(self) -> tuple[int, ...]:
        grouped = {t for g in self.groups for t in g.tag_ids}
        return tuple(t.id for t in self.selection.tags if t.id not in grouped)

    def group(self, ref: str) -> TagGroup:
        """A group by its id or (case-insensitive) name."""
        ref = ref.strip()
        found = next((g for g in self.groups if g.id == ref), None) or \
            next((g for g in self.groups if g.name.casefold() == ref.casefold()), None)
        if found is None:
            raise GroupingError(f"no group {ref!r}")
        return found

    def tag(self, ref: str | int) -> int:
        """A selected tag by id or (case-insensitive) label; a label wins over an id ("2019")."""
        if isinstance(ref, str):
            found = next((t.id for t in self.selection.tags if t.label.casefold() == ref.strip().casefold()), None)
            if found is not None:
                return found
            ref = int(ref) if ref.strip().isdigit() else -1
        if any(t.id == ref for t in self.selection.tags):
            return int(ref)
        raise GroupingError(f"{ref!r} is not one of the tags being grouped")

    # ------------------------------------------------------------ edits (each returns a new value)
    def rename(self, group: str, name: str) -> "GroupingProposal":
        target = self.group(group)
        name = clean_group_name(name)
        if any(g.id != target.id and g.name.casefold() == name.casefold() for g in self.groups):
            raise GroupingError(f"there is already a group named {name!r}")
        return self._with(tuple(replace(g, name=name) if g.id == target.id else g for g in self.groups))

    def move(self, tag: str | int, group: Optional[str]) -> "GroupingProposal":
        """Move a tag into ``group`` (None: leave it out of every group)."""
        tag_id = self.tag(tag)
        dest = self.group(group).id if group is not None else None
        out = []
        for g in self.groups:
            ids = tuple(t for t in g.tag_ids if t != tag_id)
            if g.id == dest:
                ids += (tag_id,)
            out.append(replace(g, tag_ids=ids))
        return self._with(tuple(g for g in out if g.tag_ids))

    def drop(self, group: str) -> "GroupingProposal":
        """Leave a group out: its tags stay where they are."""
        target = self.group(group)
        return self._with(tuple(g for g in self.groups if g.id != target.id))

    def add_group(self, name: str, tag_ids: Iterable[int] = ()) -> "GroupingProposal":
        name = clean_group_name(name)
        if any(g.name.casefold() == name.casefold() for g in self.groups):
            raise GroupingError(f"there is already a group named {name!r}")
        new_id = str(max((int(g.id) for g in self.groups if g.id.isdigit()), default=0) + 1)
        proposal = self._with(self.groups + (TagGroup(new_id, name, ()),))
        for t in tag_ids:
            proposal = proposal.move(t, new_id)
        return proposal

    def _with(self, groups: tuple[TagGroup, ...]) -> "GroupingProposal":
        return replace(self, groups=groups, accepted_at=None)

    # ------------------------------------------------------------ JSON
    def to_json(self) -> str:
        sel = self.selection
        return json.dumps({**format_header(FORMAT, VERSION), "created_at": self.created_at,
                           "accepted_at": self.accepted_at, "method": self.method, "note": self.note,
                           "parent": {"id": sel.parent_id, "label": sel.parent_label},
                           "tags": [{"id": t.id, "label": t.label, "description": t.description} for t in sel.tags],
                           "groups": [{"id": g.id, "name": g.name, "tags": list(g.tag_ids)} for g in self.groups]},
                          ensure_ascii=False, indent=1)

    @classmethod
    def from_json(cls, text: str) -> "GroupingProposal":
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise GroupingError(f"the grouping is not valid JSON: {exc}") from exc
        try:
            check_version(data, FORMAT, VERSION)
        except NotThisFormat:
            raise GroupingError("not a tag grouping proposal") from None
        except NewerVersion as exc:
            raise GroupingError(f"the grouping is format version {exc.version}; "
                                f"this SPAR Desktop reads up to {VERSION}") from None
        except BadVersion as exc:
            raise GroupingError(f"the grouping has an {exc}") from None
        try:
            parent = data["parent"]
            sel = Selection(None if parent["id"] is None else int(parent["id"]), str(parent["label"]),
                            tuple(TagRef(int(t["id"]), str(t["label"]), t.get("description")) for t in data["tags"]))
            known = {t.id for t in sel.tags}
            groups = tuple(TagGroup(str(g["id"]), clean_group_name(g["name"]),
                                    tuple(int(t) for t in g["tags"] if int(t) in known)) for g in data["groups"])
            return cls(sel, groups, str(data.get("method", "")), str(data.get("note", "")),
                       str(data.get("created_at", "")), data.get("accepted_at"))
        except (KeyError, TypeError, ValueError) as exc:
            raise GroupingError(f"the grouping cannot be read: {exc}") from exc


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


# -------------------------------------------------------------------- choosing the siblings
def _parents(session: Session, tag_ids: list[int]) -> dict[int, set[int]]:
    out: dict[int, set[int]] = {t: set() for t in tag_ids}
    for p, c in session.execute(select(TagEdge.parent_id, TagEdge.child_id).where(TagEdge.child_id.in_(tag_ids))):
        out[c].add(p)
    return out


def select_siblings(session: Session, tag_ids: Iterable[int], parent_id: Optional[int] = None) -> Selection:
    """The tags as siblings under ``parent_id`` (their one common parent when None is given and
    they share exactly one; root tags when none of them has a parent). GroupingError otherwise."""
    ids = list(dict.fromkeys(int(t) for t in tag_ids))
    if len(ids) < MIN_TAGS:
        raise GroupingError(f"select at least {MIN_TAGS} sibling tags to group")
    tags = {t.id: t for t in session.scalars(select(Tag).where(Tag.id.in_(ids)))}
    missing = [t for t in ids if t not in tags]
    if missing:
        raise GroupingError(f"unknown tag id {missing[0]}")
    parents = _parents(session, ids)
    if parent_id is None:
        common = set.intersection(*parents.values())
        if len(common) == 1:
            parent_id = common.pop()
        elif common:
            raise GroupingError("the tags share several parents: say which one to group them under")
        elif any(parents.values()):
            raise GroupingError("the tags are not siblings: they have no parent in common")
    elif any(parent_id not in p for p in parents.values()):
        raise GroupingError("not every tag is a child of the given parent")
    parent = session.get(Tag, parent_id) if parent_id is not None else None
    refs = tuple(TagRef(t, tags[t].value, tags[t].description) for t in ids)
    return Selection(parent_id, parent.value if parent is not None else "", refs)


def select_by_names(session: Session, parent: Optional[str], names: list[str]) -> Selection:
    """What `spar tags group` selects: the children of ``parent`` (a key or label), the named
    tags among them, or the named tags alone when they are siblings."""
    parent_id = None
    if parent:
        found = resolve_tags(session, parent)
        if not found:
            raise GroupingError(f"unknown tag: {parent}")
        if len(found) > 1:
            keys = ", ".join(t.key for t in found[:5])
            raise GroupingError(f"{parent!r} names {len(found)} tags ({keys}): give its key")
        parent_id = found[0].id
    children = list(session.scalars(select(TagEdge.child_id).where(TagEdge.parent_id == parent_id))) \
        if parent_id is not None else []
    if not names:
        if parent_id is None:
            raise GroupingError("name the tags to group, or their parent (--parent)")
        return select_siblings(session, children, parent_id)
    ids: list[int] = []
    for name in names:
        found = resolve_tags(session, name)
        if parent_id is not None:
            found = [t for t in found if t.id in set(children)]
        if not found:
            raise GroupingError(f"unknown tag: {name}" + (f" under {parent}" if parent else ""))
        if len(found) > 1:
            raise GroupingError(f"{name!r} names {len(found)} tags: give a key, or the parent with --parent")
        ids.append(found[0].id)
    return select_siblings(session, ids, parent_id)


# -------------------------------------------------------------------- the file in the data dir
def grouping_path(data_dir: Path) -> Path:
    return DataLayout(Path(data_dir)).tag_grouping


def save_grouping(data_dir: Path, proposal: GroupingProposal) -> Path:
    """Write atomically: a crash leaves the old or the new proposal."""
    return write_text_atomically(grouping_path(data_dir), proposal.to_json())


def load_grouping(data_dir: Path) -> Optional[GroupingProposal]:
    path = grouping_path(data_dir)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise GroupingError(f"cannot read {path}: {exc}") from exc
    return GroupingProposal.from_json(text)


def discard_grouping(data_dir: Path) -> bool:
    try:
        grouping_path(data_dir).unlink()
        return True
    except FileNotFoundError:
        return False


# -------------------------------------------------------------------- accepting into the tag DAG
@dataclass(frozen=True)
class GroupingReport:
    groups_created: int
    groups_existing: int
    tags_moved: int
    skipped: tuple[str, ...] = ()  # tags deleted or re-parented since the proposal, cycles

    def message(self) -> str:
        text = (f"{self.groups_created} group tags created ({self.groups_existing} already there), "
                f"{self.tags_moved} tags moved under them")
        return text + (f"; {len(self.skipped)} skipped" if self.skipped else "")


def group_source(sources: set[str]) -> str:
    """The group tag's source: the members' own when they share an editable one (a taxonomy stays
    under Taxonomy), else a user tag (folders and dates come from the files; a group is not one)."""
    if len(sources) == 1 and next(iter(sources)) in (TagSource.TAXONOMY, TagSource.USER, TagSource.AUTO):
        return next(iter(sources))
    return TagSource.USER


def group_key(parent_key: Optional[str], name: str) -> str:
    return f"{GROUP_PREFIX}{parent_key + '/' if parent_key else ''}{name}"


def accept_grouping(session: Session, proposal: GroupingProposal) -> GroupingReport:
    """Create the group tags and re-parent the grouped tags (see the module doc); idempotent."""
    parent_id = proposal.selection.parent_id
    parent = session.get(Tag, parent_id) if parent_id is not None else None
    if parent_id is not None and parent is None:
        raise GroupingError("the parent tag is no longer in the index")
    created = existing = moved = 0
    skipped: list[str] = []
    for group in proposal.groups:
        members = {t.id: t for t in session.scalars(select(Tag).where(Tag.id.in_(list(group.tag_ids))))}
        parents = _parents(session, list(members))
        ok = [t for t in group.tag_ids if t in members
              and (parent_id in parents[t] if parent_id is not None else not parents[t])]
        skipped += [proposal.selection.label_of(t) for t in group.tag_ids if t not in ok]
        if not ok:
            continue
        key = group_key(parent.key if parent is not None else None, group.name)
        if session.scalar(select(Tag.id).where(Tag.key == key)) is None:
            created += 1
        else:
            existing += 1
        tag = create_tag(session, key, group.name, group_source({members[t].source for t in ok}),
                         f"grouped from {', '.join(members[t].value for t in ok)}"[:500])
        try:
            if parent_id is not None:
                add_edge(session, parent_id, tag.id)
            for t in ok:
                add_edge(session, tag.id, t)
                if parent_id is not None:
                    remove_edge(session, parent_id, t)
                moved += 1
        except TagError:  # an existing group tag of that name sits below a member
            skipped.append(group.name)
    session.flush()
    return GroupingReport(created, existing, moved, tuple(skipped))

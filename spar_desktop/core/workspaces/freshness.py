"""Is a built workspace still what its request would admit from the index as it is now?

A share changes every day; a workspace is built once. After a scan, a workspace compares the files
it holds (``WorkspaceFile`` rows, with the content hash each was built from) with what its filter
admits from the index today:

- **changed**: a file it holds whose content hash in the index is no longer the one it was built from;
- **removed**: a file it holds that vanished (missing on disk, gone from the index) or that its
  filter no longer admits (a tag removed, a date moved out of range);
- **new**: a file the filter admits now that it does not hold (added to the share, newly tagged,
  a date moved into range, an open-ended request such as "since 2023" reaching a new file).

Nothing is stored: the comparison is one pass over the workspace's rows and the admitted set, so
the CLI, the app and a search all read the same answer. Files the build found unusable (failed, no
text) count like any other: an edit may have fixed them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional

from sqlalchemy import select

from spar_desktop.core.library.database import Library
from spar_desktop.core.library.models import File, FileStatus
from spar_desktop.core.workspaces.models import WorkspaceFile, WorkspaceFileState
from spar_desktop.core.workspaces.selection import WorkspaceFilter, admitted_files

_IN_BATCH = 500


@dataclass(frozen=True)
class Freshness:
    """How a built workspace differs from what it would hold if built now (paths, sorted)."""

    changed: tuple[str, ...] = ()
    new: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed_ids: frozenset[int] = frozenset()  # file ids whose hits come from an older version
    removed_ids: frozenset[int] = frozenset()

    @property
    def stale(self) -> bool:
        return bool(self.changed or self.new or self.removed)

    def counts(self) -> str:
        """'2 changed, 1 new, 1 removed' (only the parts there are)."""
        parts = [(len(self.changed), "changed"), (len(self.new), "new"), (len(self.removed), "removed")]
        return ", ".join(f"{n} {what}" for n, what in parts if n)

    def describe(self) -> str:
        return f"out of date ({self.counts()})" if self.stale else "up to date"

    def to_json(self) -> dict:
        return {"stale": self.stale, "changed": list(self.changed), "new": list(self.new),
                "removed": list(self.removed)}


UP_TO_DATE = Freshness()


def index_states(library: Library, ids: Iterable[int]) -> dict[int, tuple[str, Optional[str], str]]:
    """file id → (status, content hash, path) from the index, for these ids."""
    ids = sorted(set(ids))
    out: dict[int, tuple[str, Optional[str], str]] = {}
    with library.session() as s:
        for i in range(0, len(ids), _IN_BATCH):
            q = select(File.id, File.status, File.content_hash, File.path).where(File.id.in_(ids[i:i + _IN_BATCH]))
            out.update({r[0]: (r[1], r[2], r[3]) for r in s.execute(q)})
    return out


def built_files(library: Library, workspace_id: int) -> list[tuple[Optional[int], str, Optional[str], str]]:
    """(file id, path, content hash as built, state) of every file the last build recorded."""
    with library.session() as s:
        return [tuple(r) for r in s.execute(  # type: ignore[misc]
            select(WorkspaceFile.file_id, WorkspaceFile.path, WorkspaceFile.content_hash, WorkspaceFile.state)
            .where(WorkspaceFile.workspace_id == workspace_id))]


def compare(built: list[tuple[Optional[int], str, Optional[str], str]], admitted: list[tuple[int, str, Optional[str]]],
            index: dict[int, tuple[str, Optional[str], str]]) -> Freshness:
    """The difference between what a build recorded and what the filter admits now."""
    now = {fid: (path, h) for fid, path, h in admitted}
    held: set[int] = set()
    changed: dict[int, str] = {}
    removed: dict[Optional[int], str] = {}
    for file_id, path, built_hash, state in built:
        if state == WorkspaceFileState.MISSING:
            continue  # already gone when it was built: nothing of it is searched
        current = index.get(file_id) if file_id is not None else None
        if current is None or current[0] == FileStatus.MISSING or file_id not in now:
            removed[file_id] = path
            continue
        held.add(file_id)  # type: ignore[arg-type]
        if current[1] != built_hash:
            changed[file_id] = current[2]  # type: ignore[index]
    new = [path for fid, (path, _) in now.items()
           if fid not in held and fid not in removed and index.get(fid, ("",))[0] != FileStatus.MISSING]
    return Freshness(tuple(sorted(changed.values())), tuple(sorted(new)), tuple(sorted(removed.values())),
                     frozenset(changed), frozenset(i for i in removed if i is not None))


def freshness(library: Library, workspace_id: int, flt: WorkspaceFilter) -> Freshness:
    """How workspace ``workspace_id`` (built with the files in its rows) differs from ``flt``
    applied to the index as it is now."""
    built = built_files(library, workspace_id)
    admitted = admitted_files(library, flt)
    index = index_states(library, [r[0] for r in built if r[0] is not None] + [a[0] for a in admitted])
    return compare(built, admitted, index)

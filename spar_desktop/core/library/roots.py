"""Indexed roots as the tag tree shows them: a display name per root (disambiguated when two
share a name) and how many of its files sit under each top-level folder tag. Folder tags are
keyed by their path relative to a root, so this is what lets the tree show one node per root."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Mapping, Optional, Sequence

from sqlalchemy import select

from spar_desktop.core.library.count_store import count_roots
from spar_desktop.core.library.models import Folder, Tag, TagSource


@dataclass(frozen=True)
class RootFolders:
    """One indexed root: its display name, file count, and files per top-level folder tag."""

    path: str
    name: str
    files: int
    tag_files: Mapping[int, int]  # top-level folder tag id → files of this root under it


def root_names(paths: Sequence[str]) -> dict[str, str]:
    """'share' for /mnt/a/share; two roots named 'share' become 'share (a)' and 'share (b)'
    (more of the parent path until the names differ)."""
    def name(path: str, depth: int) -> str:
        parts = [x for x in path.rstrip("/\\").replace("\\", "/").split("/") if x]
        base = parts[-1] if parts else path
        if depth == 0 or len(parts) < 2:
            return base
        return f"{base} ({'/'.join(parts[max(0, len(parts) - 1 - depth):-1])})"

    names = {p: name(p, 0) for p in paths}
    for depth in range(1, 16):
        clash = {n for n, c in Counter(names.values()).items() if c > 1}
        if not clash:
            break
        names.update({p: name(p, depth) for p in paths if names[p] in clash})
    return names


def folder_roots(session, per_root: Optional[Mapping[int, Counter]] = None) -> tuple[RootFolders, ...]:
    """Per indexed root, how many of its files sit under each top-level folder tag (read beside
    the tag counts by the UI's tag loader). ``per_root``: count_store's rows (root folder id →
    Counter(top-level folder name → files; '' → all)); counted from the files when not given."""
    roots = dict(session.execute(select(Folder.id, Folder.path)).all())
    top_tags = dict(session.execute(select(Tag.key, Tag.id).where(Tag.source == TagSource.PATH,
                                                                  ~Tag.key.contains("/"))).all())
    if per_root is None:
        per_root = count_roots(session)
    names = root_names(list(roots.values()))
    out = []
    for fid, path in roots.items():
        counts = per_root.get(fid, Counter())
        tag_files = {top_tags[name]: n for name, n in counts.items() if name and name in top_tags}
        out.append(RootFolders(path, names[path], counts.get("", 0), tag_files))
    return tuple(sorted(out, key=lambda r: (r.name.casefold(), r.path)))

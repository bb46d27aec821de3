"""Indexed roots as the tag tree shows them: a display name per root (disambiguated when two
share a name) and how many of its files sit under each top-level folder tag. Folder tags are
keyed by their path relative to a root, so this is what lets the tree show one node per root."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Mapping, Sequence

from sqlalchemy import func, select

from spar_desktop.core.library.models import File, Folder, Tag, TagSource


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


def folder_roots(session) -> tuple[RootFolders, ...]:
    """Per indexed root, how many of its files sit under each top-level folder tag (read beside
    tag_infos by the UI's tag loader)."""
    roots = dict(session.execute(select(Folder.id, Folder.path)).all())
    top_tags = dict(session.execute(select(Tag.key, Tag.id).where(Tag.source == TagSource.PATH,
                                                                  ~Tag.key.contains("/"))).all())
    # Counted in SQL (one pass over the files, no row reaches Python): at 1,000,000 files reading
    # every rel_path into Python took seconds of the tag tree's start-up.
    totals = dict(session.execute(select(File.folder_id, func.count()).group_by(File.folder_id)).all())
    slash = (func.strpos if session.get_bind().dialect.name == "postgresql" else func.instr)(File.rel_path, "/")
    top = func.substr(File.rel_path, 1, slash - 1)
    per_root: dict[int, Counter] = {fid: Counter() for fid in roots}
    for folder_id, name, n in session.execute(select(File.folder_id, top, func.count())
                                              .where(slash > 1).group_by(File.folder_id, top)):
        if folder_id in roots and name in top_tags:
            per_root[folder_id][top_tags[name]] += n
    names = root_names(list(roots.values()))
    return tuple(sorted((RootFolders(path, names[path], totals.get(fid, 0), dict(per_root[fid])) for fid, path in roots.items()),
                        key=lambda r: (r.name.casefold(), r.path)))

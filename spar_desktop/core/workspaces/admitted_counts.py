"""A workspace's admitted files counted for the window's Overview: files by year, kind and top
folder, each bar with the tag a click filters by (its year's date tag, its top folder's path tag)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Optional

from sqlalchemy import func, select

from spar_desktop.core.library.database import Library
from spar_desktop.core.library.models import File, FileStatus, Tag, TagSource
from spar_desktop.core.library.queries import document_date_expr
from spar_desktop.core.workspaces.selection import WorkspaceFilter, admitted_files


@dataclass(frozen=True)
class WorkspaceCounts:
    """The admitted files of one workspace, counted for the Overview: (label, files, tag id) per
    bar (the tag a click filters by: its year's date tag, its top folder's path tag)."""

    name: str
    file_ids: frozenset[int]
    years: tuple[tuple[str, int, Optional[int]], ...]
    formats: dict[str, int]
    folders: tuple[tuple[str, int, Optional[int]], ...]


_CHUNK = 20_000  # ids per IN (...): far below SQLite's variable limit


def admitted_counts(library: Library, name: str, flt: WorkspaceFilter) -> WorkspaceCounts:
    """Files by year, kind and top folder among the files workspace ``name``'s filter ``flt``
    admits now (the set the funnel shows): GROUP BYs over the index, a chunk of ids at a time."""
    ids = frozenset(row[0] for row in admitted_files(library, flt))
    year, top = func.strftime("%Y", document_date_expr()), func.substr(File.rel_path, 1, func.instr(File.rel_path, "/") - 1)
    years, formats, folders = Counter(), Counter(), Counter()
    chunks = sorted(ids)
    with library.session() as s:
        for i in range(0, len(chunks), _CHUNK):
            present = (File.id.in_(chunks[i:i + _CHUNK]), File.status != FileStatus.MISSING)  # as the table lists
            years.update(dict(s.execute(select(year, func.count()).where(*present).group_by(year)).all()))
            formats.update(dict(s.execute(select(File.format, func.count()).where(*present).group_by(File.format)).all()))
            folders.update(dict(s.execute(select(top, func.count()).where(*present, func.instr(File.rel_path, "/") > 0)
                                          .group_by(top)).all()))
        date_tags = dict(s.execute(select(Tag.key, Tag.id).where(Tag.key.in_([f"date:{y}" for y in years if y]))).all())
        path_tags = dict(s.execute(select(Tag.key, Tag.id).where(Tag.source == TagSource.PATH, Tag.key.in_(list(folders)))).all())
    return WorkspaceCounts(
        name, ids,
        tuple((y, n, date_tags.get(f"date:{y}")) for y, n in sorted(years.items()) if y),
        {str(k or "other"): n for k, n in formats.items()},
        tuple((f, n, path_tags.get(f)) for f, n in folders.most_common()),
    )

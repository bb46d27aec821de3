"""Background ops over the metadata index: one-line calls of the core (Anki's aqt/operations).

Each op has the TaskRunner signature tail ``(..., progress, cancel)`` and is bound with
``functools.partial``. The SQL, the values and what an edit changed are the core's
(core/library/overview.py, tag_edits.py; core/workspaces/file_details.py): ops only adapt the
call, and return the core's frozen values. No Qt in here. One exception: the workspace
Overview's counts (load_workspace_counts), three GROUP BYs no core function has.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Optional

from sqlalchemy import func, select

from spar_desktop.core.library import overview, tag_edits
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.models import File, FileStatus, Tag, TagSource
from spar_desktop.core.library.overview import (  # noqa: F401  (the values the widgets show)
    FILE_SORT_KEYS as SORT_KEYS, MAX_LISTED_FILES as MAX_TABLE_ROWS, FileDetails, FileRows, IssueRow, Issues,
    LibraryState, LibrarySummary, ScanSummary, TagSnapshot,
)
from spar_desktop.core.library.queries import FileFilter, FileRecord, document_date_expr, library_stats  # noqa: F401
from spar_desktop.core.library.tag_edits import TagEdit
from spar_desktop.core.progress import CancelToken, ProgressCallback
from spar_desktop.core.workspaces.file_details import file_details


def load_tags(library: Library, progress: ProgressCallback, cancel: CancelToken) -> TagSnapshot:
    return overview.load_tags(library)


def load_files(library: Library, flt: FileFilter, progress: ProgressCallback, cancel: CancelToken,
               sort: tuple[int, bool] = (0, False), limit: int = MAX_TABLE_ROWS) -> FileRows:
    return overview.load_files(library, flt, sort, limit, cancel)


def load_details(library: Library, file_id: int, progress: ProgressCallback, cancel: CancelToken) -> Optional[FileDetails]:
    return file_details(library, file_id)


def load_everything(library: Library, flt: FileFilter, sort: tuple[int, bool],
                    progress: ProgressCallback, cancel: CancelToken) -> LibraryState:
    return overview.load_everything(library, flt, sort, cancel)


def apply_tag(library: Library, file_ids: tuple[int, ...], tag_id: Optional[int], new_label: Optional[str],
              progress: ProgressCallback, cancel: CancelToken) -> TagEdit:
    return tag_edits.apply_tag(library, file_ids, tag_id, new_label)


def remove_tag(library: Library, file_ids: tuple[int, ...], tag_id: int,
               progress: ProgressCallback, cancel: CancelToken) -> TagEdit:
    return tag_edits.remove_tag(library, file_ids, tag_id)


def import_taxonomy_file(library: Library, path: str, progress: ProgressCallback, cancel: CancelToken) -> TagEdit:
    return tag_edits.import_taxonomy_file(library, path)


def import_assignments_file(library: Library, path: str, progress: ProgressCallback, cancel: CancelToken) -> TagEdit:
    return tag_edits.import_assignments_file(library, path)


def load_format_counts(library: Library, progress: ProgressCallback, cancel: CancelToken) -> dict[str, int]:
    """Files per format, for the Overview's chart (one GROUP BY in the index)."""
    with library.session() as s:
        return {str(k or "other"): int(v) for k, v in library_stats(s)["by_format"].items()}


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


def load_workspace_counts(service: Any, name: str, progress: ProgressCallback, cancel: CancelToken) -> WorkspaceCounts:
    """Files by year, kind and top folder among the files workspace ``name``'s filter admits now
    (the set the funnel shows): GROUP BYs over the index, a chunk of ids at a time."""
    from spar_desktop.core.workspaces.selection import admitted_files  # the workspace stack: on a worker

    library = service.library
    ids = frozenset(row[0] for row in admitted_files(library, service.manager.current_filter(name)))
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

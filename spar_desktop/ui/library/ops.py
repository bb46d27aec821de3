"""Background ops over the metadata index: one-line calls of the core (Anki's aqt/operations).

Each op has the TaskRunner signature tail ``(..., progress, cancel)`` and is bound with
``functools.partial``. The SQL, the values and what an edit changed are the core's
(core/library/overview.py, tag_edits.py; core/workspaces/file_details.py): ops only adapt the
call, and return the core's frozen values. No Qt in here.
"""

from __future__ import annotations

from typing import Any, Optional

from spar_desktop.core.library import file_pages, overview, tag_edits
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.file_pages import FileListing, FileOrder  # noqa: F401
from spar_desktop.core.library.issue_pages import ISSUE_PAGE  # noqa: F401
from spar_desktop.core.library.overview import (  # noqa: F401  (the values the widgets show)
    FILE_SORT_KEYS as SORT_KEYS, MAX_LISTED_FILES as MAX_TABLE_ROWS, FileDetails, FileRows, IssueRow, Issues,
    LibraryState, LibrarySummary, ScanSummary, TagSnapshot,
)
from spar_desktop.core.library.queries import FileFilter, FileRecord, library_stats  # noqa: F401
from spar_desktop.core.library.tag_edits import TagEdit
from spar_desktop.core.library.tag_search import TagMatches
from spar_desktop.core.progress import CancelToken, ProgressCallback
from spar_desktop.core.workspaces.file_details import file_details


def load_tags(library: Library, progress: ProgressCallback, cancel: CancelToken) -> TagSnapshot:
    return overview.load_tags(library)


def search_tags(infos: Any, text: str, progress: ProgressCallback, cancel: CancelToken) -> TagMatches:
    """The tag filter's answer (core/library/tag_search.py): hits, ancestors, and the rows to show them."""
    return infos.matches(text)


def complete_listing(listing: FileListing, progress: ProgressCallback, cancel: CancelToken) -> FileOrder:
    """The whole order of a listing that showed with its first ids only (at 1M files, ~1 s)."""
    return listing.reorder(listing.sort)


def load_files(library: Library, flt: FileFilter, progress: ProgressCallback, cancel: CancelToken,
               sort: tuple[int, bool] = (0, False)) -> FileListing:
    """The table's listing: ids in order from SQL; its rows are read by the page as they show."""
    return file_pages.listing(library, flt, sort, cancel)


def load_details(library: Library, file_id: int, progress: ProgressCallback, cancel: CancelToken) -> Optional[FileDetails]:
    return file_details(library, file_id)


def load_everything(library: Library, flt: FileFilter, sort: tuple[int, bool],
                    progress: ProgressCallback, cancel: CancelToken) -> LibraryState:
    return overview.load_everything(library, flt, sort, cancel, with_tags=False)  # the controller loads tags next


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


def load_workspace_counts(service: Any, name: str, progress: ProgressCallback, cancel: CancelToken) -> Any:
    """The Overview's WorkspaceCounts of workspace ``name`` (core/workspaces/admitted_counts.py)."""
    from spar_desktop.core.workspaces.admitted_counts import admitted_counts  # the workspace stack: on a worker

    return admitted_counts(service.library, name, service.manager.current_filter(name))

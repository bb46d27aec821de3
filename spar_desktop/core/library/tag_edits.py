"""A person's edits of the tags, each in one transaction, each returning a frozen ``TagEdit``
that says what it did in words and what it changed (tags: the tree and the files they filter)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Optional

from spar_desktop.core.changes import Changes
from spar_desktop.core.library import count_store
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.models import TagSource
from spar_desktop.core.library.tags import create_tag, tag_files, untag_files
from spar_desktop.core.library.taxonomy import assign_from_csv, import_taxonomy

TAGS_CHANGED = Changes(tags=True)


@dataclass(frozen=True)
class TagEdit:
    message: str  # one line for a status bar or a terminal
    count: int  # files tagged or untagged, tags created, assignments made
    changes: Changes = TAGS_CHANGED


def _files(n: int) -> str:
    return f"{n} file{'s' if n != 1 else ''}"


def apply_tag(library: Library, file_ids: tuple[int, ...], tag_id: Optional[int],
              new_label: Optional[str] = None) -> TagEdit:
    """Tag files with an existing tag, or with a new user tag called ``new_label``."""
    with library.session() as s:
        if tag_id is None:
            label = (new_label or "").strip()
            if not label:
                raise ValueError("a tag needs a name")
            tag_id = create_tag(s, f"{TagSource.USER}:{label}", label, TagSource.USER).id
        n = tag_files(s, file_ids, tag_id, TagSource.USER)
        count_store.refresh(s, (tag_id,))
    return TagEdit(f"Tagged {_files(n)}", n)


def remove_tag(library: Library, file_ids: tuple[int, ...], tag_id: int) -> TagEdit:
    with library.session() as s:
        n = untag_files(s, file_ids, tag_id)
        count_store.refresh(s, (tag_id,))
    return TagEdit(f"Removed the tag from {_files(n)}", n)


def import_taxonomy_file(library: Library, path: str) -> TagEdit:
    with library.session() as s:
        report = import_taxonomy(s, path)
    text = f"Imported {report.tags_created} new tags and {report.edges_created} links from {os.path.basename(path)}"
    if report.problems:
        text += f" ({len(report.problems)} lines skipped, see the log)"
    return TagEdit(text, report.tags_created)


def import_assignments_file(library: Library, path: str) -> TagEdit:
    with library.session() as s:
        report = assign_from_csv(s, path)
    text = f"Assigned {report.assigned} tags to {report.files_matched} files"
    if report.unknown_paths:
        text += f"; {len(report.unknown_paths)} paths not in the index"
    return TagEdit(text, report.assigned)

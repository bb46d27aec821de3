"""One file's details with the workspaces holding it: the library's part (library/overview.py)
plus the workspace entries, which only this layer knows."""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

from sqlalchemy import select

from spar_desktop.core.library.database import Library
from spar_desktop.core.library.overview import FileDetails
from spar_desktop.core.library.overview import file_details as library_details
from spar_desktop.core.workspaces.models import Workspace, WorkspaceFile


def workspaces_holding(library: Library, file_id: int) -> tuple[tuple[str, str, Optional[str]], ...]:
    """(workspace name, the file's state in it, its note) for every workspace listing the file."""
    with library.session() as s:
        rows = s.execute(select(Workspace.name, WorkspaceFile.state, WorkspaceFile.error)
                         .join(Workspace, Workspace.id == WorkspaceFile.workspace_id)
                         .where(WorkspaceFile.file_id == file_id).order_by(Workspace.name)).all()
    return tuple((n, st, e) for n, st, e in rows)


def file_details(library: Library, file_id: int) -> Optional[FileDetails]:
    details = library_details(library, file_id)
    return details if details is None else replace(details, workspaces=workspaces_holding(library, file_id))

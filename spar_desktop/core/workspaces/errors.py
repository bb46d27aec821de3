"""Errors a workspace operation reports to the user (message says what to do)."""

from __future__ import annotations

from typing import Optional


class WorkspaceError(Exception):
    pass


class WorkspaceNotFound(WorkspaceError):
    pass


class ModelChangedError(WorkspaceError):
    """The workspace was built with another embedding model: rebuilding re-embeds everything."""


class NeedsBuild(WorkspaceError):
    """A built workspace has no usable searcher: its saved state is missing or stale, or its
    vector store failed during a search. Searching never builds; the caller decides (the manager's
    ``search`` builds from the cache by default; a caller passing ``build_if_needed=False`` shows
    this message)."""

    def __init__(self, name: str, why: Optional[str], store_failed: bool = False) -> None:
        self.name, self.why, self.store_failed = name, why, store_failed
        reason = f" ({why})" if why else ""
        super().__init__(f"workspace '{name}' needs a build before it can be searched{reason}: "
                         f"run `spar ws build \"{name}\"`")

"""Errors a workspace operation reports to the user (message says what to do)."""


class WorkspaceError(Exception):
    pass


class WorkspaceNotFound(WorkspaceError):
    pass


class ModelChangedError(WorkspaceError):
    """The workspace was built with another embedding model: rebuilding re-embeds everything."""

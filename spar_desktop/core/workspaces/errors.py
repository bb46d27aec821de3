"""Errors a workspace operation reports to the user (message says what to do)."""

from __future__ import annotations

from typing import Any, Optional


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


def unscoped_message(flt: Any) -> str:
    """What to say (and offer) when nothing in a filter chooses files."""
    if flt.unmatched:
        words = ", ".join(f"'{kw}'" for kw in flt.unmatched)
        return (f"No tag matches {words}, and the request sets no date, file type, author or folder, so it "
                "would admit every file. Choose one: drop those words (or reword them with words your tags "
                "use), pick a tag for them, or use the whole index on purpose.")
    return ("Nothing chooses files: describe the files you want, or choose at least one tag or constraint "
            "(or the whole index on purpose).")


class UnscopedFilter(WorkspaceError):
    """A filter that would admit every file without the user asking for the whole index."""

    def __init__(self, flt: Any) -> None:
        super().__init__(unscoped_message(flt))
        self.filter = flt

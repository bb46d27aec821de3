"""Background ops for the search panel's "Cover my session" (no Qt): calls of the core's
cluster-expanded search (core/relations/expanded_search.py, session_clusters.py). The relations
modules pull in scipy and networkx, so they are imported in the ops, on the pool."""

from __future__ import annotations

from typing import Any

from spar_desktop.core.library.database import Library
from spar_desktop.core.progress import CancelToken, Progress, ProgressCallback, check


def has_clusters(library: Library, workspace: str, progress: ProgressCallback, cancel: CancelToken) -> bool:
    """Whether ``workspace`` has a co-occurrence build (what Cover my session needs)."""
    from spar_desktop.core.relations.session_clusters import has_clusters as stored  # scipy: see above

    return stored(library, workspace)


def build_clusters(library: Library, workspace: str, progress: ProgressCallback, cancel: CancelToken) -> Any:
    """The workspace's co-occurrence clusters (a full build)."""
    from spar_desktop.core.relations.session_clusters import build_clusters as build  # scipy: see above

    return build(library, workspace, progress, cancel)


def session_search(service: Any, workspace: str, query: str, progress: ProgressCallback, cancel: CancelToken) -> Any:
    """Cover my session: SessionResults (it takes the workspace's lock like any search of it).
    ``service``: workspaces.ops.WorkspaceService."""
    from spar_desktop.core.relations.expanded_search import session_search as search  # scipy: see above

    progress(Progress(0, None, f"covering a session in {workspace}"))
    check(cancel)
    return search(service.library, workspace, query, manager=service.manager)

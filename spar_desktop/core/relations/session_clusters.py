"""Cover my session's clusters (expanded_search.py): whether a workspace has the co-occurrence
build the cluster-expanded search needs, and building it."""

from __future__ import annotations

from typing import Any

from spar_desktop.core.library.database import Library
from spar_desktop.core.progress import CancelToken, ProgressCallback
from spar_desktop.core.relations import persist
from spar_desktop.core.relations.scope import scope_key, workspace_id
from spar_desktop.core.relations.service import build_relations


def has_clusters(library: Library, workspace: str) -> bool:
    """Whether ``workspace`` has a co-occurrence build with clusters."""
    try:
        meta = persist.load_meta(persist.relations_dir(library.settings.data_dir,
                                                   scope_key(workspace_id(library, workspace)), "cooc"))
    except persist.RelationsStoreError:
        return False
    return bool(meta.get("has_clusters"))


def build_clusters(library: Library, workspace: str, progress: ProgressCallback, cancel: CancelToken) -> Any:
    """The workspace's co-occurrence clusters (a full build: see update_stored.py)."""
    return build_relations(library, workspace=workspace, method="cooc", progress=progress, cancel=cancel)

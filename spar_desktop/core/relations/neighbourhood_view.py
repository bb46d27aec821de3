"""What the relations tab shows, decided without Qt: a scope's graph brought up to date (or rebuilt)
and laid out, and the neighbourhood of one file — which stored graph holds it, in which order
the scopes and methods are tried, and what to say when none does.

Relations are built on first use of a (scope, method) and stored; later loads bring them up to
date with the files first (update_stored.py: EDR-MQ adds and drops only what changed, TF-IDF and
co-occurrence recompute; nothing when no file changed), then redo communities and the ForceAtlas2
layout (seconds at most). ``rebuild`` recomputes them exactly. The whole index is built only once
the user has seen the estimate and said yes (``confirmed``): without it ``load_graph`` raises
BuildNotConfirmed carrying the estimate.
"""

from __future__ import annotations

from typing import Any, Optional

from spar_desktop.core.library.database import Library
from spar_desktop.core.progress import CancelToken, ProgressCallback
from spar_desktop.core.relations import persist
from spar_desktop.core.relations.errors import RelationsError
from spar_desktop.core.relations.neighbourhood import Neighbourhood, neighbourhood
from spar_desktop.core.relations.payload import GraphPayload
from spar_desktop.core.relations.scope import scope_files, scope_key, workspace_id
from spar_desktop.core.relations.service import build_relations, graph_payload, require_confirmation
from spar_desktop.core.relations.tab_labels import METHOD_LABELS, RelationsNotBuilt
from spar_desktop.core.relations.update_stored import update_relations

LAYOUT_ITERATIONS = 100
TOP_PER_NODE = 10  # each document keeps its 10 strongest relations: readable, and bounded at 5k nodes


def load_graph(library: Library, workspace: Optional[str], method: str, progress: ProgressCallback,
               cancel: CancelToken, *, rebuild: bool = False, confirmed: bool = False,
               encoder: Any = None) -> GraphPayload:
    """The scope's graph, updated with the files (or rebuilt exactly), laid out for the view."""
    require_confirmation(library, workspace, method, rebuild=rebuild, confirmed=confirmed, encoder=encoder)
    if rebuild:  # exact: every query against every document (updates are incremental, see above)
        build_relations(library, workspace=workspace, method=method, encoder=encoder, incremental=False,
                        progress=progress, cancel=cancel)
    else:
        update_relations(library, workspace, method, encoder=encoder, progress=progress, cancel=cancel)
    return graph_payload(library, workspace, method, build_missing=True, top_per_node=TOP_PER_NODE,
                         iterations=LAYOUT_ITERATIONS, progress=progress, cancel=cancel)


def built_methods(library: Library, workspace: Optional[str]) -> list[str]:
    """The methods with relations stored for ``workspace`` (None: the whole index), newest first."""
    return [m for m, _ in persist.available(library.settings.data_dir, scope_key(workspace_id(library, workspace)))]


def _in_workspace(library: Library, workspace: str, file_id: int) -> bool:
    return any(f.file_id == file_id for f in scope_files(library, workspace_id(library, workspace)))


def _not_built_message(workspace: Optional[str], method: str) -> str:
    label = dict(METHOD_LABELS).get(method, method)
    where = f"workspace “{workspace}” or the whole index" if workspace else "the whole index"
    return (f"No relations have been built for {where} yet: click Rebuild to compute the {label} relations "
            "(every file's text is read); the related files are shown when they are ready")


def load_neighbourhood(library: Library, workspace: Optional[str], method: str, file_id: int, hops: int,
                       progress: ProgressCallback, cancel: CancelToken, *, base: Optional[GraphPayload] = None,
                       encoder: Any = None) -> tuple[GraphPayload, Neighbourhood, Optional[str]]:
    """(whole graph, the Neighbourhood of ``file_id`` within ``hops`` relations, the workspace
    the graph covers). The whole graph is ``base`` when the view shows it and it holds the file;
    else a stored graph is loaded as ``load_graph`` does (brought up to date with the files):
    the workspace's, then the whole index's (the file table lists every file), ``method`` first,
    then any other method built. Nothing is built from scratch: with no relations stored at all,
    RelationsNotBuilt says to click Rebuild."""

    def around(whole: GraphPayload, where: Optional[str]) -> tuple[GraphPayload, Neighbourhood, Optional[str]]:
        return whole, neighbourhood(whole, whole.file_ids.index(file_id), hops, progress=progress,
                                    cancel=cancel), where

    scopes: list[Optional[str]] = [workspace, None] if workspace is not None else [None]
    if base is not None:
        if file_id in base.file_ids:
            return around(base, workspace)
        scopes = scopes[1:]  # the view's graph was searched already
    built = {ws: built_methods(library, ws) for ws in scopes}
    if base is None and not any(built.values()):
        raise RelationsNotBuilt(_not_built_message(workspace, method))
    order = ([(ws, method) for ws in scopes if method in built[ws]]
             + [(ws, m) for ws in scopes for m in built[ws] if m != method])
    inside = workspace is not None and _in_workspace(library, workspace, file_id)
    for ws, m in order:
        if ws is not None and not inside:
            continue
        whole = load_graph(library, ws, m, progress, cancel, encoder=encoder)
        if file_id in whole.file_ids:
            return around(whole, ws)
    if workspace is not None and not inside and not built.get(None):
        raise RelationsError(f"this file is not in workspace “{workspace}”, and no relations are built for the "
                             "whole index: choose Scope ▸ Whole index and click Rebuild")
    raise RelationsError("this file has no relations: it is not in any relations built so far (a file without "
                         "text has none); click Rebuild to include files added since")

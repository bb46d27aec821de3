"""Background ops for the relation graph (no Qt): module-level functions the TaskRunner runs on its
pool, each returning the immutable GraphPayload the view draws.

Relations are built on first use of a (scope, method) and stored; later loads bring them up to
date with the files first (core/relations/update_stored.py: EDR-MQ adds and drops only what changed,
TF-IDF and co-occurrence recompute; nothing when no file changed), then redo communities and the
ForceAtlas2 layout (seconds at most). ``rebuild`` recomputes them exactly. A workspace's relations
are built when first shown; the whole index's only once the user has seen the estimate and said
yes (``confirmed``): without it ``load_graph`` raises BuildNotConfirmed carrying the estimate, and
the tab's ``show_graph`` returns it as a WholeIndexOffer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from spar_desktop.core.in_thread import in_low_priority_thread
from spar_desktop.core.library.database import Library
from spar_desktop.core.progress import CancelToken, ProgressCallback
from spar_desktop.core.relations.payload import GraphPayload
from spar_desktop.core.relations.errors import RelationsError
from spar_desktop.core.relations.scope import BuildNotConfirmed

# The methods the tab offers, default first, with the labels the combo, status line and task titles show.
METHODS = (("edrmq", "EDR-MQ (words + meaning)"), ("cooc", "Co-occurrence"), ("tfidf", "TF-IDF"))

LAYOUT_ITERATIONS = 100
TOP_PER_NODE = 10  # each document keeps its 10 strongest relations: readable, and bounded at 5k nodes


def load_graph(library: Library, workspace: Optional[str], method: str, progress: ProgressCallback,
               cancel: CancelToken, *, rebuild: bool = False, confirmed: bool = False,
               encoder: Any = None) -> GraphPayload:
    from spar_desktop.core.relations.update_stored import update_relations
    from spar_desktop.core.relations.service import build_relations, graph_payload, require_confirmation

    require_confirmation(library, workspace, method, rebuild=rebuild, confirmed=confirmed, encoder=encoder)
    if rebuild:  # exact: every query against every document (updates are incremental, see above)
        build_relations(library, workspace=workspace, method=method, encoder=encoder, incremental=False,
                        progress=progress, cancel=cancel)
    else:
        update_relations(library, workspace, method, encoder=encoder, progress=progress, cancel=cancel)
    import scipy.spatial  # noqa: F401 - the view's hit-testing KD-tree: 0.17 s to import, here rather than on a hover
    return graph_payload(library, workspace, method, build_missing=True, top_per_node=TOP_PER_NODE,
                         iterations=LAYOUT_ITERATIONS, progress=progress, cancel=cancel)


@dataclass(frozen=True)
class WholeIndexOffer:
    """What the tab shows instead of a graph when showing it would build the whole index
    unasked: the build's estimate (core/relations/estimate.BuildEstimate) and whether it is a
    Rebuild. An answer, not a failure: the load returns it."""

    estimate: Any
    rebuild: bool = False


def show_graph(library: Library, workspace: Optional[str], method: str, progress: ProgressCallback,
               cancel: CancelToken, *, rebuild: bool = False, confirmed: bool = False,
               encoder: Any = None) -> "GraphPayload | WholeIndexOffer":
    """The tab's load: ``load_graph``, or the offer when the whole index would be built unasked."""
    try:
        return load_graph(library, workspace, method, progress, cancel, rebuild=rebuild, confirmed=confirmed,
                          encoder=encoder)
    except BuildNotConfirmed as asked:
        return WholeIndexOffer(asked.estimate, asked.rebuild)


class RelationsNotBuilt(RelationsError):
    """No relations are stored for the scope nor for the whole index: asking about one file
    (the file table's "Show related files in graph") never starts a scope-wide build by itself."""


def built_methods(library: Library, workspace: Optional[str]) -> list[str]:
    """The methods with relations stored for ``workspace`` (None: the whole index), newest first."""
    from spar_desktop.core.relations import persist
    from spar_desktop.core.relations.scope import scope_key, workspace_id

    return [m for m, _ in persist.available(library.settings.data_dir, scope_key(workspace_id(library, workspace)))]


def _in_workspace(library: Library, workspace: str, file_id: int) -> bool:
    from spar_desktop.core.relations.scope import scope_files, workspace_id

    return any(f.file_id == file_id for f in scope_files(library, workspace_id(library, workspace)))


def load_neighbourhood(library: Library, workspace: Optional[str], method: str, file_id: int, hops: int,
                       progress: ProgressCallback, cancel: CancelToken, *, base: Optional[GraphPayload] = None,
                       encoder: Any = None) -> tuple[GraphPayload, Any, Optional[str]]:
    """(whole graph, the Neighbourhood of ``file_id`` within ``hops`` relations, the workspace
    the graph covers). The whole graph is ``base`` when the view shows it and it holds the file;
    else a stored graph is loaded as ``load_graph`` does (brought up to date with the files):
    the workspace's, then the whole index's (the file table lists every file), ``method`` first,
    then any other method built. Nothing is built from scratch: with no relations stored at all,
    RelationsNotBuilt says to click Rebuild."""
    from spar_desktop.core.relations.neighbourhood import neighbourhood

    def around(whole: GraphPayload, where: Optional[str]) -> tuple[GraphPayload, Any, Optional[str]]:
        return whole, neighbourhood(whole, whole.file_ids.index(file_id), hops, progress=progress,
                                    cancel=cancel), where

    scopes: list[Optional[str]] = [workspace, None] if workspace is not None else [None]
    if base is not None:
        if file_id in base.file_ids:
            return around(base, workspace)
        scopes = scopes[1:]  # the view's graph was searched already
    built = {ws: built_methods(library, ws) for ws in scopes}
    if base is None and not any(built.values()):
        label = dict(METHODS).get(method, method)
        where = f"workspace “{workspace}” or the whole index" if workspace else "the whole index"
        raise RelationsNotBuilt(f"No relations have been built for {where} yet: click Rebuild to compute the "
                                f"{label} relations (every file's text is read); the related files are shown "
                                "when they are ready")
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


def count_changes(library: Library, workspace: Optional[str], method: str, progress: ProgressCallback,
                  cancel: CancelToken) -> Optional[int]:
    """How many files of the scope were added, changed or removed since its stored ``method``
    build (None: nothing stored). Reads meta.json and the index only."""
    from spar_desktop.core.relations.build_delta import pending_changes

    changes = pending_changes(library, workspace, method)
    return None if changes is None else len(changes)


def update_graph(library: Library, workspace: Optional[str], method: str, progress: ProgressCallback,
                 cancel: CancelToken, *, encoder: Any = None) -> GraphPayload:
    """``load_graph`` at low priority (a thread at nice 10, as the tagging job): the update a scan
    starts must leave the CPU to the window and to the scan."""
    return in_low_priority_thread(lambda: load_graph(library, workspace, method, progress, cancel, encoder=encoder),
                                  "spar-relations")


# -- Cover my session (cluster-expanded search in the workspace panel) ------------------------------
def has_clusters(library: Library, workspace: str, progress: ProgressCallback, cancel: CancelToken) -> bool:
    """Whether ``workspace`` has a co-occurrence build (what Cover my session needs)."""
    from spar_desktop.core.relations import persist
    from spar_desktop.core.relations.scope import scope_key, workspace_id

    try:
        meta = persist.load_meta(persist.relations_dir(library.settings.data_dir,
                                                       scope_key(workspace_id(library, workspace)), "cooc"))
    except persist.RelationsStoreError:
        return False
    return bool(meta.get("has_clusters"))


def build_clusters(library: Library, workspace: str, progress: ProgressCallback, cancel: CancelToken) -> Any:
    """The workspace's co-occurrence clusters (a full build: see core/relations/update_stored.py)."""
    from spar_desktop.core.relations.service import build_relations

    return build_relations(library, workspace=workspace, method="cooc", progress=progress, cancel=cancel)


def session_search(service: Any, workspace: str, query: str, progress: ProgressCallback, cancel: CancelToken) -> Any:
    """Cover my session: SessionResults (core/relations/expanded_search.py; it takes the
    workspace's lock like any search of it). ``service``: workspaces.ops.WorkspaceService."""
    from spar_desktop.core.progress import Progress, check
    from spar_desktop.core.relations.expanded_search import session_search as search

    progress(Progress(0, None, f"covering a session in {workspace}"))
    check(cancel)
    return search(service.library, workspace, query, manager=service.manager)

"""Reading a stored build: the relations of a scope, the file a reference names, and the graph
(networkx) of the stored relations that the view, the export and the neighbourhood draw.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Optional

from sqlalchemy import select

from spar_desktop.core.library.models import File
from spar_desktop.core.progress import CancelToken, ProgressCallback, check, no_progress
from spar_desktop.core.relations import persist
from spar_desktop.core.relations.doc_vectors import DocSet
from spar_desktop.core.relations.errors import RelationsError
from spar_desktop.core.relations.graph import add_communities, build_graph, edge_list, set_positions
from spar_desktop.core.relations.layout import layout_graph
from spar_desktop.core.relations.scope import scope_files, scope_key, workspace_id

if TYPE_CHECKING:
    from spar_desktop.core.library.database import Library

COMBINE = {"edrmq": "sum", "tfidf": "max", "cooc": "max"}  # see graph.undirected


def load_stored(library: "Library", workspace: Optional[str] = None, method: Optional[str] = None) -> persist.StoredRelations:
    ws_id = workspace_id(library, workspace)
    scope = scope_key(ws_id)
    data_dir = library.settings.data_dir
    if method is None:
        have = persist.available(data_dir, scope)
        if not have:
            raise RelationsError(f"no relations built for {'this workspace' if ws_id else 'the index'} yet: "
                                 "run `spar relations build` first")
        method = have[0][0]
    try:
        return persist.load(persist.relations_dir(data_dir, scope, method))
    except persist.RelationsStoreError as exc:
        raise RelationsError(f"no '{method}' relations for {'this workspace' if ws_id else 'the index'}: "
                             f"run `spar relations build --method {method}` ({exc})") from exc


def is_stored(library: "Library", workspace: Optional[str], method: str) -> bool:
    """Whether ``method``'s relations are stored for the scope (reads meta.json files only)."""
    scope = scope_key(workspace_id(library, workspace))
    return any(m == method for m, _ in persist.available(library.settings.data_dir, scope))


def resolve_file(library: "Library", ref: str) -> tuple[int, str, str]:
    """(file id, path, title) of a file given by id or path (relative paths resolve from cwd)."""
    with library.session() as s:
        f = None
        if ref.isdigit():
            f = s.get(File, int(ref))
        if f is None:
            f = s.scalar(select(File).where(File.path == os.path.abspath(os.path.expanduser(ref))))
        if f is None:
            f = s.scalar(select(File).where(File.path == ref))
        if f is None:
            raise RelationsError(f"'{ref}' is not a file in the index")
        return f.id, f.path, f.title or os.path.basename(f.path)


def relations_graph(library: "Library", workspace: Optional[str] = None, method: Optional[str] = None, *,
                    top_per_node: Optional[int] = 10, layout: bool = True, iterations: int = 100,
                    progress: ProgressCallback = no_progress, cancel: Optional[CancelToken] = None) -> Any:
    """networkx graph of the stored relations with metadata, clusters (from a cooc build of the
    same scope, when there is one), Louvain communities and, optionally, a ForceAtlas2 layout."""
    stored = load_stored(library, workspace, method)
    ws_id = workspace_id(library, workspace)
    files = {str(f.file_id): f for f in scope_files(library, ws_id)}
    keep = [i for i, d in enumerate(stored.ids) if d in files]  # files deleted since the build drop out
    R = stored.matrix()[keep][:, keep]
    ids = [stored.ids[i] for i in keep]
    docs = DocSet(tuple(ids), tuple(files[d].title or os.path.basename(files[d].path) for d in ids),
                  tuple("" for _ in ids), None,
                  tuple({"path": files[d].path, "folder": files[d].folder, "tags": files[d].tags,
                         "file_id": files[d].file_id} for d in ids))
    clusters = _cluster_labels(library, stored, ids)
    edges, weights = edge_list(R, top_per_node, combine=COMBINE[stored.method])
    G = build_graph(docs, edges, weights, clusters=clusters, method=stored.method)
    check(cancel)
    add_communities(G)
    if layout:
        set_positions(G, layout_graph(G, iterations=iterations, progress=progress, cancel=cancel))
    return G


def _cluster_labels(library, stored: persist.StoredRelations, ids: list[str]) -> Optional[list[int]]:
    source = stored
    if stored.cluster_labels is None:
        try:
            source = persist.load(persist.relations_dir(library.settings.data_dir, stored.scope, "cooc"))
        except persist.RelationsStoreError:
            return None
        if source.cluster_labels is None:
            return None
    where = {d: int(c) for d, c in zip(source.ids, source.cluster_labels)}
    return [where.get(d, -1) for d in ids]



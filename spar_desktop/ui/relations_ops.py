"""Background ops for the relation graph (no Qt): module-level functions the TaskRunner runs on its
pool, each returning the immutable GraphPayload the view draws.

Relations are built on first use of a (scope, method) and stored; later loads only read them and
redo communities and the ForceAtlas2 layout (seconds at most). ``rebuild`` recomputes them, e.g.
after files were added, adding logged queries incrementally for EDR-MQ.
"""

from __future__ import annotations

from typing import Any, Optional

from spar_desktop.core.library.database import Library
from spar_desktop.core.progress import CancelToken, ProgressCallback
from spar_desktop.core.relations.payload import GraphPayload

LAYOUT_ITERATIONS = 100
TOP_PER_NODE = 10  # each document keeps its 10 strongest relations: readable, and bounded at 5k nodes


def load_graph(library: Library, workspace: Optional[str], method: str, progress: ProgressCallback,
               cancel: CancelToken, *, rebuild: bool = False, encoder: Any = None) -> GraphPayload:
    from spar_desktop.core.relations.service import build_relations, graph_payload

    if rebuild:
        build_relations(library, workspace=workspace, method=method, encoder=encoder, progress=progress,
                        cancel=cancel)
    return graph_payload(library, workspace, method, build_missing=True, top_per_node=TOP_PER_NODE,
                         iterations=LAYOUT_ITERATIONS, progress=progress, cancel=cancel)

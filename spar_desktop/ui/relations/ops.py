"""Background ops for the relation graph (no Qt): module-level functions the TaskRunner runs on its
pool, each a call into the core (core/relations/neighbourhood_view.py decides what is loaded,
updated or built) returning the immutable GraphPayload the view draws.

A workspace's relations are built when first shown; the whole index's only once the user has seen
the estimate and said yes (``confirmed``): without it the core raises BuildNotConfirmed carrying
the estimate, and ``show_graph`` returns it as a WholeIndexOffer.

The core's graph modules pull in scipy and networkx: they are imported in the ops, on the pool,
rather than with the window.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from spar_desktop.core.in_thread import in_low_priority_thread
from spar_desktop.core.library.database import Library
from spar_desktop.core.progress import CancelToken, ProgressCallback
from spar_desktop.core.relations.payload import GraphPayload
from spar_desktop.core.relations.scope import BuildNotConfirmed
from spar_desktop.core.relations.tab_labels import METHOD_LABELS, RelationsNotBuilt

__all__ = ["METHODS", "RelationsNotBuilt", "WholeIndexOffer", "count_changes", "load_graph", "load_neighbourhood",
           "show_graph", "update_graph"]

METHODS = METHOD_LABELS  # the combo's (method, label) pairs, default first


def _preload_hit_testing() -> None:
    import scipy.spatial  # noqa: F401 - the view's hit-testing KD-tree: 0.17 s to import, here rather than on a hover


def load_graph(library: Library, workspace: Optional[str], method: str, progress: ProgressCallback,
               cancel: CancelToken, *, rebuild: bool = False, confirmed: bool = False,
               encoder: Any = None) -> GraphPayload:
    from spar_desktop.core.relations import neighbourhood_view  # scipy, networkx: see the module docstring

    _preload_hit_testing()
    return neighbourhood_view.load_graph(library, workspace, method, progress, cancel, rebuild=rebuild,
                                         confirmed=confirmed, encoder=encoder)


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


def load_neighbourhood(library: Library, workspace: Optional[str], method: str, file_id: int, hops: int,
                       progress: ProgressCallback, cancel: CancelToken, *, base: Optional[GraphPayload] = None,
                       encoder: Any = None) -> tuple[GraphPayload, Any, Optional[str]]:
    """(whole graph, the file's Neighbourhood, the workspace the graph covers): see the core's
    neighbourhood_view.load_neighbourhood for which stored graph is used."""
    from spar_desktop.core.relations import neighbourhood_view  # scipy, networkx: see the module docstring

    _preload_hit_testing()
    return neighbourhood_view.load_neighbourhood(library, workspace, method, file_id, hops, progress, cancel,
                                                 base=base, encoder=encoder)


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

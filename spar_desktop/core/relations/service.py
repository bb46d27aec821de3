"""Relations for the app and the CLI: build (edrmq | tfidf | cooc), related files, the graph.

Every function takes the Library, a scope (a workspace name or the whole index), and progress /
cancel, and returns immutable values, so the UI runs them in its worker pool unchanged. The top
of the package: building is in build.py, reading a stored build in stored_lookup.py; their public names
are importable from here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import numpy as np
from sqlalchemy import select

from spar_desktop.core.library.models import File
from spar_desktop.core.memory_budget import memory_budget
from spar_desktop.core.progress import CancelToken, ProgressCallback, no_progress
from spar_desktop.core.relations.build import (  # noqa: F401  (re-exported)
    BuildReport, build_relations, edrmq_accumulator, read_queries_file,
)
from spar_desktop.core.relations.errors import RelationsError  # noqa: F401  (re-exported)
from spar_desktop.core.relations.estimate import BuildEstimate, estimate_build  # noqa: F401  (re-exported)
from spar_desktop.core.relations.graph import export_graph, undirected
from spar_desktop.core.relations.payload import payload_from_graph
from spar_desktop.core.relations.scope import BuildNotConfirmed  # noqa: F401  (re-exported)
from spar_desktop.core.relations.stored_lookup import (  # noqa: F401  (re-exported)
    COMBINE, is_stored, load_stored, relations_graph, resolve_file,
)
from spar_desktop.core.relations.synthetic import QuestionFn

if TYPE_CHECKING:
    from spar_desktop.core.library.database import Library


@dataclass(frozen=True)
class RelatedFile:
    file_id: int
    path: str
    title: str
    weight: float


def related_files(library: "Library", ref: str, k: int = 10, workspace: Optional[str] = None,
                  method: Optional[str] = None) -> tuple[str, list[RelatedFile]]:
    """(method used, the k files most related to ``ref``), strongest first."""
    fid, path, _ = resolve_file(library, ref)
    stored = load_stored(library, workspace, method)
    try:
        row = stored.ids.index(str(fid))
    except ValueError:
        raise RelationsError(f"{path} was not part of the last '{stored.method}' build: rebuild the relations") from None
    S = undirected(stored.matrix(), COMBINE[stored.method]).tocsr()
    r = S.getrow(row)
    order = np.lexsort((r.indices, -r.data))[:k]
    picks = [(int(stored.ids[r.indices[i]]), float(r.data[i])) for i in order]
    with library.session() as s:
        files = {f.id: f for f in s.scalars(select(File).where(File.id.in_([p[0] for p in picks])))} if picks else {}
    out = [RelatedFile(i, files[i].path, files[i].title or os.path.basename(files[i].path), w)
           for i, w in picks if i in files]
    return stored.method, out


def export_relations(library: "Library", out: str | Path, fmt: Optional[str] = None, *,
                     cancel: Optional[CancelToken] = None, **kwargs: Any) -> Path:
    """The stored graph (with its layout unless ``layout=False``) written as GEXF/GraphML, inside
    a memory budget (MemoryBudgetExceeded instead of an OOM kill)."""
    with memory_budget("The graph export", cancel) as budget:
        return export_graph(relations_graph(library, cancel=budget, **kwargs), out, fmt)


# An update of stored whole-index relations that would take longer than this is offered like a
# build (estimate first, then the user's yes): after a big scan it can cost as much as one.
UPDATE_ASKS_AFTER_S = 120.0


def require_confirmation(library: "Library", workspace: Optional[str], method: str, *, rebuild: bool = False,
                         confirmed: bool = False, encoder: Any = None) -> None:
    """Raise BuildNotConfirmed when loading ``method``'s graph for the whole index (workspace
    None) would start a whole-index build — nothing stored, or ``rebuild`` — or an update
    estimated over UPDATE_ASKS_AFTER_S, without ``confirmed``. A workspace, and short updates of
    relations already stored, pass."""
    if workspace is not None or confirmed:
        return
    if not rebuild and is_stored(library, None, method):
        update = estimate_build(library, None, method, incremental=True, encoder=encoder)
        if update.high <= UPDATE_ASKS_AFTER_S:
            return
        raise BuildNotConfirmed(update, rebuild, update=True)
    raise BuildNotConfirmed(estimate_build(library, None, method, incremental=not rebuild, encoder=encoder), rebuild)


def graph_payload(library: "Library", workspace: Optional[str] = None, method: Optional[str] = None, *,
                  build_missing: bool = True, question_fn: Optional[QuestionFn] = None,
                  progress: ProgressCallback = no_progress, cancel: Optional[CancelToken] = None,
                  **kwargs: Any) -> Any:
    """The GraphPayload the graph view draws, building the method's relations first when none
    are stored (and ``build_missing``). Slow (build, layout): call it in a worker."""
    with memory_budget("The relations graph", cancel) as budget:
        if build_missing and method is not None:
            if not is_stored(library, workspace, method):  # meta.json only: the graph below loads the build
                build_relations(library, workspace=workspace, method=method, question_fn=question_fn,
                                progress=progress, cancel=budget)
        G = relations_graph(library, workspace, method, progress=progress, cancel=budget, **kwargs)
        return payload_from_graph(G, G.graph.get("method", ""), workspace or "whole index")

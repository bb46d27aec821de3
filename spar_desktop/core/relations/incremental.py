"""Keeping stored relations current as files are added, changed and removed, without a rebuild:
``update_relations`` brings a stored build up to date with the settings it was built with.

How an update works and what it approximates is in updates.py (the machinery the builder in
build.py also uses); its names are importable from here as well.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from spar_desktop.core.progress import CancelToken, ProgressCallback, no_progress
from spar_desktop.core.relations import store
from spar_desktop.core.relations.build import BuildReport, build_relations
from spar_desktop.core.relations.edrmq import EdrmqParams
from spar_desktop.core.relations.scope import scope_key, workspace_id
from spar_desktop.core.relations.synthetic import QuestionFn
from spar_desktop.core.relations.updates import (  # noqa: F401  (re-exported)
    DocChanges, diff, fresh_queries, pending_changes, realign, update_edrmq,
)

if TYPE_CHECKING:
    from spar_desktop.core.library.database import Library


def update_relations(library: "Library", workspace: Optional[str] = None, method: str = "edrmq", *,
                     encoder: Any = None, question_fn: Optional[QuestionFn] = None,
                     progress: ProgressCallback = no_progress,
                     cancel: Optional[CancelToken] = None) -> Optional[BuildReport]:
    """Bring a stored build up to date with the scope's files, with the settings it was built
    with: EDR-MQ incrementally, TF-IDF and co-occurrence recomputed. None when nothing is stored
    or no file changed."""
    changes = pending_changes(library, workspace, method)
    if not changes:
        return None
    kwargs: dict[str, Any] = {}
    if method == "edrmq":
        meta = store.load_meta(store.relations_dir(library.settings.data_dir,
                                                   scope_key(workspace_id(library, workspace)), method))
        params = dict(meta.get("params") or {})
        kwargs["retriever"] = params.pop("retriever", "dense")
        fields = set(EdrmqParams.__dataclass_fields__)
        kwargs["params"] = EdrmqParams(**{k: v for k, v in params.items() if k in fields})
        kwargs["synthetic"] = bool((meta.get("stats") or {}).get("synthetic", True))
    return build_relations(library, workspace=workspace, method=method, encoder=encoder, question_fn=question_fn,
                           incremental=True, progress=progress, cancel=cancel, **kwargs)

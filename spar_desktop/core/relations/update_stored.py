"""Keeping stored relations current as files are added, changed and removed, without a rebuild:
``update_relations`` brings a stored build up to date with the settings it was built with.

How an update works and what it approximates is in build_delta.py (the machinery the builder in
build.py also uses).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from spar_desktop.core.progress import CancelToken, ProgressCallback, no_progress
from spar_desktop.core.relations import persist
from spar_desktop.core.relations.build import BuildReport, build_relations
from spar_desktop.core.relations.build_delta import pending_changes
from spar_desktop.core.relations.edrmq import EdrmqParams
from spar_desktop.core.relations.scope import scope_key, workspace_id
from spar_desktop.core.relations.synthetic import QuestionFn

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
        meta = persist.load_meta(persist.relations_dir(library.settings.data_dir,
                                                       scope_key(workspace_id(library, workspace)), method))
        params = dict(meta.get("params") or {})
        kwargs["retriever"] = params.pop("retriever", "dense")
        fields = set(EdrmqParams.__dataclass_fields__)
        kwargs["params"] = EdrmqParams(**{k: v for k, v in params.items() if k in fields})
        kwargs["synthetic"] = bool((meta.get("stats") or {}).get("synthetic", True))
    return build_relations(library, workspace=workspace, method=method, encoder=encoder, question_fn=question_fn,
                           incremental=True, progress=progress, cancel=cancel, **kwargs)

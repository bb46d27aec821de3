"""`spar eval --chunking`: measure the workspace chunkings on your own BEIR-format data.

hierarchical, fixed and semantic are pure chunkers; contextual asks the configured Ollama model
for one context line per passage (a model call each, cached with the vectors per document) and
refuses to run without a model rather than silently measuring plain passages.
"""

from __future__ import annotations

import argparse
import functools
from typing import Any, Optional

from spar_desktop.commands.common import CommandError


def add_chunking_option(p: argparse.ArgumentParser) -> None:
    from spar_desktop.core.workspaces.chunkings import CHUNKINGS

    p.add_argument("--chunking", choices=CHUNKINGS, default=None,
                   help="how documents are cut into passages, as a workspace would (default: hierarchical); "
                   "contextual asks Ollama once per passage")


def chunking_for(args: argparse.Namespace, settings: Any) -> tuple[Any, Optional[Any]]:
    """(ChunkerConfig, chunk_fn or None) for ``--chunking``."""
    from spar_desktop.core.documents.chunking import chunk_document
    from spar_desktop.core.workspaces.chunkings import CONTEXTUAL, build_config, contextual_config

    chunking = getattr(args, "chunking", None)
    if chunking == "semantic" and getattr(args, "method", None) == "bm25":
        raise CommandError("semantic chunking cuts where sentence vectors change: use --method hybrid or dense")
    config = build_config(settings, chunking)
    if chunking != CONTEXTUAL:
        return config, None
    from spar_desktop.core.workspaces.enhance import context_function

    context_fn, why_not = context_function(settings)
    if context_fn is None:
        raise CommandError(f"--chunking contextual needs the language model: {why_not}")
    return contextual_config(config, settings.ollama_model), functools.partial(
        chunk_document, context_fn=_strict(context_fn))


def _strict(context_fn: Any) -> Any:
    """A failure stops the run: contextualize would otherwise fall back to plain passages, and
    those would be cached (and measured) as contextual ones."""
    from spar_desktop.core.documents.contextual import ContextFailed

    def fn(doc: str, chunk: str) -> str:
        try:
            return context_fn(doc, chunk)
        except Exception as exc:  # noqa: BLE001 - re-raised as what the user must hear
            raise ContextFailed(f"the language model failed: {exc}") from exc
    return fn

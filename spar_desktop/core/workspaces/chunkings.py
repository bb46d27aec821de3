"""How a workspace cuts its files into passages: the user's choice, kept on the workspace row.

- hierarchical (default): sections (parents) read as context, small children searched.
- fixed: sliding windows, structure ignored (the baseline).
- semantic: cut where neighbouring sentences change topic (costs one sentence embedding each).
- contextual: hierarchical passages, each later given a one-line context written by the language
  model (Anthropic's "contextual retrieval"; paper 002's best multi-hop configuration). The build
  stays plain, so the workspace is searchable at once; enhance.py adds the contexts afterwards.

Each choice has its own embedding-cache key (``ChunkerConfig.cache_key``); the hierarchical key is
the one every earlier build used, so existing caches stay valid.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Optional

from spar_desktop.core.config import Settings
from spar_desktop.core.documents.types import ChunkerConfig
from spar_desktop.core.embedding.cache import CachedDocument
from spar_desktop.core.llm.prompts import PROMPTS_VERSION
from spar_desktop.core.workspaces.engine import chunker_config
from spar_desktop.core.workspaces.errors import WorkspaceError

HIERARCHICAL, FIXED, SEMANTIC, CONTEXTUAL = "hierarchical", "fixed", "semantic", "contextual"
CHUNKINGS = (HIERARCHICAL, FIXED, SEMANTIC, CONTEXTUAL)
DEFAULT_CHUNKING = HIERARCHICAL

# One line each, for `spar ws create --help` and the app's workspace dialog.
DESCRIPTIONS = {
    HIERARCHICAL: "sections with small searched passages inside (recommended)",
    FIXED: "fixed-size overlapping windows, document structure ignored (a baseline)",
    SEMANTIC: "cut where the topic changes (embeds every sentence once more)",
    CONTEXTUAL: "hierarchical, plus a context line per passage written by the language model "
                "(one model call per passage; needs Ollama)",
}


def chunking_of(value: Optional[str]) -> str:
    """A stored or typed choice → one of CHUNKINGS (None, the value of workspaces built before
    the choice existed, is hierarchical)."""
    if value is None or value == "":
        return DEFAULT_CHUNKING
    chosen = value.strip().lower()
    if chosen not in CHUNKINGS:
        raise WorkspaceError(f"unknown chunking '{value}': {', '.join(CHUNKINGS)}")
    return chosen


def build_config(settings: Optional[Settings], chunking: Optional[str]) -> ChunkerConfig:
    """The config a build embeds with. Contextual builds plain hierarchical passages first
    (enhance.py swaps in the contextual ones), so its plain passages share the default cache."""
    base = chunker_config(settings) if settings is not None else ChunkerConfig()
    method = chunking_of(chunking)
    if method in (FIXED, SEMANTIC):
        return replace(base, method=method)
    return base


def contextual_config(base: ChunkerConfig, llm_model: str) -> ChunkerConfig:
    """The key contextual passages are cached under: the plain config plus the model and the
    prompt version that wrote their contexts (another model or prompt means other passages)."""
    return replace(base, contextual=True, extra=(("llm", llm_model), ("prompts", str(PROMPTS_VERSION))))


def contextual_overlay(cache: Any, docs: dict[str, CachedDocument], settings: Optional[Settings],
                       chunking: Optional[str], config: ChunkerConfig) -> dict[str, CachedDocument]:
    """The build's documents with each one enhancement finished replaced by its contextual
    version (the same chunk ids: only the vectors change). Other chunkings: ``docs`` as given."""
    if chunking_of(chunking) != CONTEXTUAL or settings is None or not docs:
        return docs
    model_id = next(iter(docs.values())).model_id
    key = contextual_config(config, settings.ollama_model).cache_key
    out = dict(docs)
    for h in cache.hashes(key, model_id) & docs.keys():
        enhanced = cache.get(h, key, model_id)
        if enhanced is not None and _ids(enhanced) == _ids(docs[h]):
            out[h] = enhanced
    return out


def _ids(doc: CachedDocument) -> list[str]:
    return [c.chunk_id for c in doc.children]

"""Contextual enhancement of a built workspace, as a resumable background step.

A workspace with chunking 'contextual' is built with plain hierarchical passages (searchable at
once). Enhancement then asks the language model for one context line per passage (Anthropic's
contextual retrieval; paper 002), keeps every reply in the context cache as soon as it comes
(``embedding/contexts.py``), and once all passages of a document have theirs, embeds the document
again (context + passage) into the embedding cache under the contextual key. A build of the
workspace then swaps those documents in (``chunkings.contextual_overlay``), so the collection holds each
document either wholly enhanced or wholly plain. A run killed or cancelled anywhere resumes with
the passages not asked yet; a model that fails stops the run and leaves the plain passages.

Cost: one model call per passage (seconds each on a CPU), which is why it runs after the build.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Callable, Optional

import numpy as np

from spar_desktop.core.config import Settings
from spar_desktop.core.documents.contextual import passage_context, text_from_chunks
from spar_desktop.core.documents.types import ChunkerConfig
from spar_desktop.core.embedding.cache import CachedDocument, is_searchable
from spar_desktop.core.embedding.contexts import ContextCache
from spar_desktop.core.llm.prompts import PROMPTS_VERSION
from spar_desktop.core.progress import CancelToken, Cancelled, Progress, ProgressCallback, check, no_progress
from spar_desktop.core.workspaces.chunkings import CONTEXTUAL, build_config, chunking_of, contextual_config
from spar_desktop.core.workspaces.errors import WorkspaceError

if TYPE_CHECKING:
    from spar_desktop.core.workspaces.manager import Workspaces

log = logging.getLogger(__name__)

ContextFn = Callable[[str, str], str]


@dataclass(frozen=True)
class EnhancementStatus:
    """How far a contextual workspace's enhancement got (passages of its last build)."""

    total: int
    enhanced: int
    llm_model: str

    @property
    def pending(self) -> bool:
        return self.enhanced < self.total

    def describe(self) -> str:
        text = f"contextual: {self.enhanced:,}/{self.total:,} passages enhanced"
        return text + (" (enhancement pending)" if self.pending else "")

    def to_json(self) -> dict:
        return {"total": self.total, "enhanced": self.enhanced, "model": self.llm_model, "pending": self.pending}


@dataclass
class EnhanceReport:
    name: str
    asked: int = 0  # model calls made by this run
    documents: int = 0  # documents whose contextual passages this run embedded
    cancelled: bool = False
    failed: Optional[str] = None  # why the model stopped the run (its passages stay plain)
    swapped: bool = False  # a build put the enhanced documents into the collection
    status: Optional[EnhancementStatus] = None
    seconds: float = 0.0

    def describe(self) -> str:
        done = self.status.describe() if self.status else "contextual enhancement"
        if self.failed:
            return f"'{self.name}': {done}; the language model failed ({self.failed}): plain passages are kept"
        if self.cancelled:
            return f"'{self.name}': {done}; stopped — run it again to resume"
        return f"'{self.name}': {done} ({self.asked} model calls in {self.seconds:.0f} s)"

    def to_json(self) -> dict:
        d = {k: v for k, v in self.__dict__.items() if k != "status"}
        d["enhancement"] = self.status.to_json() if self.status else None
        return d


def context_function(settings: Settings) -> tuple[Optional[ContextFn], Optional[str]]:
    """(context_fn, None) when the settings' Ollama server answers, else (None, why not)."""
    from spar_desktop.core.llm.connection import reachable_ollama

    ollama, why_not = reachable_ollama(settings)
    if ollama is None:
        return None, why_not
    from spar_desktop.core.llm.helpers import LLMHelpers  # deferred: loads ollama/httpx

    return LLMHelpers(ollama).context_fn, None


def _settings(manager: "Workspaces") -> Settings:
    settings = manager.library.settings or getattr(manager.engine, "settings", None)
    if settings is None:
        raise WorkspaceError("contextual enhancement needs the app's settings (the language model to ask)")
    return settings


def enhancement_status(manager: "Workspaces", name: str) -> Optional[EnhancementStatus]:
    """None unless the workspace's chunking is contextual and it was built."""
    info = manager.get(name)
    if chunking_of(info.chunking) != CONTEXTUAL or info.built_at is None or not info.chunker_key:
        return None
    settings = _settings(manager)
    with ContextCache(settings.data_dir, settings.ollama_model, PROMPTS_VERSION) as contexts:
        done = contexts.count(manager.ready_hashes(name), info.chunker_key)
    return EnhancementStatus(info.chunk_count, min(done, info.chunk_count), settings.ollama_model)


def enhance_workspace(manager: "Workspaces", name: str, context_fn: ContextFn,
                      progress: ProgressCallback = no_progress, cancel: Optional[CancelToken] = None,
                      swap: bool = True) -> EnhanceReport:
    """Give every passage of ``name`` its context line, then (``swap``) build it so the search
    uses them. Never raises for the model: a failure ends the run with ``failed`` set."""
    start = time.perf_counter()
    settings = _settings(manager)
    info = manager.get(name)
    if chunking_of(info.chunking) != CONTEXTUAL:
        raise WorkspaceError(f"'{info.name}' uses {chunking_of(info.chunking)} chunking; contextual enhancement is "
                             f"for workspaces created with --chunking contextual")
    if info.built_at is None or info.archived:
        raise WorkspaceError(f"'{info.name}' is {info.status}: build it first (spar ws build \"{info.name}\")")
    base = build_config(settings, CONTEXTUAL)
    if base.cache_key != info.chunker_key:
        raise WorkspaceError(f"the chunking settings changed since '{info.name}' was built: build it again first")
    key = contextual_config(base, settings.ollama_model).cache_key
    eng, report = manager.engine, EnhanceReport(info.name)
    encoder, cache, model_id = eng.encoder, eng.cache, info.model_id
    hashes = manager.ready_hashes(info.name)
    finished = cache.hashes(key, model_id)
    total = info.chunk_count
    with ContextCache(settings.data_dir, settings.ollama_model, PROMPTS_VERSION) as contexts:
        done_n = contexts.count(hashes, info.chunker_key)

        def tell() -> None:
            n = min(done_n, total)
            progress(Progress(n, total, f"contextual: {n:,}/{total:,} passages enhanced"))

        tell()
        try:
            for h in hashes:
                check(cancel)
                if h in finished:
                    continue
                plain = cache.get(h, info.chunker_key, model_id)
                if plain is None:  # the cache lost it: the next build embeds it again
                    continue
                have = contexts.get(h, info.chunker_key)
                text = text_from_chunks(plain.chunks)
                for c in plain.children:
                    if c.chunk_id in have:
                        continue
                    check(cancel)
                    have[c.chunk_id] = passage_context(text, plain.title, c, context_fn)
                    contexts.put(h, info.chunker_key, c.chunk_id, have[c.chunk_id])
                    report.asked += 1
                    done_n += 1
                    tell()
                cache.put(_enhanced(plain, have, key, encoder))
                report.documents += 1
        except Cancelled:
            report.cancelled = True
        except Exception as exc:  # noqa: BLE001 - the model is optional: plain passages stay
            report.failed = str(exc) or type(exc).__name__
            log.warning("contextual enhancement of '%s' stopped: %s", info.name, report.failed)
    if swap and report.documents:
        progress(Progress(0, None, "putting the enhanced passages into the workspace"))
        manager.build(info.name, progress)
        report.swapped = True
    report.status = enhancement_status(manager, info.name)
    report.seconds = time.perf_counter() - start
    return report


def _enhanced(plain: CachedDocument, contexts: dict[str, str], key: str, encoder) -> CachedDocument:
    """``plain`` with its contexts, its passages embedded again as context + passage."""
    chunks = tuple(replace(c, context=contexts.get(c.chunk_id) or None) if is_searchable(c) else c
                   for c in plain.chunks)
    texts = [c.embed_text for c in chunks if is_searchable(c)]
    vectors = np.asarray(encoder.encode(texts), dtype=np.float32).reshape(len(texts), -1) if texts else plain.vectors
    return replace(plain, chunker_key=key, chunks=chunks, vectors=vectors)

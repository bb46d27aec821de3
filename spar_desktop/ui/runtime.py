"""Interpreter settings that keep the UI thread responsive while workers run Python.

Measured with benchmarks/ui_stall.py (10k-file scan + refresh): the long event-loop stalls
(100-300 ms) were full (generation-2) garbage collections. They run on whichever thread
triggers them, hold the GIL, and their cost grows with every long-lived object (Qt wrappers,
SQLAlchemy metadata, the scanner's per-run maps). Freezing the startup heap takes those
objects out of every later collection; a larger young-generation threshold lets the many
short-lived rows of a scan die before promotion, so full collections become rare and short.
(A shorter GIL switch interval was tried too and measured no better, so it is left alone.)

The other long stalls were imports: loading the embedding stack (torch, transformers,
sentence-transformers, chromadb) on a worker thread holds the GIL for long C-level stretches
(loading libtorch, big modules: 0.2-1 s each, measured with a heartbeat on a busy 2-core machine),
so the window froze when the first preview or build loaded the model. ``preload_engine`` imports
them on the UI thread before the window is shown, behind the splash screen; what is left (the
model's weights, 0.15-0.3 s gaps there) happens once per session. Encoding uses all but one core
(``torch.set_num_threads``): with every core busy in BERT's matrix products the UI thread waited
for a CPU (0.4-0.8 s gaps during builds there; with one core left, the build's p99 fell from 43 to
16-19 ms and the build itself got faster, as the cores were oversubscribed).

The last long stalls were Chroma's: its Rust core holds the GIL for whole calls (35-120 ms an
upsert batch, 67-105 ms window stalls in a 400-file build). ``app_settings`` runs Chroma in a helper
process (core/retrieval/chroma_host.py), and chromadb is then not imported here at all.
"""

from __future__ import annotations

import gc
import importlib
import logging
import os
import sys
from dataclasses import replace
from typing import Callable

from spar_desktop.core.config import Settings, env_flag

log = logging.getLogger(__name__)
CHROMA_MODULES = ("chromadb", "chromadb.api.rust")  # not when the helper process hosts Chroma
ENGINE_MODULES = (
    "torch", "transformers", "sentence_transformers",
    # Our own build path imports lazily (so the CLI starts fast); tokens.py alone scans the
    # Unicode table at import.
    "spar_desktop.core.documents.extract", "spar_desktop.core.documents.extract_office",
    "spar_desktop.core.documents.extract_pdf", "spar_desktop.core.documents.extract_structured",
    "spar_desktop.core.documents.extract_text", "spar_desktop.core.documents.chunking",
    "spar_desktop.core.embedding.pipeline", "spar_desktop.core.retrieval.searcher",
    "spar_desktop.core.workspaces.builder",
)

GC_THRESHOLDS = (20_000, 20, 20)  # default (700, 10, 10)


def tune_for_ui() -> None:
    """Call once after start-up imports and the main window exist."""
    gc.set_threshold(*GC_THRESHOLDS)
    gc.collect()
    gc.freeze()  # start-up objects live for the whole session: never scan them again


def freeze_long_lived() -> None:
    """Call once the embedding model has loaded: its objects (hundreds of thousands) live for the
    session too. Left in the collected generations, the collections a build's many short-lived
    objects trigger scanned them all, holding the GIL: 185 ms window stalls during a 400-file
    build, 32 ms once frozen (measured with a faulthandler probe)."""
    gc.freeze()



def app_settings(settings: Settings) -> Settings:
    """The desktop app's settings: Chroma in a helper process (core/retrieval/chroma_host.py),
    unless SPAR_CHROMA_PROCESS=0 keeps it in this process."""
    return replace(settings, chroma_process=env_flag(os.environ.get("SPAR_CHROMA_PROCESS", "1")))


def preload_engine(settings: Settings, step: Callable[[str], None] = lambda _name: None) -> list[str]:
    """Import the embedding libraries now (call before the window is shown), and chromadb too
    unless the helper process hosts Chroma (a Chroma server URL needs chromadb's client here);
    ``step(name)`` runs before each import (the splash shows it). Returns what was imported."""
    chromadb_here = bool(settings.chroma_url) or not settings.chroma_process
    loaded = []
    for name in ENGINE_MODULES + (CHROMA_MODULES if chromadb_here else ()):
        if name in sys.modules:
            continue
        step(name)
        try:
            importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001 - the engine reports a missing library when it is used
            log.info("not preloaded: %s (%s)", name, exc)
            continue
        loaded.append(name)
    _leave_a_core_for_the_ui()
    return loaded


def _leave_a_core_for_the_ui() -> None:
    torch = sys.modules.get("torch")
    cores = os.cpu_count() or 1
    if torch is not None and cores > 1 and "OMP_NUM_THREADS" not in os.environ:  # the user's choice wins
        torch.set_num_threads(max(1, min(torch.get_num_threads(), cores - 1)))

"""Interpreter settings that keep the UI thread responsive while workers run Python.

Measured with benchmarks/ui_stall.py (10k-file scan + refresh): the long event-loop stalls
(100-300 ms) were full (generation-2) garbage collections. They run on whichever thread
triggers them, hold the GIL, and their cost grows with every long-lived object (Qt wrappers,
SQLAlchemy metadata, the scanner's per-run maps). Freezing the startup heap takes those
objects out of every later collection; a larger young-generation threshold lets the many
short-lived rows of a scan die before promotion, so full collections become rare and short.
(A shorter GIL switch interval was tried too and measured no better, so it is left alone.)

The other long stalls were imports: loading torch and sentence-transformers on a worker thread held
the GIL for long C-level stretches (0.2-1 s each on a busy 2-core machine), so the app used to import
them behind a splash screen. The encoder now runs on ONNX Runtime (core/embedding), torch is not
imported at all, and what remains (ONNX Runtime, tokenizers, our extractors and chunkers) loads on a
worker after the window is shown (``preload_in_background``), followed by the encoder itself so the
first search or build does not wait for it. Encoding leaves one core to the UI thread: with every
core busy in BERT's matrix products the UI thread waited for a CPU (0.4-0.8 s gaps during builds
with torch; with one core left, a build's p99 gap fell from 43 to 16-19 ms).

The last long stalls were Chroma's: its Rust core holds the GIL for whole calls (35-120 ms an
upsert batch, 67-105 ms window stalls in a 400-file build). The app's settings
(``load_settings(app=True)``) run Chroma in a helper process (core/retrieval/chroma_host.py), and chromadb is then not imported here at all.
"""

from __future__ import annotations

import gc
import importlib
import logging
import os
import sys
from typing import Callable

from spar_desktop.core.config import Settings

log = logging.getLogger(__name__)
CHROMA_MODULES = ("chromadb", "chromadb.api.rust")  # not when the helper process hosts Chroma
ENGINE_MODULES = (
    "onnxruntime", "tokenizers",
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



def preload_engine(settings: Settings, step: Callable[[str], None] = lambda _name: None) -> list[str]:
    """Import the search engine's libraries now, and chromadb too unless the helper process hosts
    Chroma (a Chroma server URL needs chromadb's client here); ``step(name)`` runs before each
    import. Returns what was imported."""
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
    return loaded


def encoder_threads() -> int:
    """Threads for bulk encoding in the app: all cores but one (the UI thread's), unless the user
    set OMP_NUM_THREADS (OpenMP's own variable, which ONNX Runtime honours too: not a SPAR setting,
    so it is read here rather than in load_settings)."""
    if "OMP_NUM_THREADS" in os.environ:
        try:
            return max(1, int(os.environ["OMP_NUM_THREADS"]))
        except ValueError:
            pass
    return max(1, (os.cpu_count() or 1) - 1)


def preload_in_background(runner, settings: Settings) -> None:
    """After the window is shown: import the engine, then load the encoder, on a worker (hidden
    task, cancelled on quit). The first preview, search or build then finds them ready."""
    from functools import partial

    runner.run(partial(_preload_op, settings), title="Loading the search engine", key="engine-preload",
               visible=False)


def _preload_op(settings: Settings, progress, cancel) -> list[str]:
    from spar_desktop.core.progress import Progress, check

    # A data dir's first start builds the encoder's graph (onnx's protobuf parse and ORT's int8
    # quantiser held the GIL for 0.7-0.8 s at a time in this thread: 0.9-1.4 s window stalls while
    # the user scrolled, benchmarks/app_at_scale.py --early --probe). In a second process (as a
    # request's vocabulary sync does) it holds only its own, at nice 10 (no lock of ours to hold:
    # it leaves the CPU to the window); the encoder waits for it.
    _prepare_graph(settings)
    loaded = preload_engine(settings, lambda name: progress(Progress(0, None, f"loading {name}")))
    check(cancel)
    from spar_desktop.core.workspaces.engine import encoder_for

    encoder_for(settings).set_threads(encoder_threads())  # bulk encoding leaves a core to the UI
    freeze_long_lived()
    log.info("search engine ready (%s)", ", ".join(loaded) or "already loaded")
    return loaded


def _prepare_graph(settings: Settings) -> None:
    try:
        from spar_desktop.core.embedding.encoder import prepare_graph

        prepare_graph(runtime=settings.embed_runtime, cache_dir=settings.layout.onnx_cache, nice=10)
    except Exception as exc:  # noqa: BLE001 - the encoder builds its graph in line then
        log.info("encoder graph not prepared in a second process (%s)", exc)

"""The encoder's ONNX graph built in a second process while this one does other work.

A first request on a new data dir builds the graph (at 1M files: 2.7 s for fp32, 3.8 s more to
quantise it to int8, ORT's quantiser looping over 18,432 weight channels in Python) and, before it
can encode anything, makes the tag vocabulary's words and texts (~6 s of Python at 1M). Both hold
the GIL, so a thread would not overlap them; a spawned process does, on the second core. The
encoder waits for the build before it opens the graph (``wait``); a build that failed or was
never started is made in line as before (``onnx_encoder.ensure_graph``), so the result is the same
graph either way. The frozen desktop bundle builds in line: its interpreter has no spawn path we test.
"""

from __future__ import annotations

import logging
import multiprocessing
import sys
import threading
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path

from spar_desktop.core.embedding.onnx_encoder import ensure_graph, graph_is_built

log = logging.getLogger(__name__)

_PENDING: dict[tuple[str, str], Future] = {}
_LOCK = threading.Lock()


def start(model_dir: Path, cache_dir: Path, variant: str) -> bool:
    """Start building ``variant``'s graph in a spawned process unless it is built, being built, or
    this is the frozen bundle. True when a build is under way."""
    if getattr(sys, "frozen", False) or graph_is_built(model_dir, cache_dir, variant):
        return False
    key = (str(cache_dir), variant)
    with _LOCK:
        if key in _PENDING:
            return True
        try:
            pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
            _PENDING[key] = pool.submit(_build, model_dir, cache_dir, variant)
            pool.shutdown(wait=False)  # the worker exits once its one build is done
        except (OSError, RuntimeError) as exc:
            log.info("cannot build the encoder graph in a second process (%s): it is built in line", exc)
            return False
    return True


def _build(model_dir: Path, cache_dir: Path, variant: str) -> None:
    """In the second process: what the encoder would build in line."""
    ensure_graph(model_dir, cache_dir, variant)


def wait(cache_dir: Path, variant: str) -> None:
    """Wait for a build ``start`` began for ``variant`` in ``cache_dir``, if any. A failed build is
    logged and left to the caller, which builds in line."""
    with _LOCK:
        pending = _PENDING.pop((str(cache_dir), variant), None)
    if pending is None:
        return
    try:
        pending.result()
    except Exception as exc:  # noqa: BLE001 - any failure there means "build it here"
        log.info("the encoder graph's background build failed (%s): building it in line", exc)

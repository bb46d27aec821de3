"""The encoder's ONNX graph built in a second process while this one does other work.

A first request on a new data dir builds the graph (at 1M files: 2.7 s for fp32, 3.8 s more to
quantise it to int8, ORT's quantiser looping over 18,432 weight channels in Python) and, before it
can encode anything, makes the tag vocabulary's words and texts (~6 s of Python at 1M). Both hold
the GIL, so a thread would not overlap them; a spawned process does, on the second core. The
encoder waits for the build before it opens the graph (``wait``); a build that failed or was
never started is made in line as before (``onnx_encoder.ensure_graph``), so the result is the same
graph either way. The second process is this interpreter running this module (``python -c``), not a
multiprocessing child: those import the parent's ``__main__`` again, which ran a whole script twice
when it had no ``__main__`` guard. The frozen desktop bundle has no such interpreter: it builds in line.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import IO

from spar_desktop.core.embedding.onnx_encoder import ensure_graph, graph_is_built

log = logging.getLogger(__name__)

_PENDING: dict[tuple[str, str], tuple[subprocess.Popen, IO[bytes]]] = {}
_CHILD = "import sys; from spar_desktop.core.embedding.graph_prebuild import _build_from_argv; _build_from_argv(sys.argv[1])"
_LOCK = threading.Lock()


def start(model_dir: Path, cache_dir: Path, variant: str, nice: int = 0) -> bool:
    """Start building ``variant``'s graph in a second process unless it is built, being built, or
    this is the frozen bundle. True when a build is under way. ``nice``: the child's niceness (the
    app's preload: a process of its own holds no lock of ours, so it can leave the window the CPU)."""
    if getattr(sys, "frozen", False) or graph_is_built(model_dir, cache_dir, variant):
        return False
    key = (str(cache_dir), variant)
    with _LOCK:
        if key in _PENDING:
            return True
        try:
            args = json.dumps([str(model_dir), str(cache_dir), variant, nice])
            err = tempfile.TemporaryFile()  # a file, not a pipe: a child that logs much never blocks on it
            # The child imports the spar_desktop this process runs (a checkout, a PYTHONPATH).
            env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
            child = subprocess.Popen([sys.executable, "-c", _CHILD, args], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=err, env=env)
            _PENDING[key] = (child, err)
        except OSError as exc:
            log.info("cannot build the encoder graph in a second process (%s): it is built in line", exc)
            return False
    return True


@atexit.register
def _close_pending() -> None:
    """A build this process never waited for goes on without it (its graph is kept for the next
    process); only the parent's handle on its error output is closed."""
    with _LOCK:
        for _child, err in _PENDING.values():
            err.close()


def _build_from_argv(args: str) -> None:
    """In the second process: what the encoder would build in line."""
    model_dir, cache_dir, variant, *rest = json.loads(args)
    if rest and rest[0] and hasattr(os, "nice"):
        os.nice(int(rest[0]))
    ensure_graph(Path(model_dir), Path(cache_dir), variant)


def wait(cache_dir: Path, variant: str) -> None:
    """Wait for a build ``start`` began for ``variant`` in ``cache_dir``, if any. A failed build is
    logged and left to the caller, which builds in line."""
    with _LOCK:
        pending = _PENDING.pop((str(cache_dir), variant), None)
    if pending is None:
        return
    child, err = pending
    with err:
        if child.wait() != 0:
            err.seek(0)
            last = err.read().decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit {child.returncode}"]
            log.info("the encoder graph's background build failed (%s): building it in line", last[0])

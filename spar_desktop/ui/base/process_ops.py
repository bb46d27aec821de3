"""Run a CPU-heavy op in a child process, behind the ordinary op signature.

A scan is pure Python for minutes on a big share. Run on a pool thread it competes with the
UI thread for the GIL (measured: 30-40 ms p99 event-loop gaps, worse under load); in a child
process it cannot. ``in_subprocess(target, *args)`` returns an op for TaskRunner.run(): the
pool thread only waits on a pipe (GIL released), forwards Progress values, sets the child's
cancel event when the CancelToken fires, and returns the child's (picklable, frozen) result.

Children never fork the UI process (forking a process that runs Qt threads is unsafe): on
POSIX they fork from a "forkserver" — a clean interpreter started once that has already
imported this module and SQLAlchemy, so a child starts in milliseconds instead of the seconds
a fresh "spawn" spends on imports; elsewhere they are spawned. Targets are module-level
functions ``target(*args, progress, cancel)``.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import time
import traceback
from functools import partial
from typing import Any, Callable, Optional

from spar_desktop.core.library.database import Library
from spar_desktop.core.library.overview import scan_paths
from spar_desktop.core.progress import Cancelled, CancelToken, Progress, ProgressCallback

POLL_S = 0.05
CHILD_PROGRESS_INTERVAL_S = 0.05


_CONTEXT: Optional[multiprocessing.context.BaseContext] = None


def _context() -> multiprocessing.context.BaseContext:
    global _CONTEXT
    if _CONTEXT is None:
        if "forkserver" in multiprocessing.get_all_start_methods():
            ctx = multiprocessing.get_context("forkserver")
            # Warm the server with what every child needs (not __main__, which may be a REPL).
            ctx.set_forkserver_preload(["spar_desktop.ui.base.process_ops", "spar_desktop.core.library.overview"])
            _CONTEXT = ctx
        else:
            _CONTEXT = multiprocessing.get_context("spawn")
    return _CONTEXT


def warm_up(progress: ProgressCallback, cancel: CancelToken) -> None:
    """Start the fork server ahead of the first scan (an op: run it in the background at start-up)."""
    ctx = _context()
    if ctx.get_start_method() == "forkserver" and subprocesses_usable():
        from multiprocessing import forkserver

        forkserver.ensure_running()


def subprocesses_usable() -> bool:
    """Children re-import the main module; a REPL, ``python -c`` or stdin main cannot be."""
    main = sys.modules.get("__main__")
    spec_name = getattr(getattr(main, "__spec__", None), "name", None)
    path = getattr(main, "__file__", None)
    return bool(spec_name) or (path is not None and os.path.isfile(path))


class HelperProcessError(RuntimeError):
    """The op raised in the child; the message is the child's, the traceback is attached."""

    def __init__(self, message: str, child_traceback: str) -> None:
        super().__init__(message)
        self.child_traceback = child_traceback


class _EventToken(CancelToken):
    """A CancelToken backed by a multiprocessing Event (same set/is_set interface)."""

    def __init__(self, event) -> None:  # noqa: D107 - the parent's token sets this event
        self._event = event


def _child_main(target: Callable, args: tuple, conn, cancel_event) -> None:
    last = [0.0]

    def progress(p: Progress) -> None:
        now = time.monotonic()
        if now - last[0] >= CHILD_PROGRESS_INTERVAL_S:
            last[0] = now
            conn.send(("progress", p))

    try:
        result = target(*args, progress, _EventToken(cancel_event))
        conn.send(("result", result))
    except Cancelled:
        conn.send(("cancelled", None))
    except BaseException as exc:  # noqa: BLE001 - everything goes back to the UI as a failure
        conn.send(("error", (f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__,
                             traceback.format_exc())))
    finally:
        conn.close()


def in_subprocess(target: Callable, *args: Any) -> Callable[[ProgressCallback, CancelToken], Any]:
    def op(progress: ProgressCallback, cancel: CancelToken) -> Any:
        ctx = _context()
        receiver, sender = ctx.Pipe(duplex=False)
        cancel_event = ctx.Event()
        proc = ctx.Process(target=_child_main, args=(target, args, sender, cancel_event), daemon=True,
                           name=f"spar-{getattr(target, '__name__', 'op')}")
        proc.start()
        sender.close()  # only the child writes; EOF then means the child is gone
        try:
            while True:
                if cancel.cancelled:
                    cancel_event.set()
                if not receiver.poll(POLL_S):
                    if not proc.is_alive() and not receiver.poll(0):
                        raise RuntimeError(f"the worker process stopped unexpectedly (exit code {proc.exitcode})")
                    continue
                try:
                    kind, payload = receiver.recv()
                except EOFError:
                    raise RuntimeError(f"the worker process stopped unexpectedly (exit code {proc.exitcode})") from None
                if kind == "progress":
                    progress(payload)
                elif kind == "result":
                    return payload
                elif kind == "cancelled":
                    raise Cancelled()
                else:
                    message, child_tb = payload
                    raise HelperProcessError(message, child_tb)
        finally:
            receiver.close()
            proc.join(timeout=10)
            if proc.is_alive():  # never leave a scanner running behind a closed window
                proc.terminate()
                proc.join(timeout=5)

    return op


# ---------------------------------------------------------------------------- child targets
def scan_in_child(settings, paths: tuple[str, ...], progress: ProgressCallback, cancel: CancelToken):
    """Open the same index in the child and scan there (SQLite WAL / PostgreSQL handle the
    concurrent readers in the UI process)."""
    library = Library.open(settings)
    try:
        return scan_paths(library, paths, progress, cancel)
    finally:
        library.close()


def scan_op(library: Library, paths: tuple[str, ...]) -> Callable[[ProgressCallback, CancelToken], Any]:
    """The scan op the UI runs: in a child process when the library can be reopened there."""
    settings = library.settings
    url = settings.resolved_database_url if settings is not None else ""
    if settings is None or url in ("sqlite://", "sqlite:///:memory:") or not subprocesses_usable():
        return partial(scan_paths, library, paths)  # e.g. an in-memory index only this process has
    return in_subprocess(scan_in_child, settings, tuple(paths))

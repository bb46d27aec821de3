"""`spar ws enhance NAME` and the chunking choice of `spar ws create`: contextual passages.

A workspace created with ``--chunking contextual`` is built with plain passages first (searchable
at once); its passages then get an LLM-written context line each (one model call per passage)
here, or right after ``spar ws build`` when Ollama answers. Ctrl-C stops between two passages;
every reply is kept, and the next run asks only for the rest.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys

from spar_desktop.commands.common import CommandError, StderrProgress
from spar_desktop.commands.terminal import printable


def add_chunking_option(p: argparse.ArgumentParser) -> None:
    from spar_desktop.core.workspaces.chunkings import CHUNKINGS, DEFAULT_CHUNKING, DESCRIPTIONS

    p.add_argument("--chunking", choices=CHUNKINGS, default=DEFAULT_CHUNKING,
                   help="how files are cut into passages: " + "; ".join(f"{c}: {DESCRIPTIONS[c]}" for c in CHUNKINGS))


def register(wsub: argparse._SubParsersAction) -> None:
    e = wsub.add_parser("enhance", help="contextual workspaces: give each passage a context line from the "
                                        "language model (resumable; one model call per passage)")
    e.add_argument("name")
    e.add_argument("--json", action="store_true")
    e.set_defaults(func=run_enhance)


def run_enhance(args) -> int:
    from spar_desktop.commands.ws_cmd import _manager
    from spar_desktop.core.workspaces.errors import WorkspaceError

    mgr = _manager(args)
    try:
        report = enhance(mgr, args.name, quiet=getattr(args, "json", False))
    except WorkspaceError as exc:
        raise CommandError(printable(exc)) from exc
    if report is None:
        return 1
    if getattr(args, "json", False):
        print(json.dumps(report.to_json(), indent=1, default=str))
    else:
        print(printable(report.describe()))
    return 130 if report.cancelled else (1 if report.failed else 0)


def enhance(mgr, name: str, quiet: bool = False):
    """Run the enhancement with a progress line and Ctrl-C as a clean stop; None (after saying
    why) when no language model answers."""
    from spar_desktop.core.progress import CancelToken
    from spar_desktop.core.workspaces.enhance import context_function, enhance_workspace

    context_fn, why_not = context_function(mgr.library.settings)
    if context_fn is None:
        print(printable(f"'{name}': contextual enhancement pending: {why_not}. Plain passages are searched "
                        f"meanwhile; run `spar ws enhance \"{name}\"` once Ollama runs"), file=sys.stderr)
        return None
    cancel = CancelToken()
    previous = signal.signal(signal.SIGINT, lambda *_: cancel.cancel())
    progress = StderrProgress("enhancing")
    try:
        return enhance_workspace(mgr, name, context_fn, progress, cancel)
    finally:
        signal.signal(signal.SIGINT, previous)
        progress.finish()


def after_build(mgr, name: str, as_json: bool) -> None:
    """After `spar ws build`: a contextual workspace is enhanced now when Ollama answers (else
    the user hears it is pending)."""
    info = mgr.find(name)
    if info is None or info.chunking != "contextual" or not info.active:
        return
    report = enhance(mgr, info.name)
    if report is not None:
        print(printable(report.describe()), file=sys.stderr if as_json else sys.stdout)


def status_line(mgr, name: str):
    """The enhancement status of a contextual workspace (None for the other chunkings)."""
    from spar_desktop.core.workspaces.enhance import enhancement_status

    return enhancement_status(mgr, name)

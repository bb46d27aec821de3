"""`spar index PATH...`: add folders to the index and scan them (incrementally)."""

from __future__ import annotations

import argparse
import signal
import sys

from spar_desktop.commands.common import CommandError, StderrProgress, open_library
from spar_desktop.commands.terminal import printable
from spar_desktop.core.progress import CancelToken

MAX_PROBLEM_LINES = 50


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("index", help="add folders to the index and scan them (re-scans only what changed)")
    p.add_argument("paths", nargs="*", help="folders to add/scan, or single files to index alone "
                   "(default: re-scan every added folder)")
    p.add_argument("--ignore", action="append", default=[], metavar="GLOB",
                   help="extra ignore pattern (name glob, or a path glob with '/'); repeatable")
    p.add_argument("--quiet", action="store_true", help="no progress line")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from spar_desktop.core.library.scanner import Scanner

    from spar_desktop.core.library.sample import is_sample_corpus

    samples = [p for p in args.paths if is_sample_corpus(p)]
    if samples:
        # The sample's documents are dated by its _dates.json and tagged by its _taxonomy: indexed
        # as a plain folder they would be dated at checkout time and carry no taxonomy, and the
        # metadata files would be indexed too. Same import as `spar sample` and the app.
        from spar_desktop.commands.sample_cmd import import_and_report

        if len(args.paths) > 1:
            raise CommandError("index the sample corpus on its own (spar sample), then the other folders")
        print(f"{samples[0]} is the sample corpus: importing it as `spar sample` and the app do")
        return import_and_report(args, samples[0])
    library = open_library(args)
    scanner = Scanner(library)
    cancel = CancelToken()
    # Ctrl-C stops between batches: what was committed stays, a re-run resumes.
    previous = signal.signal(signal.SIGINT, lambda *_: cancel.cancel())
    progress = StderrProgress("scanning") if not args.quiet else (lambda p: None)
    try:
        if args.paths:
            reports = scanner.scan(args.paths, args.ignore, progress, cancel)
        else:
            reports = scanner.rescan_all(progress, cancel)
            if not reports:
                raise CommandError("no folders added yet: spar index FOLDER")
    finally:
        signal.signal(signal.SIGINT, previous)
        if isinstance(progress, StderrProgress):
            progress.finish()
    failed = False
    for r in reports:
        inside = f", {r.children} inside archives and mails" if r.children else ""
        print(printable(f"{r.root}: {r.new} new, {r.changed} changed, {r.unchanged} unchanged, "
                        f"{r.missing} missing{inside}, {len(r.problems)} problems ({r.seconds:.1f}s)"
                        + (" — CANCELLED, run again to resume" if r.cancelled else "")))
        if r.note:
            print(f"  note: {printable(r.note)}")
        for path, message in r.problems[:MAX_PROBLEM_LINES]:
            # A file name or an extractor's message may hold ESC/CR/newline: shown, not acted on.
            print(printable(f"  ! {path}: {message}"))
        if len(r.problems) > MAX_PROBLEM_LINES:
            print(f"  ... and {len(r.problems) - MAX_PROBLEM_LINES} more (spar files --status error)")
        if r.seen == 0 and r.problems and not r.missing:
            failed = True
    if not cancel.cancelled and any(r.new or r.changed or r.missing for r in reports):
        _print_stale_workspaces(library)
    sys.stdout.flush()
    if cancel.cancelled:
        return 130
    return 1 if failed else 0


def _print_stale_workspaces(library) -> None:
    """Built workspaces this scan left behind: say so, with the command that updates them. An
    index without a built workspace (every first scan) is told by one query, without importing the
    workspaces (0.27 s of a scan's command)."""
    from sqlalchemy import select

    from spar_desktop.core.workspaces.models import Workspace

    with library.session() as s:
        if s.scalar(select(Workspace.id).where(Workspace.built_at.is_not(None)).limit(1)) is None:
            return
    from spar_desktop.core.workspaces.manager import Workspaces

    for name, fresh in Workspaces(library).out_of_date():
        print(printable(f"  workspace '{name}' is {fresh.describe()}: spar ws build \"{name}\""))

"""`spar sample`: import the bundled sample corpus exactly as the app's first run does — a copy in
the data dir with its document dates restored, its taxonomy and DMS tag assignments imported."""

from __future__ import annotations

import argparse
import signal

from spar_desktop.commands.common import CommandError, StderrProgress, open_library


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("sample", help="import the bundled sample corpus (copy, document dates, taxonomy), as the app does")
    p.add_argument("--quiet", action="store_true", help="no progress line")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from spar_desktop.core.library.sample import sample_corpus_dir

    source = sample_corpus_dir()
    if source is None:
        raise CommandError("the sample corpus is not installed (resources/sample_corpus; or set SPAR_RESOURCES)")
    return import_and_report(args, source)


def import_and_report(args: argparse.Namespace, source) -> int:
    """Run the sample import from ``source`` and print what it did (also used by `spar index`)."""
    from spar_desktop.core.library.sample import import_sample
    from spar_desktop.core.progress import CancelToken, Cancelled

    library = open_library(args)
    cancel = CancelToken()
    previous = signal.signal(signal.SIGINT, lambda *_: cancel.cancel())
    progress = StderrProgress("sample") if not getattr(args, "quiet", False) else (lambda p: None)
    try:
        result = import_sample(library, source, progress=progress, cancel=cancel)
    except Cancelled:
        print("sample import cancelled; run it again to finish")
        return 130
    finally:
        signal.signal(signal.SIGINT, previous)
        if isinstance(progress, StderrProgress):
            progress.finish()
        library.close()
    for line in result.lines():
        print(line)
    if result.cancelled:
        return 130
    print('next: spar tags, then e.g. spar ws create falcon --prompt "Everything about Project Falcon" --build '
          f"(more requests and questions in {source}/_README.md)")
    return 0

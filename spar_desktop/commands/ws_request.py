"""`spar ws create`'s request understanding (issue 32): the request goes to the settings' Ollama
too when it answers (bounded by ``request_llm_timeout_s``; ``--rules-only`` or the setting
``request_llm`` off: the rules alone), and ``--drop-constraint KIND:VALUE`` takes out a constraint
the rules or the model read (``spar ws explain`` shows where each came from)."""

from __future__ import annotations

import argparse

from spar_desktop.commands.common import CommandError
from spar_desktop.commands.terminal import printable


def add_request_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--drop-constraint", action="append", default=[], metavar="KIND:VALUE",
                   help="leave out a constraint read from the request (from the rules or the model): "
                        "keyword:PHRASE, dates (or dates:SINCE..UNTIL), type:FORMAT, author:NAME, folder:NAME")
    p.add_argument("--rules-only", action="store_true",
                   help="read the request with the rules alone, even when Ollama answers")


def read_request(mgr, args):
    """The request as the rules and (when it answers in time) the model read it; None without one."""
    from spar_desktop.core.workspaces.request_merge import read_request as read

    if not args.prompt.strip():
        return None
    return read(args.prompt, mgr.library.settings, use_model=not args.rules_only)


def apply_drops(flt, args):
    from spar_desktop.core.workspaces.request_sources import drop_constraint

    for spec in args.drop_constraint:
        try:
            flt = drop_constraint(flt, spec)
        except ValueError as exc:
            raise CommandError(printable(str(exc))) from exc
    return flt

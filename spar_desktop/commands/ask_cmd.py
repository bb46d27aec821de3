"""`spar ask WORKSPACE "question"`: a grounded answer streamed to the terminal, then its sources.

Without a reachable Ollama server the answer is retrieval-only (the best passages, grouped by
file) and a banner on stderr, printed before them, says where Ollama was looked for and how to
start one. In a terminal, Markdown emphasis is rendered (terminal.py); piped output keeps the
Markdown. Ctrl-C stops the generation (the partial answer is kept in the thread).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys

from spar_desktop.commands.common import CommandError, settings_from_args
from spar_desktop.commands.terminal import printable, terminal_writer


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("ask", help="ask a question about a workspace's files (streamed, with citations)")
    p.add_argument("workspace")
    p.add_argument("question")
    p.add_argument("--thread", help="continue thread T (id or title); an unknown title starts a thread with it")
    p.add_argument("--model", help="Ollama model (default: from settings; the server is OLLAMA_HOST)")
    p.add_argument("--k", type=int, default=8, help="passages to ground the answer on (default 8)")
    p.add_argument("--timeout", type=float, default=None,
                   help="give up after this many seconds without output from the model (default 60)")
    p.add_argument("--json", action="store_true", help="print the whole result as JSON at the end (no streaming)")
    p.set_defaults(func=run_ask)


def _sources(result) -> list[str]:
    by_n = {p.n: p for p in result.passages}
    lines = []
    for c in result.citations:
        p = by_n.get(c.n)
        if not c.valid or p is None:
            lines.append(f"[{c.n}] ! cites no passage (only 1-{len(result.passages)} were given)")
        else:
            gone = "  [file no longer on disk]" if p.file_missing else ""
            lines.append(f"[{c.n}] {printable(p.name)}, {p.pages} — {printable(p.path)}{gone}")
    return lines


def _thread_for(manager, store, args):
    """The thread to answer in (resumed, or started); refuses a workspace that cannot answer
    before a thread is started for nothing (the session would store the error)."""
    from spar_desktop.core.chat.threads import ThreadError
    from spar_desktop.core.workspaces.errors import WorkspaceError
    from spar_desktop.core.workspaces.models import WorkspaceStatus

    try:
        ws = manager.get(args.workspace)
        if ws.status == WorkspaceStatus.ARCHIVED:
            raise CommandError(f"'{ws.name}' is archived: reactivate it first (spar ws reactivate \"{ws.name}\")")
        if ws.status in (WorkspaceStatus.DRAFT, WorkspaceStatus.ERROR) or ws.built_at is None:
            raise CommandError(f"'{ws.name}' is not built yet: spar ws build \"{ws.name}\"")
        thread = store.resolve(ws.name, args.thread) if args.thread else None
        if args.thread and thread is None:
            if args.thread.strip().isdigit():
                raise CommandError(f"no thread {args.thread} in '{ws.name}' (spar thread list \"{ws.name}\")")
            thread = store.create(ws.name, title=args.thread)
        elif thread is None:
            thread = store.create(ws.name)
    except (WorkspaceError, ThreadError) as exc:
        raise CommandError(str(exc)) from exc
    return thread


def _print_result(result, args, told: list[str]) -> None:
    if result.notice and result.notice not in told:
        print(f"spar: {printable(result.notice)}", file=sys.stderr)
    if args.json:
        print(json.dumps(result.to_json(), indent=1, ensure_ascii=False, default=str))
        return
    if result.text and not result.text.endswith("\n"):
        print()
    sources = _sources(result)
    if sources:
        print("\nSources:")
        print("\n".join(sources))
    t = result.timings
    how = result.model if result.mode == "llm" else "retrieval only"
    print(f"thread {result.thread_id} · {how} · {t.total_ms / 1000:.1f} s "
          f"(continue with --thread {result.thread_id})", file=sys.stderr)


def run_ask(args) -> int:
    from spar_desktop.core.llm.client import STALL_TIMEOUT, Ollama
    from spar_desktop.core.chat.session import ChatSession
    from spar_desktop.core.chat.threads import ThreadError, ThreadStore
    from spar_desktop.core.library.database import Library
    from spar_desktop.core.progress import CancelToken
    from spar_desktop.core.workspaces.manager import Workspaces

    if args.k < 1:
        raise CommandError("--k must be at least 1")
    settings = settings_from_args(args)
    library = Library.open(settings)
    try:
        manager = Workspaces(library)
        store = ThreadStore(library)
        thread = _thread_for(manager, store, args)
        ollama = Ollama.from_settings(settings, args.model, stall_timeout=args.timeout or STALL_TIMEOUT)
        session = ChatSession(manager, ollama, k=args.k)
        cancel = CancelToken()

        write, close = terminal_writer(sys.stdout)
        told: list[str] = []

        def on_token(delta: str) -> None:
            if not args.json:
                write(delta)
                sys.stdout.flush()

        def on_notice(notice: str) -> None:  # before the passages it explains
            told.append(notice)
            sys.stdout.flush()
            print(f"spar: {printable(notice)}", file=sys.stderr, flush=True)

        previous = signal.signal(signal.SIGINT, lambda *_: cancel.cancel())
        try:
            result = asyncio.run(session.answer(thread.id, args.question, on_token, cancel, on_notice=on_notice))
        except ThreadError as exc:
            raise CommandError(str(exc)) from exc
        finally:
            signal.signal(signal.SIGINT, previous)
            close()
    finally:
        library.close()

    _print_result(result, args, told)
    if result.status == "stopped":
        print("spar: stopped; the partial answer is kept in the thread", file=sys.stderr)
        return 130
    if result.status == "error":
        if args.json:
            return 1
        raise CommandError(printable(result.error or "the answer failed"))
    return 0

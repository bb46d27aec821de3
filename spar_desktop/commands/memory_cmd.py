"""`spar memory stats|reset WORKSPACE`: what a workspace's retrieval keys learned from feedback (ERM)."""

from __future__ import annotations

import argparse
import json

from spar_desktop.commands.common import CommandError, open_library


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("memory", help="evolving retrieval memory: keys that learn from useful answers")
    msub = p.add_subparsers(dest="memory_action", metavar="ACTION", required=True)
    s = msub.add_parser("stats", help="how many keys evolved, units in memory, feedback counts")
    s.add_argument("name", metavar="WORKSPACE")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=run_stats)
    r = msub.add_parser("reset", help="forget what the workspace's files learned; original keys come back")
    r.add_argument("name", metavar="WORKSPACE")
    r.add_argument("--json", action="store_true")
    r.set_defaults(func=run_reset)


def _manager(args):
    from spar_desktop.core.workspaces.manager import Workspaces

    return Workspaces(open_library(args))


def _call(fn, args):
    from spar_desktop.core.workspaces.errors import WorkspaceError

    try:
        return fn(_manager(args), args.name)
    except WorkspaceError as exc:
        raise CommandError(str(exc)) from exc


def run_stats(args) -> int:
    from spar_desktop.core.memory.feedback import memory_stats

    st = _call(memory_stats, args)
    if args.json:
        print(json.dumps(st.to_json(), indent=1))
        return 0
    print(f"{st.workspace}: {st.evolved_keys} evolved keys, {st.units} expansion units in the memory of "
          f"{st.chunks_with_memory} chunks")
    print(f"feedback: {st.accepted} learned from, {st.ignored} ignored, {st.pending} waiting for the next batch; "
          f"{st.rounds} evolution rounds" + (f", last {st.last_evolved_at:%Y-%m-%d %H:%M}" if st.last_evolved_at else ""))
    if st.other_model:
        print(f"note: {st.other_model} entries were made with another embedding model and are ignored")
    return 0


def run_reset(args) -> int:
    from spar_desktop.core.memory.feedback import reset_memory

    n = _call(reset_memory, args)
    if args.json:
        print(json.dumps({"workspace": args.name, "rows_dropped": n}))
        return 0
    print(f"reset '{args.name}': {n} memory entries and evolved keys dropped; searches use the original keys "
          "(the collection is brought back on its next use)")
    return 0

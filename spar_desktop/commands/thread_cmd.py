"""`spar thread ...`: a workspace's chat threads — list, show, rename, delete, export to Markdown."""

from __future__ import annotations

import argparse
import json

from spar_desktop.commands.common import CommandError, open_library
from spar_desktop.commands.terminal import printable, printable_body


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("thread", help="chat threads of a workspace (see spar ask)")
    tsub = p.add_subparsers(dest="thread_action", metavar="ACTION", required=True)

    ls = tsub.add_parser("list", help="threads of a workspace, most recent first")
    ls.add_argument("workspace")
    ls.add_argument("--json", action="store_true")
    ls.set_defaults(func=_guard(run_list))

    sh = tsub.add_parser("show", help="every message of a thread")
    sh.add_argument("thread", type=int)
    sh.add_argument("--json", action="store_true")
    sh.set_defaults(func=_guard(run_show))

    rn = tsub.add_parser("rename", help="rename a thread")
    rn.add_argument("thread", type=int)
    rn.add_argument("title")
    rn.set_defaults(func=_guard(run_rename))

    rm = tsub.add_parser("delete", help="delete a thread and its messages")
    rm.add_argument("thread", type=int)
    rm.set_defaults(func=_guard(run_delete))

    ex = tsub.add_parser("export", help="write a thread as Markdown with its sources")
    ex.add_argument("thread", type=int)
    ex.add_argument("--out", help="file to write (default: print)")
    ex.set_defaults(func=_guard(run_export))


def _guard(fn):
    def wrapper(args):
        from spar_desktop.core.chat.threads import ThreadError, ThreadStore
        from spar_desktop.core.workspaces.errors import WorkspaceError

        library = open_library(args)
        try:
            return fn(args, ThreadStore(library))
        except (ThreadError, WorkspaceError) as exc:
            raise CommandError(str(exc)) from exc
        finally:
            library.close()
    return wrapper


def run_list(args, store) -> int:
    threads = store.list(args.workspace)
    if args.json:
        print(json.dumps([t.to_json() for t in threads], indent=1, ensure_ascii=False))
        return 0
    if not threads:
        print(f'no threads yet: spar ask "{printable(args.workspace)}" "your question"')
    for t in threads:
        print(f"{t.id:>5}  {t.updated_at:%Y-%m-%d %H:%M}  {t.message_count:>3} msgs  {printable(t.display_title)}")
    return 0


def run_show(args, store) -> int:
    info, msgs = store.get(args.thread), store.messages(args.thread)
    if args.json:
        print(json.dumps({"thread": info.to_json(), "messages": [m.to_json() for m in msgs]}, indent=1,
                         ensure_ascii=False))
        return 0
    print(f"# {printable(info.display_title)}  (workspace '{printable(info.workspace)}')")
    for m in msgs:
        tag = "you" if m.role == "user" else f"{m.model or m.mode or 'assistant'}"
        state = "" if m.status == "ok" else f" [{m.status}{': ' + printable(m.error) if m.error else ''}]"
        print(f"\n[{m.id}] {printable(tag)}{state}:\n{printable_body(m.content)}")
    return 0


def run_rename(args, store) -> int:
    t = store.rename(args.thread, args.title)
    print(f"thread {t.id} is now '{printable(t.display_title)}'")
    return 0


def run_delete(args, store) -> int:
    store.delete(args.thread)
    print(f"deleted thread {args.thread}")
    return 0


def run_export(args, store) -> int:
    from spar_desktop.core.chat.share import export_thread_markdown, thread_markdown

    if args.out:
        print(f"wrote {export_thread_markdown(store, args.thread, args.out)}")
    else:
        print(printable_body(thread_markdown(store, args.thread)), end="")
    return 0

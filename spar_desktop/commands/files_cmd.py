"""`spar files`: list indexed files filtered by tags, dates, formats, path glob, status."""

from __future__ import annotations

import argparse
import json
import sys

from spar_desktop.commands.common import CommandError, open_library, parse_day
from spar_desktop.commands.terminal import printable


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("files", help="list indexed files matching filters")
    p.add_argument("--tag", action="append", default=[], metavar="TAG",
                   help="files under this tag or its descendants; repeat to require several; 'a|b' for either")
    p.add_argument("--since", type=parse_day, help="document date on or after (YYYY[-MM[-DD]])")
    p.add_argument("--until", type=lambda t: parse_day(t, end=True), help="document date on or before")
    p.add_argument("--format", action="append", default=[], help="pdf, docx, md, txt, html, csv, json ...")
    p.add_argument("--path", dest="path_glob", help="glob on the path relative to its root (or the file name)")
    p.add_argument("--status", action="append", default=[], help="ok, empty, error, encrypted, unsupported, missing")
    p.add_argument("--author", help="author contains this text")
    p.add_argument("--limit", type=int, help="at most this many rows")
    p.add_argument("--count", action="store_true", help="print only the number of matching files")
    p.add_argument("--duplicates", action="store_true",
                   help="groups of files with the same content (embedded once; search names the copies)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from spar_desktop.core.library.queries import FilterError, count_files, filter_from_text, find_files

    library = open_library(args)
    if args.duplicates:
        return _print_duplicates(library, args)
    with library.session() as s:
        try:
            flt = filter_from_text(s, args.tag, args.since, args.until, args.format, args.path_glob,
                                   args.status, args.author)
        except FilterError as exc:
            raise CommandError(str(exc)) from exc
        if args.count:
            print(count_files(s, flt))
            return 0
        rows = find_files(s, flt, limit=args.limit, with_tags=args.json)
    if args.json:
        print(json.dumps([r.to_json() for r in rows], indent=1, ensure_ascii=False))
        return 0
    for r in rows:
        when = (r.created_at or r.modified_at)
        status = "" if r.status == "ok" else f"  [{r.status}: {r.error}]"
        # Names come from the share: a raw ESC or newline in one would act on the terminal.
        line = f"{when:%Y-%m-%d}  {r.format:<5} {r.path}{status}" if when else f"{'':10}  {r.format:<5} {r.path}{status}"
        print(printable(line))
    print(f"{len(rows)} files", file=sys.stderr)
    return 0


def _print_duplicates(library, args: argparse.Namespace) -> int:
    from spar_desktop.core.library.queries import duplicate_groups

    with library.session() as s:
        groups = duplicate_groups(s, limit=args.limit)
    if args.json:
        print(json.dumps([g.to_json() for g in groups], indent=1, ensure_ascii=False))
        return 0
    for g in groups:
        print(f"{len(g.paths)} copies, {g.size:,} bytes each:")
        for p in g.paths:
            print(f"  {printable(p)}")
    copies = sum(len(g.paths) - 1 for g in groups)
    print(f"{len(groups)} groups of identical files ({copies} extra copies)", file=sys.stderr)
    return 0

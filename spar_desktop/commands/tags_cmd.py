"""`spar tags`: the tag hierarchy (tree view), taxonomy import/export, assignments, tag/untag."""

from __future__ import annotations

import argparse
import json
import os
import sys

from spar_desktop.commands.common import open_library
from spar_desktop.commands.terminal import printable

SOURCE_TITLES = {"path": "Folders", "date": "Dates", "taxonomy": "Taxonomy", "user": "User tags",
                 "auto": "Automatic tags", "llm": "LLM tags"}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("tags", help="show the tag tree; import/export taxonomies; tag files")
    p.add_argument("--source", action="append", help="only tags from this source (path, date, taxonomy, user...)")
    p.add_argument("--depth", type=int, default=None, help="show at most this many levels")
    p.add_argument("--json", action="store_true", help="the tree as JSON")
    p.set_defaults(func=show_tree)
    tsub = p.add_subparsers(dest="tags_action", metavar="ACTION")

    imp = tsub.add_parser("import", help="import a taxonomy: JSON tree, CSV parent,child or MeSH tree numbers")
    imp.add_argument("file")
    imp.add_argument("--format", choices=["json", "csv", "mesh"], help="default: detected from the file")
    imp.set_defaults(func=run_import)

    exp = tsub.add_parser("export", help="export taxonomy and user tags as a JSON tree")
    exp.add_argument("file", help="output file ('-' for stdout)")
    exp.set_defaults(func=run_export)

    asg = tsub.add_parser("assign", help="apply file→tag assignments from a CSV (path, tag[, tag...])")
    asg.add_argument("file")
    asg.add_argument("--base", help="folder that relative paths in the CSV start from")
    asg.set_defaults(func=run_assign)

    for name, helptext in (("tag", "attach a tag to files (created if new)"), ("untag", "remove a tag from files")):
        t = tsub.add_parser(name, help=helptext)
        t.add_argument("tag")
        t.add_argument("files", nargs="+", help="file paths (as indexed)")
        t.set_defaults(func=run_tag, untag=(name == "untag"))


def show_tree(args: argparse.Namespace) -> int:
    from spar_desktop.core.library.tags import root_tag_ids, tag_infos

    library = open_library(args)
    with library.session() as s:
        infos = tag_infos(s)
    if args.source:
        keep = set(args.source)
        infos = {i: t for i, t in infos.items() if t.source in keep}
    roots = [i for i in root_tag_ids(infos)]

    def node(i: int, depth: int) -> dict:
        t = infos[i]
        out = {"key": t.key, "value": t.value, "source": t.source, "files": t.file_count}
        if args.depth is None or depth + 1 < args.depth:
            kids = [c for c in t.child_ids if c in infos]
            if kids:
                out["children"] = [node(c, depth + 1) for c in sorted(kids, key=lambda c: infos[c].key)]
        return out

    tree = [node(i, 0) for i in roots]
    if args.json:
        print(json.dumps(tree, indent=1, ensure_ascii=False))
        return 0
    if not tree:
        print("no tags yet: spar index FOLDER, or spar tags import TAXONOMY")
        return 0
    current_source = None
    out = sys.stdout

    def emit(n: dict, prefix: str, last: bool, top: bool) -> None:
        branch = "" if top else ("└── " if last else "├── ")
        out.write(f"{prefix}{branch}{printable(n['value'])}  ({n['files']})\n")  # folder names become tags
        kids = n.get("children", [])
        for k, child in enumerate(kids):
            emit(child, prefix + ("" if top else ("    " if last else "│   ")), k == len(kids) - 1, False)

    for n in tree:
        if n["source"] != current_source:
            current_source = n["source"]
            out.write(f"\n[{SOURCE_TITLES.get(current_source, current_source)}]\n")
        emit(n, "", True, True)
    return 0


def run_import(args: argparse.Namespace) -> int:
    from spar_desktop.cli import CommandError
    from spar_desktop.core.library.taxonomy import TaxonomyError, import_taxonomy

    library = open_library(args)
    try:
        with library.session() as s:
            report = import_taxonomy(s, args.file, args.format)
    except TaxonomyError as exc:
        raise CommandError(str(exc)) from exc
    print(f"{report.tags_created} tags created, {report.tags_existing} already known, "
          f"{report.edges_created} links, {report.duplicates} duplicates skipped, {len(report.problems)} problems")
    for line in report.problems[:50]:
        print(f"  ! {printable(line)}")
    return 0


def run_export(args: argparse.Namespace) -> int:
    from spar_desktop.core.library.taxonomy import export_taxonomy

    library = open_library(args)
    with library.session() as s:
        tree = export_taxonomy(s)
    text = json.dumps(tree, indent=2, ensure_ascii=False)
    if args.file == "-":
        print(text)
    else:
        tmp = args.file + ".tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, args.file)
        print(f"wrote {len(tree)} top-level tags to {args.file}")
    return 0


def run_assign(args: argparse.Namespace) -> int:
    from spar_desktop.cli import CommandError
    from spar_desktop.core.library.taxonomy import TaxonomyError, assign_from_csv

    library = open_library(args)
    try:
        with library.session() as s:
            report = assign_from_csv(s, args.file, args.base)
    except TaxonomyError as exc:
        raise CommandError(str(exc)) from exc
    print(f"{report.assigned} assignments to {report.files_matched} files, {report.tags_created} new tags, "
          f"{len(report.unknown_paths)} unknown paths")
    for path in report.unknown_paths[:50]:
        print(f"  ! not in the index: {printable(path)}")
    for line in report.problems[:50]:
        print(f"  ! {printable(line)}")
    return 1 if report.files_matched == 0 and report.unknown_paths else 0


def run_tag(args: argparse.Namespace) -> int:
    from sqlalchemy import select

    from spar_desktop.cli import CommandError
    from spar_desktop.core.library.models import File, TagSource
    from spar_desktop.core.library.tags import create_tag, resolve_tags, tag_files, untag_files

    library = open_library(args)
    with library.session() as s:
        ids, unknown = [], []
        for given in args.files:
            path = os.path.realpath(given)
            fid = s.scalar(select(File.id).where(File.path == path))
            (ids.append(fid) if fid is not None else unknown.append(given))
        if unknown:
            raise CommandError("not in the index: " + ", ".join(unknown))
        tags = resolve_tags(s, args.tag)
        if args.untag:
            if not tags:
                raise CommandError(f"unknown tag: {args.tag}")
            n = sum(untag_files(s, ids, t.id) for t in tags)
            print(f"removed {args.tag} from {n} files")
        else:
            if not tags:
                tags = [create_tag(s, f"user:{args.tag}", args.tag, TagSource.USER)]
            n = sum(tag_files(s, ids, t.id, TagSource.USER) for t in tags)
            print(f"tagged {n} files with {args.tag}")
    return 0

"""`spar tags`: the tag hierarchy (tree view), taxonomy import/export, assignments, tag/untag."""

from __future__ import annotations

import argparse
import json
import os
import sys

from spar_desktop.commands.common import CommandError, open_library
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

    sug = tsub.add_parser("suggest", help="suggest tags for files (summaries, tag text, neighbours, optional LLM)")
    sug.add_argument("--llm", action=argparse.BooleanOptionalAction, default=None,
                     help="ask the Ollama model to classify too (default: when a server is reachable)")
    sug.add_argument("--limit", type=int, help="at most this many files this run (the next run goes on)")
    sug.add_argument("--redo", action="store_true", help="recompute every file's suggestions")
    sug.add_argument("--json", action="store_true", help="the counts as JSON")
    sug.set_defaults(func=run_suggest)

    rev = tsub.add_parser("review", help="list tag suggestions; accept or reject them",
                          description="Suggestions are named FILE_ID:TAG_ID. --accept/--reject without ids act "
                                      "on every suggestion the filters (--tag, --file, --min-score) select.")
    rev.add_argument("--tag", help="only suggestions of this tag")
    rev.add_argument("--file", help="only suggestions for this file (path as indexed)")
    rev.add_argument("--min-score", type=float, default=0.0, help="only suggestions scored at least this (0-1)")
    rev.add_argument("--limit", type=int, default=None, help="list at most this many (default 50; all with --json)")
    rev.add_argument("--accept", nargs="*", metavar="FILE_ID:TAG_ID", help="confirm these suggestions")
    rev.add_argument("--reject", nargs="*", metavar="FILE_ID:TAG_ID",
                     help="remove these suggestions; they are never suggested again")
    rev.add_argument("--accept-above", type=float, metavar="SCORE",
                     help="confirm every suggestion scored at least SCORE (of --tag, if given)")
    rev.add_argument("--json", action="store_true", help="the queue (and what was done) as JSON")
    rev.set_defaults(func=run_review)

    from spar_desktop.commands import tag_hierarchy_cmd  # `spar tags induce` and `spar tags proposal`

    tag_hierarchy_cmd.register(tsub)

    from spar_desktop.commands import tag_grouping_cmd  # `spar tags group`

    tag_grouping_cmd.register(tsub)


def show_tree(args: argparse.Namespace) -> int:
    from spar_desktop.core.library import count_store
    from spar_desktop.core.library.tags import root_tag_ids, tag_infos

    library = open_library(args)
    with library.session() as s:
        stored = count_store.stored(s)  # kept by the scan and tag edits; None: counted here
        infos = tag_infos(s, stored[0] if stored else None)
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

    from spar_desktop.core.library import count_store
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
        count_store.refresh(s, [t.id for t in tags])  # the tag tree's stored counts (count_store.py)
    return 0


# -- suggestions ---------------------------------------------------------------------------------
def run_suggest(args: argparse.Namespace) -> int:
    from spar_desktop.commands.common import StderrProgress, settings_from_args
    from spar_desktop.core.progress import CancelToken, Cancelled
    from spar_desktop.core.tagging import review
    from spar_desktop.core.tagging.job import run_tagging
    from spar_desktop.core.tagging.llm import ollama_classifier
    from spar_desktop.core.workspaces.engine import encoder_for

    settings = settings_from_args(args)
    library = open_library(args)
    classify, why_not = (None, "off (--no-llm)") if args.llm is False else ollama_classifier(settings)
    if args.llm and classify is None:
        print(f"LLM step skipped: {why_not}; suggesting from tag text and neighbours", file=sys.stderr)
    progress = StderrProgress("tags")
    cancel = CancelToken()
    try:
        report = run_tagging(library, settings, encoder_for(settings), classify, progress=progress, cancel=cancel,
                             limit=args.limit, redo=args.redo)
    except (KeyboardInterrupt, Cancelled):
        cancel.cancel()
        progress.finish()
        raise CommandError("stopped; the work done so far is kept: run it again to go on") from None
    progress.finish()
    pending = sum(review.pending_counts(library).values())
    if args.json:
        print(json.dumps({"summaries": {"summarized": report.summaries.summarized,
                                        "up_to_date": report.summaries.up_to_date,
                                        "unreadable": report.summaries.unreadable},
                          "suggestions": {"files": report.suggestions.files, "stored": report.suggestions.suggestions,
                                          "up_to_date": report.suggestions.up_to_date,
                                          "llm_files": report.suggestions.llm_files,
                                          "llm_error": report.suggestions.llm_error},
                          "llm": classify is not None, "pending": pending}, indent=1))
        return 0
    print(printable(report.summaries.message()))
    for path, message in report.summaries.errors[:10]:
        print(f"  ! {printable(path)}: {printable(message)}")
    print(printable(report.suggestions.message()))
    if classify is None and args.llm is None:
        print(printable(f"(LLM step skipped: {why_not})"))
    print(f"{pending} suggestions waiting for review: spar tags review")
    return 0


def _pairs(values: list[str]) -> list[tuple[int, int]]:
    out = []
    for v in values:
        f, sep, t = v.partition(":")
        if not sep or not f.strip().isdigit() or not t.strip().isdigit():
            raise CommandError(f"not a suggestion id (FILE_ID:TAG_ID): {printable(v)}")
        out.append((int(f), int(t)))
    return out


def run_review(args: argparse.Namespace) -> int:
    from sqlalchemy import select

    from spar_desktop.core.library.models import File
    from spar_desktop.core.library.tags import resolve_tags
    from spar_desktop.core.tagging import review

    library = open_library(args)
    tag_ids: list[int | None] = [None]
    file_id = None
    with library.session() as s:
        if args.tag:
            tag_ids = [t.id for t in resolve_tags(s, args.tag)]
            if not tag_ids:
                raise CommandError(f"unknown tag: {printable(args.tag)}")
        if args.file:
            file_id = s.scalar(select(File.id).where(File.path == os.path.realpath(args.file)))
            if file_id is None:
                raise CommandError(f"not in the index: {printable(args.file)}")

    def selected() -> list:
        return [x for t in tag_ids for x in review.pending(library, t, file_id, args.min_score)]

    changed = []
    if args.accept_above is not None:
        n = sum(review.accept_above(library, args.accept_above, t) for t in tag_ids) if file_id is None else \
            review.accept(library, [(x.file_id, x.tag_id) for x in selected() if x.score >= args.accept_above])
        changed.append(f"accepted {n} suggestions scored {args.accept_above:g} or more")
    if args.accept is not None:
        pairs = _pairs(args.accept) if args.accept else [(x.file_id, x.tag_id) for x in selected()]
        changed.append(f"accepted {review.accept(library, pairs)} suggestions")
    if args.reject is not None:
        pairs = _pairs(args.reject) if args.reject else [(x.file_id, x.tag_id) for x in selected()]
        changed.append(f"rejected {review.reject(library, pairs)} suggestions (they will not be suggested again)")
    rows = sorted(selected(), key=lambda x: (-x.score, x.path, x.tag_key))
    if args.json:
        limit = args.limit if args.limit is not None else len(rows)
        print(json.dumps({"done": changed, "pending": len(rows), "suggestions": [
            {"id": f"{x.file_id}:{x.tag_id}", "file_id": x.file_id, "path": x.path, "tag_id": x.tag_id,
             "tag": x.tag_value, "tag_key": x.tag_key, "source": x.source, "score": x.score} for x in rows[:limit]]},
            indent=1, ensure_ascii=False))
        return 0
    for line in changed:
        print(line)
    if not rows:
        print("no suggestions waiting for review" + ("" if changed else " (spar tags suggest makes some)"))
        return 0
    limit = args.limit if args.limit is not None else 50
    print(f"{len(rows)} suggestions waiting for review" + (f", the best {limit}:" if len(rows) > limit else ":"))
    for x in rows[:limit]:
        print(f"  {x.file_id}:{x.tag_id:<6} {x.score:.2f} {x.source:<4} {printable(x.tag_value)}  <-  {printable(x.path)}")
    print("accept: spar tags review --accept ID...  reject: --reject ID...  bulk: --accept-above SCORE")
    return 0

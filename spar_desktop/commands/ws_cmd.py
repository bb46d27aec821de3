"""`spar ws ...`: workspaces — create from a request, explain, build, search, archive, share.

Names, paths and messages can come from a share or someone else's .sparws: human-readable lines
go through ``printable`` (no raw ESC/CR/newline reaches the terminal); --json output is escaped by
json.dumps already."""

from __future__ import annotations

import argparse
import json
import signal
import sys
from dataclasses import replace

from spar_desktop.commands import ws_enhance
from spar_desktop.commands.common import CommandError, StderrProgress, open_library, parse_day
from spar_desktop.commands.terminal import printable
from spar_desktop.commands.ws_print import print_build_report, print_hits, print_unbuilt_files
from spar_desktop.commands.ws_request import add_request_options, apply_drops, read_request


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("ws", help="workspaces: scoped, searchable sets of files built on demand")
    wsub = p.add_subparsers(dest="ws_action", metavar="ACTION", required=True)
    _add_create(wsub)
    _add_edit_explain_files(wsub)
    _add_build_search(wsub)
    _add_status_list_share(wsub)


def _add_create(wsub) -> None:
    """`spar ws create`."""
    c = wsub.add_parser("create", help="create a workspace from a request and/or filters")
    c.add_argument("name")
    c.add_argument("--prompt", default="", help='plain-language request, e.g. "incident reports from 2023"')
    c.add_argument("--tag", action="append", default=[], help="require this tag (or a descendant); 'a|b' for either")
    c.add_argument("--since", type=parse_day)
    c.add_argument("--until", type=lambda t: parse_day(t, end=True))
    c.add_argument("--type", action="append", default=[], help="file type: pdf, docx, md, csv ...")
    c.add_argument("--match", choices=["ranked", "most", "all"], default="ranked",
                   help="'ranked' (default): required tags, folders and constraints stay hard, the other files are "
                        "scored by their keywords' tags (and summaries) and the best admitted up to --budget; "
                        "'most': a file needs every keyword's tags, or all but one when none has them all; "
                        "'all': every keyword's tags")
    _ranking_options(c)
    c.add_argument("--all-files", action="store_true",
                   help="use the whole index on purpose (e.g. when the request's words match no tag); "
                        "other filters still apply")
    add_request_options(c)
    c.add_argument("--build", action="store_true", help="build right away")
    ws_enhance.add_chunking_option(c)
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=run_create)


def _add_edit_explain_files(wsub) -> None:
    """`spar ws edit`, `explain`, `files`."""
    ed = wsub.add_parser("edit", help="change a workspace's budget or whether tag suggestions count")
    ed.add_argument("name")
    _ranking_options(ed)
    ed.add_argument("--exclude-suggested", action="store_true",
                    help="count confirmed tags only again (the default)")
    ed.add_argument("--json", action="store_true")
    ed.set_defaults(func=run_edit)

    for action, helptext in (("explain", "show how the filter chose the files"),
                             ("files", "list the workspace's files and their state")):
        e = wsub.add_parser(action, help=helptext)
        e.add_argument("name")
        e.add_argument("--json", action="store_true")
        if action == "explain":
            e.add_argument("--all-tags", action="store_true",
                           help="list every matched tag (same-named folders are otherwise one line)")
        e.set_defaults(func=run_explain if action == "explain" else run_files)


def _add_build_search(wsub) -> None:
    """`spar ws build`, `reactivate`, `search`."""
    b = wsub.add_parser("build", help="build (or update) the workspace's vector collection")
    b.add_argument("name")
    b.add_argument("--rebuild", action="store_true", help="re-embed with the current model if it changed")
    b.add_argument("--json", action="store_true")
    b.set_defaults(func=run_build)

    r = wsub.add_parser("reactivate", help="rebuild an archived workspace from cached embeddings")
    r.add_argument("name")
    r.add_argument("--json", action="store_true")
    r.set_defaults(func=run_build, rebuild=False)

    s = wsub.add_parser("search", help="hybrid search inside a workspace")
    s.add_argument("name")
    s.add_argument("query")
    s.add_argument("--k", type=int, default=10)
    s.add_argument("--method", choices=["hybrid", "bm25", "dense"], default="hybrid")
    s.add_argument("--update", action="store_true",
                   help="bring the workspace up to date with the index first (only what changed is read)")
    s.add_argument("--no-rerank", action="store_true",
                   help="keep the fused order (by default Ollama reranks the top results when the search is unsure)")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=run_search)


def _add_status_list_share(wsub) -> None:
    """`spar ws status`, `list`, `archive`, `delete`, `export`, `import`."""
    st = wsub.add_parser("status", help="is the workspace up to date with the index? (changed, new, removed files)")
    st.add_argument("name")
    st.add_argument("--json", action="store_true")
    st.set_defaults(func=run_status)

    ls = wsub.add_parser("list", help="list workspaces")
    ls.add_argument("--json", action="store_true")
    ls.set_defaults(func=run_list)

    for action, helptext in (("archive", "drop the vectors, keep filter, files, threads and history"),
                             ("delete", "delete the workspace (your files are untouched)")):
        a = wsub.add_parser(action, help=helptext)
        a.add_argument("name")
        a.set_defaults(func=run_simple, action=action)

    x = wsub.add_parser("export", help="write a .sparws file (filter, file list, threads; no vectors)")
    x.add_argument("name")
    x.add_argument("out")
    x.set_defaults(func=run_export)

    i = wsub.add_parser("import", help="import a .sparws file")
    i.add_argument("file")
    i.add_argument("--name", help="name for the imported workspace")
    i.set_defaults(func=run_import)
    ws_enhance.register(wsub)


def _positive(text: str) -> int:
    n = int(text)
    if n < 1:
        raise argparse.ArgumentTypeError("must be 1 or more")
    return n


def _ranking_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--budget", type=_positive, metavar="N",
                   help="ranked: admit at most N files (default: a tenth of the index, at least 25)")
    p.add_argument("--include-suggested", action="store_true",
                   help="count tag suggestions nobody confirmed yet (spar tags review) as tags")


def _manager(args):
    from spar_desktop.core.workspaces.manager import Workspaces

    return Workspaces(open_library(args))


def _guard(fn):
    """Workspace errors become clear CLI errors."""
    def wrapper(args):
        from spar_desktop.core.workspaces.errors import WorkspaceError

        try:
            return fn(args)
        except WorkspaceError as exc:
            raise CommandError(printable(exc)) from exc
    return wrapper


def _print_explanation(exp, expand: bool = False) -> None:
    for line in exp.lines(expand):
        print(printable(line))


# Appended to the core's "no tag matches ..." refusal: the three choices, as flags.
UNSCOPED_HINT = ("  drop those words: spar ws create NAME --prompt \"...\" without them\n"
                 "  pick a tag:       --tag T  (the tags there are: spar tags)\n"
                 "  the whole index:  --all-files")


@_guard
def run_create(args) -> int:
    from spar_desktop.core.workspaces.errors import UnscopedFilter
    from spar_desktop.core.workspaces.selection import WorkspaceFilter

    mgr = _manager(args)
    if args.all_files and not (args.prompt.strip() or args.tag or args.since or args.until or args.type):
        flt = WorkspaceFilter(all_files=True)
    else:
        if args.prompt.strip():
            _sync_tag_index(mgr)
        flt = mgr.filter_for(args.prompt, tags=args.tag, since=args.since, until=args.until, types=args.type,
                             match=args.match, reading=read_request(mgr, args))
        flt = apply_drops(flt, args)
    if args.match == "all":
        flt = replace(flt, tolerance=0)
    flt = _with_ranking_options(flt, args)
    if args.all_files:
        flt = replace(flt, all_files=True)
    summarised = _summarise_candidates(mgr, flt)
    try:
        info, exp = mgr.create(args.name, filter=flt, chunking=getattr(args, "chunking", None))
    except UnscopedFilter as exc:
        raise CommandError(f"{printable(exc)}\n{UNSCOPED_HINT}") from exc
    if args.json and not args.build:
        print(json.dumps({"workspace": info.to_json(), "explanation": exp.to_json(), "summarised_now": summarised},
                         indent=1, default=str))
        return 0
    print(printable(f"created workspace '{info.name}' ({exp.admitted} files admitted)"))
    if summarised:
        print(printable(f"summarised {summarised} candidate files for ranking (kept for the next request)"))
    if info.chunking != "hierarchical":
        print(printable(f"passages: {info.chunking} chunking"))
    _print_explanation(exp)
    if args.build:
        args.rebuild = False
        return run_build(args)
    print(printable(f"next: spar ws build \"{info.name}\""))
    return 0


def _summarise_candidates(mgr, flt) -> int:
    """Summaries the ranking needs and the index lacks, for the best candidates only, with a
    progress line (issue 29: no waiting for the app's background job); how many were made."""
    progress = StderrProgress("file summaries")
    report = mgr.summarise_candidates(flt, progress)
    progress.finish()
    return report.summarized if report is not None else 0


def _sync_tag_index(mgr) -> None:
    """Embed the tags not embedded yet (after a scan of new folders) with a progress line; a
    Ctrl-C keeps the batches done, and the next request goes on from there."""
    progress = StderrProgress("tag vocabulary")
    mgr.sync_tag_index(progress)
    progress.finish()


def _with_ranking_options(flt, args):
    if args.budget:
        flt = flt.with_budget(args.budget)
    if args.include_suggested:
        flt = replace(flt, include_unconfirmed=True)
    if getattr(args, "exclude_suggested", False):
        flt = replace(flt, include_unconfirmed=False)
    return flt


@_guard
def run_edit(args) -> int:
    if args.include_suggested and args.exclude_suggested:
        raise CommandError("--include-suggested and --exclude-suggested contradict each other")
    mgr = _manager(args)
    flt = mgr.get(args.name).filter
    if args.budget and not flt.ranked:
        raise CommandError(printable(f"'{args.name}' was made with every keyword required (not ranked), so it has no "
                                     "budget; create it again to rank its files"))
    exp = mgr.set_filter(args.name, _with_ranking_options(flt, args))
    if args.json:
        print(json.dumps(exp.to_json(), indent=1, default=str))
        return 0
    print(printable(f"saved the filter of '{args.name}' ({exp.admitted} files admitted); "
                    f"build to apply it: spar ws build \"{args.name}\""))
    _print_explanation(exp)
    return 0


@_guard
def run_explain(args) -> int:
    mgr = _manager(args)
    exp = mgr.explain(args.name)
    if args.json:
        print(json.dumps(exp.to_json(), indent=1, default=str))
    else:
        _print_explanation(exp, args.all_tags)
    return 0


@_guard
def run_files(args) -> int:
    mgr = _manager(args)
    info = mgr.get(args.name)
    rows = mgr.files(args.name)
    if not rows and info.built_at is None:
        return print_unbuilt_files(mgr, info, args.json)
    if args.json:
        print(json.dumps([{"path": r.path, "state": r.state, "error": r.error, "chunks": r.chunks} for r in rows], indent=1))
        return 0
    for r in rows:
        print(printable(f"{r.state:<9} {r.chunks:>5}  {r.path}" + (f"  ({r.error})" if r.error else "")))
    return 0


@_guard
def run_build(args) -> int:
    from spar_desktop.core.progress import CancelToken

    mgr = _manager(args)
    cancel = CancelToken()
    previous = signal.signal(signal.SIGINT, lambda *_: cancel.cancel())
    progress = StderrProgress("building")
    before = mgr.find(args.name)
    if before is not None and before.interrupted:
        print(printable(f"'{before.name}': its last build was interrupted; resuming (cached work is reused)"),
              file=sys.stderr)
    try:
        report = mgr.build(args.name, progress, cancel, rebuild=getattr(args, "rebuild", False))
    finally:
        signal.signal(signal.SIGINT, previous)
        progress.finish()
    if getattr(args, "json", False):
        print(json.dumps(report.to_json(), indent=1))
        if not report.cancelled:
            ws_enhance.after_build(mgr, report.name, as_json=True)
        return 130 if report.cancelled else 0
    if report.cancelled:
        print(printable(f"'{report.name}': build cancelled; finished work is cached — run the build again to resume"))
        return 130
    print_build_report(report)
    ws_enhance.after_build(mgr, report.name, as_json=False)
    return 0


@_guard
def run_search(args) -> int:
    """Two database sessions in all: one reads the workspace, its freshness and its saved searcher
    (open_search), one writes the hits' log (search_in). A built workspace whose saved searcher is
    missing is rebuilt from the cache first (a note says why): searching a built workspace implies it."""
    mgr = _manager(args)
    target = mgr.open_search(args.name, with_freshness=True, build_if_needed=True)
    if target.freshness.stale and args.update:
        progress = StderrProgress("updating")
        try:
            mgr.build(args.name, progress)
        finally:
            progress.finish()
        target = mgr.open_search(args.name, with_freshness=True)
    fresh = target.freshness
    # Here, not at module level: ~430 modules that every `spar` command (spar index too) loaded.
    from spar_desktop.core.workspaces.reranking import rerank_note, rerank_with_settings
    res = mgr.search_in(target, args.query, k=args.k, method=args.method)
    if args.method == "hybrid" and not args.no_rerank:  # conditional reranking (core/workspaces/reranking.py)
        res = rerank_with_settings(res, mgr.library.settings)
    if args.json:
        print(json.dumps({"query": res.query, "message": res.message, "latency_ms": round(res.latency_ms, 2),
                          "rerank": res.rerank.to_json() if res.rerank else None,
                          "stale": fresh.stale, "freshness": fresh.to_json(),
                          "dense_coverage": round(res.dense_coverage, 4), "building": res.building,
                          "keyword_coverage": round(res.keyword_coverage, 4),
                          "hits": [h.to_json() for h in res.hits]}, indent=1, ensure_ascii=False))
        return 0
    if fresh.stale:
        print(printable(f"warning: '{args.name}' is {fresh.describe()} since its build: these results come from "
                        f"the files as they were then (update: spar ws build \"{args.name}\", "
                        "or search with --update)"), file=sys.stderr)
    for note in res.notes:
        print(f"note: {printable(note)}", file=sys.stderr)
    print_hits(res)
    if res.rerank is not None and rerank_note(res.rerank):
        print(printable(rerank_note(res.rerank)), file=sys.stderr)
    return 0


@_guard
def run_list(args) -> int:
    mgr = _manager(args)
    archived = mgr.archive_idle()
    infos = mgr.list()
    fresh = {i.name: mgr.freshness(i.name) for i in infos if i.active}
    enhanced = {i.name: ws_enhance.status_line(mgr, i.name) for i in infos if i.chunking == "contextual"}
    if args.json:
        print(json.dumps([{**i.to_json(), **({"freshness": fresh[i.name].to_json()} if i.name in fresh else {}),
                           **({"enhancement": enhanced[i.name].to_json()} if enhanced.get(i.name) else {})}
                          for i in infos], indent=1, default=str))
        return 0
    for n in archived:
        print(printable(f"note: archived '{n}' (idle for {mgr.library.settings.workspace_idle_archive_days} days)"))
    if not infos:
        print('no workspaces yet: spar ws create NAME --prompt "..."')
    for i in infos:
        status = fresh[i.name].describe() if i.name in fresh and fresh[i.name].stale else i.status
        print(f"{printable(i.name):<30} {status:<9} {i.file_count:>6} files {i.chunk_count:>7} chunks  "
              f"last used {i.last_used_at:%Y-%m-%d %H:%M}"
              + ("  (interrupted — build again to resume)" if i.interrupted else "")
              + (f"  {enhanced[i.name].describe()}" if enhanced.get(i.name) else ""))
    return 0


@_guard
def run_status(args) -> int:
    mgr = _manager(args)
    info = mgr.get(args.name)
    fresh = mgr.freshness(args.name)
    enhanced = ws_enhance.status_line(mgr, info.name)
    if args.json:
        extra = {"chunking": info.chunking, "enhancement": enhanced.to_json()} if enhanced else {}
        print(json.dumps({"name": info.name, "status": info.status, **fresh.to_json(), **extra}, indent=1,
                         ensure_ascii=False))
        return 0
    if enhanced is not None:
        print(printable(f"'{info.name}': {enhanced.describe()}"))
    if info.built_at is None or info.archived:
        print(printable(f"'{info.name}' is {info.status}: nothing built to compare"
                        + (f" (spar ws {'reactivate' if info.archived else 'build'} \"{info.name}\")")))
        return 0
    print(printable(f"'{info.name}' is {fresh.describe()} (built {info.built_at:%Y-%m-%d %H:%M})"))
    for what, paths in (("changed", fresh.changed), ("new", fresh.new), ("removed", fresh.removed)):
        for p in paths:
            print(printable(f"  {what:<8} {p}"))
    if fresh.stale:
        print(printable(f"update: spar ws build \"{info.name}\" (reads only the changed and new files)"))
    return 0


@_guard
def run_simple(args) -> int:
    mgr = _manager(args)
    if args.action == "archive":
        mgr.archive(args.name)
        print(printable(f"archived '{args.name}': vectors dropped; filter, files, threads and history kept"))
    else:
        mgr.delete(args.name)
        print(printable(f"deleted workspace '{args.name}' (your files were not touched)"))
    return 0


@_guard
def run_export(args) -> int:
    from spar_desktop.core.chat import share
    from spar_desktop.core.workspaces.sparws import export_workspace

    out = export_workspace(_manager(args), args.name, args.out, threads=share)
    print(printable(f"wrote {out}"))
    print("paths in the export are absolute: the importer matches them against its own index")
    return 0


@_guard
def run_import(args) -> int:
    from spar_desktop.core.chat import share
    from spar_desktop.core.workspaces.sparws import import_workspace

    r = import_workspace(_manager(args), args.file, args.name, threads=share)
    print(printable(f"imported workspace '{r.name}': {r.matched}/{r.files_total} files found in this index "
                    f"({r.matched_by_hash} by content, {r.matched_by_path} by path), {r.threads} threads, "
                    f"{r.queries} past queries"))
    if r.renamed_from is not None:
        print(printable(f"  note: the file names it '{r.renamed_from}'; imported as '{r.name}' "
                        "(names are unique and hold no control characters or path separators)"))
    for label, paths in (("not in this index", r.not_found), ("not under an indexed folder", r.outside_roots)):
        for p in paths[:30]:
            print(f"  ! dropped, {label}: {printable(p)}")
        if len(paths) > 30:
            print(f"  ... and {len(paths) - 30} more {label}")
    print(printable(f"next: spar ws build \"{r.name}\""))
    return 0

"""`spar relations ...`: document relations (EDR-MQ, co-occurrence clusters, TF-IDF baseline),
related files, Gephi export, and session metrics on a BEIR collection."""

from __future__ import annotations

import argparse
import json
import signal
import sys
from contextlib import contextmanager
from typing import Iterator

from spar_desktop.commands.common import CommandError, StderrProgress, open_library, settings_from_args
from spar_desktop.commands.terminal import printable
from spar_desktop.core.relations.names import DEFAULT_RETRIEVER, METHODS, RETRIEVERS



def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("relations", help="how documents relate: EDR-MQ, co-occurrence clusters, TF-IDF graph")
    rsub = p.add_subparsers(dest="relations_action", metavar="ACTION", required=True)

    b = rsub.add_parser("build", help="compute and store the relations of the index or a workspace")
    b.add_argument("--workspace", metavar="W", help="only this workspace's files (without it: the whole index, "
                   "after an estimate of its time and a question, or --yes)")
    b.add_argument("--yes", "-y", action="store_true",
                   help="build the whole index's relations without asking (the estimate is still printed)")
    b.add_argument("--queries", metavar="FILE", help="extra queries: one per line, or JSON lines with 'text'")
    b.add_argument("--method", choices=METHODS, default="edrmq")
    b.add_argument("--retriever", choices=RETRIEVERS, default=DEFAULT_RETRIEVER,
                   help="EDR-MQ retriever: hybrid (words + meaning, the default), dense, or bm25")
    b.add_argument("--alpha", type=float, default=None,
                   help="hybrid: weight of the dense side, 0..1 (default 0.3; 0 = words only: no embedding model needed)")
    b.add_argument("--k1", type=int, default=5, help="EDR-MQ first-stage documents per query")
    b.add_argument("--k2", type=int, default=5, help="EDR-MQ second-stage documents per (document, query)")
    b.add_argument("--temperature", type=float, default=0.05, help="EDR-MQ softmax temperature (dense)")
    b.add_argument("--no-synthetic", action="store_true", help="use only logged and --queries queries")
    b.add_argument("--questions", action="store_true",
                   help="also ask the Ollama server (from the settings) for questions per document; skipped "
                   "with a note when it is not reachable (one LLM call per document: slow on large scopes)")
    b.add_argument("--full", action="store_true", help="recompute from scratch instead of adding new queries")
    b.add_argument("--json", action="store_true")
    b.set_defaults(func=run_build)

    t = rsub.add_parser("top", help="the files most related to FILE")
    t.add_argument("file", metavar="FILE", help="a path in the index, or a file id")
    t.add_argument("--k", type=int, default=10)
    t.add_argument("--workspace", metavar="W")
    t.add_argument("--method", choices=METHODS, help="which stored relations (default: the newest)")
    t.add_argument("--json", action="store_true")
    t.set_defaults(func=run_top)

    x = rsub.add_parser("export", help="write the relation graph for Gephi (GEXF or GraphML)")
    x.add_argument("out", metavar="OUT")
    x.add_argument("--format", choices=("gexf", "graphml"), help="default: from OUT's suffix")
    x.add_argument("--workspace", metavar="W")
    x.add_argument("--method", choices=METHODS, help="which stored relations (default: the newest)")
    x.add_argument("--top", type=int, default=10, help="keep each document's N strongest relations (0: all)")
    x.add_argument("--no-layout", action="store_true", help="skip the ForceAtlas2 layout")
    x.add_argument("--iterations", type=int, default=100, help="ForceAtlas2 iterations")
    x.add_argument("--around", metavar="FILE", help="only FILE (a path in the index, or a file id) and the files "
                   "within --hops relations of it, laid out on their own")
    x.add_argument("--hops", type=int, choices=(1, 2, 3), default=1, help="with --around: how many relations away "
                   "(default 1)")
    x.set_defaults(func=run_export)

    s = rsub.add_parser("search", help="workspace search with co-occurrence cluster expansion (needs a cooc build)")
    s.add_argument("workspace", metavar="W")
    s.add_argument("query")
    s.add_argument("--variant", choices=("expand", "boost", "vanilla"), default="expand",
                   help="expand: add the clusters of the top --k-v files and re-rank; boost: +alpha x cluster match")
    s.add_argument("--k", type=int, default=8)
    s.add_argument("--k-v", type=int, default=3)
    s.add_argument("--alpha", type=float, default=0.2)
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=run_search)

    e = rsub.add_parser("eval-sessions", help="session coverage@k and calls-to-τ on a BEIR collection: "
                        "vanilla retrieval vs co-occurrence cluster expansion")
    e.add_argument("--beir", required=True, metavar="DIR")
    e.add_argument("--split", default="test")
    e.add_argument("--k", type=int, default=8)
    e.add_argument("--k-v", type=int, default=3, help="vanilla slots whose clusters are expanded")
    e.add_argument("--alpha", type=float, default=0.2, help="boost variant weight")
    e.add_argument("--holdout", type=float, default=0.0,
                   help="share of sessions kept out of the co-occurrence training (0: paper setting)")
    e.add_argument("--seed", type=int, default=42)
    e.add_argument("--device", choices=("auto", "cpu", "cuda"), default=None)
    e.add_argument("--json", metavar="OUT", help="write the report as JSON ('-' for stdout)")
    e.set_defaults(func=run_eval_sessions)


def add_eval_options(p: argparse.ArgumentParser) -> None:
    """`spar eval --sessions`: the session metrics of this module, on the same BEIR arguments."""
    g = p.add_argument_group("session metrics (co-occurrence clusters)")
    g.add_argument("--sessions", action="store_true",
                   help="instead of per-query metrics: session coverage@k and calls-to-tau with bootstrap 95%% "
                   "CIs for vanilla dense retrieval vs cluster expansion and the boost variant (sessions = "
                   "queries with >= 2 relevant documents)")
    g.add_argument("--session-k", type=int, default=8, help="retrieval budget per call (default 8)")
    g.add_argument("--holdout", type=float, default=0.0,
                   help="share of sessions kept out of the co-occurrence training (0: the paper's setting)")


def run_eval_sessions_from_eval(args) -> int:
    ns = argparse.Namespace(**vars(args))
    ns.k, ns.k_v, ns.alpha, ns.seed = args.session_k, 3, 0.2, 42  # eval's --alpha is the fusion weight
    return run_eval_sessions(ns)


@contextmanager
def _cancellable(label: str) -> Iterator[tuple[StderrProgress, object]]:
    """Ctrl-C cancels between batches (finished work is kept) instead of killing mid-write."""
    from spar_desktop.core.progress import CancelToken

    cancel = CancelToken()
    previous = signal.signal(signal.SIGINT, lambda *_: cancel.cancel())
    progress = StderrProgress(label)
    try:
        yield progress, cancel
    finally:
        signal.signal(signal.SIGINT, previous)
        progress.finish()


def _guard(fn):
    def wrapper(args):
        from spar_desktop.core.memory_budget import MemoryBudgetExceeded, budget_message, capped_process_memory
        from spar_desktop.core.progress import Cancelled
        from spar_desktop.core.relations.errors import RelationsError

        try:
            with capped_process_memory():  # one huge allocation fails here, not the machine
                return fn(args)
        except RelationsError as exc:
            raise CommandError(str(exc)) from exc
        except MemoryBudgetExceeded as exc:
            raise CommandError(str(exc)) from None
        except MemoryError:
            raise CommandError(budget_message(f"spar relations {args.relations_action}")) from None
        except Cancelled:
            print("spar: cancelled" + (" (the queries already run are kept: the same command resumes)"
                                       if getattr(args, "relations_action", None) == "build" else ""),
                  file=sys.stderr)
            return 130
    return wrapper


WHOLE_INDEX_QUESTION = "Build relations for the whole index? [y/N] "
WAYS_OUT = ("use --workspace W to build one workspace's relations, or --yes to build the whole index's "
            "(see the estimate above)")


def _confirmed() -> bool:
    """A whole-index build goes ahead only when the user says so: asked on a terminal; without
    one (a script, a pipe) it is refused with the two ways out."""
    if not sys.stdin.isatty():
        raise CommandError(f"a whole-index relations build needs confirmation: {WAYS_OUT}")
    sys.stderr.write(WHOLE_INDEX_QUESTION)
    sys.stderr.flush()
    try:
        answer = sys.stdin.readline()
    except (EOFError, KeyboardInterrupt):
        answer = ""
    if answer.strip().lower() in ("y", "yes"):
        return True
    print("spar: nothing built (build one workspace's relations with --workspace W)", file=sys.stderr)
    return False


@_guard
def run_build(args) -> int:
    from spar_desktop.core.relations.edrmq import EdrmqParams
    from spar_desktop.core.relations.service import build_relations, estimate_build, read_queries_file

    if args.k1 < 1 or args.k2 < 1:
        raise CommandError("--k1 and --k2 must be at least 1")
    if args.temperature <= 0:
        raise CommandError("--temperature must be positive")
    alpha = EdrmqParams.alpha if args.alpha is None else args.alpha
    if not 0.0 <= alpha <= 1.0:
        raise CommandError("--alpha must be between 0 and 1")
    queries = read_queries_file(args.queries) if args.queries else []
    lib = open_library(args)
    params = EdrmqParams(k1=args.k1, k2=args.k2, temperature=args.temperature, alpha=alpha)
    estimate = estimate_build(lib, args.workspace, args.method, retriever=args.retriever, params=params,
                              synthetic=not args.no_synthetic, extra_queries=len(queries),
                              incremental=not args.full, questions=args.questions)
    print(printable(estimate.summary()), file=sys.stderr)  # stderr: --json stays pure JSON
    for note in estimate.notes:
        print(f"  note: {printable(note)}", file=sys.stderr)
    if args.workspace is None and not args.yes and not _confirmed():
        return 1
    question_fn = None
    if args.questions:
        from spar_desktop.core.relations.questions import ollama_question_fn

        question_fn = ollama_question_fn(lib.settings)
        if question_fn is None:
            print("spar: note: Ollama is not reachable; building without generated questions", file=sys.stderr)
    from spar_desktop.core.memory_budget import memory_budget

    with _cancellable(f"relations ({args.method})") as (progress, cancel), \
            memory_budget("The relations build", cancel) as budget:
        report = build_relations(lib, workspace=args.workspace, method=args.method, queries=queries,
                                 question_fn=question_fn,
                                 synthetic=not args.no_synthetic, retriever=args.retriever, params=params,
                                 incremental=not args.full, progress=progress, cancel=budget)
    if args.json:
        print(json.dumps(report.to_json(), indent=1))
        return 0
    what = ", ".join(f"{n} {k}" for k, n in report.queries.items()) or "none"
    label = "queries" if report.method == "edrmq" else "inputs"
    print(f"{report.method} relations for {report.scope}: {report.documents} documents, {report.pairs} related pairs "
          f"({label}: {what}){' [incremental]' if report.incremental else ''} in {report.seconds:.1f}s")
    if report.clusters is not None:
        print(f"  {report.clusters} co-occurrence clusters")
    for note in report.notes:
        print(f"  note: {printable(note)}")
    return 0


@_guard
def run_top(args) -> int:
    from spar_desktop.core.relations.service import related_files

    if args.k < 1:
        raise CommandError("--k must be at least 1")
    method, rows = related_files(open_library(args), args.file, args.k, args.workspace, args.method)
    if args.json:
        print(json.dumps({"method": method, "related": [r.__dict__ for r in rows]}, indent=1, ensure_ascii=False))
        return 0
    if not rows:
        print(f"no related files found ({method})")
        return 0
    for i, r in enumerate(rows, 1):
        print(f"[{i}] {r.weight:.4f}  {printable(r.path)}  ({printable(r.title)})")
    print(f"{len(rows)} related files ({method})", file=sys.stderr)
    return 0


@_guard
def run_export(args) -> int:
    from spar_desktop.core.relations.service import export_relations

    fmt = args.format or args.out.rsplit(".", 1)[-1].lower()
    if fmt not in ("gexf", "graphml"):
        raise CommandError("give --format gexf|graphml or an OUT ending in .gexf / .graphml")
    if args.top < 0 or args.iterations < 1:
        raise CommandError("--top must be >= 0 and --iterations >= 1")
    options = dict(workspace=args.workspace, method=args.method, top_per_node=args.top or None,
                   layout=not args.no_layout, iterations=args.iterations)
    with _cancellable("graph") as (progress, cancel):
        if args.around:
            from spar_desktop.core.relations.graph import export_graph
            from spar_desktop.core.relations.neighbourhood import stored_neighbourhood_graph

            from spar_desktop.core.memory_budget import memory_budget

            with memory_budget("The graph export", cancel) as budget:
                G = stored_neighbourhood_graph(open_library(args), args.around, args.hops, progress=progress,
                                               cancel=budget, **options)
            out = export_graph(G, args.out, fmt)
        else:
            out = export_relations(open_library(args), args.out, fmt, progress=progress, cancel=cancel, **options)
    print(f"wrote {printable(out)}" + (f" ({G.number_of_nodes()} files within {args.hops} hop"
                                       f"{'s' if args.hops > 1 else ''} of {printable(args.around)})" if args.around else ""))
    return 0


@_guard
def run_search(args) -> int:
    from spar_desktop.core.relations.expanded_search import expanded_search
    from spar_desktop.core.workspaces.errors import WorkspaceError

    if args.k < 1 or not 1 <= args.k_v <= args.k:
        raise CommandError("need 1 <= --k-v <= --k")
    try:
        res = expanded_search(open_library(args), args.workspace, args.query, variant=args.variant, k=args.k,
                              k_v=args.k_v, alpha=args.alpha)
    except WorkspaceError as exc:
        raise CommandError(str(exc)) from exc
    if args.json:
        print(json.dumps({"variant": res.variant, "hits": [h.__dict__ for h in res.hits]}, indent=1,
                         ensure_ascii=False))
        return 0
    for i, h in enumerate(res.hits, 1):
        print(f"[{i}] {printable(h.path)}  (cluster {h.cluster}{', added by its cluster' if h.from_cluster else ''})")
    print(f"{len(res.hits)} files ({res.variant})", file=sys.stderr)
    return 0


@_guard
def run_eval_sessions(args) -> int:
    from spar_desktop.core.eval.beir import BeirError
    from spar_desktop.core.relations.beir_sessions import evaluate_beir_sessions

    if args.k < 1 or not 1 <= args.k_v <= args.k:
        raise CommandError("need 1 <= --k-v <= --k")
    if not 0.0 <= args.holdout < 1.0:
        raise CommandError("--holdout must be in [0, 1)")
    settings = settings_from_args(args)
    try:
        with _cancellable("sessions") as (progress, cancel):
            report, extras = evaluate_beir_sessions(args.beir, args.split, settings.data_dir, k=args.k, k_v=args.k_v,
                                                    alpha=args.alpha, holdout=args.holdout, seed=args.seed,
                                                    device=args.device or settings.embedding_device,
                                                    runtime=settings.embed_runtime, progress=progress, cancel=cancel)
    except (BeirError, ValueError) as exc:
        raise CommandError(str(exc)) from exc
    data = {**report.to_json(), "setup": extras}
    if args.json == "-":
        print(json.dumps(data, indent=1))
        return 0
    print(f"{extras['dataset']}/{extras['split']}: {report.sessions} sessions (mean {report.mean_session_size} "
          f"documents), {extras['documents']} documents, {extras['clusters']} clusters, holdout {extras['holdout']}")
    for name, s in report.systems.items():
        delta = ""
        if s.coverage_delta is not None:
            lo, hi = s.coverage_delta_ci95
            delta = f"  Δ {s.coverage_delta:+.3f} [{lo:+.3f}, {hi:+.3f}]"
        calls = "  ".join(f"{t}: {v['mean']:.2f}" for t, v in s.calls.items())
        print(f"  {name:<8} coverage@{report.k} {s.coverage:.3f} [{s.coverage_ci95[0]:.3f}, {s.coverage_ci95[1]:.3f}]"
              f"{delta}   calls {calls}")
    if args.json:
        from pathlib import Path

        Path(args.json).write_text(json.dumps(data, indent=1), encoding="utf-8")
        print(f"report written to {args.json}")
    return 0

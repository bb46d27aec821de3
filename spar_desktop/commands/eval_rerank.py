"""`spar eval --rerank ollama` (conditional reranking through the configured Ollama, as search and
chat apply it) and `spar eval --calibrate-rerank` (tau by the Wilson lower bound, written to the
data dir for every workspace search)."""

from __future__ import annotations

import argparse
import sys

from spar_desktop.commands.common import CommandError, emit_report


def add_rerank_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("conditional reranking (paper 002 §3.4.2)")
    g.add_argument("--calibrate-rerank", action="store_true",
                   help="calibrate tau on this split's queries (smallest tau whose skipped queries have a 95%% "
                   "Wilson lower bound on top-5 precision >= --tau-beta, default 0.9, n >= 30) and write it to "
                   "DATA_DIR/rerank.json, which search and chat use")


def run_rerank_cmd(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from spar_desktop.commands.common import StderrProgress, settings_from_args
    from spar_desktop.core.eval.beir import BeirError, load_beir
    from spar_desktop.core.eval.rerank_eval import DEFAULT_BETA, calibrate, evaluate_rerank
    from spar_desktop.core.eval.runner import build_searcher, chunker_config_from
    from spar_desktop.core.retrieval.conditional_rerank import load_calibration, save_calibration
    from spar_desktop.core.workspaces.reranking import reranker_from_settings

    if args.method != "hybrid":
        raise CommandError("conditional reranking applies to --method hybrid (tau is a threshold on the fused score)")
    beta = DEFAULT_BETA if args.tau_beta is None else args.tau_beta
    if not 0.0 <= beta <= 1.0:
        raise CommandError("--tau-beta must be between 0 and 1")
    settings = settings_from_args(args)
    reranker = None
    if args.rerank == "ollama":
        reranker = reranker_from_settings(replace(settings, rerank_results=True))  # asked for explicitly
    try:
        dataset = load_beir(args.beir, args.split).limit_queries(args.max_queries)
    except BeirError as exc:
        raise CommandError(str(exc)) from exc
    progress = StderrProgress(f"eval {dataset.name}")
    report: dict = {}
    try:
        searcher, info = build_searcher(dataset, settings.data_dir, dense=True, runtime=settings.embed_runtime,
                                        device=args.device or settings.embedding_device,
                                        config=chunker_config_from(settings), progress=progress)
        if args.calibrate_rerank:
            cal = calibrate(searcher, dataset, beta, progress=progress)
            path = save_calibration(cal, settings.layout.rerank_calibration)
            report["calibration"] = {**cal.to_json(), "path": str(path)}
        if reranker is not None:
            tau = args.tau if args.tau is not None else load_calibration(settings.layout.rerank_calibration).tau
            report["rerank"] = evaluate_rerank(searcher, dataset, reranker, tau, args.k, progress=progress)
    finally:
        progress.finish()
    report["index"] = info.__dict__
    return emit_report(args.json, report, print_rerank)


def print_rerank(r: dict) -> None:
    if "calibration" in r:
        c = r["calibration"]
        if c["tau"] is None:
            print(f"calibration: no tau keeps top-5 precision >= {c['beta']} on 30+ of {c['queries']} queries: "
                  f"every unsure-or-not query will be reranked ({c['path']})")
        else:
            print(f"calibration: tau {c['tau']:.4f} on {c['queries']} queries; {c['skipped']} skipped with top-5 "
                  f"precision >= {c['precision_lower']:.3f} (95% Wilson lower bound, beta {c['beta']}) -> {c['path']}")
    if "rerank" in r:
        x, st = r["rerank"], r["rerank"]["stats"]
        k = x["k"]
        tau = "none (rerank all)" if x["tau"] is None else f"{x['tau']:.4f}"
        print(f"{x['dataset']} / {x['split']}: {x['queries']} queries, reranker {x['model']}, tau {tau}")
        print(f"  asked the model for {st['reranked']}/{st['queries']} ({st['rate']:.0%}), {st['fell_back']} kept "
              f"the fused order, {st['ms_per_reranked_query']:.0f} ms per reranked query")
        for name in (f"ndcg@{k}", f"recall@{k}", f"mrr@{k}", "ndcg@1"):
            if name in x["without"]:
                print(f"  {name:<10} {x['without'][name]:.4f} -> {x['with'][name]:.4f}")
        if st["fell_back"] == st["reranked"] and st["reranked"]:
            print("  note: every rerank fell back (is Ollama running with the model pulled?)", file=sys.stderr)

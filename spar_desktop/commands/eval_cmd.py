"""`spar eval`: retrieval quality (nDCG, Recall, MRR, Hits) and latency on a BEIR collection."""

from __future__ import annotations

import argparse
import sys

from spar_desktop.commands.common import CommandError, emit_report


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "eval",
        help="evaluate retrieval on a BEIR-format folder (corpus.jsonl, queries.jsonl, qrels/<split>.tsv)",
        description="Index a BEIR collection through the app's own pipeline (vectors are cached in "
        "the data dir, so re-runs are fast) and report nDCG@k, Recall@k, MRR@k, Hits@k and latency.",
    )
    p.add_argument("--beir", required=True, metavar="DIR", help="BEIR collection folder")
    p.add_argument("--split", default="test", help="qrels split to evaluate (default: test)")
    p.add_argument("--method", choices=("bm25", "dense", "hybrid", "naive-fusion", "naive-bm25", "naive-dense"),
                   default="hybrid",
                   help="hybrid (the app's search), bm25 or dense alone; naive-fusion is the baseline the "
                   "default must beat: bm25s over whole documents + MiniLM on each document's first 256 "
                   "tokens, min-max normalised, weight 0.5, no chunking (naive-bm25 / naive-dense: its parts)")
    from spar_desktop.commands.eval_chunking import add_chunking_option

    add_chunking_option(p)
    p.add_argument("--keyword-unit", choices=("parent", "chunk"), default=None,
                   help="what BM25 scores: whole parent sections (default) or the child chunks")
    from spar_desktop.commands.eval_learning import add_learning_options, alpha_arg

    p.add_argument("--alpha", type=alpha_arg, default=None,
                   help="dense weight in TM2C2 fusion, 0 = BM25 only, 1 = dense only (default: built-in); "
                   "'learned' (ridge on query features) or 'learned-gbt' (boosted trees with score features) "
                   "fits it per query on training queries and compares with the fixed weight")
    p.add_argument("--fusion", choices=("tm2c2", "rrf"), default="tm2c2")
    p.add_argument("--fill-missing", choices=("exact", "zero"), default=None,
                   help="TM2C2: score a chunk only one retriever proposed with the other's true score "
                   "(exact) or with the normalised minimum 0 (zero); default: built-in")
    p.add_argument("--k", type=int, default=10, help="cut-off for the metrics (default: 10)")
    p.add_argument("--json", metavar="OUT", help="also write the full report as JSON to this file ('-' for stdout)")
    p.add_argument("--max-queries", type=int, default=None, metavar="N", help="evaluate only the first N queries")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default=None,
                   help="embedding device (default: the setting, normally auto)")
    from spar_desktop.commands.relations_cmd import add_eval_options  # session metrics (relations)

    add_eval_options(p)
    add_learning_options(p)  # --erm-train, --alpha learned, --rerank conditional|ollama
    from spar_desktop.commands.eval_rerank import add_rerank_options

    add_rerank_options(p)  # --calibrate-rerank
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from spar_desktop.commands.common import StderrProgress, settings_from_args
    from spar_desktop.core.eval.beir import BeirError, load_beir
    from spar_desktop.core.eval.runner import build_searcher, evaluate_searcher
    from spar_desktop.core.retrieval.keyword_units import DEFAULT_KEYWORD_UNIT

    if getattr(args, "sessions", False):  # session metrics live with the relations (co-occurrence clusters)
        from spar_desktop.commands.relations_cmd import run_eval_sessions_from_eval

        return run_eval_sessions_from_eval(args)
    if isinstance(args.alpha, float) and not 0.0 <= args.alpha <= 1.0:
        raise CommandError("--alpha must be between 0 and 1")
    if args.calibrate_rerank or args.rerank == "ollama":
        from spar_desktop.commands.eval_rerank import run_rerank_cmd

        return run_rerank_cmd(args)
    if isinstance(args.alpha, str) or args.erm_train or args.rerank == "conditional":
        from spar_desktop.commands.eval_learning import run_learning_cmd

        return run_learning_cmd(args)
    if args.k < 1:
        raise CommandError("--k must be at least 1")
    if args.max_queries is not None and args.max_queries < 1:
        raise CommandError("--max-queries must be at least 1")
    settings = settings_from_args(args)
    try:
        dataset = load_beir(args.beir, args.split).limit_queries(args.max_queries)
    except BeirError as exc:
        raise CommandError(str(exc)) from exc
    for warning in dataset.warnings:
        print(f"spar: warning: {warning}", file=sys.stderr)

    progress = StderrProgress(f"eval {dataset.name}")
    if args.method.startswith("naive-"):
        return _run_naive(args, dataset, settings, progress)
    from spar_desktop.commands.eval_chunking import chunking_for

    config, chunk_fn = chunking_for(args, settings)  # --chunking (default: the settings' hierarchical)
    try:
        searcher, info = build_searcher(
            dataset, settings.data_dir, dense=args.method != "bm25",
            device=args.device or settings.embedding_device, runtime=settings.embed_runtime,
            config=config, chunk_fn=chunk_fn,
            keyword_unit=args.keyword_unit or DEFAULT_KEYWORD_UNIT, progress=progress,
        )
        report = evaluate_searcher(searcher, dataset, info, method=args.method, alpha=args.alpha,
                                   fusion=args.fusion, k=args.k, fill_missing=args.fill_missing,
                                   progress=progress)
    finally:
        progress.finish()

    return _output(args, report.to_json())


def _run_naive(args: argparse.Namespace, dataset: object, settings: object, progress: object) -> int:
    from spar_desktop.core.embedding.encoder import get_encoder
    from spar_desktop.core.eval.naive import evaluate_naive

    method = args.method.removeprefix("naive-").replace("fusion", "hybrid")
    try:
        encoder = None if method == "bm25" else get_encoder(  # type: ignore[attr-defined]
            args.device or settings.embedding_device, runtime=settings.embed_runtime,  # type: ignore[attr-defined]
            cache_dir=settings.layout.onnx_cache)  # type: ignore[attr-defined]
        report, _ = evaluate_naive(dataset, settings.data_dir, encoder, method=method, k=args.k,  # type: ignore[arg-type,attr-defined]
                                   progress=progress)  # type: ignore[arg-type]
    finally:
        progress.finish()  # type: ignore[attr-defined]
    return _output(args, report.to_json())


def _output(args: argparse.Namespace, data: dict) -> int:
    return emit_report(args.json, data, print_table)


def print_table(data: dict) -> None:
    k = data["k"]
    method = data["method"]
    if method == "naive-fusion":
        method += f" (min-max, weight {data['alpha']:.2f})"
    elif method == "hybrid":
        extra = f", alpha={data['alpha']:.2f}, missing={data['fill_missing']}" if data["alpha"] is not None else ""
        method += f" ({data['fusion']}{extra})"
    idx = data["index"]
    print(f"{data['dataset']} / {data['split']}: {data['queries']} queries, {idx['documents']} documents, "
          f"{idx['chunks']} chunks ({idx['embedded_now']} embedded now)")
    print(f"method: {method}")
    rows = [(f"nDCG@{k}", data["metrics"][f"ndcg@{k}"]),
            (f"Recall@{k}", data["metrics"][f"recall@{k}"]),
            (f"MRR@{k}", data["metrics"][f"mrr@{k}"]),
            (f"Hits@{k}", data["metrics"][f"hits@{k}"])]
    if k != 100 and "recall@100" in data["metrics"]:
        rows.append(("Recall@100", data["metrics"]["recall@100"]))
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"  {name:<{width}}  {value:.4f}")
    lo, hi = data["ndcg_ci95"]
    print(f"  {'':<{width}}  (nDCG@{k} 95% CI {lo:.4f}-{hi:.4f})")
    lat = data["latency_ms"]
    print(f"latency: p50 {lat['p50']:.1f} ms, p95 {lat['p95']:.1f} ms per query")


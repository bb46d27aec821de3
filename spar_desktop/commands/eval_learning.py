"""`spar eval` options that learn from labelled queries and score held-out ones: ERM
(--erm-train), a learned fusion weight (--alpha learned) and conditional reranking."""

from __future__ import annotations

import argparse

from spar_desktop.commands.common import CommandError, emit_report


def alpha_arg(value: str):
    if value in ("learned", "learned-gbt"):
        return value
    try:
        return float(value)
    except ValueError:
        raise argparse.ArgumentTypeError("--alpha takes a number in [0, 1], 'learned' or 'learned-gbt'") from None


def add_learning_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("learning from labelled queries (evaluated on held-out queries only)")
    g.add_argument("--erm-train", metavar="SPLIT",
                   help="evolving retrieval memory: reset keys, evolve them on SPLIT's queries (gate = qrels), "
                   "score --split without further updates; SPLIT = --split uses random shares of it")
    g.add_argument("--alpha-train", metavar="SPLIT", help="training split for --alpha learned (default: --erm-train or --split)")
    g.add_argument("--save-alpha", metavar="FILE", help="write the learned ridge model, anchored at the fixed weight; "
                   "DATA_DIR/alpha.json is used by every workspace search")
    g.add_argument("--erm-split-fraction", "--split-fraction", dest="split_fraction", type=float, default=0.5,
                   metavar="F", help="share of the queries to train on when training and scoring one split (default 0.5)")
    g.add_argument("--seeds", type=int, default=5, help="random splits to average over (default 5)")
    g.add_argument("--erm-capacity", type=int, default=None, help="expansion units kept per chunk")
    g.add_argument("--erm-top-x", type=int, default=None, help="units a key evolves from")
    g.add_argument("--erm-step", type=float, default=None, help="weight of each unit added to a key")
    g.add_argument("--erm-bm25-units", type=int, default=None,
                   help="top units whose text is appended to a BM25 key (0: only dense keys evolve)")
    g.add_argument("--rerank", choices=("none", "conditional", "ollama"), default="none",
                   help="conditional: LLM listwise reranking of held-out queries whose top fused score is below "
                   "--tau (or tau from --tau-beta on training queries); ollama: every query, as search and chat "
                   "rerank them, tau from --tau or DATA_DIR/rerank.json (--calibrate-rerank) or the default")
    g.add_argument("--tau", type=float, default=None, help="reranking threshold on the top fused score")
    g.add_argument("--tau-beta", type=float, default=None, metavar="BETA",
                   help="calibrate tau on the training queries: lowest tau whose skipped queries have a 95%% "
                   "Wilson lower bound on top-5 precision of at least BETA (n >= 30)")



def run_learning_cmd(args: argparse.Namespace) -> int:
    """--erm-train / --alpha learned / --rerank conditional: train on some queries, score others."""
    from spar_desktop.commands.common import StderrProgress, settings_from_args
    from spar_desktop.core.eval.beir import BeirError, load_beir
    from spar_desktop.core.eval.learning import LearningOptions, run_learning
    from spar_desktop.core.eval.runner import build_searcher, chunker_config_from
    from spar_desktop.core.memory.config import ERMConfig

    if not 0.0 < args.split_fraction < 1.0:
        raise CommandError("--erm-split-fraction must be between 0 and 1")
    if args.seeds < 1:
        raise CommandError("--seeds must be at least 1")
    if args.rerank == "conditional" and args.tau is None and args.tau_beta is None:
        raise CommandError("--rerank conditional needs --tau T or --tau-beta BETA")
    if isinstance(args.alpha, str) and args.method != "hybrid":
        raise CommandError("--alpha learned applies to --method hybrid")
    settings = settings_from_args(args)
    train_split = args.erm_train or args.alpha_train
    try:
        evaluated = load_beir(args.beir, args.split).limit_queries(args.max_queries)
        train = load_beir(args.beir, train_split) if train_split and train_split != args.split else None
        changes = {k: v for k, v in (("capacity", args.erm_capacity), ("top_x", args.erm_top_x),
                                     ("step", args.erm_step), ("bm25_units", args.erm_bm25_units)) if v is not None}
        config = ERMConfig().with_(**changes)
    except (BeirError, ValueError) as exc:
        raise CommandError(str(exc)) from exc
    opts = LearningOptions(method=args.method, erm=bool(args.erm_train),
                           alpha=args.alpha if isinstance(args.alpha, str) else None,
                           rerank=None if args.rerank == "none" else args.rerank, tau=args.tau, tau_beta=args.tau_beta,
                           fraction=args.split_fraction, seeds=args.seeds, erm_config=config,
                           save_alpha=args.save_alpha)
    rerank_fn = None
    if opts.rerank:
        from spar_desktop.core.llm.helpers import LLMHelpers

        rerank_fn = LLMHelpers.from_settings(settings).rerank
    progress = StderrProgress(f"eval {evaluated.name}")
    try:
        searcher, info = build_searcher(evaluated, settings.data_dir, dense=True, runtime=settings.embed_runtime,
                                        device=args.device or settings.embedding_device,
                                        config=chunker_config_from(settings), progress=progress)
        if isinstance(args.alpha, float):
            searcher.use_fixed_alpha(args.alpha)
        try:
            report = run_learning(searcher, evaluated, train, opts, rerank_fn, progress)
        except ValueError as exc:  # too few labelled queries to train on, and the like
            raise CommandError(str(exc)) from exc
    finally:
        progress.finish()
    report["index"] = info.__dict__
    return emit_report(args.json, report, print_learning)


def print_learning(r: dict) -> None:
    where = f"train {r['train_split']}" + (f", {r['splits']} random splits of {r['fraction']:.0%}" if r["fraction"] else "")
    print(f"{r['dataset']} / {r['split']} ({where}); held-out queries only")
    if "erm" in r:
        for method, data in r["erm"]["methods"].items():
            for k, v in data["summary"].items():
                print(f"  ERM {method:<6} {k:<8} without {v['base']:.4f}  with {v['erm']:.4f} "
                      f"(±{v['erm_std']:.4f})  {v['delta_pct']:+.1f}%")
    if "alpha" in r:
        a = r["alpha"]
        s = a["summary"]
        print(f"  alpha: fixed {a['fixed_alpha']:.2f}  nDCG@10 {s['fixed_ndcg@10']:.4f}  nDCG@1 {s['fixed_ndcg@1']:.4f}")
        print(f"  alpha: {a['model']:<5}       nDCG@10 {s['learned_ndcg@10']:.4f}  nDCG@1 {s['learned_ndcg@1']:.4f}")
        print(f"  alpha: {a['model']:<5} around {a['fixed_alpha']:.2f} nDCG@10 {s['anchored_ndcg@10']:.4f}  "
              f"nDCG@1 {s['anchored_ndcg@1']:.4f}")
    if "rerank" in r:
        x = r["rerank"]
        st = x["stats"]
        tau = "none qualified: rerank all" if x["tau"] is None else f"{x['tau']:.3f}"
        print(f"  rerank: tau {tau}; reranked {st['reranked']}/{st['queries']} ({st['rate']:.0%}), "
              f"{st['fell_back']} fell back, {st['ms_per_reranked_query']:.0f} ms each")
        print(f"  rerank: nDCG@10 {x['without']['ndcg@10']:.4f} -> {x['with']['ndcg@10']:.4f}, "
              f"nDCG@1 {x['without']['ndcg@1']:.4f} -> {x['with']['ndcg@1']:.4f}")

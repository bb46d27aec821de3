"""ERM benchmark (paper 001 §5.1 protocol) plus learned-vs-fixed fusion weight (paper 002 §3.3.3).

For each collection: keys reset, evolve on a random share of the labelled queries (gate = qrels,
local pseudo-relevance-feedback units), score the held-out queries with no further updates;
nDCG@1/@10 for bm25, dense and hybrid without and with ERM, averaged over seeds. Then the learned
alpha (ridge, and boosted trees) against the fixed default on the same splits, and hybrid query
latency (encoding included) with the original vs the evolved keys, interleaved query by query.
Vectors come from the embedding cache in --data-dir (first run on a 2-core CPU: minutes).
Usage: python benchmarks/erm.py [--data-dir DIR] [--collections scifact:train,nfcorpus:dev]
       [--seeds 5] [--fraction 0.5] [--latency-queries 200] [--out results.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from spar_desktop.core.config import load_settings  # noqa: E402
from spar_desktop.core.eval.beir import load_beir  # noqa: E402
from spar_desktop.core.eval.learning import learned_alpha  # noqa: E402
from spar_desktop.core.eval.runner import build_searcher, chunker_config_from  # noqa: E402
from spar_desktop.core.memory import protocol as P  # noqa: E402
from spar_desktop.core.memory.config import ERMConfig  # noqa: E402
from tests.support.corpora import shared_data  # noqa: E402


def bench(name: str, split: str, args: argparse.Namespace, config: ERMConfig) -> dict:
    ds = load_beir(shared_data(name), split)
    settings = load_settings(args.data_dir)
    t0 = time.perf_counter()
    searcher, info = build_searcher(ds, settings.data_dir, device="cpu", config=chunker_config_from(settings))
    prepared = P.prepare(searcher, ds.queries, config)
    prep_s = time.perf_counter() - t0
    out: dict = {"collection": name, "split": split, "queries": len(ds.queries), "documents": info.documents,
                 "chunks": info.chunks, "setup_seconds": round(prep_s, 1)}
    t1 = time.perf_counter()
    out["erm"] = P.run(searcher, prepared, ds.qrels, methods=tuple(args.methods.split(",")), seeds=args.seeds,
                       fraction=args.fraction, config=config)
    out["erm_seconds"] = round(time.perf_counter() - t1, 1)
    splits = [P.split_queries(list(ds.queries), args.fraction, s) for s in range(args.seeds)]
    if not args.no_alpha:
        out["alpha"] = {kind: learned_alpha(searcher, prepared, ds.qrels, splits, kind) for kind in ("ridge", "gbt")}
    if args.latency_queries:
        train, test = splits[0]
        evolved, _ = P.train(searcher, prepared, ds.qrels, train, "hybrid", config)
        texts = [ds.queries[q] for q in test[: args.latency_queries]]
        orig_lat, evo_lat = P.latency_ms([searcher, evolved], texts, "hybrid")
        out["latency_ms"] = {"original_keys": orig_lat, "evolved_keys": evo_lat, "queries": len(texts),
                             "evolved_chunks": len(evolved.overrides)}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default=None, help="data dir whose embedding cache to use (default: settings)")
    ap.add_argument("--collections", default="scifact:train,nfcorpus:dev")
    ap.add_argument("--methods", default="bm25,dense,hybrid")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--fraction", type=float, default=0.5)
    ap.add_argument("--latency-queries", type=int, default=200)
    ap.add_argument("--no-alpha", action="store_true")
    ap.add_argument("--config", default="{}", help="ERMConfig overrides as JSON, e.g. '{\"step\": 0.5}'")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    config = ERMConfig(**json.loads(args.config))
    results = []
    for item in args.collections.split(","):
        name, split = item.split(":")
        results.append(bench(name, split, args, config))
        print(f"done {name}/{split}", file=sys.stderr, flush=True)
    text = json.dumps({"benchmark": "erm", "results": results}, indent=1, default=str)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

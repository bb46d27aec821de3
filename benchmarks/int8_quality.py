"""int8 vs fp32 ONNX encoder (issue 30): nDCG@10 of the product's retrieval on the four development
sets with paired 95% CIs over queries, how far the vectors move, and encode throughput side by side.

Each variant has its own data dir under ``--work`` (the content-keyed embedding cache keyed by the
encoder's model id), so every corpus is embedded once per variant and a rerun embeds nothing.
Retrieval is the product's (core/eval/runner.py: extract → chunk → embedding cache →
HybridSearcher, the shipped hybrid default) plus dense alone, where the encoder's effect is
undiluted by BM25. The paired bootstrap resamples queries jointly (int8 minus fp32).

``--seed-fp32-cache DB`` copies an existing fp32 embedding cache into the fp32 data dir first (same
model id and chunker key: a content-keyed cache can be reused); ``parity`` then re-encodes a sample
of its chunks with fp32 now and reports the cosine, so a stale seed would show.

Throughput encodes the same sample of child chunks (mixed from the sets) with both encoders through
``Encoder.encode`` (the pipeline's call), alternating variants per round on the same threads.

Usage: python benchmarks/int8_quality.py --work /tmp/int8q [--sets scifact,...] [--out JSON]
       [--seed-fp32-cache DB] [--max-docs scifact=1000,...] [--throughput-texts 384] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from spar_desktop.core.data_layout import DataLayout  # noqa: E402
from spar_desktop.core.embedding.encoder import get_encoder  # noqa: E402
from spar_desktop.core.embedding.pipeline import content_hash  # noqa: E402
from spar_desktop.core.eval import metrics as m  # noqa: E402
from spar_desktop.core.eval.beir import BeirDataset, load_beir  # noqa: E402
from spar_desktop.core.eval.runner import build_searcher, evaluate_searcher  # noqa: E402
from tests.support.corpora import shared_data  # noqa: E402

SETS = {"medline1033": "test", "pubmedqa": "train", "nfcorpus": "dev", "scifact": "train"}
VARIANTS = {"fp32": "onnx", "int8": "onnx-int8"}
METHODS = ("hybrid", "dense")


def encoder_for(variant: str, work: Path) -> Any:
    data_dir = work / variant
    return get_encoder("cpu", runtime=VARIANTS[variant], cache_dir=DataLayout(data_dir).onnx_cache)


def seed_cache(source: Path, target_dir: Path) -> bool:
    """Copy an fp32 cache in (SQLite's backup API: consistent even if another process writes it)."""
    target = DataLayout(target_dir).embeddings
    if target.exists():
        return False
    target_dir.mkdir(parents=True, exist_ok=True)
    src, dst = sqlite3.connect(f"file:{source}?mode=ro", uri=True), sqlite3.connect(target)
    with dst:
        src.backup(dst)
    src.close()
    dst.close()
    return True


def cached_vectors(db: Path, hashes: list[str], model_id: str) -> dict[str, np.ndarray]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    out: dict[str, np.ndarray] = {}
    for i in range(0, len(hashes), 500):
        part = hashes[i:i + 500]
        rows = con.execute(f"SELECT content_hash, dim, n_vectors, vectors FROM documents WHERE model_id = ? "
                           f"AND content_hash IN ({','.join('?' * len(part))})", [model_id, *part]).fetchall()
        for h, dim, n, blob in rows:
            out[h] = np.frombuffer(blob, dtype="<f4").reshape(n, dim)
    con.close()
    return out


def vector_agreement(work: Path, hashes: list[str], ids: dict[str, str]) -> dict[str, Any]:
    """Per-chunk cosine between the two variants' cached vectors of the same chunks."""
    a = cached_vectors(DataLayout(work / "fp32").embeddings, hashes, ids["fp32"])
    b = cached_vectors(DataLayout(work / "int8").embeddings, hashes, ids["int8"])
    cos = np.concatenate([np.sum(a[h] * b[h], axis=1) for h in a if h in b and a[h].shape == b[h].shape])
    return {"chunks": int(cos.size), "min": round(float(cos.min()), 4), "p1": round(float(np.percentile(cos, 1)), 4),
            "mean": round(float(cos.mean()), 5)}


def subset(ds: BeirDataset, max_docs: int, seed: int = 30) -> tuple[BeirDataset, str]:
    """At most ``max_docs`` documents, the same for both variants. When every judged document fits,
    all of them plus random others and every query; otherwise a random sample of the corpus and
    the queries with a relevant document in it (their qrels cut to the sample)."""
    if max_docs <= 0 or len(ds.corpus) <= max_docs:
        return ds, "full"
    rng = random.Random(seed)
    judged = sorted({d for q in ds.queries for d in ds.qrels[q] if d in ds.corpus})
    if len(judged) <= max_docs:
        others = sorted(set(ds.corpus) - set(judged))
        keep = set(judged) | set(rng.sample(others, max_docs - len(judged)))
        how = f"all {len(judged)} judged documents + {max_docs - len(judged)} random others; all queries"
    else:
        keep = set(rng.sample(sorted(ds.corpus), max_docs))
        how = f"{max_docs} random documents; the queries with a relevant document among them"
    qrels = {q: {d: g for d, g in rel.items() if d in keep} for q, rel in ds.qrels.items()}
    queries = {q: t for q, t in ds.queries.items() if any(g > 0 for g in qrels.get(q, {}).values())}
    corpus = {d: doc for d, doc in ds.corpus.items() if d in keep}
    return BeirDataset(ds.name, ds.split, corpus, queries, {q: qrels[q] for q in queries}, ds.warnings), how


def run_set(name: str, work: Path, encoders: dict[str, Any], max_docs: int) -> dict[str, Any]:
    full = load_beir(shared_data(name), SETS[name])
    ds, how = subset(full, max_docs)
    out: dict[str, Any] = {"split": ds.split, "queries": len(ds.queries), "documents": len(ds.corpus),
                           "full_split": {"queries": len(full.queries), "documents": len(full.corpus)},
                           "subset": how, "build": {}, "results": {}, "paired_int8_minus_fp32": {}}
    per_query: dict[tuple[str, str], dict[str, float]] = {}
    for variant, enc in encoders.items():
        searcher, info = build_searcher(ds, work / variant, encoder=enc)
        out["build"][variant] = {"chunks": info.chunks, "embedded_now": info.embedded_now, "seconds": info.seconds,
                                 "model_id": info.model_id}
        for method in METHODS:
            rep = evaluate_searcher(searcher, ds, info, method=method)
            per_query[(variant, method)] = rep.per_query_ndcg
            out["results"].setdefault(method, {})[variant] = {"ndcg@10": rep.metrics["ndcg@10"],
                                                              "ci95": list(rep.ndcg_ci95),
                                                              "recall@100": rep.metrics.get("recall@100")}
        print(name, variant, {k: v[variant]["ndcg@10"] for k, v in out["results"].items()}, info, flush=True)
    for method in METHODS:
        a, b = per_query[("int8", method)], per_query[("fp32", method)]
        qs = list(b)
        mean, lo, hi = m.paired_bootstrap([a[q] for q in qs], [b[q] for q in qs], n_resamples=10000)
        changed = sum(1 for q in qs if abs(a[q] - b[q]) > 1e-9)
        out["paired_int8_minus_fp32"][method] = {"diff": round(mean, 4), "ci95": [round(lo, 4), round(hi, 4)],
                                                 "queries_changed": changed,
                                                 "within_noise": lo <= 0.0 <= hi or lo > 0.0}
    hashes = [content_hash(d.full_text) for d in ds.corpus.values()]
    out["vector_cosine"] = vector_agreement(work, hashes, {v: e.model_id for v, e in encoders.items()})
    return out


def sample_chunks(work: Path, model_id: str, n: int, seed: int = 7) -> list[str]:
    con = sqlite3.connect(f"file:{DataLayout(work / 'fp32').embeddings}?mode=ro", uri=True)
    texts = [r[0] for r in con.execute("SELECT text FROM chunks WHERE model_id = ? AND level IN ('child', 'flat')",
                                       [model_id])]
    con.close()
    random.Random(seed).shuffle(texts)
    return texts[:n]


def parity(work: Path, enc: Any, n: int = 128) -> dict[str, Any]:
    """Cached fp32 vectors against fp32 vectors made now for the same chunks (a stale seed shows)."""
    con = sqlite3.connect(f"file:{DataLayout(work / 'fp32').embeddings}?mode=ro", uri=True)
    rows = con.execute("SELECT content_hash, dim, n_vectors, vectors FROM documents WHERE model_id = ? "
                       "ORDER BY content_hash LIMIT ?", [enc.model_id, n]).fetchall()
    texts, cached = [], []
    for h, dim, nv, blob in rows:
        chunk_texts = [r[0] for r in con.execute(
            "SELECT text FROM chunks WHERE content_hash = ? AND model_id = ? AND level IN ('child', 'flat') "
            "ORDER BY ord", [h, enc.model_id])]
        vecs = np.frombuffer(blob, dtype="<f4").reshape(nv, dim)
        if len(chunk_texts) == nv:
            texts += chunk_texts
            cached.append(vecs)
    con.close()
    now = enc.encode(texts)
    cos = np.sum(now * np.concatenate(cached), axis=1)
    return {"documents": len(cached), "chunks": len(texts), "min_cosine": round(float(cos.min()), 6)}


def throughput(texts: list[str], encoders: dict[str, Any], rounds: int) -> dict[str, Any]:
    for enc in encoders.values():  # warm-up: session creation and arena growth are not throughput
        enc.encode(texts[:64])
    secs: dict[str, list[float]] = {v: [] for v in encoders}
    for r in range(rounds):
        order = list(encoders) if r % 2 == 0 else list(reversed(encoders))
        for variant in order:
            t0 = time.perf_counter()
            encoders[variant].encode(texts)
            secs[variant].append(time.perf_counter() - t0)
    out: dict[str, Any] = {"texts": len(texts), "rounds": rounds,
                           "threads": {v: e.threads for v, e in encoders.items()}, "seconds": secs}
    for v in encoders:
        out[f"{v}_chunks_per_s"] = round(len(texts) / statistics.median(secs[v]), 1)
    out["int8_over_fp32_speed"] = round(out["int8_chunks_per_s"] / out["fp32_chunks_per_s"], 3)
    return out


def write_md(report: dict[str, Any], path: Path) -> None:
    """The figures as markdown tables (the decision itself is written beside them by hand)."""
    lines = ["| set (split) | docs / queries | method | fp32 nDCG@10 [95% CI] | int8 nDCG@10 [95% CI] | "
             "int8 − fp32 [paired 95% CI] | queries changed | chunk cosine min / p1 / mean |",
             "|---|---|---|---|---|---|---|---|"]
    for name, r in report["sets"].items():
        cos = r["vector_cosine"]
        for method in METHODS:
            res, d = r["results"][method], r["paired_int8_minus_fp32"][method]
            cell = lambda v: f"{v['ndcg@10']:.4f} [{v['ci95'][0]:.3f}, {v['ci95'][1]:.3f}]"  # noqa: E731
            lines.append(f"| {name} ({r['split']}) | {r['documents']:,} / {r['queries']} | {method} | "
                         f"{cell(res['fp32'])} | {cell(res['int8'])} | {d['diff']:+.4f} "
                         f"[{d['ci95'][0]:+.4f}, {d['ci95'][1]:+.4f}] | {d['queries_changed']} | "
                         f"{cos['min']:.3f} / {cos['p1']:.3f} / {cos['mean']:.4f} |")
    lines += ["", "| set | documents used | how chosen |", "|---|---|---|"]
    for name, r in report["sets"].items():
        lines.append(f"| {name} | {r['documents']:,} of {r['full_split']['documents']:,} "
                     f"({r['queries']} of {r['full_split']['queries']} queries) | {r['subset']} |")
    t = report.get("throughput")
    if t:
        lines += ["", f"Encode throughput ({t['texts']} child chunks, {t['rounds']} alternated rounds, "
                  f"threads {t['threads']}): fp32 {t['fp32_chunks_per_s']} chunks/s, int8 "
                  f"{t['int8_chunks_per_s']} chunks/s, int8/fp32 = {t['int8_over_fp32_speed']}x."]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, required=True, help="one data dir per variant under it (reused)")
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "int8_quality.json")
    ap.add_argument("--seed-fp32-cache", type=Path, default=None)
    ap.add_argument("--max-docs", default="", help="e.g. scifact=1000,nfcorpus=1200: subsets (CPU time)")
    ap.add_argument("--throughput-texts", type=int, default=384)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--md", type=Path, default=None, help="write the tables as markdown from --out")
    args = ap.parse_args()
    if args.md:
        write_md(json.loads(args.out.read_text(encoding="utf-8")), args.md)
        return 0
    if args.seed_fp32_cache:
        seed_cache(args.seed_fp32_cache, args.work / "fp32")
    encoders = {v: encoder_for(v, args.work) for v in VARIANTS}
    report: dict[str, Any] = {"date": time.strftime("%Y-%m-%d %H:%M"),
                              "model_ids": {v: e.model_id for v, e in encoders.items()},
                              "fp32_cache_seeded_from": str(args.seed_fp32_cache) if args.seed_fp32_cache else None, "sets": {}}
    if args.out.exists():  # a rerun keeps the sets it does not redo
        report["sets"] = json.loads(args.out.read_text(encoding="utf-8")).get("sets", {})
    limits = {k: int(v) for k, v in (p.split("=") for p in args.max_docs.split(",") if p)}
    for name in filter(None, args.sets.split(",")):  # --sets "": only parity and throughput
        report["sets"][name] = run_set(name, args.work, encoders, limits.get(name, 0))
        args.out.write_text(json.dumps(report, indent=2), encoding="utf-8")
    report["fp32_cache_parity"] = parity(args.work, encoders["fp32"])
    if args.throughput_texts:
        texts = sample_chunks(args.work, encoders["fp32"].model_id, args.throughput_texts)
        report["throughput"] = throughput(texts, encoders, args.rounds)
    report["int8_within_noise_everywhere"] = all(
        s["paired_int8_minus_fp32"]["hybrid"]["within_noise"] for s in report["sets"].values())
    args.out.write_text(json.dumps(report, indent=2), encoding="utf-8")
    print(json.dumps({k: v for k, v in report.items() if k != "sets"}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Query benchmark: hybrid search latency (p50/p95) at 10k and 50k child chunks, and peak RSS.

Chunks are synthetic but realistic: runs of 3–6 real SciFact sentences (so BM25 sees a real
vocabulary and document-frequency profile). Embedding 50k chunks on a 2-core CPU would take most
of an hour, so each chunk's vector is the normalised mean of its sentences' real MiniLM vectors
(a pool of a few thousand embedded sentences); queries are real SciFact claims, each encoded at
query time as in the app (ONNX Runtime, one thread: no torch in the query path). The dense
backends are timed side by side: Chroma (HNSW; what workspaces use) in this process (the CLI) and
in the desktop app's helper process, and the exact numpy matrix (what `spar eval` uses). Targets: query encoding p50 of a few ms, hybrid p50 <= 10 ms at 50k chunks.
Hybrid runs with the default weight rule (BM25 flatness, issue 20) and, interleaved query by query
so both see the same machine load, with the previous fixed weight (the ``*_fixed`` rows).
Usage: python benchmarks/query.py [--sizes 10000,50000] [--queries 150] [--no-chroma] [--quick] [--runtime onnx]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import shutil
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from spar_desktop.core.config import load_settings  # noqa: E402
from spar_desktop.core.documents.types import Chunk  # noqa: E402
from spar_desktop.core.embedding.cache import CachedDocument  # noqa: E402
from spar_desktop.core.embedding.encoder import get_encoder  # noqa: E402
from spar_desktop.core.eval.beir import load_beir  # noqa: E402
from spar_desktop.core.eval.metrics import percentile  # noqa: E402
from spar_desktop.core.retrieval.fusion import DEFAULT_ALPHA, DEFAULT_ALPHA_RULE  # noqa: E402
from spar_desktop.core.retrieval.searcher import HybridSearcher  # noqa: E402
from spar_desktop.core.retrieval.vector_store import ChromaCollection, make_chroma_client  # noqa: E402
from tests.support.corpora import shared_data  # noqa: E402

CHILDREN_PER_DOC = 4
_SENT = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


def sentence_pool(n: int, rng: random.Random) -> list[str]:
    ds = load_beir(shared_data("scifact"), "train")
    sents = [s.strip() for d in ds.corpus.values() for s in _SENT.split(d.text) if 40 <= len(s.strip()) <= 400]
    rng.shuffle(sents)
    return sents[:n]


def synthetic_documents(n_chunks: int, sents: list[str], vecs: np.ndarray, rng: random.Random) -> dict[str, CachedDocument]:
    docs: dict[str, CachedDocument] = {}
    for d in range(0, n_chunks, CHILDREN_PER_DOC):
        chunks, rows, pos = [], [], 0
        kids = min(CHILDREN_PER_DOC, n_chunks - d)
        picks = [[rng.randrange(len(sents)) for _ in range(rng.randint(3, 6))] for _ in range(kids)]
        parent_text = " ".join(sents[i] for p in picks for i in p)
        chunks.append(Chunk("p0", parent_text, 0, len(parent_text), 1, 1, "parent", None))
        for j, p in enumerate(picks):
            text = " ".join(sents[i] for i in p)
            chunks.append(Chunk(f"c{j}", text, pos, pos + len(text), 1, 1, "child", "p0"))
            pos += len(text) + 1
            v = vecs[p].mean(axis=0)
            rows.append(v / np.linalg.norm(v))
        docs[f"doc{d // CHILDREN_PER_DOC}"] = CachedDocument(
            f"h{d}", "bench", "bench", tuple(chunks), np.asarray(rows, dtype=np.float32))
    return docs


def summary(lat: list[float]) -> dict[str, float]:
    return {"p50_ms": round(percentile(lat, 50), 2), "p95_ms": round(percentile(lat, 95), 2),
            "mean_ms": round(sum(lat) / len(lat), 2)}


def timed_queries(searcher: HybridSearcher, queries: list[str], method: str) -> dict[str, float]:
    searcher.search(queries[0], k=10, method=method)  # warm-up
    lat = []
    for q in queries:
        t0 = time.perf_counter()
        searcher.search(q, k=10, method=method)
        lat.append((time.perf_counter() - t0) * 1000)
    return summary(lat)


def timed_rules(searcher: HybridSearcher, queries: list[str]) -> tuple[dict[str, float], dict[str, float]]:
    """Hybrid with the default weight rule and with the previous fixed weight, alternating which
    runs first per query so machine load and caches fall on both alike."""
    fixed = {"alpha": DEFAULT_ALPHA}
    searcher.search(queries[0], k=10)
    searcher.search(queries[0], k=10, **fixed)  # warm-up
    lat: dict[bool, list[float]] = {False: [], True: []}
    for i, q in enumerate(queries):
        for is_fixed in ((False, True) if i % 2 == 0 else (True, False)):
            t0 = time.perf_counter()
            searcher.search(q, k=10, **(fixed if is_fixed else {}))
            lat[is_fixed].append((time.perf_counter() - t0) * 1000)
    return summary(lat[False]), summary(lat[True])


def rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)  # KiB on Linux


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,50000")
    ap.add_argument("--queries", type=int, default=150)
    ap.add_argument("--pool", type=int, default=2000, help="real sentences embedded to build chunk vectors")
    ap.add_argument("--no-chroma", action="store_true", help="skip the Chroma backend (its 50k build takes a minute)")
    ap.add_argument("--quick", action="store_true", help="10k chunks, 50 queries, 800-sentence pool, numpy only")
    ap.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    ap.add_argument("--runtime", default=None, choices=("onnx", "onnx-int8", "torch"),
                    help="encoder runtime (default: the app's, normally onnx)")
    args = ap.parse_args()
    sizes = [10_000] if args.quick else [int(s) for s in args.sizes.split(",")]
    n_queries = 50 if args.quick else args.queries
    pool = 800 if args.quick else args.pool
    with_chroma = not (args.quick or args.no_chroma)

    rng = random.Random(7)
    encoder = get_encoder(args.device, runtime=args.runtime)
    t0 = time.perf_counter()
    sents = sentence_pool(pool, rng)
    vecs = encoder.encode(sents)
    pool_s = time.perf_counter() - t0
    queries = list(load_beir(shared_data("scifact"), "train").queries.values())[:n_queries]

    # Query-encoding cost on its own, so the retrieval share of the latency is visible.
    enc_lat = []
    for q in queries:
        t0 = time.perf_counter()
        encoder.encode_query(q)
        enc_lat.append((time.perf_counter() - t0) * 1000)

    results = []
    for n in sizes:
        docs = synthetic_documents(n, sents, vecs, rng)
        t0 = time.perf_counter()
        searcher = HybridSearcher(docs, encoder)
        build_s = time.perf_counter() - t0
        row = {"chunks": len(searcher), "build_s": round(build_s, 2)}
        row["hybrid_numpy"], row["hybrid_numpy_fixed"] = timed_rules(searcher, queries)
        row["bm25"] = timed_queries(searcher, queries, "bm25")
        row["dense_numpy"] = timed_queries(searcher, queries, "dense")
        if with_chroma:
            # Chroma in this process (the CLI) and in the desktop app's helper process, side by side.
            for label, in_helper in (("chroma", False), ("chroma_helper", True)):
                work = Path(tempfile.mkdtemp(prefix="spar-query-bench-"))
                client = make_chroma_client(replace(load_settings(work), chroma_process=in_helper))
                try:
                    t0 = time.perf_counter()
                    chroma = HybridSearcher(docs, encoder, collection=ChromaCollection(client, f"bench-{n}", encoder.model_id))
                    row[f"{label}_build_s"] = round(time.perf_counter() - t0, 2)
                    row[f"hybrid_{label}"], row[f"hybrid_{label}_fixed"] = timed_rules(chroma, queries)
                    del chroma
                finally:
                    if in_helper:
                        client.shutdown()
                    del client
                    shutil.rmtree(work, ignore_errors=True)
        row["peak_rss_mb"] = rss_mb()
        results.append(row)
        del searcher, docs

    print(json.dumps({
        "benchmark": "query",
        "device": encoder.device,
        "runtime": f"{encoder.runtime}-{encoder.variant}",
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "alpha_rule": DEFAULT_ALPHA_RULE,
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "queries": len(queries),
        "sentence_pool": len(sents),
        "pool_embed_s": round(pool_s, 1),
        "query_encode_ms": {"p50": round(percentile(enc_lat, 50), 2), "p95": round(percentile(enc_lat, 95), 2)},
        "results": results,
        "peak_rss_mb": rss_mb(),
        "targets": {"hybrid_p50_ms_at_50k": 10},
    }, indent=2))


if __name__ == "__main__":
    main()

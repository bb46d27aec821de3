"""Embedding benchmark: our pipeline (ONNX Runtime) vs. a bare SentenceTransformer.encode on the same chunks.

Prints JSON: chunks/s through ``embed_documents`` (extraction, chunking, batching, cache writes
included, on the default ONNX encoder) and through a bare sentence-transformers model (torch) on
exactly the same chunk texts, measured side by side in one run with the same thread count, their
ratio (target >= 2.0), and how much faster a warm rebuild (everything cached) is.
Usage: python benchmarks/embed.py [--docs 200] [--repeats 2] [--quick] [--device auto] [--runtime onnx]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from spar_desktop.core.documents.chunking import chunk_document  # noqa: E402
from spar_desktop.core.documents.extract import extract_text_string  # noqa: E402
from spar_desktop.core.documents.types import ChunkerConfig  # noqa: E402
from spar_desktop.core.embedding.cache import EmbeddingCache, is_searchable  # noqa: E402
from spar_desktop.core.embedding.encoder import get_encoder  # noqa: E402
from spar_desktop.core.embedding.pipeline import content_hash, embed_documents  # noqa: E402
from spar_desktop.core.eval.beir import load_beir  # noqa: E402
from tests.support.corpora import shared_data  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=200, help="SciFact abstracts to embed (default 200)")
    ap.add_argument("--quick", action="store_true", help="150 documents, one round: a smoke run of about a minute")
    ap.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--runtime", default=None, choices=("onnx", "onnx-int8", "torch"),
                    help="our encoder's runtime (default: the app's, normally onnx)")
    ap.add_argument("--repeats", type=int, default=2, help="alternating bare/pipeline rounds; best of each")
    args = ap.parse_args()
    n_docs = 150 if args.quick else args.docs
    if args.quick:
        args.repeats = 1

    ds = load_beir(shared_data("scifact"), "train")
    docs = list(ds.corpus.values())[:n_docs]
    config = ChunkerConfig()
    encoder = get_encoder(args.device, runtime=args.runtime)
    model = encoder.sentence_transformer  # loads torch here: the baseline, never the app's path
    import torch

    torch_threads = torch.get_num_threads()
    # The same chunk texts the pipeline will embed, in corpus order.
    texts = [
        c.embed_text
        for d in docs
        for c in chunk_document(extract_text_string(d.text, d.title or None), config)
        if is_searchable(c)
    ]
    encoder.encode(texts[:64], batch_size=args.batch_size)  # warm-up: first-call costs are not throughput
    model.encode(texts[:64], batch_size=args.batch_size, show_progress_bar=False)

    # Bare and pipeline runs alternate and the best of each is kept: on a shared machine a burst
    # of background load would otherwise decide the ratio.
    bare_times, cold_times, warm_times = [], [], []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        model.encode(texts, batch_size=args.batch_size, convert_to_numpy=True, normalize_embeddings=True,
                     show_progress_bar=False)
        bare_times.append(time.perf_counter() - t0)

        work = Path(tempfile.mkdtemp(prefix="spar-embed-bench-"))
        try:
            items = [(content_hash(d.full_text), (lambda d=d: extract_text_string(d.text, d.title or None)))
                     for d in docs]
            with EmbeddingCache(work) as cache:
                before = encoder.texts_encoded
                t0 = time.perf_counter()
                result = embed_documents(items, config, encoder, cache, batch_size=args.batch_size)
                cold_times.append(time.perf_counter() - t0)
                embedded = encoder.texts_encoded - before
                t0 = time.perf_counter()
                embed_documents(items, config, encoder, cache, batch_size=args.batch_size)
                warm_times.append(time.perf_counter() - t0)
                assert encoder.texts_encoded - before == embedded, "warm rebuild must not embed"
                cache_bytes = cache.stats().file_bytes
        finally:
            shutil.rmtree(work, ignore_errors=True)
    bare_s, cold_s, warm_s = min(bare_times), min(cold_times), min(warm_times)

    n_chunks = sum(len(d.children) for d in result.values())
    assert n_chunks == len(texts) == embedded, (n_chunks, len(texts), embedded)
    bare_cps = len(texts) / bare_s
    pipe_cps = n_chunks / cold_s
    print(json.dumps({
        "benchmark": "embed",
        "device": encoder.device,
        "runtime": f"{encoder.runtime}-{encoder.variant}",
        "model_id": encoder.model_id,
        "threads": {"onnx": encoder.threads, "torch": torch_threads},
        "documents": len(docs),
        "chunks": n_chunks,
        "chunker": config.cache_key,
        "rounds": args.repeats,
        "bare_encode_s": round(bare_s, 2),
        "bare_chunks_per_s": round(bare_cps, 1),
        "pipeline_cold_s": round(cold_s, 2),
        "pipeline_chunks_per_s": round(pipe_cps, 1),
        "pipeline_over_bare": round(pipe_cps / bare_cps, 3),
        "warm_rebuild_s": round(warm_s, 3),
        "warm_rebuild_speedup": round(cold_s / warm_s, 1),
        "cache_file_bytes": cache_bytes,
        "targets": {"pipeline_over_bare": 2.0},
    }, indent=2))


if __name__ == "__main__":
    main()

"""The desktop bundle's half-precision copy of the embedding weights against the packaged float32 ones.

The bundle stores the encoder's weights as float16 (45 MB instead of 91 MB; installers/build_bundle.py)
and widens them to float32 when it builds its ONNX graph, so everything after the load runs in
float32 as before. This measures what the rounding changes, dense retrieval only, both encoders in
one run: the cosine between the two vectors of each text, how often a query's top 10 is the same,
and nDCG@10 on SciFact's train claims over a fixed 1,000-abstract subset (every judged abstract plus
a seeded random fill), with a paired 95% CI of the per-query difference.
Prints JSON (also written to --out).
Usage: python benchmarks/bundle_weights.py [--docs 1000] [--out benchmarks/results/bundle_weights.json]
"""

from __future__ import annotations

import argparse
import json
import math
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from spar_desktop.core.embedding.encoder import Encoder, bundled_model  # noqa: E402
from spar_desktop.core.embedding.safetensors_io import read_safetensors, write_safetensors  # noqa: E402

SCIFACT = ROOT.parent / "shared" / "data" / "scifact"


def half_copy(src: Path, dst: Path) -> Path:
    """The model dir with float16 weights, as the bundle build writes it."""
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("model.safetensors"))
    tensors = {k: (v.astype(np.float16) if v.dtype == np.float32 else v)
               for k, v in read_safetensors(src / "model.safetensors").items()}
    write_safetensors(dst / "model.safetensors", tensors, {"format": "pt"})
    return dst


def load_scifact(n_docs: int) -> tuple[dict, dict, dict]:
    qrels: dict[str, set[str]] = {}
    for line in (SCIFACT / "qrels" / "train.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        q, d, _ = line.split("\t")
        qrels.setdefault(q, set()).add(d)
    corpus = {}
    with (SCIFACT / "corpus.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            corpus[rec["_id"]] = f"{rec['title']}. {rec['text']}"
    judged = set().union(*qrels.values())
    rest = sorted(set(corpus) - judged)
    random.Random(13).shuffle(rest)
    keep = sorted(judged | set(rest[: max(0, n_docs - len(judged))]))
    queries = {}
    with (SCIFACT / "queries.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            if rec["_id"] in qrels:
                queries[rec["_id"]] = rec["text"]
    return {d: corpus[d] for d in keep}, queries, qrels


def ndcg10(ranked: list[str], relevant: set[str]) -> float:
    dcg = sum(1 / math.log2(i + 2) for i, d in enumerate(ranked[:10]) if d in relevant)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(10, len(relevant))))
    return dcg / ideal if ideal else 0.0


def run(encoder: Encoder, docs: dict, queries: dict) -> tuple[np.ndarray, np.ndarray, float]:
    t0 = time.perf_counter()
    dvec = encoder.encode(list(docs.values()))
    qvec = np.stack([encoder.encode_query(q) for q in queries.values()])
    return dvec, qvec, time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "bundle_weights.json")
    args = ap.parse_args()
    docs, queries, qrels = load_scifact(args.docs)
    model_dir = Path(bundled_model()[0])
    with tempfile.TemporaryDirectory() as tmp:
        half = half_copy(model_dir, Path(tmp) / "model16")
        full_enc = Encoder(model_path=str(model_dir), runtime="onnx", cache_dir=Path(tmp) / "g32")
        half_enc = Encoder(model_path=str(half), runtime="onnx", cache_dir=Path(tmp) / "g16")
        d32, q32, s32 = run(full_enc, docs, queries)
        d16, q16, s16 = run(half_enc, docs, queries)
        sizes = {"float32": (model_dir / "model.safetensors").stat().st_size,
                 "float16": (half / "model.safetensors").stat().st_size}
    ids = list(docs)
    cos = np.concatenate([(d32 * d16).sum(1), (q32 * q16).sum(1)])
    diffs, same_top10, n32, n16 = [], 0, [], []
    for i, q in enumerate(queries):
        r32 = [ids[j] for j in np.argsort(-(d32 @ q32[i]), kind="stable")[:10]]
        r16 = [ids[j] for j in np.argsort(-(d16 @ q16[i]), kind="stable")[:10]]
        same_top10 += r32 == r16
        a, b = ndcg10(r32, qrels[q]), ndcg10(r16, qrels[q])
        n32.append(a)
        n16.append(b)
        diffs.append(b - a)
    sd = statistics.stdev(diffs) if len(diffs) > 1 else 0.0
    half_width = 1.96 * sd / math.sqrt(len(diffs))
    mean_diff = statistics.fmean(diffs)
    out = {
        "benchmark": "bundle_weights",
        "docs": len(docs), "queries": len(queries),
        "weights_bytes": sizes,
        "cosine_min": round(float(cos.min()), 7), "cosine_mean": round(float(cos.mean()), 7),
        "top10_identical_share": round(same_top10 / len(queries), 4),
        "ndcg10": {"float32": round(statistics.fmean(n32), 4), "float16_weights": round(statistics.fmean(n16), 4),
                   "difference": round(mean_diff, 5),
                   "ci95": [round(mean_diff - half_width, 5), round(mean_diff + half_width, 5)]},
        "encode_s": {"float32": round(s32, 1), "float16_weights": round(s16, 1)},
        "note": "dense retrieval only; float16 weights are widened to float32 at graph build, compute stays float32",
    }
    text = json.dumps(out, indent=2)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

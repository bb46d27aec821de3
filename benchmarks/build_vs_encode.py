"""A whole workspace build, as a user runs it, against the bare model's encode of the same texts.

400 SciFact abstracts (the development corpus, title + text) are written as .txt files in a share;
`spar index` and `spar ws create` run once before any timing. Then, in one run, alternating, for
``--rounds`` rounds:
  (a) `spar ws build NAME` as a CLI subprocess, process start to exit ("ready"), on a fresh copy
      of the prepared data dir each time (cold embedding cache), once per encoder runtime
      (fp32 "onnx" and int8 "onnx-int8", through SPAR_EMBED_RUNTIME);
  (b) bare ``SentenceTransformer.encode`` of the same 400 texts in this process, model already
      loaded, torch threads equal to the ONNX threads the CLI build uses (all cores);
  (c) the encoder floor: the product's ONNX encoder (each runtime) on exactly the bare model's
      inputs (each text's first 256 tokens, length-sorted batches of 32, same threads), model
      loaded. No build can beat it without embedding less text than the bare model reads.
Prints JSON with medians and the ratio build / bare per runtime (target <= 0.6), and the floor's
ratio to bare with the tokens each side encodes. The ONNX graphs
are built once before timing, in a shared model cache, as a user's first start would.
Usage: python benchmarks/build_vs_encode.py [--docs 400] [--rounds 2] [--runtimes onnx,onnx-int8] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from spar_desktop.core.eval.beir import load_beir  # noqa: E402
from tests.support.corpora import shared_data  # noqa: E402

WS = "bench"


def write_share(share: Path, n: int) -> list[str]:
    """The first ``n`` SciFact abstracts as .txt files; returns their texts (what bare encodes)."""
    ds = load_beir(shared_data("scifact"), "train")
    texts = []
    share.mkdir(parents=True)
    for i, doc in enumerate(list(ds.corpus.values())[:n]):
        text = f"{doc.title}\n\n{doc.text}" if doc.title else doc.text
        (share / f"abstract-{i:04d}.txt").write_text(text, encoding="utf-8")
        texts.append(text)
    return texts


def spar(args: list[str], data: Path, env: dict[str, str], **kw) -> subprocess.CompletedProcess:
    # cwd outside any checkout: ``python -m`` puts it first on sys.path, ahead of PYTHONPATH's source.
    return subprocess.run([sys.executable, "-m", "spar_desktop.cli", *args], env={**env, "SPAR_DATA_DIR": str(data)},
                          capture_output=True, text=True, check=True, timeout=3600, **{"cwd": data.parent, **kw})


def timed_build(base: Path, work: Path, env: dict[str, str], runtime: str, src: Path = ROOT) -> dict:
    data = work / "data-round"
    shutil.rmtree(data, ignore_errors=True)
    shutil.copytree(base, data)  # cold: the prepared data dir, no embeddings
    renv = {**env, "SPAR_EMBED_RUNTIME": runtime, "PYTHONPATH": str(src)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = spar(["ws", "build", WS, "--json"], data, renv)
    seconds = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    report = json.loads(done.stdout)
    shutil.rmtree(data, ignore_errors=True)
    return {"seconds": round(seconds, 2), "cpu_s": round(cpu, 2), "chunks": report.get("chunks"), "embedded": report.get("embedded_chunks"),
            "ready": report.get("ready"), "in_process_s": round(report.get("seconds") or 0, 2)}


def encoder_floor(texts: list[str], variant: str, threads: int, model_cache: Path) -> dict:
    """Seconds for the product's ONNX encoder to embed the bare model's inputs (see (c) above)."""
    from spar_desktop.core.embedding.encoder import bundled_model
    from spar_desktop.core.embedding.onnx_encoder import OnnxBackend

    backend = OnnxBackend(Path(bundled_model()[0]), model_cache, variant=variant, threads=threads)
    rows = [r if len(r) <= 256 else np.concatenate([r[:255], r[-1:]]) for r in backend.tokenize(texts)]
    order = sorted(range(len(rows)), key=lambda i: len(rows[i]))
    backend.run(rows[:8])  # warm-up: sessions made, arena sized
    t0, c0 = time.perf_counter(), time.process_time()
    for k in range(0, len(order), 32):
        backend.run([rows[i] for i in order[k:k + 32]])
    return {"seconds": round(time.perf_counter() - t0, 2), "cpu_s": round(time.process_time() - c0, 2),
            "tokens": int(sum(len(r) for r in rows))}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=400)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--runtimes", default="onnx,onnx-int8")
    ap.add_argument("--out", type=Path, help="also write the JSON here")
    ap.add_argument("--model-cache", type=Path, help="a model cache with the ONNX graphs built (skips the warm-up builds)")
    ap.add_argument("--against", type=Path, help="another checkout whose CLI builds too, alternating (e.g. the commit before)")
    args = ap.parse_args()
    runtimes = [r.strip() for r in args.runtimes.split(",") if r.strip()]
    work = Path(tempfile.mkdtemp(prefix="spar-build-vs-encode-"))
    env = {k: v for k, v in os.environ.items() if k not in ("SPAR_EMBED_RUNTIME", "SPAR_DATA_DIR")}
    env.update(PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1", ANONYMIZED_TELEMETRY="False",
               SPAR_MODEL_CACHE=str(args.model_cache or work / "model-cache"))
    try:
        texts = write_share(work / "share", args.docs)
        base = work / "data-base"
        spar(["index", str(work / "share"), "--quiet"], base, env)
        spar(["ws", "create", WS, "--all-files"], base, env)
        sources = {"this": ROOT, **({"against": args.against.resolve()} if args.against else {})}
        # The other checkout builds with the first runtime only (the before/after comparison).
        runs = [(label, runtime) for runtime in runtimes for label in sources if label == "this" or runtime == runtimes[0]]
        for runtime in ([] if args.model_cache else runtimes):  # builds the ONNX graph into the shared model cache: a first start's work
            timed_build(base, work, env, runtime)

        import torch
        from sentence_transformers import SentenceTransformer

        from spar_desktop.core.embedding.encoder import bundled_model

        threads = os.cpu_count() or 1  # what OnnxBackend uses for a CLI build (threads=None)
        torch.set_num_threads(threads)
        model = SentenceTransformer(bundled_model()[0], device="cpu", local_files_only=True)
        model.encode(texts[:32], show_progress_bar=False)  # warm-up: the model is "already loaded"

        builds: dict[str, list[dict]] = {f"{label}:{r}": [] for label, r in runs}
        bare: list[float] = []
        bare_cpu: list[float] = []
        floors: dict[str, list[dict]] = {}
        for _ in range(args.rounds):
            for label, runtime in runs:
                key = f"{label}:{runtime}"
                builds[key].append(timed_build(base, work, env, runtime, sources[label]))
                print(f"build {key}: {builds[key][-1]}", file=sys.stderr)
            t0, c0 = time.perf_counter(), time.process_time()
            model.encode(texts, convert_to_numpy=True, normalize_embeddings=True, show_progress_bar=False)
            bare.append(round(time.perf_counter() - t0, 2))
            bare_cpu.append(round(time.process_time() - c0, 2))
            print(f"bare encode: {bare[-1]} s", file=sys.stderr)
            for runtime in runtimes:
                variant = "int8" if runtime == "onnx-int8" else "fp32"
                floors.setdefault(variant, []).append(encoder_floor(texts, variant, threads, Path(env["SPAR_MODEL_CACHE"])))
                print(f"encoder floor {variant}: {floors[variant][-1]}", file=sys.stderr)
        bare_med = statistics.median(bare)
        out = {
            "benchmark": "build_vs_encode",
            "documents": len(texts),
            "rounds": args.rounds,
            "threads": {"onnx_build": threads, "torch_bare": torch.get_num_threads()},
            "load_avg": [round(x, 2) for x in os.getloadavg()],
            "bare_encode_s": bare, "bare_encode_s_median": bare_med, "bare_encode_cpu_s": bare_cpu,
            "builds": {r: {"runs": v, "seconds_median": statistics.median(x["seconds"] for x in v),
                           "ratio_build_over_bare": round(statistics.median(x["seconds"] for x in v) / bare_med, 2),
                           "cpu_ratio_build_over_bare": round(statistics.median(x["cpu_s"] for x in v)
                                                              / statistics.median(bare_cpu), 2)}
                       for r, v in builds.items()},
            "encoder_floor": {v: {"runs": r, "ratio_floor_over_bare": round(statistics.median(x["seconds"] for x in r) / bare_med, 2),
                                  "cpu_ratio_floor_over_bare": round(statistics.median(x["cpu_s"] for x in r)
                                                                     / statistics.median(bare_cpu), 2)}
                              for v, r in floors.items()},
            "sources": {k: str(v) for k, v in sources.items()},
            "target_ratio": 0.6,
        }
        text = json.dumps(out, indent=2)
        print(text)
        if args.out:
            args.out.write_text(text + "\n", encoding="utf-8")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

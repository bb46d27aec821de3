"""Retrieval quality (issue 20): the shipped default vs the naive fusion vs BM25 vs dense on the
four development sets, with 95% bootstrap CIs and paired differences, plus the ablations that
show where the points come from.

Everything runs through the product's code (``spar eval``'s runner; the naive baseline is
core/eval/naive.py). Vectors come from the content-keyed embedding cache in ``--data-dir``
(first run embeds; later runs embed nothing) and query vectors are memoised per run, so the
ablations cost one encoding per query. nDCG@10 is a ranking metric: timings here are not a
latency benchmark (see query.py), but p50 per method is recorded.

The default sets the dense weight per query from BM25's flatness (fusion.py); "fixed" is the
previous default (a = 0.8 for every query), and the ``flat_ref*`` rows move the rule's reference
flatness (the weight BM25 gets per unit of sharpness) to show how sensitive the rule is.

Usage: python benchmarks/retrieval_quality.py --data-dir DIR [--sets scifact,nfcorpus,...]
       [--out benchmarks/results/retrieval_quality.json] [--no-ablations]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from spar_desktop.core.eval import metrics as m  # noqa: E402
from spar_desktop.core.eval.beir import load_beir  # noqa: E402
from spar_desktop.core.eval.naive import NaiveFusion, evaluate_naive  # noqa: E402
from spar_desktop.core.eval.runner import build_searcher, evaluate_searcher  # noqa: E402
from spar_desktop.core.retrieval import fusion as fz  # noqa: E402
from spar_desktop.core.retrieval.fusion import DEFAULT_ALPHA  # noqa: E402
from tests.support.corpora import shared_data  # noqa: E402

SETS = {"scifact": "train", "nfcorpus": "dev", "medline1033": "test", "pubmedqa": "train"}
ALPHAS = (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9)
# Reference flatness r of the rule (BM25 weight = 0.2 * sharpness / (1 - r)): 0.5 gives 0.40 per
# unit of sharpness, 0.5556 gives 0.45 (the best on SciFact + NFCorpus + PubMedQA by grid).
FLAT_REFS = (0.5, 0.5556)


class MemoEncoder:
    """The real encoder, with query vectors memoised: ablations re-run the same queries."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.memo = inner, {}
        self.model_id, self.dim = inner.model_id, inner.dim

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def encode(self, *args: Any, **kw: Any) -> np.ndarray:
        return self.inner.encode(*args, **kw)

    def encode_query(self, text: str) -> np.ndarray:
        if text not in self.memo:
            self.memo[text] = self.inner.encode_query(text)
        return self.memo[text]


def row(report: Any) -> dict[str, Any]:
    return {"ndcg@10": report.metrics["ndcg@10"], "ci95": list(report.ndcg_ci95),
            "recall@100": report.metrics.get("recall@100"), "p50_ms": report.latency_ms["p50"],
            "alpha": report.alpha, "alpha_rule": getattr(report, "alpha_rule", None),
            "_per_query": report.per_query_ndcg}


def with_reference(searcher: Any, ds: Any, info: Any, reference: float) -> dict[str, Any]:
    """The default with another reference flatness (the searcher reads fz.flatness_alpha per query)."""
    original = fz.flatness_alpha
    fz.flatness_alpha = lambda f, a0=DEFAULT_ALPHA: original(f, a0, reference)  # type: ignore[assignment]
    try:
        return row(evaluate_searcher(searcher, ds, info, method="hybrid"))
    finally:
        fz.flatness_alpha = original  # type: ignore[assignment]


def paired(a: dict, b: dict) -> dict[str, float]:
    qs = list(a["_per_query"])
    mean, lo, hi = m.paired_bootstrap([a["_per_query"][q] for q in qs], [b["_per_query"][q] for q in qs])
    return {"diff": round(mean, 4), "ci95": [round(lo, 4), round(hi, 4)]}


def run_set(name: str, data_dir: Path, encoder: MemoEncoder, ablations: bool) -> dict[str, Any]:
    ds = load_beir(shared_data(name), SETS[name])
    out: dict[str, Any] = {"split": ds.split, "queries": len(ds.queries), "documents": len(ds.corpus)}
    started = time.perf_counter()
    searcher, info = build_searcher(ds, data_dir, encoder=encoder)
    out["chunks"], out["keyword_units"] = info.chunks, len(searcher.units)
    out["chunking"] = searcher.chunking.describe()
    res = {"default": row(evaluate_searcher(searcher, ds, info, method="hybrid")),
           "fixed": row(evaluate_searcher(searcher, ds, info, method="hybrid", alpha=DEFAULT_ALPHA)),
           "bm25": row(evaluate_searcher(searcher, ds, info, method="bm25")),
           "dense": row(evaluate_searcher(searcher, ds, info, method="dense"))}
    naive = NaiveFusion.build(ds, data_dir, encoder)
    for method, label in (("hybrid", "naive_fusion"), ("bm25", "naive_bm25"), ("dense", "naive_dense")):
        res[label] = row(evaluate_naive(ds, data_dir, encoder, method=method, built=naive)[0])
    if ablations:
        for r in FLAT_REFS:
            res[f"flat_ref{r}"] = with_reference(searcher, ds, info, r)
        for a in ALPHAS:
            if a != DEFAULT_ALPHA:
                res[f"default_alpha{a}"] = row(evaluate_searcher(searcher, ds, info, method="hybrid", alpha=a))
        res["rrf"] = row(evaluate_searcher(searcher, ds, info, method="hybrid", fusion="rrf"))
        old, old_info = build_searcher(ds, data_dir, encoder=encoder, keyword_unit="chunk")
        res["chunk_bm25_hybrid"] = row(evaluate_searcher(old, ds, old_info, method="hybrid", alpha=DEFAULT_ALPHA))
        res["chunk_bm25"] = row(evaluate_searcher(old, ds, old_info, method="bm25"))
    out["paired"] = {f"default - {o}": paired(res["default"], res[o])
                     for o in ("naive_fusion", "bm25", "dense", "fixed", "naive_bm25", "naive_dense")}
    if "chunk_bm25_hybrid" in res:
        out["paired"]["default - chunk_bm25_hybrid"] = paired(res["default"], res["chunk_bm25_hybrid"])
    out["results"] = {k: {kk: vv for kk, vv in v.items() if not kk.startswith("_")} for k, v in res.items()}
    out["seconds"] = round(time.perf_counter() - started, 1)
    return out


LABELS = {"default": "**default** (parent BM25 + child dense, TM2C2, a from BM25 flatness)",
          "naive_fusion": "naive fusion", "bm25": "BM25 (default's)", "dense": "dense (default's)",
          "fixed": "previous default (same, fixed a=0.8)", "naive_bm25": "naive BM25 (bm25s, whole docs)",
          "naive_dense": "naive dense (whole docs, 256 tokens)", "chunk_bm25_hybrid": "BM25 on children, fixed a=0.8 (before issue 20)",
          "chunk_bm25": "BM25 on children", "rrf": "RRF (k=60)"}


def fmt(r: dict) -> str:
    return f"{r['ndcg@10']:.4f} [{r['ci95'][0]:.3f}, {r['ci95'][1]:.3f}]"


def write_md(report: dict, path: Path) -> None:
    """The side-by-side table, paired differences and ablations as markdown."""
    sets = list(report["sets"])
    head = "| nDCG@10 [95% CI] | " + " | ".join(f"{n} ({report['sets'][n]['split']}, {report['sets'][n]['queries']} q)"
                                             for n in sets) + " |"
    lines = [head, "|---" * (len(sets) + 1) + "|"]
    keys = [k for k in LABELS if all(k in report["sets"][n]["results"] for n in sets)]
    keys += sorted({k for n in sets for k in report["sets"][n]["results"] if k.startswith("flat_ref")})
    keys += sorted({k for n in sets for k in report["sets"][n]["results"] if k.startswith("default_alpha")})
    for k in keys:
        cells = [fmt(report["sets"][n]["results"][k]) if k in report["sets"][n]["results"] else "–" for n in sets]
        label = LABELS.get(k, k.replace("default_alpha", "fixed a="))
        if k.startswith("flat_ref"):
            label = f"default, BM25 weight {(1 - DEFAULT_ALPHA) / (1 - float(k[8:])):.2f} x sharpness (shipped: 0.43)"
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines += ["", "Paired bootstrap (same queries resampled together), default minus the other system:", "",
              "| difference [95% CI] | " + " | ".join(sets) + " |", "|---" * (len(sets) + 1) + "|"]
    for k in report["sets"][sets[0]]["paired"]:
        cells = []
        for n in sets:
            d = report["sets"][n]["paired"].get(k)
            cells.append(f"{d['diff']:+.4f} [{d['ci95'][0]:+.3f}, {d['ci95'][1]:+.3f}]" if d else "–")
        lines.append(f"| {k} | " + " | ".join(cells) + " |")
    lines += ["", "| set | documents | chunks | keyword units | mean dense weight of the default | chunking chosen |",
              "|---|---|---|---|---|---|"]
    for n in sets:
        r = report["sets"][n]
        lines.append(f"| {n} | {r['documents']:,} | {r['chunks']:,} | {r['keyword_units']:,} | "
                     f"{r['results']['default']['alpha']:.3f} | {r['chunking']} |")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-dir", required=True, type=Path, help="embedding cache folder (reused across runs)")
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "retrieval_quality.json")
    ap.add_argument("--no-ablations", action="store_true")
    ap.add_argument("--md", type=Path, default=None, help="also write the tables as markdown here")
    ap.add_argument("--md-from", type=Path, default=None, help="only write --md from this JSON report")
    args = ap.parse_args()
    if args.md_from:
        write_md(json.loads(args.md_from.read_text(encoding="utf-8")), args.md)
        return 0
    from spar_desktop.core.embedding.encoder import get_encoder

    encoder = MemoEncoder(get_encoder("cpu"))
    report: dict[str, Any] = {"date": time.strftime("%Y-%m-%d %H:%M"), "default_alpha": DEFAULT_ALPHA,
                              "alpha_rule": fz.DEFAULT_ALPHA_RULE, "flatness_reference": fz.FLATNESS_REFERENCE,
                              "sets": {}}
    for name in args.sets.split(","):
        report["sets"][name] = run_set(name, args.data_dir, encoder, not args.no_ablations)
        r = report["sets"][name]["results"]
        print(name, {k: v["ndcg@10"] for k, v in r.items()}, flush=True)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2), encoding="utf-8")
        if args.md:
            write_md(report, args.md)
    return 0


if __name__ == "__main__":
    sys.exit(main())

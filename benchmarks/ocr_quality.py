"""OCR quality and speed on real text PDFs: each page rendered like a clean scan, OCR'd, and compared
with the page's own text layer.

Pages: the PDFs of resources/sample_corpus/** (unreadable ones are listed and skipped) plus PDFs
generated from the first --abstracts SciFact abstracts (../shared/data/scifact/corpus.jsonl; title
and abstract on one page each, PyMuPDF insert_textbox, 11 pt Helvetica). Each page is rendered in
grey at --dpi and read with ``spar_desktop.core.documents.ocr.ocr_pixels`` (the app's engine,
settings and thread count). Character error rate = Levenshtein distance / reference length, on
text with whitespace runs collapsed to one space (a missing or extra space counts as an error);
also without any whitespace, which isolates the characters from the word spacing. CER also counts
reading-order differences: a table's text layer runs cell by cell, OCR reads it row by row, so
"words_missed" (reference words, as a multiset, that OCR did not produce; order-free) is reported
beside it. Pages without a text layer (a scanned sample) have no reference and are skipped.
Reports mean and median CER overall and per source, pages/s (engine load excluded, reported apart),
the engine id and its threads. Goal: mean CER <= 5 % on clean 150-dpi renders.
Prints JSON (also written to --out).
With ``--opencv both`` the same pages are read twice, in two child processes: by RapidOCR on
OpenCV and on ``spar_desktop.core.documents.opencv_subset`` (what the desktop bundle ships, without
OpenCV); the JSON gives both summaries and the differences (CER, seconds per page ratio).
Usage: python benchmarks/ocr_quality.py [--abstracts 20] [--dpi 150] [--opencv opencv|subset|both]
       [--out benchmarks/results/ocr.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from spar_desktop.core.documents import ocr  # noqa: E402

SCIFACT = ROOT.parent / "shared" / "data" / "scifact" / "corpus.jsonl"
GOAL_CER = 0.05


def cer(hypothesis: str, reference: str) -> float:
    from rapidfuzz.distance import Levenshtein  # pip install rapidfuzz (MIT): C++ edit distance

    return Levenshtein.distance(hypothesis, reference) / max(1, len(reference))


def squash(text: str) -> str:
    return " ".join(text.split())


def sample_corpus_pdfs() -> tuple[list[tuple[str, object]], list[str]]:
    import pymupdf

    docs, skipped = [], []
    for path in sorted((ROOT / "resources" / "sample_corpus").rglob("*.pdf")):
        try:
            docs.append((str(path.relative_to(ROOT)), pymupdf.open(path)))
        except Exception as exc:  # noqa: BLE001 - a deliberately damaged sample is not a text PDF
            skipped.append(f"{path.relative_to(ROOT)}: {type(exc).__name__}")
    return docs, skipped


def scifact_pdf(n: int) -> object:
    import pymupdf

    doc = pymupdf.open()
    with open(SCIFACT, encoding="utf-8") as fh:
        for _, line in zip(range(n), fh):
            rec = json.loads(line)
            page = doc.new_page(width=595, height=842)  # A4
            text = f"{rec['title']}\n\n{rec['text']}"
            page.insert_textbox(pymupdf.Rect(72, 72, 523, 770), text, fontsize=11)
    return doc


def reference_text(page) -> str:
    import pymupdf

    flags = pymupdf.TEXTFLAGS_TEXT & ~pymupdf.TEXT_PRESERVE_LIGATURES  # as extraction reads it
    return page.get_text("text", flags=flags)


def measure_page(page, dpi: int) -> dict:
    import numpy as np
    import pymupdf

    pix = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY, alpha=False)
    gray = np.frombuffer(pix.samples, np.uint8).reshape(pix.height, pix.stride)[:, : pix.width]
    t0 = time.perf_counter()
    text = ocr.ocr_pixels(gray)
    seconds = time.perf_counter() - t0
    ref, hyp = squash(reference_text(page)), squash(text)
    return {"cer": cer(hyp, ref), "cer_no_space": cer(hyp.replace(" ", ""), ref.replace(" ", "")),
            "words_missed": words_missed(hyp, ref), "seconds": seconds, "ref_chars": len(ref)}


def words_missed(hypothesis: str, reference: str) -> float:
    """Share of the reference's words (a multiset) missing from the OCR text, in any order."""
    ref = Counter(reference.lower().split())
    return sum((ref - Counter(hypothesis.lower().split())).values()) / max(1, sum(ref.values()))


def summary(rows: list[dict]) -> dict:
    cers = [r["cer"] for r in rows]
    seconds = sum(r["seconds"] for r in rows)
    return {
        "pages": len(rows),
        "cer_mean": round(statistics.fmean(cers), 4),
        "cer_median": round(statistics.median(cers), 4),
        "cer_max": round(max(cers), 4),
        "cer_no_space_mean": round(statistics.fmean(r["cer_no_space"] for r in rows), 4),
        "words_missed_mean": round(statistics.fmean(r["words_missed"] for r in rows), 4),
        "cer_pooled": round(sum(r["cer"] * r["ref_chars"] for r in rows) / sum(r["ref_chars"] for r in rows), 4),
        "pages_per_s": round(len(rows) / seconds, 3),
        "s_per_page": round(seconds / len(rows), 2),
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--abstracts", type=int, default=20, help="SciFact abstracts, one page each (default 20)")
    ap.add_argument("--dpi", type=int, default=150)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "ocr.json")
    ap.add_argument("--opencv", choices=("opencv", "subset", "both"), default=None,
                    help="what RapidOCR runs on (default: OpenCV when installed); both = side by side")
    args = ap.parse_args()
    if args.opencv == "both":
        return side_by_side(args)
    if ocr.ocr_unavailable():
        print(ocr.ocr_unavailable(), file=sys.stderr)
        return 1

    import numpy as np

    t0 = time.perf_counter()
    ocr.ocr_pixels(np.full((64, 64), 255, np.uint8))  # engine load: once per process, not per page
    load_s = time.perf_counter() - t0

    corpus, skipped = sample_corpus_pdfs()
    sources = {"sample_corpus": [(name, doc) for name, doc in corpus]}
    if SCIFACT.exists() and args.abstracts > 0:
        sources["scifact_abstracts"] = [("scifact.pdf", scifact_pdf(args.abstracts))]
    per_source, per_file, all_rows = {}, {}, []
    for source, docs in sources.items():
        rows = []
        for name, doc in docs:
            pages = [page for page in doc if len(squash(reference_text(page))) >= ocr.MIN_TEXT_CHARS]
            if not pages:
                skipped.append(f"{name}: no text layer (a scan: nothing to compare with)")
                continue
            file_rows = [measure_page(page, args.dpi) for page in pages]
            per_file[name] = [round(r["cer"], 4) for r in file_rows]
            rows += file_rows
            print(f"{name}: CER {[round(r['cer'], 3) for r in file_rows]}", file=sys.stderr, flush=True)
        per_source[source] = summary(rows)
        all_rows += rows

    overall = summary(all_rows)
    out = {
        "benchmark": "ocr_quality",
        "engine_id": ocr.OCR_ENGINE_ID,
        "threads": ocr.ocr_threads(),
        "cpus": os.cpu_count(),
        "load_avg": [round(x, 2) for x in os.getloadavg()],
        "python": platform.python_version(),
        "dpi": args.dpi,
        "engine_load_s": round(load_s, 2),
        **overall,
        "sources": per_source,
        "per_file_cer": per_file,
        "skipped": skipped,
        "goal": {"cer_mean_max": GOAL_CER, "met": overall["cer_mean"] <= GOAL_CER},
        "metric": "Levenshtein distance / reference length on whitespace-collapsed text; page text layer as reference",
    }
    text = json.dumps(out, indent=2)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text + "\n", encoding="utf-8")
    return 0


def side_by_side(args: argparse.Namespace) -> int:
    import subprocess
    import tempfile

    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for backend in ("opencv", "subset"):
            out = Path(tmp) / f"{backend}.json"
            env = dict(os.environ, SPAR_OPENCV=backend)
            subprocess.run([sys.executable, __file__, "--abstracts", str(args.abstracts), "--dpi", str(args.dpi),
                            "--out", str(out)], env=env, check=True, stdout=subprocess.DEVNULL)
            results[backend] = json.loads(out.read_text(encoding="utf-8"))
    a, b = results["opencv"], results["subset"]
    out = {
        "benchmark": "ocr_quality_opencv_vs_subset",
        "load_avg": [round(x, 2) for x in os.getloadavg()],
        "pages": a["pages"],
        "cer_mean": {"opencv": a["cer_mean"], "subset": b["cer_mean"], "difference": round(b["cer_mean"] - a["cer_mean"], 4)},
        "cer_pooled": {"opencv": a["cer_pooled"], "subset": b["cer_pooled"]},
        "words_missed_mean": {"opencv": a["words_missed_mean"], "subset": b["words_missed_mean"]},
        "s_per_page": {"opencv": a["s_per_page"], "subset": b["s_per_page"],
                       "ratio_subset_to_opencv": round(b["s_per_page"] / a["s_per_page"], 3)},
        "engine_load_s": {"opencv": a["engine_load_s"], "subset": b["engine_load_s"]},
        "per_file_cer": {name: {"opencv": a["per_file_cer"][name], "subset": b["per_file_cer"].get(name)}
                         for name in a["per_file_cer"]},
        "engine_ids": [a["engine_id"], b["engine_id"]],
    }
    text = json.dumps(out, indent=2)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

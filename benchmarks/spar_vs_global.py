"""SPAR's own experiment on real data (PubMedQA abstracts tagged with MeSH, train questions).

(a) global baseline: hybrid search over every abstract; (b) SPAR: a workspace created from the
question as its request (keywords matched to MeSH tags through the tag index; ranked admission,
issue 16: the abstracts' summary vectors are computed first, as the app's background job does),
then the same hybrid search inside it; (c) the all-or-nothing filter of earlier releases
(`--match most`), scoped the same way. Prints JSON: hit@1/hit@5 of the gold abstract, the fraction
of questions whose workspace admitted it, mean workspace size (files and % of the corpus), build
and search times. The same questions through the CLI only (no summaries step): spar_vs_global_cli.py.
Usage: python benchmarks/spar_vs_global.py [--questions N] [--data-dir DIR] [--no-build]
       [--legacy-search] [--out FILE]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from spar_desktop.core.config import load_settings  # noqa: E402
from spar_desktop.core.library.database import Library  # noqa: E402
from spar_desktop.core.library.scanner import Scanner  # noqa: E402
from spar_desktop.core.library.taxonomy import assign_from_csv  # noqa: E402
from spar_desktop.core.workspaces import ranking  # noqa: E402
from spar_desktop.core.workspaces.manager import Workspaces  # noqa: E402
from tests.support.corpora import DATA  # noqa: E402


def write_assignments(path: Path, mesh: dict[str, list[str]]) -> Path:
    """The MeSH descriptors as `spar tags assign` reads them: file name, then its tags."""
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        for doc_id, terms in mesh.items():
            if terms:
                w.writerow([f"{doc_id}.txt", *terms])
    return path


def write_corpus(root: Path) -> dict[str, list[str]]:
    """One .txt per abstract (mtime = its year), and the MeSH descriptors per file."""
    mesh: dict[str, list[str]] = {}
    root.mkdir(parents=True, exist_ok=True)
    with open(DATA / "pubmedqa" / "corpus.jsonl", encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            path = root / f"{rec['_id']}.txt"
            path.write_text(rec["text"], encoding="utf-8")
            year = int(rec["metadata"].get("year") or 2000)
            ts = datetime(year, 6, 1).timestamp()
            os.utime(path, (ts, ts))
            mesh[rec["_id"]] = rec["metadata"].get("mesh", [])
    return mesh


def load_questions(limit: int) -> list[tuple[str, str, str]]:
    queries = {}
    with open(DATA / "pubmedqa" / "queries.jsonl", encoding="utf-8") as fh:
        for line in fh:
            q = json.loads(line)
            queries[q["_id"]] = q["text"]
    out = []
    with open(DATA / "pubmedqa" / "qrels" / "train.tsv", encoding="utf-8") as fh:
        for row in list(csv.reader(fh, delimiter="\t"))[1:]:
            if row[0] in queries:
                out.append((row[0], queries[row[0]], row[1]))
    return out[:limit]


def _summary(rows: list[dict], corpus: int, prefix: str) -> dict:
    def mean(key: str):
        vals = [r[key] for r in rows if r.get(key) is not None]
        return round(statistics.fmean(vals), 4) if vals else None

    def pct(key: str, q: float):
        vals = sorted(r[key] for r in rows if r.get(key) is not None)
        return round(vals[min(len(vals) - 1, int(q * len(vals)))], 3) if vals else None

    out = {"gold_admitted": mean(f"{prefix}_gold"), "hit@1": mean(f"{prefix}_hit1"), "hit@5": mean(f"{prefix}_hit5"),
           "search_ms_p50": pct(f"{prefix}_ms", 0.5), "search_ms_p95": pct(f"{prefix}_ms", 0.95),
           "create_and_build_s_mean": mean(f"{prefix}_build_s")}
    sizes = [r[f"{prefix}_admitted"] for r in rows if f"{prefix}_admitted" in r]
    if sizes:
        out.update(mean_workspace_files=round(statistics.fmean(sizes), 2),
                   mean_workspace_pct_of_corpus=round(100 * statistics.fmean(sizes) / corpus, 2),
                   max_workspace_files=max(sizes), empty_workspaces=round(sizes.count(0) / len(sizes), 4))
    return {k: v for k, v in out.items() if v is not None}


def _run_workspace(mgr, lib, name: str, flt, gold: str, k: int, build: bool) -> dict:
    """Create ``name`` from ``flt``; whether it admitted the gold abstract; built and searched."""
    from spar_desktop.core.workspaces.selection import admitted_files

    t0 = time.perf_counter()
    try:
        _, exp = mgr.create(name, filter=flt)
    except Exception:  # noqa: BLE001 - an unscoped filter (no tag, no summary) is an empty workspace
        return {"admitted": 0, "gold": False, "hit1": False if build else None, "hit5": False if build else None,
                "ms": None, "build_s": None}
    files = admitted_files(lib, mgr.current_filter(name))
    assert len(files) == exp.admitted, "explain() and admitted_files() disagree"
    row = {"admitted": exp.admitted, "gold": any(Path(p).stem == gold for _, p, _ in files),
           "hit1": None, "hit5": None, "ms": None, "build_s": None}
    if build:
        row.update(hit1=False, hit5=False)
        if exp.admitted:
            mgr.build(name)
            row["build_s"] = time.perf_counter() - t0
            r = mgr.search(name, flt.request, k=k)
            hits = list(dict.fromkeys(Path(h.path).stem for h in r.hits))
            row.update(hit1=hits[:1] == [gold], hit5=gold in hits[:5], ms=r.latency_ms)
    mgr.delete(name)
    return row


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--questions", type=int, default=500)
    ap.add_argument("--data-dir", help="reuse a data dir (its embedding cache) across runs")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--no-build", action="store_true", help="scoping figures only: no builds or searches")
    ap.add_argument("--legacy-search", action="store_true",
                    help="also build and search the all-or-nothing workspaces (else they are only scoped)")
    ap.add_argument("--out", help="also write the JSON here")
    args = ap.parse_args()
    from spar_desktop.core.tagging.summaries import summarize_files

    work = Path(tempfile.mkdtemp(prefix="spar-vs-global-"))
    data_dir = Path(args.data_dir) if args.data_dir else work / "data"
    # Beside the data dir (scans never index the data dir itself), stable across runs so a reused
    # data dir sees the same files instead of a second copy.
    share = Path(f"{data_dir}-corpus") if args.data_dir else work / "pubmedqa"
    mesh = write_corpus(share)
    assignments = write_assignments(work / "mesh.csv", mesh)
    settings = load_settings(data_dir)
    lib = Library.open(settings)
    Scanner(lib).scan([str(share)])
    with lib.session() as s:
        assign_from_csv(s, assignments, str(share))
    mgr = Workspaces(lib)
    t0 = time.perf_counter()
    mgr.tag_index  # embeds the MeSH vocabulary once
    tag_index_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    summaries = summarize_files(lib, settings, mgr.engine.encoder)  # one vector per file (resumable)
    summaries_s = time.perf_counter() - t0
    for w in mgr.list():
        mgr.delete(w.name)
    g_report, global_build_s = None, None
    if not args.no_build:
        mgr.create("global", since=datetime(1900, 1, 1).date())
        t0 = time.perf_counter()
        g_report = mgr.build("global")
        global_build_s = time.perf_counter() - t0
    questions = load_questions(args.questions)
    rows = []
    for n, (qid, text, gold) in enumerate(questions, 1):
        row: dict = {"qid": qid}
        if not args.no_build:
            g = mgr.search("global", text, k=args.k)
            g_files = list(dict.fromkeys(Path(h.path).stem for h in g.hits))
            row.update(global_hit1=g_files[:1] == [gold], global_hit5=gold in g_files[:5], global_ms=g.latency_ms)
        for prefix, match, build in (("spar", "ranked", not args.no_build),
                                     ("legacy", "most", args.legacy_search and not args.no_build)):
            flt = mgr.filter_for(text, match=match)
            r = _run_workspace(mgr, lib, f"q-{qid}-{prefix}", flt, gold, args.k, build)
            row.update({f"{prefix}_{k}": v for k, v in r.items()})
        rows.append(row)
        if n % 25 == 0 or n == len(questions):
            result = _result(rows, len(mesh), args, summaries, summaries_s, tag_index_s, g_report, global_build_s)
            if args.out:  # a partial result survives a stopped run
                Path(args.out).write_text(json.dumps({**result, "partial": n < len(questions)}, indent=2) + "\n",
                                          encoding="utf-8")
            print(f"{n}/{len(questions)} questions: gold admitted {result['spar_ranked'].get('gold_admitted')}, "
                  f"hit@5 {result['spar_ranked'].get('hit@5')} (global "
                  f"{(result['global'] or {}).get('hit@5')})", file=sys.stderr)
    print(json.dumps(result, indent=2))


def _result(rows, corpus, args, summaries, summaries_s, tag_index_s, g_report, global_build_s) -> dict:
    result = {
        "benchmark": "spar_vs_global", "dataset": "pubmedqa train", "questions": len(rows), "corpus": corpus,
        "global": _summary(rows, corpus, "global") if not args.no_build else None,
        "spar_ranked": _summary(rows, corpus, "spar"),
        "spar_all_or_nothing": _summary(rows, corpus, "legacy"),
        "ranking": {"budget_rule": f"max({ranking.MIN_BUDGET}, {ranking.BUDGET_SHARE:.0%} of the indexed files), at most {ranking.MAX_DEFAULT_BUDGET}",
                    "similarity_weight": ranking.SIMILARITY_WEIGHT, "similarity_floor": ranking.SIMILARITY_FLOOR},
        "summaries": {"files": summaries.summarized + summaries.up_to_date, "computed_now": summaries.summarized,
                      "seconds": round(summaries_s, 1)},
        "targets": {"gold_admitted": ">= 0.95", "mean_workspace_pct_of_corpus": "<= 10",
                    "hit@5": "within 0.01 of global"},
        "tag_index_build_s": round(tag_index_s, 1),
        "paper": {"spar_hit@5": 0.895, "global_hit@5": 0.803, "spar_s": 0.015, "global_s": 0.039},
    }
    if g_report is not None:
        result["global"].update(build_s=round(global_build_s, 1), chunks=g_report.chunks)
        p50 = result["spar_ranked"].get("search_ms_p50")
        result["ratio_search_ms_p50_global_over_spar"] = round(result["global"]["search_ms_p50"] / p50, 2) if p50 else None
    return result


if __name__ == "__main__":
    main()

"""SPAR's own experiment on real data (PubMedQA abstracts tagged with MeSH, train questions).

(a) global baseline: hybrid search over every abstract; (b) SPAR: a workspace created from the
question as its request (keywords matched to MeSH tags through the tag index), then the same
hybrid search inside it. Prints JSON: hit@1/hit@5 of the gold abstract, the fraction of questions
whose filter admitted the gold abstract, mean workspace size, build and search times.
Usage: python benchmarks/spar_vs_global.py [--questions N] [--data-dir DIR]
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
from spar_desktop.core.workspaces.manager import Workspaces  # noqa: E402
from tests.support.corpora import DATA  # noqa: E402


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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--questions", type=int, default=500)
    ap.add_argument("--data-dir", help="reuse a data dir (its embedding cache) across runs")
    ap.add_argument("--k", type=int, default=5)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="spar-vs-global-"))
    data_dir = Path(args.data_dir) if args.data_dir else work / "data"
    # Beside the data dir (scans never index the data dir itself), stable across runs so a reused
    # data dir sees the same files instead of a second copy.
    share = Path(f"{data_dir}-corpus") if args.data_dir else work / "pubmedqa"
    mesh = write_corpus(share)
    assignments = work / "mesh.csv"
    with open(assignments, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        for doc_id, terms in mesh.items():
            if terms:
                w.writerow([f"{doc_id}.txt", *terms])
    settings = load_settings(data_dir)
    lib = Library.open(settings)
    Scanner(lib).scan([str(share)])
    with lib.session() as s:
        assign_from_csv(s, assignments, str(share))
    mgr = Workspaces(lib)
    t0 = time.perf_counter()
    mgr.tag_index  # embeds the MeSH vocabulary once
    tag_index_s = time.perf_counter() - t0
    for w in mgr.list():
        mgr.delete(w.name)
    mgr.create("global", since=datetime(1900, 1, 1).date())
    t0 = time.perf_counter()
    g_report = mgr.build("global")
    global_build_s = time.perf_counter() - t0
    questions = load_questions(args.questions)
    rows = []
    for n, (qid, text, gold) in enumerate(questions, 1):
        g = mgr.search("global", text, k=args.k)
        g_files = [Path(h.path).stem for h in g.hits]
        g_files = list(dict.fromkeys(g_files))
        name = f"q-{qid}"
        t0 = time.perf_counter()
        info, exp = mgr.create(name, text)
        admitted = exp.admitted
        gold_admitted = False
        s_files: list[str] = []
        s_latency = None
        if admitted:
            from spar_desktop.core.workspaces.selection import admitted_files

            gold_admitted = any(Path(p).stem == gold for _, p, _ in admitted_files(lib, mgr.current_filter(name)))
            mgr.build(name)
            build_s = time.perf_counter() - t0
            r = mgr.search(name, text, k=args.k)
            s_latency = r.latency_ms
            s_files = list(dict.fromkeys(Path(h.path).stem for h in r.hits))
        else:
            build_s = time.perf_counter() - t0
        mgr.delete(name)
        rows.append({"qid": qid, "admitted": admitted, "gold_admitted": gold_admitted,
                     "global_hit1": g_files[:1] == [gold], "global_hit5": gold in g_files[:5],
                     "spar_hit1": s_files[:1] == [gold], "spar_hit5": gold in s_files[:5],
                     "global_ms": g.latency_ms, "spar_ms": s_latency, "spar_build_s": build_s})
        if n % 25 == 0:
            print(f"{n}/{len(questions)} questions", file=sys.stderr)

    def mean(key: str) -> float:
        vals = [r[key] for r in rows if r[key] is not None]
        return round(statistics.fmean(vals), 4) if vals else None

    def pct(key: str, q: float) -> float:
        vals = sorted(r[key] for r in rows if r[key] is not None)
        return round(vals[min(len(vals) - 1, int(q * len(vals)))], 3) if vals else None

    print(json.dumps({
        "benchmark": "spar_vs_global", "dataset": "pubmedqa train", "questions": len(rows), "corpus": len(mesh),
        "global": {"hit@1": mean("global_hit1"), "hit@5": mean("global_hit5"),
                   "search_ms_p50": pct("global_ms", 0.5), "search_ms_p95": pct("global_ms", 0.95),
                   "build_s": round(global_build_s, 1), "chunks": g_report.chunks},
        "spar": {"hit@1": mean("spar_hit1"), "hit@5": mean("spar_hit5"),
                 "gold_admitted": mean("gold_admitted"),
                 "empty_workspaces": round(sum(r["admitted"] == 0 for r in rows) / len(rows), 4),
                 "mean_workspace_files": mean("admitted"),
                 "search_ms_p50": pct("spar_ms", 0.5), "search_ms_p95": pct("spar_ms", 0.95),
                 "create_and_build_s_mean": mean("spar_build_s")},
        "ratio_search_ms_p50_global_over_spar": round(pct("global_ms", 0.5) / max(pct("spar_ms", 0.5) or 1e-9, 1e-9), 2),
        "tag_index_build_s": round(tag_index_s, 1),
        "paper": {"spar_hit@5": 0.895, "global_hit@5": 0.803, "spar_s": 0.015, "global_s": 0.039},
    }, indent=2))


if __name__ == "__main__":
    main()

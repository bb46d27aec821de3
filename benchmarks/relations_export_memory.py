"""Peak memory of `spar relations export` (default options: top 10, ForceAtlas2 layout) as a user runs it.

A share of N newsgroup posts (20 Newsgroups, ../shared/data/newsgroups20; beyond its 11,314 posts the
posts repeat with a numbered line so every file differs) is indexed, its relations built with the
TF-IDF method (the cheapest whole-index build: the export's cost depends on the graph, not on how
the relations were scored), then exported to GEXF. Each step is a `spar` process; the peak RSS of
each is read from getrusage of its children. The issue's bound: 1.5 GB at 7,532 documents (the
export that was killed at 23 GB before the layout's grid was made sparse).

    python benchmarks/relations_export_memory.py [--docs 7532,20000]

Prints JSON and writes benchmarks/results/relations_export_memory.json.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "newsgroups20" / "corpus.jsonl"
RESULTS = ROOT / "benchmarks" / "results" / "relations_export_memory.json"


def write_share(root: Path, n: int) -> None:
    posts = [json.loads(line) for line in DATA.open(encoding="utf-8")]
    for i in range(n):
        p = posts[i % len(posts)]
        group = str(p["_id"]).split("/")[0].replace(".", "/")  # alt.atheism/49960 -> alt/atheism
        f = root / group / f"{i:06d}.txt"
        f.parent.mkdir(parents=True, exist_ok=True)
        extra = f"\n(copy {i // len(posts)})" if i >= len(posts) else ""
        f.write_text(f"{p.get('title') or ''}\n\n{p['text']}{extra}", encoding="utf-8")


def spar(data: Path, *args: str) -> dict:
    """Run one `spar` command; its wall time and peak RSS (this child alone)."""
    env = dict(os.environ, HF_HUB_OFFLINE="1", ANONYMIZED_TELEMETRY="False")
    t0 = time.perf_counter()
    # A fresh python per step: RUSAGE_CHILDREN's maxrss is the largest child so far, so each step
    # is measured through a wrapper process of its own.
    code = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:]); "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); sys.exit(r.returncode)")
    proc = subprocess.run([sys.executable, "-c", code, sys.executable, "-m", "spar_desktop.cli", "--data-dir", str(data),
                           *args], capture_output=True, text=True, env=env, cwd=ROOT)
    if proc.returncode != 0:
        raise SystemExit(f"spar {' '.join(args)} failed: {proc.stderr[-2000:]}")
    peak_kb = int(proc.stderr.strip().splitlines()[-1])
    return {"seconds": round(time.perf_counter() - t0, 1), "peak_mb": round(peak_kb / 1024)}


def measure(n: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="spar-export-mem-") as tmp:
        share, data = Path(tmp) / "share", Path(tmp) / "data"
        write_share(share, n)
        out = {"documents": n, "index": spar(data, "index", str(share), "--quiet"),
               "relations_build_tfidf": spar(data, "relations", "build", "--method", "tfidf", "--yes"),
               "export_gexf": spar(data, "relations", "export", str(Path(tmp) / "graph.gexf"))}
        out["gexf_mb"] = round((Path(tmp) / "graph.gexf").stat().st_size / 1e6, 1)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", default="7532,20000")
    args = ap.parse_args()
    runs = [measure(int(n)) for n in args.docs.split(",")]
    report = {"benchmark": "relations_export_memory", "load_average": os.getloadavg(), "limit_mb": 1536,
              "runs": runs, "within_limit": all(r["export_gexf"]["peak_mb"] <= 1536 for r in runs)}
    RESULTS.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

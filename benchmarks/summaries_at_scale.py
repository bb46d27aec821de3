"""A request's cost once the app's background job has summarised a big share (issue 29).

The CLI never computes every file's summary, so benchmarks/scale.py measures requests on an index
without them. The app does (a background job after each scan), and then ranked admission compares
the request with every summary in the pool. This benchmark takes a data dir made by scale.py
(`--keep-data`), copies it, and gives every readable file a summary vector as the job would leave
it: one per file, under the model id the data dir's requests used. The vectors are synthetic
(random unit vectors mixed with the request's own vector, so that about two thirds of the files
pass the likeness floor: the worst case, as every such file is a candidate) — encoding 100k real
summaries takes ~30 minutes here, and the cost measured is reading and scoring, not their quality.
Then `spar ws create --prompt` runs as a CLI subprocess under /usr/bin/time, for each source tree
given (e.g. the commit before and this one), alternated, --rounds times.

Usage: python benchmarks/summaries_at_scale.py --index /tmp/spar-scale-100000/data-after \
           --source before=DIR --source after=DIR [--rounds 2] [--json OUT]
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale import summary_line, timed  # noqa: E402

PROMPTS = ("reports from 2019", "minutes of the Falcon project")


def request_vector_and_model(db: Path) -> tuple[np.ndarray, str]:
    """The request vector and model id stored with the data dir's first ranked workspace."""
    with sqlite3.connect(db) as conn:
        for (text,) in conn.execute("SELECT filter_json FROM workspaces ORDER BY id"):
            flt = json.loads(text)
            if flt.get("request_vector") and flt.get("vector_model"):
                vec = np.frombuffer(base64.b64decode(flt["request_vector"]), dtype=np.float32)
                return vec / np.linalg.norm(vec), flt["vector_model"]
    raise SystemExit(f"{db}: no ranked workspace with a request vector (run scale.py --keep-data first)")


def add_summaries(db: Path, seed: int = 0) -> int:
    query, model = request_vector_and_model(db)
    rng = np.random.default_rng(seed)
    now = datetime.now(timezone.utc).replace(tzinfo=None).isoformat(sep=" ")
    with sqlite3.connect(db) as conn:
        files = conn.execute("SELECT id, content_hash FROM files WHERE status = 'ok' AND content_hash IS NOT NULL").fetchall()
        conn.execute("DELETE FROM file_summaries")
        for start in range(0, len(files), 10_000):
            part = files[start:start + 10_000]
            noise = rng.normal(size=(len(part), query.shape[0])).astype(np.float32)
            noise /= np.linalg.norm(noise, axis=1, keepdims=True)
            vecs = noise + rng.uniform(0.0, 1.0, size=(len(part), 1)).astype(np.float32) * query
            vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
            conn.executemany("INSERT INTO file_summaries (file_id, content_hash, model_id, text, vector, updated_at) "
                             "VALUES (?, ?, ?, ?, ?, ?)",
                             [(fid, h, model, "synthetic summary", v.astype(np.float32).tobytes(), now)
                              for (fid, h), v in zip(part, vecs)])
    return len(files)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--index", type=Path, required=True, help="a data dir kept by scale.py --keep-data")
    ap.add_argument("--source", action="append", required=True, help="LABEL=DIR: a tree whose spar_desktop runs")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    sources = dict(s.split("=", 1) for s in args.source)
    work = Path(tempfile.mkdtemp(prefix="spar-summaries-at-scale-"))
    try:
        data = work / "data"
        shutil.copytree(args.index, data, ignore=shutil.ignore_patterns("*.lock"))
        summarised = add_summaries(data / "library.sqlite3")
        runs: dict[str, list[dict]] = {label: [] for label in sources}
        spar = [sys.executable, "-c", "import sys; from spar_desktop.cli import main; sys.exit(main())"]
        n = 0
        for _ in range(args.rounds):
            for label, src in sources.items():
                for prompt in PROMPTS:
                    n += 1
                    env = dict(os.environ, HF_HUB_OFFLINE="1", ANONYMIZED_TELEMETRY="False", SPAR_DATA_DIR=str(data),
                               PYTHONPATH=str(Path(src).resolve()))
                    step = timed([*spar, "ws", "create", f"summarised-{n}", "--prompt", prompt], env, work)
                    step.update(prompt=prompt, summary_line=summary_line(step))
                    runs[label].append(step)
                    print(f"{label} {prompt!r}: {step['wall_s']} s, {step['cpu_s']} CPU s, {step['peak_rss_mb']} MB, "
                          f"exit {step['exit_code']}", file=sys.stderr)
        out = {"benchmark": "summaries_at_scale", "index": str(args.index), "summarised_files": summarised,
               "rounds": args.rounds, "load_avg": [round(x, 2) for x in os.getloadavg()], "runs": runs,
               "median": {label: {"cpu_s": statistics.median(r["cpu_s"] for r in rs),
                                  "wall_s": statistics.median(r["wall_s"] for r in rs),
                                  "peak_rss_mb": statistics.median(r["peak_rss_mb"] for r in rs)}
                          for label, rs in runs.items()}}
        text = json.dumps(out, indent=2)
        print(text)
        if args.json:
            args.json.write_text(text + "\n", encoding="utf-8")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

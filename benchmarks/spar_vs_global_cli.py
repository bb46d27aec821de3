"""SPAR vs a global search on PubMedQA, driven through the `spar` CLI as a user runs it.

No preparation step a user would not take: `spar index` the abstracts, `spar tags assign` their
MeSH descriptors, then per question `spar ws create --prompt` (each a subprocess, so every request
pays what a user's pays: imports, model load, on-demand work). Phase "cli": exactly that, with no
file summaries computed beforehand (ranking computes what it needs for its candidates on demand).
Phase "with_summaries" (--with-summaries): the app's background job (tagging.summaries,
summarize_files over every file) runs first, as in benchmarks/spar_vs_global.py, then the same
questions. Gold admitted and workspace size come from `spar ws files --json`; hit@5 (--build) from
`spar ws create --build` + `spar ws search`, the global baseline from a workspace of every file.
Prints JSON (and writes --out): per phase gold admitted, mean workspace % of the corpus, hit@5,
request (create) wall time first/p50/p95, and the ranking funnel's count of candidates ranked
without a summary.
Usage: python benchmarks/spar_vs_global_cli.py [--questions N] [--build] [--with-summaries] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from spar_vs_global import load_questions, write_assignments, write_corpus  # noqa: E402


def spar(data_dir: Path, *args: str) -> tuple[str, float]:
    """Run `spar --data-dir D ARGS...` as a user would; (stdout, wall seconds). Fails loudly."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "spar_desktop.cli", "--data-dir", str(data_dir), *args],
                       capture_output=True, text=True, env=env)
    took = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError(f"spar {' '.join(args)[:120]} failed ({p.returncode}): {p.stderr[-2000:]}")
    return p.stdout, took


def _json_tail(text: str):
    """The JSON document a command printed (progress lines go to stderr, but be lenient)."""
    return json.loads(text[text.index("{") if text.lstrip().startswith("{") else text.index("\n{") + 1:])


def run_question(data_dir: Path, name: str, text: str, gold: str, build: bool) -> dict:
    out, took = spar(data_dir, "ws", "create", name, "--prompt", text, "--json")
    created = _json_tail(out)
    exp = created["explanation"]
    files, _ = spar(data_dir, "ws", "files", name, "--json")
    stems = {Path(f["path"]).stem for f in json.loads(files)}
    rank = exp.get("ranking") or {}
    row = {"create_s": took, "admitted": exp["admitted"], "gold": gold in stems,
           "without_summary": rank.get("without_summary"), "summarised_now": created.get("summarised_now")}
    if build and exp["admitted"]:
        spar(data_dir, "ws", "build", name)
        hits, _ = spar(data_dir, "ws", "search", name, text, "--json", "--no-rerank", "--k", "10")
        found = list(dict.fromkeys(Path(h["path"]).stem for h in json.loads(hits)["hits"]))
        row.update(hit1=found[:1] == [gold], hit5=gold in found[:5])
    elif build:
        row.update(hit1=False, hit5=False)
    return row


def summarise(rows: list[dict], corpus: int) -> dict:
    def mean(key):
        vals = [float(r[key]) for r in rows if r.get(key) is not None]
        return round(statistics.fmean(vals), 4) if vals else None

    times = sorted(r["create_s"] for r in rows)
    out = {"questions": len(rows), "gold_admitted": mean("gold"), "hit@1": mean("hit1"), "hit@5": mean("hit5"),
           "mean_workspace_files": mean("admitted"),
           "mean_workspace_pct_of_corpus": round(100 * statistics.fmean(r["admitted"] for r in rows) / corpus, 2),
           "max_workspace_files": max(r["admitted"] for r in rows),
           "mean_candidates_without_summary": mean("without_summary"),
           "mean_summarised_on_demand": mean("summarised_now"),
           "create_s_first": round(rows[0]["create_s"], 2),
           "create_s_p50": round(times[len(times) // 2], 2),
           "create_s_p95": round(times[min(len(times) - 1, int(0.95 * len(times)))], 2)}
    return {k: v for k, v in out.items() if v is not None}


def run_phase(data_dir: Path, questions, prefix: str, build: bool, corpus: int, log, save=None) -> dict:
    """The questions in order; ``save(partial)`` after each, so a stopped run keeps what it measured."""
    rows = []
    for n, (qid, text, gold) in enumerate(questions, 1):
        rows.append(run_question(data_dir, f"{prefix}-{qid}", text, gold, build))
        log(f"{prefix}: {n}/{len(questions)}: {summarise(rows, corpus)}")
        if save is not None:
            save(summarise(rows, corpus))
    return summarise(rows, corpus)


def global_baseline(data_dir: Path, questions) -> dict:
    _, build_s = spar(data_dir, "ws", "create", "global", "--all-files", "--build")
    hit5 = []
    for _, text, gold in questions:
        out, _ = spar(data_dir, "ws", "search", "global", text, "--json", "--no-rerank", "--k", "10")
        found = list(dict.fromkeys(Path(h["path"]).stem for h in json.loads(out)["hits"]))
        hit5.append(gold in found[:5])
    return {"hit@5": round(statistics.fmean(hit5), 4), "build_s": round(build_s, 1)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--questions", type=int, default=100)
    ap.add_argument("--build", action="store_true", help="also build, search, and run the global baseline (hit@5)")
    ap.add_argument("--with-summaries", action="store_true",
                    help="then run the app's summaries job and ask the same questions again")
    ap.add_argument("--work", help="work folder (default: a new temporary one)")
    ap.add_argument("--skip-setup", action="store_true",
                    help="WORK/data is already indexed and tagged (a previous run): ask the questions only")
    ap.add_argument("--prefix", default="cli", help="workspace name prefix (a reused data dir needs a new one)")
    ap.add_argument("--start", type=int, default=0, help="skip the first N questions (go on after a stopped run)")
    ap.add_argument("--out", help="also write the JSON here")
    args = ap.parse_args()
    work = Path(args.work or tempfile.mkdtemp(prefix="spar-vs-global-cli-"))
    data_dir, share = work / "data", work / "pubmedqa"
    mesh = write_corpus(share)
    assignments = write_assignments(work / "mesh.csv", mesh)
    log = lambda m: print(m, file=sys.stderr, flush=True)  # noqa: E731
    result: dict = {"benchmark": "spar_vs_global_cli", "dataset": "pubmedqa train (development questions)",
                    "corpus": len(mesh), "steps": "spar index; spar tags assign; spar ws create --prompt (per question)"}
    if not args.skip_setup:
        _, result["index_s"] = spar(data_dir, "index", str(share), "--quiet")
        _, result["tags_assign_s"] = spar(data_dir, "tags", "assign", str(assignments), "--base", str(share))
    questions = load_questions(args.start + args.questions)[args.start:]
    result["questions_from"] = args.start

    def save() -> None:
        text = json.dumps(result, indent=2)
        if args.out:
            Path(args.out).write_text(text + "\n", encoding="utf-8")

    if args.build:
        result["global"] = global_baseline(data_dir, questions)
        save()
    result["cli"] = run_phase(data_dir, questions, args.prefix, args.build, len(mesh), log,
                              lambda part: (result.update(cli={**part, "partial": True}), save()))
    save()
    if args.with_summaries:
        result["with_summaries"] = with_summaries(data_dir, questions, args.build, len(mesh), log,
                                                  lambda part: (result.update(with_summaries={**part, "partial": True}),
                                                                save()))
        save()
    print(json.dumps(result, indent=2))


def with_summaries(data_dir: Path, questions, build: bool, corpus: int, log, save) -> dict:
    """The app's background job over every file (in process: the CLI has no command for it), then the questions."""
    from spar_desktop.core.config import load_settings
    from spar_desktop.core.library.database import Library
    from spar_desktop.core.tagging.summaries import summarize_files
    from spar_desktop.core.workspaces.manager import Workspaces

    settings = load_settings(data_dir)
    lib = Library.open(settings)
    t0 = time.perf_counter()
    report = summarize_files(lib, settings, Workspaces(lib).engine.encoder)
    took = time.perf_counter() - t0
    phase = run_phase(data_dir, questions, "sum", build, corpus, log, save)
    return {**phase, "summaries_job": {"summarised": report.summarized, "up_to_date": report.up_to_date,
                                       "seconds": round(took, 1)}}


if __name__ == "__main__":
    main()

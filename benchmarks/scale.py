"""Scale benchmark (issue 29): a synthetic share of N files with a realistic folder tree, driven
through the `spar` command line as a user would, each step a subprocess measured for wall time
and peak RSS (/usr/bin/time -v).

Tree: division / department / project / year / kind (reports, minutes, contracts, drawings,
correspondence, invoices), ~10 small text files per leaf folder, each file dated in its year
folder (mtime), so "from 2019" finds them. N=300,000 gives ~30,000 leaf folders, ~5,000 of them
named "reports". The share is generated under --work (default /tmp/spar-scale-<N>) and reused by
later runs with the same N; every run indexes into a fresh data dir.

Steps: `spar index SHARE` (files/s, RSS), three `spar ws create --prompt` (the first one embeds
the tag vocabulary; the later ones are what every request costs), `spar ws explain` of the
"reports" request (time, longest line), `spar files --tag` (a department's subtree).
`--source DIR` runs another checkout of spar_desktop (e.g. the previous commit, `git archive HEAD
spar_desktop resources | tar -x -C DIR`) with the same Python, for before/after figures.

`--postgres` runs every step against a PostgreSQL server started for the run (the team set-up,
tests/support/servers.py: Debian's server binaries, loopback only, a fresh database), with
auto_explain logging the plan of every statement slower than --explain-ms; the slowest plans go
into the JSON. `--pg-dir DIR` keeps that cluster in DIR (database spar_LABEL) so that
`scale_pg_requests.py` can re-run the later requests on it.

Usage: python benchmarks/scale.py --files 100000 [--label after] [--source DIR] [--postgres [--pg-dir DIR]] [--json OUT]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

DIVISIONS = {
    "Engineering": ["Asset-Management", "Design", "Maintenance", "Quality", "Safety"],
    "Finance": ["Accounts", "Audit", "Budget", "Payroll", "Tax"],
    "Operations": ["Logistics", "Facilities", "Procurement", "Planning", "Fleet"],
    "Corporate": ["Legal", "HR", "IT", "Communications", "Strategy"],
}
KINDS = ["reports", "minutes", "contracts", "drawings", "correspondence", "invoices"]
YEARS = list(range(2012, 2022))
PROJECTS = ["Falcon", "Heron", "Osprey", "Kestrel", "Condor", "Harrier", "Merlin", "Puffin", "Wren", "Swift",
            "Plover", "Curlew", "Gannet", "Tern", "Avocet", "Dunlin", "Egret", "Grebe", "Ibis", "Jay"]
WORDS = ("turbine gearbox inspection budget review audit incident contract invoice meeting minutes design "
         "drawing bearing failure schedule supplier payment safety quality report summary action risk").split()
FILES_PER_FOLDER = 10
PROMPTS = ("reports from 2019", "minutes of the Falcon project", "safety incident reports for Heron")


def project_names(n: int) -> list[str]:
    """n distinct project names: bird names, then numbered ('Falcon-2')."""
    base = len(PROJECTS)
    return [PROJECTS[i % base] + (f"-{i // base + 1}" if i >= base else "") for i in range(n)]


def generate(root: Path, n_files: int, seed: int = 0) -> int:
    """Write the share; returns the number of files. Projects per department grow with N."""
    rng = random.Random(seed)
    depts = [(d, dep) for d, deps in DIVISIONS.items() for dep in deps]
    per_project = len(YEARS) * len(KINDS) * FILES_PER_FOLDER
    n_projects = max(1, -(-n_files // (per_project * len(depts))))
    made = 0
    for p, project in enumerate(project_names(n_projects)):
        for division, dept in depts:
            for year in YEARS:
                stamp = datetime(year, 1 + (p % 12), 15).timestamp()
                for kind in KINDS:
                    if made >= n_files:
                        return made
                    folder = root / division / dept / project / str(year) / kind
                    folder.mkdir(parents=True, exist_ok=True)
                    for i in range(min(FILES_PER_FOLDER, n_files - made)):
                        path = folder / f"{kind[:-1]}-{made:07d}.txt"
                        body = f"{project} {dept} {kind} {year}\n" + " ".join(rng.choice(WORDS) for _ in range(40))
                        if not _written(path, body, stamp):  # an interrupted run resumes: same seed, same files
                            path.write_text(body, encoding="utf-8")
                            os.utime(path, (stamp, stamp))
                        made += 1
    return made


def _written(path: Path, body: str, stamp: float) -> bool:
    try:
        st = path.stat()
    except OSError:
        return False
    return st.st_size == len(body.encode("utf-8")) and st.st_mtime == stamp


def share_for(work: Path, n_files: int) -> tuple[Path, float]:
    """The share under ``work`` (generated once per N; a marker says it is complete). A run
    interrupted while generating goes on where it stopped: the files are a function of the seed."""
    root, marker = work / "share", work / f"share-{n_files}.done"
    if marker.exists():
        return root, 0.0
    t0 = time.perf_counter()
    made = generate(root, n_files)
    marker.write_text(str(made))
    return root, time.perf_counter() - t0


def timed(cmd: list[str], env: dict, cwd: Path) -> dict:
    """Run ``cmd`` under /usr/bin/time -v: wall and CPU seconds (user + system: on a shared machine
    the wall time stretches with the load, the CPU time mostly does not), peak RSS (MB), exit code,
    output tails."""
    t0 = time.perf_counter()
    proc = subprocess.run(["/usr/bin/time", "-v", *cmd], env=env, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    cpu = sum(float(m) for m in re.findall(r"(?:User|System) time \(seconds\): ([\d.]+)", proc.stderr))
    err = "\n".join(line for line in proc.stderr.splitlines() if not line.startswith("\t")).strip()
    out_lines = proc.stdout.splitlines()
    return {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "peak_rss_mb": round(int(rss[1]) / 1024) if rss else None,
            "exit_code": proc.returncode, "stdout_lines": len(out_lines),
            "longest_line": max((len(x) for x in out_lines), default=0),
            "stdout_tail": out_lines[-3:], "stderr_tail": err.splitlines()[-4:]}


def summary_line(step: dict) -> str:
    """The create command's closing line ('N files, X% of the index'), scripts read it."""
    found = [x for x in step["stdout_tail"] if re.search(r"\d+ files, \d+% of the index", x)]
    return found[-1] if found else ""


def run(args) -> dict:
    work = Path(args.work or f"/tmp/spar-scale-{args.files}")
    work.mkdir(parents=True, exist_ok=True)
    share, gen_s = share_for(work, args.files)
    data = work / f"data-{args.label}"
    shutil.rmtree(data, ignore_errors=True)
    env = dict(os.environ, HF_HUB_OFFLINE="1", ANONYMIZED_TELEMETRY="False", SPAR_DATA_DIR=str(data))
    if getattr(args, "database_url", None):
        env["SPAR_DATABASE_URL"] = args.database_url
    if args.source:
        env["PYTHONPATH"] = str(Path(args.source).resolve())
        # Byte-compiled as an install is: an archive run with PYTHONDONTWRITEBYTECODE set would
        # otherwise compile every module on every command (~0.9 s of CPU a request).
        compileall.compile_dir(str(Path(args.source) / "spar_desktop"), quiet=1)
    spar = [sys.executable, "-c", "import sys; from spar_desktop.cli import main; sys.exit(main())"]
    result: dict = {"benchmark": "scale", "label": args.label, "files": args.files,
                    "source": args.source or "working tree",
                    "backend": "postgresql" if getattr(args, "database_url", None) else "sqlite",
                    "generate_share_s": round(gen_s, 1), "load_average_1min_before": round(os.getloadavg()[0], 2)}
    scan = timed([*spar, "index", str(share), "--quiet"], env, work)
    scan["files_per_s"] = round(args.files / scan["wall_s"]) if scan["wall_s"] else None
    result["scan"] = scan
    requests = []
    for i, prompt in enumerate(PROMPTS):
        step = timed([*spar, "ws", "create", f"scale-{i + 1}", "--prompt", prompt], env, work)
        step.update(prompt=prompt, summary_line=summary_line(step))
        requests.append(step)
    result["requests"] = requests
    result["explain"] = timed([*spar, "ws", "explain", "scale-1"], env, work)
    result["files_tag"] = timed([*spar, "files", "--tag", "Engineering/Asset-Management", "--json"], env, work)
    result["files_tag"]["tag"] = "Engineering/Asset-Management"
    result["load_average_1min_after"] = round(os.getloadavg()[0], 2)
    if not args.keep_data:
        shutil.rmtree(data, ignore_errors=True)
    return result


def run_on_postgres(args) -> dict:
    """``run`` against a fresh PostgreSQL database, with the plans of its slow statements."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.support.servers import fresh_database, postgres_server

    log = Path(args.work or f"/tmp/spar-scale-{args.files}") / f"postgres-{args.label}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    # log_min_duration_statement also logs utility statements: the scan's closing VACUUM/ANALYZE.
    options = ("-c shared_preload_libraries=auto_explain -c auto_explain.log_analyze=on "
               f"-c auto_explain.log_min_duration={args.explain_ms}ms -c log_min_duration_statement={args.explain_ms}ms")
    keep = Path(args.pg_dir) if args.pg_dir else None
    with postgres_server(options, log, keep=keep) as server:
        args.database_url = fresh_database(server) if keep is None else named_database(server, f"spar_{args.label}")
        result = run(args)
    if keep is not None:
        result["postgres_cluster"] = str(keep)
    text = log.read_text(errors="replace") if log.exists() else ""
    result["statistics_after_scan"] = [{"ms": float(ms), "statement": st} for ms, st in re.findall(
        r"duration: ([\d.]+) ms\s+statement: ((?:VACUUM|ANALYZE)[^\n]*)", text)]
    result["slow_statement_plans"] = slow_plans(text)
    return result


def named_database(server_url: str, name: str) -> str:
    """A database of that name on the server, new (an existing one is dropped: every run scans afresh)."""
    import psycopg
    from sqlalchemy.engine import make_url

    url = make_url(server_url)
    with psycopg.connect(host=url.host, port=url.port, user=url.username, dbname="postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    return url.set(database=name).render_as_string(hide_password=False)


def slow_plans(log_text: str, keep: int = 8) -> list[dict]:
    """The slowest auto_explain entries of a server log: duration, the statement's first line, the plan."""
    entries = []
    for block in re.split(r"\n(?=\S.*LOG:\s+duration: )", log_text):
        m = re.search(r"LOG:\s+duration: ([\d.]+) ms\s+plan:\n(.*)", block, re.S)
        if m:
            query = re.search(r"Query Text: (.*)", m[2])
            entries.append({"ms": float(m[1]), "query": (query[1] if query else "")[:300],
                            "plan": [line.strip() for line in m[2].splitlines()[1:40] if line.strip()]})
    return sorted(entries, key=lambda e: -e["ms"])[:keep]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=100_000)
    ap.add_argument("--work", help="folder for the share and data dirs (default /tmp/spar-scale-N); never the repo")
    ap.add_argument("--label", default="after", help="names the data dir and the result")
    ap.add_argument("--source", help="a checkout whose spar_desktop to run instead of the installed one")
    ap.add_argument("--keep-data", action="store_true")
    ap.add_argument("--json", help="also write the result to this file")
    ap.add_argument("--postgres", action="store_true", help="on a PostgreSQL server started for the run")
    ap.add_argument("--explain-ms", type=int, default=300, help="with --postgres: log plans of statements this slow")
    ap.add_argument("--pg-dir", help="with --postgres: keep the cluster in this folder (database spar_LABEL)")
    args = ap.parse_args()
    if args.work and Path(args.work).resolve().is_relative_to(Path(__file__).resolve().parents[1]):
        ap.error("--work must be outside the repository")
    result = run_on_postgres(args) if args.postgres else run(args)
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n")


if __name__ == "__main__":
    main()

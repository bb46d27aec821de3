"""Later requests on a kept PostgreSQL index (issue 29): the CLI steps of ``scale.py`` after the
scan, re-run on the cluster a ``scale.py --postgres --pg-dir DIR --keep-data`` run left, by two or
more sources alternated, each on its own database and data dir (a copy of the scanned ones: an
index a newer revision has migrated is refused by older code).

Per step: wall, the CLI process's CPU (user + system) and peak RSS as in ``scale.py``, and the
server's CPU (every backend and parallel worker of the step: the postmaster's reaped children),
since on PostgreSQL the queries run in the server. ``auto_explain`` logs the plans of statements
over --explain-ms; the log line names the database, so each source gets its own slowest plans.

Usage: python benchmarks/scale_pg_requests.py --pg-dir DIR --work DIR --files N
           --run main=SRC:DATABASE:DATA_DIR --run after=SRC:DATABASE:DATA_DIR [--copy-from DATABASE:DATA_DIR]
           [--rounds 3] [--json OUT]
``--copy-from`` makes each run's database (CREATE DATABASE ... TEMPLATE) and data dir first when missing.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import re
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scale import PROMPTS, slow_plans, summary_line, timed  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")
SPAR = [sys.executable, "-c", "import sys; from spar_desktop.cli import main; sys.exit(main())"]


def server_cpu(pg_dir: Path) -> float:
    """CPU seconds of the postmaster and of its exited children (backends, parallel workers,
    autovacuum workers) so far: /proc/PID/stat utime, stime, cutime, cstime."""
    pid = int((pg_dir / "data" / "postmaster.pid").read_text().split()[0])
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15]) / CLK_TCK


def step(cmd: list[str], env: dict, cwd: Path, pg_dir: Path) -> dict:
    before = server_cpu(pg_dir)
    out = timed(cmd, env, cwd)
    time.sleep(0.3)  # the backend exits after the client: let the postmaster reap it
    out["server_cpu_s"] = round(server_cpu(pg_dir) - before, 2)
    return out


def prepare(run: dict, copy_from: str, server_url: str, work: Path) -> None:
    """The run's database and data dir, copied from the scanned ones when missing."""
    import psycopg
    from sqlalchemy.engine import make_url

    source_db, source_data = copy_from.split(":")
    url = make_url(server_url)
    with psycopg.connect(host=url.host, port=url.port, user=url.username, dbname="postgres", autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (run["database"],)).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{run["database"]}" TEMPLATE "{source_db}"')
    data = work / run["data"]
    if not data.exists():
        shutil.copytree(work / source_data, data, symlinks=True)


def parse_run(text: str) -> dict:
    label, _, rest = text.partition("=")
    source, database, data = rest.split(":")
    return {"label": label, "source": source, "database": database, "data": data}


def run_env(run: dict, server_url: str, work: Path) -> dict:
    return dict(os.environ, HF_HUB_OFFLINE="1", ANONYMIZED_TELEMETRY="False", SPAR_DATA_DIR=str(work / run["data"]),
                SPAR_DATABASE_URL=server_url.rsplit("/", 1)[0] + "/" + run["database"],
                PYTHONPATH=str(Path(run["source"]).resolve()))


def one_round(runs: list[dict], args, server_url: str, rnd: int) -> None:
    work, pg_dir = Path(args.work), Path(args.pg_dir)
    order = runs if rnd % 2 == 0 else runs[::-1]
    for run in order:
        env = run_env(run, server_url, work)
        spar = SPAR
        steps = {}
        for i, prompt in enumerate(PROMPTS):
            s = step([*spar, "ws", "create", f"{args.tag}r{rnd}-{i + 1}", "--prompt", prompt], env, work, pg_dir)
            s.update(prompt=prompt, summary_line=summary_line(s))
            steps[f"request_{i + 1}"] = s
        steps["explain"] = step([*spar, "ws", "explain", f"{args.tag}r{rnd}-1"], env, work, pg_dir)
        steps["files_tag"] = step([*spar, "files", "--tag", "Engineering/Asset-Management", "--json"], env, work, pg_dir)
        failed = [k for k, v in steps.items() if v["exit_code"] != 0]
        if failed:
            raise SystemExit(f"{run['label']}: {failed} failed: {steps[failed[0]]['stderr_tail']}")
        run.setdefault("rounds", []).append({"round": rnd, "load_average_1min": round(os.getloadavg()[0], 2), **steps})
        print(f"round {rnd} {run['label']}: " + ", ".join(
            f"{k} {v['wall_s']}/{v['cpu_s']}+{v['server_cpu_s']}" for k, v in steps.items()), file=sys.stderr)


def per_database_plans(log_text: str, database: str) -> list[dict]:
    """The slowest plans logged by that database's sessions (log_line_prefix names it)."""
    blocks = re.split(r"\n(?=\S)", log_text)
    mine = [b for b in blocks if f" db={database} " in b.split("\n", 1)[0]]
    return slow_plans("\n".join(mine))


def main() -> None:
    from tests.support.servers import postgres_server

    ap = argparse.ArgumentParser()
    ap.add_argument("--pg-dir", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--files", type=int, required=True, help="the index's size (for the record)")
    ap.add_argument("--run", action="append", required=True, help="LABEL=SOURCE:DATABASE:DATA_DIR (under --work)")
    ap.add_argument("--copy-from", help="DATABASE:DATA_DIR to copy each run's from when missing")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--explain-ms", type=int, default=100)
    ap.add_argument("--json")
    ap.add_argument("--tag", default=time.strftime("%H%M%S-"), help="workspace name prefix (names must be new)")
    args = ap.parse_args()
    runs = [parse_run(r) for r in args.run]
    for run in runs:  # byte-compiled as an install is (see scale.py)
        compileall.compile_dir(str(Path(run["source"]) / "spar_desktop"), quiet=1)
    log = Path(args.work) / "postgres-requests.log"
    options = ("-c shared_preload_libraries=auto_explain -c auto_explain.log_analyze=on "
               f"-c auto_explain.log_min_duration={args.explain_ms}ms "
               "-c log_line_prefix='%m [%p] db=%d '")
    result = {"benchmark": "scale_pg_requests", "files": args.files, "pg_dir": args.pg_dir,
              "load_average_1min_before": round(os.getloadavg()[0], 2)}
    with postgres_server(options, log, keep=Path(args.pg_dir)) as server:
        for run in runs:
            if args.copy_from:
                prepare(run, args.copy_from, server, Path(args.work))
            # Not measured: a first open migrates a copy to the source's revision.
            run["first_open"] = step([*SPAR, "ws", "list"], run_env(run, server, Path(args.work)), Path(args.work),
                                     Path(args.pg_dir))
        for rnd in range(args.rounds):
            one_round(runs, args, server, rnd)
    text = log.read_text(errors="replace")
    for run in runs:
        run["slow_statement_plans"] = per_database_plans(text, run["database"])
    result.update(runs=runs, load_average_1min_after=round(os.getloadavg()[0], 2))
    out = json.dumps(result, indent=2)
    print(out)
    if args.json:
        Path(args.json).write_text(out + "\n")


if __name__ == "__main__":
    main()

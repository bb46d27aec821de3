"""Idle CPU of the desktop app watching a source checkout with a big virtualenv.

Builds a share like a developer's checkout (documents plus a .venv of N folders with files),
indexes it with each checkout's CLI, starts the app offscreen on it (the app watches its indexed
folders), waits for start-up work to settle, then reads the app's CPU time (/proc, the app and its
children) over ``--seconds``. Runs this checkout and ``--against DIR`` (an older one) one after the
other. Goal: ≤ 1% CPU while idle.
Usage: python benchmarks/watch_idle.py [--venv-folders 5500] [--seconds 60] [--against DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from startup import stop  # noqa: E402 - beside this script

HERE = Path(__file__).resolve().parents[1]
TICKS = os.sysconf("SC_CLK_TCK")


def make_checkout(root: Path, venv_folders: int) -> None:
    for i in range(200):
        folder = root / "docs" / f"area-{i % 20:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"note-{i:04d}.md").write_text(f"# Note {i}\n\nInspection notes for turbine {i}.", encoding="utf-8")
    site = root / ".venv" / "lib" / "python3.11" / "site-packages"
    (root / ".venv").mkdir(parents=True, exist_ok=True)
    (root / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n", encoding="utf-8")
    for i in range(venv_folders):
        pkg = site / f"pkg{i // 50:03d}" / f"mod{i:05d}"
        pkg.mkdir(parents=True, exist_ok=True)
        (pkg / "__init__.py").write_text("x = 1\n", encoding="utf-8")


def cpu_seconds(pid: int) -> float:
    """utime + stime of the process and its waited-for and live children (the Chroma helper)."""
    total = 0.0
    pids = [pid]
    try:
        pids += [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        pass
    for p in pids:
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(v) for v in fields[11:15]) / TICKS  # utime stime cutime cstime
    return total


def measure(src: Path, share: Path, data: Path, settle: float, seconds: float) -> dict:
    env = dict(os.environ, PYTHONPATH=str(src), QT_QPA_PLATFORM="offscreen", HF_HUB_OFFLINE="1",
               ANONYMIZED_TELEMETRY="False")
    env.pop("SPAR_DATA_DIR", None)
    subprocess.run([sys.executable, "-m", "spar_desktop.cli", "--data-dir", str(data), "index", str(share)],
                   env=env, cwd=src, check=True, capture_output=True, timeout=900)
    proc = subprocess.Popen([sys.executable, "-m", "spar_desktop.ui.app", "--data-dir", str(data)], env=env,
                            cwd=src, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(settle)  # start-up work: engine load, the rescan of watched folders
        c0, t0 = cpu_seconds(proc.pid), time.perf_counter()
        time.sleep(seconds)
        c1, t1 = cpu_seconds(proc.pid), time.perf_counter()
        log = (data / "logs" / "spar-desktop.log").read_text(encoding="utf-8", errors="replace")
        return {"source": str(src), "idle_cpu_percent": round(100 * (c1 - c0) / (t1 - t0), 2),
                "overflow_log_lines": log.count("overflow"), "alive": proc.poll() is None}
    finally:
        stop(proc)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--venv-folders", type=int, default=5500)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--settle", type=float, default=30.0)
    ap.add_argument("--against", type=Path)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="spar-watch-idle-"))
    try:
        share = work / "checkout"
        make_checkout(share, args.venv_folders)
        out = {"benchmark": "watch_idle", "venv_folders": args.venv_folders, "seconds": args.seconds,
               "load_avg_before": os.getloadavg(), "versions": {}}
        versions = {"this": HERE, **({"against": args.against.resolve()} if args.against else {})}
        for label, src in versions.items():
            out["versions"][label] = measure(src, share, work / f"data-{label}", args.settle, args.seconds)
        out["load_avg_after"] = os.getloadavg()
        print(json.dumps(out, indent=2))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

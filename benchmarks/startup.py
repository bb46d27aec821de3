"""Cold start of the desktop app: launch → main window on screen, side by side with another checkout.

Runs the app under a real X server (Xvfb, started here when DISPLAY is unset) on a data dir that
already holds an indexed folder (so no first-run offer), and polls with xdotool until a visible
window titled "SPAR Desktop" exists. Runs alternate between this checkout and ``--against DIR``
(e.g. a worktree of the previous release), so both see the same machine load. Also times
``python -c "import torch"`` in the same run, the yardstick the issue names, and reads from the
app's log when the search engine finished loading in the background.
Usage: python benchmarks/startup.py [--runs 5] [--against /path/to/old/checkout]
Needs Debian's xvfb and xdotool and Qt's xcb libraries (the apt-get line in tools/screenshots.py, plus xdotool).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

HERE = Path(__file__).resolve().parents[1]
TITLE = "^SPAR Desktop$"


def _env(src: Path, display: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(src), DISPLAY=display, QT_QPA_PLATFORM="xcb",
               HF_HUB_OFFLINE="1", ANONYMIZED_TELEMETRY="False")
    env.pop("SPAR_DATA_DIR", None)
    return env


def _prepare(src: Path, data: Path, display: str) -> None:
    """Index the bundled sample corpus with that checkout's own CLI (formats may differ)."""
    share = data.parent / "share"
    if not share.exists():
        shutil.copytree(HERE / "resources" / "sample_corpus", share)
    subprocess.run([sys.executable, "-m", "spar_desktop.cli", "--data-dir", str(data), "index", str(share)],
                   env=_env(src, display), cwd=src, check=True, capture_output=True, timeout=600)


def x_display() -> tuple[Optional[subprocess.Popen], str]:
    """$DISPLAY, else a virtual screen on a free display (tools/screenshots.py's start_xvfb, which
    waits for the server's socket); the caller terminates the returned process."""
    if os.environ.get("DISPLAY"):
        return None, os.environ["DISPLAY"]
    sys.path.insert(0, str(HERE / "tools"))
    from screenshots import start_xvfb

    return start_xvfb("1400x900")


def window_visible(display: str) -> bool:
    found = subprocess.run(["xdotool", "search", "--onlyvisible", "--name", TITLE], capture_output=True,
                           env=dict(os.environ, DISPLAY=display), timeout=10)
    return found.returncode == 0 and bool(found.stdout.strip())


def stop(proc: subprocess.Popen) -> None:
    """SIGTERM (the app closes cleanly, its helper processes with it), then SIGKILL after 20 s."""
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def launch_once(cmd: list[str], data: Path, env: dict, display: str, timeout: float, cwd: Path) -> dict:
    """Start ``cmd --data-dir data``; seconds until its window is visible and until its log says
    the search engine is ready (None when that did not happen within ``timeout``)."""
    log = data / "logs" / "spar-desktop.log"
    log_size = log.stat().st_size if log.exists() else 0
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd + ["--data-dir", str(data)], env=env, cwd=cwd,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    shown = ready = None
    try:
        while time.perf_counter() - t0 < timeout and proc.poll() is None:
            if shown is None and window_visible(display):
                shown = time.perf_counter() - t0
            if shown is not None and log.exists():
                with open(log, encoding="utf-8", errors="replace") as fh:
                    fh.seek(log_size)
                    if "search engine ready" in fh.read():
                        ready = time.perf_counter() - t0
            if shown is not None and (ready is not None or time.perf_counter() - t0 > shown + 15):
                break
            time.sleep(0.02)
    finally:
        stop(proc)
    return {"window_shown_s": None if shown is None else round(shown, 3),
            "engine_ready_s": None if ready is None else round(ready, 3)}


def _launch_once(src: Path, data: Path, display: str, timeout: float) -> dict:
    return launch_once([sys.executable, "-m", "spar_desktop.ui.app"], data, _env(src, display), display, timeout, src)


def _import_torch_s() -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import torch"], check=True, capture_output=True)
    return time.perf_counter() - t0


def _median(values: list) -> float | None:
    values = [v for v in values if v is not None]
    return round(statistics.median(values), 3) if values else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--against", type=Path, help="another checkout to run side by side (the old version)")
    ap.add_argument("--timeout", type=float, default=120.0)
    args = ap.parse_args()
    xvfb, display = x_display()
    work = Path(tempfile.mkdtemp(prefix="spar-startup-"))
    versions = {"this": HERE}
    if args.against:
        versions["against"] = args.against.resolve()
    try:
        for label, src in versions.items():
            _prepare(src, work / label / "data", display)
        runs: dict[str, list[dict]] = {label: [] for label in versions}
        torch_s = []
        for _ in range(args.runs):
            for label, src in versions.items():
                runs[label].append(_launch_once(src, work / label / "data", display, args.timeout))
            torch_s.append(_import_torch_s())
        out = {"benchmark": "startup", "runs": args.runs, "load_avg": os.getloadavg(),
               "import_torch_s_median": _median(torch_s), "versions": {}}
        for label in versions:
            out["versions"][label] = {
                "source": str(versions[label]),
                "window_shown_s_median": _median([r["window_shown_s"] for r in runs[label]]),
                "engine_ready_s_median": _median([r["engine_ready_s"] for r in runs[label]]),
                "runs": runs[label],
            }
        if args.against:
            new, old = (out["versions"][k]["window_shown_s_median"] for k in ("this", "against"))
            if new and old:
                out["window_shown_speedup"] = round(old / new, 2)
        print(json.dumps(out, indent=2))
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if xvfb is not None:
            xvfb.terminate()


if __name__ == "__main__":
    main()

"""The Linux bundle: size, and cold start (launch → main window on screen) beside the venv's app.

Usage: python benchmarks/bundle.py [--tarball FILE] [--against-tarball OLD] [--runs 5] [--venv .venv]
       [--out benchmarks/results/bundle.json]

Unpacks the newest build/bundle/spar-desktop-*-linux-*.tar.gz (installers/build_bundle.py makes it)
into a temporary folder, prepares one data dir per variant holding the indexed sample corpus
(so no first-run offer; the bundle indexes its copy with its own `spar`), then alternates
launches of the bundled ``spar-desktop`` and the venv's ``spar-desktop`` under a real X server
(Xvfb, started here when DISPLAY is unset) and polls with xdotool until a visible window titled
"SPAR Desktop" exists — benchmarks/startup.py's method. Runs alternate so both see the same
machine load. Prints JSON (also written to --out): tarball and unpacked sizes, the build report
(build time) when build/bundle/build-report.json is there, and per-variant medians.
Needs Debian's xvfb and xdotool and Qt's xcb libraries.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from startup import launch_once, x_display  # noqa: E402 - beside this script

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "build" / "bundle"
TITLE = "^SPAR Desktop$"


def _env(display: str, home: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPAR_", "PYTHON", "QT_", "XDG_"))}
    env.update(DISPLAY=display, QT_QPA_PLATFORM="xcb", HOME=str(home), ANONYMIZED_TELEMETRY="False",
               HF_HUB_OFFLINE="1")
    return env


def _launch_once(cmd: list[str], data: Path, env: dict, display: str, timeout: float) -> dict:
    return launch_once(cmd, data, env, display, timeout, data.parent)


def _median(values: list) -> float | None:
    values = [v for v in values if v is not None]
    return round(statistics.median(values), 3) if values else None


def _du(path: Path) -> int:
    return sum(p.lstat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tarball", type=Path)
    ap.add_argument("--venv", type=Path, default=ROOT / ".venv", help="virtualenv whose spar-desktop to compare")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--build-report", type=Path, default=OUT / "build-report.json",
                    help="build_bundle.py's report (build time by step) to include")
    ap.add_argument("--against-tarball", type=Path,
                    help="a previous bundle to launch alternately too (start-up before/after a packaging change)")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "bundle.json")
    args = ap.parse_args()
    tarball = args.tarball or sorted(OUT.glob("spar-desktop-*-linux-*.tar.gz"), key=lambda p: p.stat().st_mtime)[-1]
    xvfb, display = x_display()
    work = Path(tempfile.mkdtemp(prefix="spar-bundle-bench-"))
    try:
        with tarfile.open(tarball) as tar:
            tar.extractall(work / "unpacked", filter="tar")
        (top,) = list((work / "unpacked").iterdir())
        variants = {
            "bundle": [str(top / "spar-desktop" / "spar-desktop")],
            "venv": [str(args.venv / "bin" / "spar-desktop")],
        }
        clis = {"bundle": [str(top / "spar-desktop" / "spar")], "venv": [str(args.venv / "bin" / "spar")]}
        if args.against_tarball:
            with tarfile.open(args.against_tarball) as tar:
                tar.extractall(work / "previous", filter="tar")
            (prev,) = list((work / "previous").iterdir())
            variants["previous_bundle"] = [str(prev / "spar-desktop" / "spar-desktop")]
            clis["previous_bundle"] = [str(prev / "spar-desktop" / "spar")]
        homes, datas = {}, {}
        for label in variants:
            homes[label] = work / label / "home"
            homes[label].mkdir(parents=True)
            datas[label] = work / label / "data"
            # the sample corpus, indexed by that variant's own CLI (fresh HOME: no shared caches)
            subprocess.run(clis[label] + ["--data-dir", str(datas[label]), "sample"], env=_env(display, homes[label]),
                           check=True, capture_output=True, timeout=900)
        runs: dict[str, list[dict]] = {label: [] for label in variants}
        for _ in range(args.runs):
            for label, cmd in variants.items():
                runs[label].append(_launch_once(cmd, datas[label], _env(display, homes[label]), display, args.timeout))
        report_file = args.build_report
        build = json.loads(report_file.read_text(encoding="utf-8")) if report_file.is_file() else None
        out = {
            "benchmark": "bundle", "runs": args.runs, "load_avg": [round(x, 2) for x in os.getloadavg()],
            "cpus": os.cpu_count(), "tarball": tarball.name, "tarball_mb": round(tarball.stat().st_size / 1e6, 1),
            "unpacked_mb": round(_du(top) / 1e6, 1),
            "build_seconds": build["seconds"] if build else None,
            "variants": {},
        }
        for label in variants:
            out["variants"][label] = {
                "command": variants[label][0],
                "window_shown_s_median": _median([r["window_shown_s"] for r in runs[label]]),
                "engine_ready_s_median": _median([r["engine_ready_s"] for r in runs[label]]),
                "runs": runs[label],
            }
        b, v = (out["variants"][k]["window_shown_s_median"] for k in ("bundle", "venv"))
        if b and v:
            out["window_shown_bundle_over_venv"] = round(b / v, 2)
        if args.against_tarball:
            out["previous_tarball"] = str(args.against_tarball)
            prev_s = out["variants"]["previous_bundle"]["window_shown_s_median"]
            if b and prev_s:
                out["window_shown_bundle_over_previous"] = round(b / prev_s, 2)
        text = json.dumps(out, indent=2)
        print(text)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text + "\n", encoding="utf-8")
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if xvfb is not None:
            xvfb.terminate()


if __name__ == "__main__":
    sys.exit(main())

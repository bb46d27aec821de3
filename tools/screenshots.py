"""Screenshots of the main views under a real X server (Xvfb), on the bundled sample corpus.

    python tools/screenshots.py [--out screenshots] [--size 1600x1000]

Starts Xvfb on a free display, runs ``spar-desktop --smoke OUT`` against it with the xcb
platform plugin (real X rendering and fonts, unlike the offscreen plugin) and a fresh temporary
data dir, and leaves the PNGs plus smoke-report.json in OUT. Needs Xvfb and the xcb libraries:

    apt-get update && apt-get install -y xvfb libxcb-icccm4 libxcb-keysyms1 libxcb-image0 \\
        libxcb-render-util0 libxkbcommon-x11-0 libxcb-xinerama0 libxcb-cursor0
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def free_display() -> int:
    for n in range(90, 140):
        if not Path(f"/tmp/.X{n}-lock").exists() and not Path(f"/tmp/.X11-unix/X{n}").exists():
            return n
    raise RuntimeError("no free X display number between :90 and :139")


def start_xvfb(size: str) -> tuple[subprocess.Popen, str]:
    if shutil.which("Xvfb") is None:
        raise SystemExit("Xvfb is not installed (see this script's docstring for the apt-get line)")
    n = free_display()
    proc = subprocess.Popen(["Xvfb", f":{n}", "-screen", "0", f"{size}x24", "-nolisten", "tcp"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 10
    while not Path(f"/tmp/.X11-unix/X{n}").exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
            proc.kill()
            raise SystemExit(f"Xvfb did not start on :{n}: {err}")
        time.sleep(0.05)
    return proc, f":{n}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "screenshots"), help="folder for the PNGs")
    parser.add_argument("--size", default="1600x1000", help="virtual screen size")
    parser.add_argument("--keep-data", action="store_true", help="keep the temporary data dir")
    args = parser.parse_args(argv)
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    xvfb, display = start_xvfb(args.size)
    try:
        env = dict(os.environ, DISPLAY=display, QT_QPA_PLATFORM="xcb")
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        cmd = [sys.executable, "-m", "spar_desktop.ui.app", "--smoke", str(out)]
        if args.keep_data:
            cmd.append("--keep-data")
        proc = subprocess.run(cmd, env=env, cwd=ROOT, timeout=600)
    finally:
        xvfb.terminate()
        try:
            xvfb.wait(5)
        except subprocess.TimeoutExpired:
            xvfb.kill()
    shots = sorted(p.name for p in out.glob("*.png"))
    print(f"{len(shots)} screenshots in {out}: {', '.join(shots)}")
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())

"""Check the Debian package as a user gets it: install with apt, run, remove with apt.

    sudo python3 installers/check_deb.py [--deb FILE]

Stdlib only; needs root (apt). Steps:
1. ``apt-get install ./spar-desktop_*.deb``: the package and the X11 libraries it depends on;
2. the menu entry (Exec=/usr/bin/spar-desktop %F, folders accepted), the icon, /usr/bin links;
3. ``/usr/bin/spar-desktop --smoke`` offscreen in an empty HOME (a first run: the model graph is
   built, the sample corpus indexed, a workspace built and searched, screenshots written), and the
   CLI (``spar sample``) into a data dir;
4. ``apt-get remove spar-desktop``: every file of the package is gone, the data dir is as it was.

Prints a JSON summary; exit 0 when all of it passed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from check_bundle import BAD_OUTPUT, clean_env  # noqa: E402  (installers/check_bundle.py)

OUT = HERE.parent / "build" / "bundle"
PACKAGE = "spar-desktop"
INSTALLED = ("/opt/spar-desktop/spar-desktop", "/usr/bin/spar-desktop", "/usr/bin/spar",
             "/usr/share/applications/spar-desktop.desktop", "/usr/share/icons/hicolor/256x256/apps/spar-desktop.png",
             "/usr/share/doc/spar-desktop/copyright")


def apt(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    return subprocess.run(["apt-get", "-y", "-q", *args], env=env, capture_output=True, text=True, timeout=1800)


def digest(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def install(deb: Path) -> list[str]:
    got = apt("install", str(deb))
    if got.returncode != 0:  # a fresh machine's package lists may be missing or old
        apt("update")
        got = apt("install", str(deb))
    if got.returncode != 0:
        return [f"apt-get install failed: {(got.stdout + got.stderr)[-1500:]}"]
    problems = [f"not installed: {p}" for p in INSTALLED if not os.path.lexists(p)]
    entry = Path("/usr/share/applications/spar-desktop.desktop")
    text = entry.read_text(encoding="utf-8") if entry.is_file() else ""
    if "Exec=/usr/bin/spar-desktop %F" not in text or "MimeType=inode/directory;" not in text:
        problems.append("the menu entry does not start /usr/bin/spar-desktop with dropped folders")
    return problems


def run_app(home: Path) -> tuple[dict, list[str]]:
    env = clean_env(home)
    out = home / "smoke-out"
    smoke = subprocess.run(["/usr/bin/spar-desktop", "--smoke", str(out)], env=env, cwd=str(home),
                           capture_output=True, text=True, timeout=1800)
    report_file = out / "smoke-report.json"
    report = json.loads(report_file.read_text(encoding="utf-8")) if report_file.is_file() else {"ok": False}
    problems = []
    if smoke.returncode != 0 or not report.get("ok"):
        problems.append(f"smoke failed ({smoke.returncode}): {(smoke.stdout + smoke.stderr)[-1500:]}")
    for m in BAD_OUTPUT.finditer(smoke.stdout + smoke.stderr):
        problems.append(f"smoke output: {m.group(0)}")
    cli = subprocess.run(["/usr/bin/spar", "--data-dir", str(home / "data"), "sample"], env=env, cwd=str(home),
                         capture_output=True, text=True, timeout=900)
    if cli.returncode != 0:
        problems.append(f"spar sample exited {cli.returncode}: {(cli.stdout + cli.stderr)[-800:]}")
    return {"smoke_ok": report.get("ok", False), "screenshots": len(report.get("screenshots", [])),
            "cli_sample": cli.returncode}, problems


def remove(data: Path, before: dict[str, str]) -> list[str]:
    got = apt("remove", PACKAGE)
    if got.returncode != 0:
        return [f"apt-get remove failed: {(got.stdout + got.stderr)[-1500:]}"]
    problems = [f"left behind after remove: {p}" for p in INSTALLED if os.path.lexists(p)]
    if os.path.exists("/opt/spar-desktop"):
        problems.append("left behind after remove: /opt/spar-desktop")
    if digest(data) != before:
        problems.append("apt remove changed the data dir")
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--deb", type=Path, help="default: the newest build/bundle/spar-desktop_*.deb")
    args = ap.parse_args(argv)
    if os.geteuid() != 0:
        raise SystemExit("run as root: the check installs and removes a system package")
    deb = args.deb or max(OUT.glob(f"{PACKAGE}_*.deb"), key=lambda p: p.stat().st_mtime, default=None)
    if deb is None:
        raise SystemExit("no .deb: run python3 installers/build_deb.py first")
    deb = deb.resolve()
    result: dict = {"deb": str(deb), "deb_bytes": deb.stat().st_size}
    problems: list[str] = []
    home = Path(tempfile.mkdtemp(prefix="spar-deb-check-"))
    try:
        problems += install(deb)
        if not problems:
            ran, p = run_app(home)
            result["run"] = ran
            problems += p
            data = home / "data"
            data.mkdir(exist_ok=True)
            problems += remove(data, digest(data))
    finally:
        if shutil.which("dpkg") and subprocess.run(["dpkg", "-s", PACKAGE], capture_output=True).returncode == 0:
            apt("remove", PACKAGE)  # never leave the package installed after a failed check
        shutil.rmtree(home, ignore_errors=True)
        result["problems"] = problems
        result["ok"] = not problems
        print(json.dumps(result, indent=2))
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())

"""A Debian package of the Linux bundle, for Debian/Ubuntu users who install by double-click.

    python3 installers/build_deb.py [--tarball FILE] [--out DIR]

Stdlib only (runs on a fresh machine's system Python); needs ``dpkg-deb`` (every Debian and
Ubuntu has it). Takes the bundle that installers/build_bundle.py made (default: the newest
build/bundle/spar-desktop-*-linux-*.tar.gz) and lays it out the Debian way:

    /opt/spar-desktop/                               the one-folder app, as in the bundle
    /usr/bin/spar-desktop, /usr/bin/spar              symlinks into it
    /usr/share/applications/spar-desktop.desktop      the menu entry (folders dropped on it: %F)
    /usr/share/icons/hicolor/NxN/apps/spar-desktop.png
    /usr/share/doc/spar-desktop/copyright             THIRD_PARTY_LICENSES (PyMuPDF is AGPL-3.0)

``apt install ./spar-desktop_VERSION_ARCH.deb`` installs it with the X11 libraries Qt needs;
``apt remove spar-desktop`` removes exactly these files. The data dir (~/.local/share/spar-desktop)
is the user's and no maintainer script touches it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "build" / "bundle"
PACKAGE = "spar-desktop"
# What Qt's xcb platform plugin and the bundled libraries load from the system (the README's list).
DEPENDS = ("libxcb-cursor0", "libxcb-icccm4", "libxcb-keysyms1", "libxcb-image0", "libxcb-render-util0",
           "libxkbcommon-x11-0", "libxcb-xinerama0", "libegl1", "libgl1", "libfontconfig1", "libdbus-1-3",
           "libglib2.0-0 | libglib2.0-0t64")
DEB_ARCH = {"x86_64": "amd64", "aarch64": "arm64"}
# Refreshing the menu and icon caches is all the scripts do: nothing in a user's home is touched.
POSTINST = """#!/bin/sh
set -e
if [ "$1" = "configure" ]; then
    command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database -q /usr/share/applications || true
    command -v gtk-update-icon-cache >/dev/null 2>&1 && gtk-update-icon-cache -q -t /usr/share/icons/hicolor || true
fi
exit 0
"""
POSTRM = """#!/bin/sh
set -e
command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database -q /usr/share/applications || true
command -v gtk-update-icon-cache >/dev/null 2>&1 && gtk-update-icon-cache -q -t /usr/share/icons/hicolor || true
exit 0
"""


def newest_tarball() -> Path:
    found = sorted(OUT.glob("spar-desktop-*-linux-*.tar.gz"), key=lambda p: p.stat().st_mtime)
    if not found:
        raise SystemExit(f"no bundle in {OUT}: run python3 installers/build_bundle.py first")
    return found[-1]


def desktop_entry() -> str:
    """The template's entry with the installed launcher (a .desktop file expands no variables)."""
    lines = []
    for line in (ROOT / "installers" / "spar-desktop.desktop").read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            continue
        if line.startswith("Exec="):
            line = "Exec=/usr/bin/spar-desktop %F"
        elif line.startswith("TryExec="):
            line = "TryExec=/usr/bin/spar-desktop"
        lines.append(line)
    return "\n".join(lines) + "\n"


def control(version: str, arch: str, installed_kb: int) -> str:
    return (f"Package: {PACKAGE}\nVersion: {version}\nSection: utils\nPriority: optional\nArchitecture: {arch}\n"
            f"Installed-Size: {installed_kb}\nDepends: {', '.join(DEPENDS)}\n"
            "Maintainer: SPAR Desktop developers <spar-desktop@localhost>\n"
            "Homepage: https://localhost/spar-desktop\n"
            "Description: find and use what is buried in large legacy file shares\n"
            " SPAR Desktop indexes a folder's metadata in seconds, builds a searchable workspace\n"
            " for a task from a plain-language request, and answers questions over it with\n"
            " citations (with a local Ollama server when there is one). Everything runs locally;\n"
            " indexed folders are only read.\n")


def stage_package(bundle: Path, stage: Path) -> tuple[str, str]:
    """Lay out the package tree under ``stage`` from the unpacked bundle; (version, arch)."""
    app_src = bundle / "spar-desktop"
    version = (app_src / "VERSION").read_text(encoding="utf-8").strip()
    arch = DEB_ARCH.get((bundle / "ARCH").read_text(encoding="utf-8").strip(), "amd64")
    opt = stage / "opt" / PACKAGE
    shutil.copytree(app_src, opt, symlinks=True)
    bin_dir = stage / "usr" / "bin"
    bin_dir.mkdir(parents=True)
    for name in ("spar-desktop", "spar"):
        (bin_dir / name).symlink_to(f"/opt/{PACKAGE}/{name}")
    apps = stage / "usr" / "share" / "applications"
    apps.mkdir(parents=True)
    (apps / f"{PACKAGE}.desktop").write_text(desktop_entry(), encoding="utf-8")
    shutil.copytree(bundle / "icons" / "hicolor", stage / "usr" / "share" / "icons" / "hicolor")
    doc = stage / "usr" / "share" / "doc" / PACKAGE
    doc.mkdir(parents=True)
    shutil.copy2(bundle / "THIRD_PARTY_LICENSES", doc / "copyright")
    size_kb = sum(p.lstat().st_size for p in stage.rglob("*") if p.is_file() and not p.is_symlink()) // 1024
    debian = stage / "DEBIAN"
    debian.mkdir()
    (debian / "control").write_text(control(version, arch, size_kb), encoding="utf-8")
    for name, text in (("postinst", POSTINST), ("postrm", POSTRM)):
        (debian / name).write_text(text, encoding="utf-8")
        (debian / name).chmod(0o755)
    for p in [stage, *stage.rglob("*")]:  # packages carry sane modes whatever the build's umask was
        if p.is_symlink():
            continue
        p.chmod(0o755 if p.is_dir() or os.access(p, os.X_OK) else 0o644)
    return version, arch


def build_deb(tarball: Path, out: Path) -> Path:
    with tempfile.TemporaryDirectory(prefix="spar-deb-") as tmp:
        with tarfile.open(tarball) as tar:
            tar.extractall(tmp, filter="tar")
        (bundle,) = [p for p in Path(tmp).iterdir() if p.is_dir()]
        stage = Path(tmp) / "stage"
        version, arch = stage_package(bundle, stage)
        deb = out / f"{PACKAGE}_{version}_{arch}.deb"
        out.mkdir(parents=True, exist_ok=True)
        # gzip: a few times faster to build than xz for a few % more size; apt reads either.
        subprocess.run(["dpkg-deb", "--root-owner-group", "-Zgzip", "-z6", "--build", str(stage), str(deb)],
                       check=True)
    return deb


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tarball", type=Path, help="the bundle (default: the newest in build/bundle)")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    if shutil.which("dpkg-deb") is None:
        raise SystemExit("dpkg-deb not found: a .deb is built on Debian or Ubuntu")
    deb = build_deb((args.tarball or newest_tarball()).resolve(), args.out.resolve())
    print(f"{deb} ({deb.stat().st_size / 1e6:.0f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

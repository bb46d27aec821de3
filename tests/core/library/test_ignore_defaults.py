"""Issue 14.8: tool caches, virtualenvs and version-control folders are not documents."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import select

from spar_desktop.core.config import load_settings
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.models import File
from spar_desktop.core.library.paths import DEFAULT_IGNORE_PATTERNS, IgnoreMatcher
from spar_desktop.core.library.scanner import Scanner

TOOL_STATE = [
    ".pytest_cache/v/cache/nodeids", ".import_linter_cache/x.json", ".grimp_cache/meta.json",
    "__pycache__/mod.cpython-311.pyc", ".mypy_cache/3.11/mod.meta.json", ".ruff_cache/0.4/123",
    "node_modules/left-pad/README.md", ".venv/lib/python3.11/site-packages/pkg/README.md", ".venv/pyvenv.cfg",
    "venv/lib/python3.11/site-packages/pkg/notes.txt", "venv/pyvenv.cfg",
    "myenv/lib/python3.11/site-packages/pkg/README.md", "myenv/pyvenv.cfg", "myenv/bin/activate",  # a virtualenv under another name
    ".git/HEAD", ".tox/py311/log.txt", ".nox/tests/log.txt", ".cache/pip/x.txt", ".hypothesis/examples/x",
    ".ipynb_checkpoints/analysis-checkpoint.ipynb", "build/pkg.egg-info/PKG-INFO", ".eggs/README.txt",
    ".idea/workspace.xml", ".vscode/settings.json", "@eaDir/report.pdf@SynoEAStream",
]
DOCUMENTS = ["report.md", "Projects/plan.md", "Projects/.attachments/figure.md", "Finance/cache-policy.md",
             "Engineering/environment/venv-notes.md"]


def test_tool_caches_and_virtualenvs_are_not_indexed(tmp_path):
    share = tmp_path / "share"
    for rel in TOOL_STATE + DOCUMENTS:
        (share / rel).parent.mkdir(parents=True, exist_ok=True)
        (share / rel).write_text(f"content of {rel}", encoding="utf-8")
    lib = Library.open(load_settings(tmp_path / "data"))
    try:
        Scanner(lib).scan([str(share)])
        with lib.session() as s:
            indexed = {Path(p).relative_to(share).as_posix() for p in s.scalars(select(File.path))}
    finally:
        lib.close()
    # Hidden folders that are not tool state (.attachments of a wiki export) are still documents.
    assert indexed == set(DOCUMENTS)


def test_default_patterns_name_the_common_caches():
    m = IgnoreMatcher(DEFAULT_IGNORE_PATTERNS)
    for name in (".pytest_cache", ".import_linter_cache", "__pycache__", ".mypy_cache", "node_modules", ".venv",
                 "venv", ".git", ".tox", ".ruff_cache", ".cache", "site-packages"):
        assert m.ignored(name, name), name
    for name in ("cache-policy.md", "venv-notes.md", ".attachments", "environment", "Cache"):
        assert not m.ignored(name, name), name


def test_a_virtualenv_under_another_name_is_skipped_on_rescan_too_and_a_root_that_is_one_is_scanned(tmp_path):
    """The walk tells a virtualenv by its own listing: its files never enter the index, on the
    first scan or later ones; a folder the user adds that is itself one is what they asked for."""
    env = tmp_path / "share" / "tools-env"
    for rel in ("pyvenv.cfg", "lib/site.md", "notes.md"):
        (env / rel).parent.mkdir(parents=True, exist_ok=True)
        (env / rel).write_text(rel, encoding="utf-8")
    (tmp_path / "share" / "report.md").write_text("report", encoding="utf-8")
    lib = Library.open(load_settings(tmp_path / "data"))
    try:
        Scanner(lib).scan([str(tmp_path / "share")])
        Scanner(lib).scan([str(tmp_path / "share")])
        with lib.session() as s:
            assert {Path(p).name for p in s.scalars(select(File.path))} == {"report.md"}
        other = Library.open(load_settings(tmp_path / "data2"))
        try:
            Scanner(other).scan([str(env)])
            with other.session() as s:
                assert {Path(p).name for p in s.scalars(select(File.path))} == {"pyvenv.cfg", "site.md", "notes.md"}
        finally:
            other.close()
    finally:
        lib.close()


def test_the_quick_glob_test_never_hides_a_match():
    """Names are tested against the globs' literal starts and ends before the regex; that must
    only ever skip names the regex would not match (the same answers as fnmatch)."""
    import fnmatch
    patterns = list(DEFAULT_IGNORE_PATTERNS) + ["a[bc]d", "x?y.log", "[ab]*.txt", "*.[ch]", "data-*-2019*", "[]]x"]
    names = ["abd", "acd", "aed", "xzy.log", "xy.log", "a1.txt", "b.txt", "c.txt", "main.c", "main.h", "main.cc",
             "data-q1-2019.csv", "data-2019", "]x", "x", ".tmp", "a.tmp", "a.tmpx", "~$doc.docx", "notes~",
             ".Trash-1000", "Trash", "pkg.egg-info", ".pytest_cache", "pytest_cache", "report.md", ""]
    for subset in (patterns, patterns[:5], ["*"], ["*x*"], ["?"]):
        m = IgnoreMatcher(subset)
        for name in names:
            expected = any(fnmatch.fnmatchcase(name, p) for p in subset)
            assert m.ignored(name, name) == expected, (subset, name)

"""The entry point: single instance per data dir, crash hook, window state, the smoke run."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QLockFile

from spar_desktop.core.data_layout import DataLayout
from spar_desktop.ui.app import install_excepthook, parse_args
from spar_desktop.ui.library.first_run import sample_corpus_dir

ROOT = Path(__file__).resolve().parents[2]


def run_app(*args: str, timeout: int = 120) -> subprocess.CompletedProcess:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "spar_desktop.ui.app", *args], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=ROOT)


def test_second_instance_on_the_same_data_dir_exits_zero(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    lock = QLockFile(str(DataLayout(data).app_lock))
    assert lock.tryLock(100)
    try:
        proc = run_app("--data-dir", str(data), timeout=60)
    finally:
        lock.unlock()
    assert proc.returncode == 0, proc.stderr
    assert "already running" in proc.stderr
    assert "already running" in (data / "logs" / "spar-desktop.log").read_text()


def test_uncaught_exceptions_are_logged_and_recorded_without_a_dialog(tmp_path, caplog):
    crashes: list[str] = []
    previous = sys.excepthook
    try:
        hook = install_excepthook(tmp_path / "x.log", interactive=False, crashes=crashes)
        try:
            raise RuntimeError("slot exploded")
        except RuntimeError:
            with caplog.at_level(logging.CRITICAL):
                hook(*sys.exc_info())
    finally:
        sys.excepthook = previous
    assert "slot exploded" in crashes[0]
    assert "slot exploded" in caplog.text


def test_qt_arguments_are_left_to_qt():
    args = parse_args(["--data-dir", "/tmp/x", "-platform", "offscreen"])
    assert args.data_dir == "/tmp/x" and args.smoke is None


def test_window_state_is_saved_in_the_data_dir(qtbot, make_window, settings):
    window = make_window()
    window.resize(700, 500)  # inside the offscreen screen (800x600): restore clamps to it
    window.close()
    ini = settings.data_dir / "ui-state.ini"
    assert ini.is_file() and "geometry" in ini.read_text()
    again = make_window()
    assert (again.width(), again.height()) == (700, 500)


@pytest.mark.skipif(sample_corpus_dir() is None, reason="the sample corpus is not built yet")
def test_smoke_run_writes_screenshots_and_exits_zero(tmp_path):
    out = tmp_path / "shots"
    proc = run_app("--smoke", str(out), timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads((out / "smoke-report.json").read_text())
    assert report["ok"] and all(s["ok"] for s in report["steps"])
    names = {p.name for p in out.glob("*.png")}
    assert {"01-empty-state.png", "02-library.png", "03-tag-filter.png", "04-pdf-viewer.png"} <= names
    assert all((out / n).stat().st_size > 10_000 for n in names)


def test_keyboard_shortcuts_and_the_empty_library_status(qtbot, window):
    shortcuts = {a.text(): a.shortcut().toString() for a in (window.add_folder_action, window.rescan_action,
                                                              window.settings_action, window.find_tag_action,
                                                              window.search_action)}
    assert all(shortcuts.values()), shortcuts  # Settings too, where the platform has no Preferences key
    assert shortcuts["Filter tags"] == "Ctrl+F" and shortcuts["Search the workspace"] == "Ctrl+K"
    qtbot.waitUntil(lambda: window.summary_label.text() != "", timeout=10_000)
    assert "drop a folder" in window.summary_label.text()  # not "0 files in 0 folders"
    window.search_action.trigger()  # no workspace yet: say what to do instead of nothing
    assert "Select a built workspace" in window.statusBar().currentMessage()


def test_the_app_imports_chromadb_only_where_chroma_runs(tmp_path):
    """After showing its window the app preloads chromadb for in-process Chroma or a Chroma server's client,
    not when its helper process hosts Chroma (a fresh interpreter: imports are process-wide)."""
    script = (
        "import sys\n"
        "from dataclasses import replace\n"
        "from spar_desktop.core.config import Settings\n"
        "from spar_desktop.ui.base.runtime import preload_engine\n"
        f"base = Settings(data_dir={str(tmp_path)!r})\n"
        "mode = sys.argv[1]\n"
        "settings = {'helper': replace(base, chroma_process=True),\n"
        "            'server': replace(base, chroma_process=True, chroma_url='http://127.0.0.1:9')}[mode]\n"
        "preload_engine(settings)\n"
        "print('chromadb' in sys.modules)\n"
    )
    imported = {mode: subprocess.run([sys.executable, "-c", script, mode], capture_output=True, text=True,
                                     timeout=300).stdout.strip() for mode in ("helper", "server")}
    assert imported == {"helper": "False", "server": "True"}


def test_the_app_loads_its_search_engine_without_torch(tmp_path):
    """What the app loads behind its window (libraries, then the encoder) must not bring torch,
    transformers or sentence-transformers back: they cost seconds of import on every start."""
    script = (
        "import sys\n"
        "from spar_desktop.core.config import Settings\n"
        "from spar_desktop.core.progress import CancelToken\n"
        "from spar_desktop.ui.base.runtime import _preload_op\n"
        f"settings = Settings(data_dir={str(tmp_path)!r})\n"
        "_preload_op(settings, lambda p: None, CancelToken())\n"
        "from spar_desktop.core.workspaces.engine import encoder_for\n"
        "enc = encoder_for(settings)\n"
        "assert enc.encode_query('turbine blade').shape == (enc.dim,)\n"
        "print(sorted(m for m in ('torch', 'transformers', 'sentence_transformers') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_folders_given_on_the_command_line_are_indexed_and_qt_options_are_not(tmp_path):
    """The menu entry passes folders dropped on it (%F): they are indexed; the value of a Qt
    option such as '-platform offscreen' is not taken for a folder."""
    from spar_desktop.ui.app import parse_args

    (tmp_path / "share").mkdir()
    args = parse_args(["-platform", "offscreen", str(tmp_path / "share"), "--data-dir", str(tmp_path / "d")])
    assert args.paths == [str(tmp_path / "share")] and args.data_dir == str(tmp_path / "d")


def test_a_folder_dropped_on_the_launcher_is_indexed(tmp_path):
    import signal
    import sqlite3
    import time

    share, data = tmp_path / "share", tmp_path / "data"
    share.mkdir()
    (share / "note.md").write_text("# Dropped\n\nindexed from the launcher", encoding="utf-8")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", SPAR_PRELOAD="0")
    proc = subprocess.Popen([sys.executable, "-m", "spar_desktop.ui.app", "--data-dir", str(data), str(share)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        names: list = []
        deadline = time.time() + 120
        while time.time() < deadline and not names:
            time.sleep(0.5)
            try:
                with sqlite3.connect(data / "library.sqlite3") as db:
                    names = [r[0] for r in db.execute("select name from files")]
            except sqlite3.Error:
                pass
        assert names == ["note.md"]
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)


def test_closing_the_window_closes_the_data_dirs_engine(window):
    """The window's close leaves the data dir closed: its vector-store helper and embedding cache
    are let go of, and whoever opens the data dir next gets a fresh engine."""
    from spar_desktop.core.workspaces.engine import engine_for

    engine = engine_for(window.settings)
    engine.cache  # opened, as a build or search would
    window.close()
    assert engine._cache is None
    assert engine_for(window.settings) is not engine

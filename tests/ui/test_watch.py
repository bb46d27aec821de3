"""Watched folders: changes on disk trigger one debounced incremental rescan of that root."""

from __future__ import annotations

import pytest

from tests.ui.conftest import UI_TIMEOUT_MS


def test_new_and_deleted_files_are_picked_up(qtbot, make_window, small_tree):
    window = make_window(watch=True, debounce_ms=300)
    window.controller.index_paths([str(small_tree)])
    qtbot.waitUntil(lambda: window.file_panel.model.total == 5 and window.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    qtbot.waitUntil(lambda: window.controller.watcher.active_roots == [str(small_tree.resolve())], timeout=UI_TIMEOUT_MS)
    scans = []
    window.controller.scan_finished.connect(scans.append)

    for i in range(5):  # a burst of changes is one rescan, not five
        (small_tree / "HR" / f"new-{i}.txt").write_text(f"new file {i}", encoding="utf-8")
    qtbot.waitUntil(lambda: window.file_panel.model.total == 10 and window.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    assert len(scans) == 1 and scans[0].new == 5
    # Our own scan reads every file; those reads must not count as changes (no rescan loop).
    with qtbot.assertNotEmitted(window.controller.scan_finished, wait=900):
        pass

    (small_tree / "Finance" / "forecast.md").unlink()
    qtbot.waitUntil(lambda: window.file_panel.model.total == 9 and window.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    assert scans[-1].missing == 1
    assert window.issues.total == 1  # the missing file is listed as an issue


def test_writes_in_the_data_dir_never_trigger_a_rescan(qtbot, tmp_path):
    from spar_desktop.ui.library.watcher import FolderWatcher

    home = tmp_path / "home"  # a watched folder that happens to contain the data dir
    (home / "data" / "sample_corpus").mkdir(parents=True)
    (home / "docs").mkdir()
    watcher = FolderWatcher(debounce_ms=100, ignore=(str(home / "data"),), allow=(str(home / "data" / "sample_corpus"),))
    try:
        with qtbot.waitSignal(watcher.watching, timeout=10_000):
            assert watcher.watch(str(home))
        with qtbot.assertNotEmitted(watcher.changed, wait=600):
            (home / "data" / "library.sqlite3-wal").write_bytes(b"x" * 100)  # our own database writes
        with qtbot.waitSignal(watcher.changed, timeout=10_000) as changed:
            (home / "data" / "sample_corpus" / "note.txt").write_text("edited", encoding="utf-8")
        assert changed.args == [str(home.resolve())]
        with qtbot.waitSignal(watcher.changed, timeout=10_000):
            (home / "docs" / "new.txt").write_text("a user's file", encoding="utf-8")
    finally:
        watcher.stop()


def test_a_file_indexed_alone_is_watched_without_its_siblings(qtbot, tmp_path):
    from spar_desktop.ui.library.watcher import FolderWatcher

    (tmp_path / "docs").mkdir()
    report = tmp_path / "docs" / "report.txt"
    report.write_text("v1", encoding="utf-8")
    watcher = FolderWatcher(debounce_ms=100)
    try:
        with qtbot.waitSignal(watcher.watching, timeout=10_000):
            assert watcher.watch(str(report))
        with qtbot.assertNotEmitted(watcher.changed, wait=600):
            (tmp_path / "docs" / "sibling.txt").write_text("not indexed", encoding="utf-8")
        with qtbot.waitSignal(watcher.changed, timeout=10_000) as changed:
            report.write_text("v2, edited", encoding="utf-8")
        assert changed.args == [str(report.resolve())]
    finally:
        watcher.stop()


def _tree(root, folders: int = 3):
    for i in range(folders):
        (root / "docs" / f"d{i}").mkdir(parents=True)
    venv = root / ".venv" / "lib" / "python3.11" / "site-packages"
    for i in range(40):  # a checkout's virtualenv: thousands of folders in real life
        (venv / f"pkg{i}").mkdir(parents=True)


def test_only_indexed_folders_are_watched(qtbot, tmp_path):
    """The scan skips .venv, node_modules, .git...: the watcher must not watch them either (a
    checkout's .venv made the old recursive watcher spin at 35-80% CPU while idle)."""
    from spar_desktop.core.library import folder_watch
    from spar_desktop.ui.library.watcher import FolderWatcher

    if not folder_watch.available():
        pytest.skip("inotify is Linux-only")
    _tree(tmp_path / "share")
    watcher = FolderWatcher(debounce_ms=100)
    try:
        with qtbot.waitSignal(watcher.watching, timeout=10_000):
            assert watcher.watch(str(tmp_path / "share"))
        assert watcher._inotify.watch_count == 5  # share, docs, docs/d0..d2: nothing under .venv
        with qtbot.assertNotEmitted(watcher.changed, wait=600):
            (tmp_path / "share" / ".venv" / "lib" / "python3.11" / "site-packages" / "pkg3" / "m.py").write_text("x")
            (tmp_path / "share" / "docs" / "draft.tmp").write_text("editor temp file")  # ignored name
        with qtbot.waitSignal(watcher.changed, timeout=10_000):
            (tmp_path / "share" / "docs" / "d1" / "report.txt").write_text("a user's file")
        # A folder created later is watched too, and what appears inside it counts.
        (tmp_path / "share" / "docs" / "new").mkdir()
        qtbot.waitUntil(lambda: watcher._inotify.watch_count == 6, timeout=10_000)
        qtbot.wait(300)
        with qtbot.waitSignal(watcher.changed, timeout=10_000):
            (tmp_path / "share" / "docs" / "new" / "memo.txt").write_text("inside the new folder")
    finally:
        watcher.stop()


def test_a_share_past_the_watch_bound_is_rescanned_periodically(qtbot, tmp_path):
    from spar_desktop.core.library import folder_watch
    from spar_desktop.ui.library.watcher import FolderWatcher

    if not folder_watch.available():
        pytest.skip("inotify is Linux-only")
    _tree(tmp_path / "share", folders=6)
    watcher = FolderWatcher(debounce_ms=100, max_watches=3, poll_minutes=0.005)  # a 0.3 s period
    try:
        with qtbot.waitSignal(watcher.not_fully_watched, timeout=10_000) as told:
            watcher.watch(str(tmp_path / "share"))
        assert told.args == [str((tmp_path / "share").resolve())]
        assert watcher._inotify.watch_count == 3
        with qtbot.waitSignal(watcher.changed, timeout=10_000):  # nothing changed: the periodic rescan
            pass
    finally:
        watcher.stop()

"""Watched folders: changes on disk trigger one debounced incremental rescan of that root."""

from __future__ import annotations

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
    from spar_desktop.ui.watcher import FolderWatcher

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
    from spar_desktop.ui.watcher import FolderWatcher

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

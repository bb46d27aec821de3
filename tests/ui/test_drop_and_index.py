"""Dropping folders/files on the window indexes them through the task system."""

from __future__ import annotations

from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication

from tests.ui.conftest import UI_TIMEOUT_MS, file_count, write_pdf


def drop(window, paths) -> tuple[bool, bool]:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    pos = window.rect().center()
    enter = QDragEnterEvent(QPoint(pos), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                            Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(window, enter)
    overlay_shown = window.overlay.isVisible()
    event = QDropEvent(QPointF(pos), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                       Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(window, event)
    return enter.isAccepted() and overlay_shown, event.isAccepted()


def tree_labels(window) -> dict[str, list[str]]:
    model = window.tag_panel.model
    out = {}
    for g in range(model.rowCount()):
        group = model.index(g, 0)
        model.fetchMore(group)
        out[model.data(group)] = [model.data(model.index(r, 0, group)) for r in range(model.rowCount(group))]
    return out


def test_drop_folder_indexes_and_updates_tree_table_and_issues(qtbot, window, small_tree, library):
    assert window.file_panel.library_empty  # empty state offers "Drop a folder here"
    (small_tree / "HR" / "empty.txt").write_bytes(b"")  # a problem file for the Issues dock
    write_pdf(small_tree / "Finance" / "statement.pdf", ["Page one", "Page two"])
    entered, dropped = drop(window, [small_tree])
    assert entered and dropped
    assert not window.overlay.isVisible()
    qtbot.waitUntil(lambda: window.file_panel.model.total == 7 and window.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    assert not window.file_panel.library_empty
    assert file_count(library) == 7
    names = {window.file_panel.model.record(r).name for r in range(window.file_panel.model.rowCount())}
    assert {"budget-2020.txt", "statement.pdf", "policy.md", "empty.txt"} <= names
    labels = tree_labels(window)
    assert labels["Folders"] == [small_tree.name]  # one node per indexed root...
    model = window.tag_panel.model
    folders = model.index(0, 0)
    root = model.index(0, 0, folders)
    model.fetchMore(root)
    assert [model.data(model.index(r, 0, root)) for r in range(model.rowCount(root))] == ["Finance", "HR"]  # ...its folders
    assert {"2020", "2021"} <= set(labels["Dates"])
    assert labels["Dates"] == sorted(labels["Dates"], reverse=True)  # newest year first
    assert window.issues.total == 1 and "Issues (1)" == window.issues_dock.windowTitle()
    assert "7 new" in window.statusBar().currentMessage()
    # A PDF's metadata shows up in the table.
    pdf_row = next(r for r in range(window.file_panel.model.rowCount())
                   if window.file_panel.model.record(r).name == "statement.pdf")
    assert window.file_panel.model.record(pdf_row).page_count == 2


def test_dropping_files_indexes_just_them_and_rejects_non_local_urls(qtbot, window, small_tree, library):
    entered, dropped = drop(window, [small_tree / "HR" / "policy.md"])
    assert entered and dropped
    qtbot.waitUntil(lambda: window.file_panel.model.total == 1 and window.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    assert window.file_panel.model.record(0).name == "policy.md"  # not its sibling in HR/
    assert "1 new" in window.statusBar().currentMessage()
    # Several files at once: one task; a file already indexed is unchanged.
    drop(window, [small_tree / "HR" / "policy.md", small_tree / "Finance" / "budget-2020.txt"])
    qtbot.waitUntil(lambda: window.file_panel.model.total == 2 and window.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    assert "1 new" in window.statusBar().currentMessage() and "1 unchanged" in window.statusBar().currentMessage()
    assert file_count(library) == 2
    mime = QMimeData()
    mime.setUrls([QUrl("https://example.com/report.pdf")])
    enter = QDragEnterEvent(QPoint(5, 5), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                            Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(window, enter)
    assert not enter.isAccepted()


def test_reindexing_the_same_folder_reports_unchanged(qtbot, window, small_tree):
    window.controller.index_paths([str(small_tree)])
    qtbot.waitUntil(lambda: window.file_panel.model.total == 5 and window.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    window.controller.rescan_all()
    qtbot.waitUntil(lambda: "5 unchanged" in window.statusBar().currentMessage(), timeout=UI_TIMEOUT_MS)

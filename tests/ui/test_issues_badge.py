"""Issues out of the way: the Issues dock starts hidden; the status bar's badge says how many files
need attention and opens it; it opens by itself only for an error the user can act on (a folder
that could not be read), never for empty files or formats we read no text from."""

from __future__ import annotations

import zipfile

from spar_desktop.core.library.models import FileStatus
from spar_desktop.ui.library.issues_badge import badge_text
from spar_desktop.ui.library.ops import IssueRow, Issues
from tests.ui.conftest import UI_TIMEOUT_MS


def test_badge_words():
    assert badge_text(3, 0, 40) == "3 files need attention"
    assert badge_text(0, 1, 1) == "1 folder needs attention"
    assert badge_text(1, 2, 9) == "2 folders and 1 file need attention"
    assert badge_text(0, 0, 2_053) == "2,053 files without text"
    assert badge_text(0, 0, 0) == ""


def test_files_without_text_leave_the_dock_hidden_and_the_badge_opens_it(qtbot, window, small_tree):
    assert not window.issues_dock.isVisible() and not window.issues_badge.isVisible()  # nothing yet
    (small_tree / "HR" / "empty.txt").write_bytes(b"")
    with zipfile.ZipFile(small_tree / "Finance" / "photos.zip", "w") as z:
        z.writestr("a.bin", b"\x00\x01\x02" * 100)
    window.controller.index_paths([str(small_tree)])
    qtbot.waitUntil(lambda: window.issues.total >= 1 and window.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    assert window.issues.serious == 0
    assert not window.issues_dock.isVisible()  # "formats without text" never open it
    badge = window.issues_badge
    assert badge.isVisible() and badge.text() == badge_text(0, 0, window.issues.total)
    assert "without text" in badge.text()
    assert badge.parent() is not None and badge in window.statusBar().findChildren(type(badge))
    badge.click()
    assert window.issues_dock.isVisible()
    badge.click()
    assert not window.issues_dock.isVisible()


def test_only_an_unreadable_folder_opens_the_dock_by_itself(qtbot, window):
    damaged = IssueRow(FileStatus.ERROR, "/share/a.pdf", "damaged PDF", 1)
    folder = IssueRow("scan", "/share/Locked", "permission denied", None)
    window.controller.issues_loaded.emit(Issues((damaged,), 1))
    assert window.issues_badge.text() == "1 file needs attention"
    assert not window.issues_dock.isVisible()  # a damaged file is listed, not pushed at the user
    window.controller.issues_loaded.emit(Issues((damaged, folder), 2))
    assert window.issues_dock.isVisible()  # a folder they added cannot be read: they must know
    assert window.issues_badge.text() == "1 folder and 1 file need attention"
    window.issues_dock.hide()  # the user closed it: the same problem again does not reopen it
    window.controller.issues_loaded.emit(Issues((damaged, folder), 2))
    assert not window.issues_dock.isVisible()
    other = IssueRow("scan", "/share/Other", "permission denied", None)
    window.controller.issues_loaded.emit(Issues((damaged, folder, other), 3))
    assert window.issues_dock.isVisible()  # a new unreadable folder does

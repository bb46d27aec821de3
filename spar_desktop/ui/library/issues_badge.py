"""The status bar's way into the Issues dock: "3 files need attention" (a button), so the dock can
stay hidden until asked. On a real share most entries are informational (thousands of archives
"with no text extraction yet"); a dock of 50,049 rows opened at every start hid the files that
really failed, so only real errors are counted as needing attention."""

from __future__ import annotations

from typing import Optional

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget, QStyle, QToolButton, QWidget


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'s' if n != 1 else ''}"


def badge_text(files: int, folders: int, total: int) -> str:
    """'3 files need attention' for real errors (files that could not be read, folders that could
    not be listed); 'N files without text' when only informational entries (empty files, formats we
    read no text from) are listed; '' when there is nothing."""
    if files or folders:
        parts = [_count(folders, "folder")] * bool(folders) + [_count(files, "file")] * bool(files)
        return f"{' and '.join(parts)} need{'s' if files + folders == 1 else ''} attention"
    if total:
        return f"{_count(total, 'file')} without text"
    return ""


class IssuesBadge(QToolButton):
    """Hidden when there is nothing to show; a click toggles the Issues dock. The dock opens by
    itself only for a new error the user can act on (a folder they added that cannot be read),
    never for files we read no text from."""

    def __init__(self, panel, dock: QDockWidget, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.setObjectName("issuesBadge")
        self.setAutoRaise(True)
        self.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self._warn = self.style().standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning)
        self.panel, self.dock = panel, dock  # IssuesPanel, its dock
        self.serious = 0
        self._user_errors_seen = 0
        self.clicked.connect(self.toggle_dock)
        panel.count_changed.connect(self._counted)
        self.hide()

    def _counted(self, total: int) -> None:
        p = self.panel
        self.set_counts(p.serious - p.user_errors, p.user_errors, total)
        if p.user_errors > self._user_errors_seen:
            self.dock.show()
            self.dock.raise_()
        self._user_errors_seen = p.user_errors

    def toggle_dock(self) -> None:
        self.dock.setVisible(not self.dock.isVisible())
        if self.dock.isVisible():
            self.dock.raise_()

    def set_counts(self, files: int, folders: int, total: int) -> None:
        """``files``/``folders``: real errors listed; ``total``: every entry of the Issues dock."""
        serious = self.serious = files + folders
        text = badge_text(files, folders, total)
        self.setText(text)
        self.setIcon(self._warn if serious else self.style().standardIcon(QStyle.StandardPixmap.SP_MessageBoxInformation))
        self.setProperty("tone", "warn" if serious else "info")
        self.style().unpolish(self)
        self.style().polish(self)
        self.setToolTip("Show the files that could not be read and why (View ▸ Issues)" if serious else
                        "Files indexed by name, date and folder whose text is not read or searched; click for the list")
        self.setVisible(bool(text))

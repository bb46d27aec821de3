"""Right dock placeholder for workspaces, and the desktop integration "Show in folder".

The workspace layer (SPAR's session workspaces) is not built yet; the dock says so plainly
instead of pretending. Replace WorkspacePlaceholder with the real panel when it lands.
"""

from __future__ import annotations

import os
import sys

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget


class WorkspacePlaceholder(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 16, 16, 16)
        title = QLabel("Workspaces arrive with the workspace layer")
        title.setObjectName("workspaceTitle")
        title.setWordWrap(True)
        text = QLabel("A workspace will turn a plain-language request such as “incident reports for Project "
                      "Falcon from 2023” into tag and metadata filters you can see and edit, then build a "
                      "searchable collection for just those files.\n\nFor now, select tags on the left to scope "
                      "the file table by hand.")
        text.setObjectName("muted")
        text.setWordWrap(True)
        layout.addWidget(title)
        layout.addSpacing(6)
        layout.addWidget(text)
        layout.addStretch(1)


def reveal_in_file_manager(path: str) -> None:
    """Select ``path`` in the platform's file manager (falls back to opening its folder)."""
    from PySide6.QtCore import QProcess

    if sys.platform == "win32":
        QProcess.startDetached("explorer", [f"/select,{os.path.normpath(path)}"])
    elif sys.platform == "darwin":
        QProcess.startDetached("open", ["-R", path])
    else:
        uri = QUrl.fromLocalFile(path).toString()
        ok = QProcess.startDetached("dbus-send", [
            "--session", "--dest=org.freedesktop.FileManager1", "--type=method_call",
            "/org/freedesktop/FileManager1", "org.freedesktop.FileManager1.ShowItems",
            f"array:string:{uri}", "string:"])
        if not ok:
            QDesktopServices.openUrl(QUrl.fromLocalFile(os.path.dirname(path)))

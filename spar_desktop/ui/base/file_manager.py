"""The desktop's file manager: "Show in folder" for a path (a file of the index or a hit)."""

from __future__ import annotations

import os
import sys

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices


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

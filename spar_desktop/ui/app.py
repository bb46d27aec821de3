"""`spar-desktop`: the GUI entry point (a minimal window until the full UI lands)."""

from __future__ import annotations

import sys


def main() -> int:
    from PySide6.QtWidgets import QApplication, QLabel, QMainWindow

    app = QApplication.instance() or QApplication(sys.argv)
    window = QMainWindow()
    window.setWindowTitle("SPAR Desktop")
    window.setCentralWidget(QLabel("Drop a folder here to index it"))
    window.resize(1100, 720)
    window.show()
    return app.exec()

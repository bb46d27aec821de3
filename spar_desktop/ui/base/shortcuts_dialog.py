"""Help ▸ Keyboard shortcuts: every menu action that has a shortcut, read from the menus
themselves (so the list cannot drift from what the keys do), plus the keys that belong to a
widget rather than a menu (Enter sends a question, Shift+Enter starts a new line)."""

from __future__ import annotations

from typing import Iterable, Optional

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QMenu,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

WIDGET_KEYS = (
    ("Chat", "Enter or Ctrl+Enter", "Send the question"),
    ("Chat", "Shift+Enter", "New line in the question"),
    ("Search results", "Enter or double-click", "Open the document at the passage's page"),
    ("Library", "Space", "View the selected file"),
)


def menu_shortcuts(menus: Iterable[QMenu]) -> list[tuple[str, str, str]]:
    """(menu, key, action) for every action with a shortcut, in menu order, once each."""
    rows, seen = [], set()
    for menu in menus:
        title = menu.title().replace("&", "")
        for act in menu.actions():
            if not isinstance(act, QAction) or act.isSeparator() or act in seen:
                continue
            key = act.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
            if key:
                seen.add(act)
                rows.append((title, key, act.text().replace("&", "").rstrip("…")))
    return rows


class ShortcutsDialog(QDialog):
    def __init__(self, menus: Iterable[QMenu], parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        self.rows = menu_shortcuts(menus) + list(WIDGET_KEYS)
        self.table = QTableWidget(len(self.rows), 3)
        self.table.setHorizontalHeaderLabels(["Where", "Keys", "What it does"])
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QTableWidget.SelectionMode.NoSelection)
        for r, row in enumerate(self.rows):
            for c, text in enumerate(row):
                self.table.setItem(r, c, QTableWidgetItem(text))
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table)
        layout.addWidget(buttons)
        self.resize(560, 520)

    def keys_for(self, what: str) -> list[str]:
        return [key for _menu, key, text in self.rows if text == what]

"""The two ways of using the window, and the way back.

* Library (Ctrl+1): the tag tree, the file table and the details, for browsing the share.
* Workspace (Ctrl+2): the workspace view at the centre (request, search, chat) and the workspace
  list at the side; the tag tree is put away so the results have room.

The choice is remembered in ui-state.ini (``view/mode``) and restored at the next start. Esc goes
back to the page shown before (a result opened in the viewer returns to the results).
"""

from __future__ import annotations

from typing import Optional

from PySide6.QtCore import QObject, QSettings
from PySide6.QtWidgets import QApplication, QTabWidget, QWidget

LIBRARY, WORKSPACE = "library", "workspace"
SETTING = "view/mode"
HISTORY = 20  # pages Esc can go back through


class ViewModes(QObject):
    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window
        self.tabs: QTabWidget = window.tabs
        self.mode = LIBRARY
        self._history: list[QWidget] = []
        self._last: Optional[QWidget] = self.tabs.currentWidget()
        self._going_back = False
        self.tabs.currentChanged.connect(self._tab_changed)

    def build_actions(self) -> None:
        w = self.window
        self.library_action = w._action("Library", self.show_library, None, "Ctrl+1",
                                        "Browse the share: tags, files and their details")
        self.workspace_action = w._action("Workspace", self.show_workspace, None, "Ctrl+2",
                                          "The current workspace: its request, search and chat")
        self.back_action = w._action("Back", self.back, None, "Esc", "Go back to the page shown before")
        for act in (self.library_action, self.workspace_action):
            act.setCheckable(True)
        self.library_action.setChecked(True)

    # ------------------------------------------------------------------ modes
    def show_library(self) -> None:
        self.tabs.setCurrentWidget(self.window.file_panel)  # _tab_changed applies the docks

    def show_workspace(self) -> None:
        self.tabs.setCurrentWidget(self.window.workspace_view)

    def _apply(self, mode: str) -> None:
        w = self.window
        self.mode = mode
        self.library_action.setChecked(mode == LIBRARY)
        self.workspace_action.setChecked(mode == WORKSPACE)
        if mode == LIBRARY:
            w.tags_dock.show()
            w.details_dock.show()
            w.details_dock.raise_()
        else:
            w.tags_dock.hide()  # the results and the chat get its width
            w.workspace_dock.show()
            w.workspace_dock.raise_()

    def _tab_changed(self, _index: int) -> None:
        page = self.tabs.currentWidget()
        if self._last is not None and self._last is not page and not self._going_back:
            self._history = (self._history + [self._last])[-HISTORY:]
        self._last = page
        if page is self.window.file_panel and self.mode != LIBRARY:
            self._apply(LIBRARY)
        elif page is self.window.workspace_view and self.mode != WORKSPACE:
            self._apply(WORKSPACE)

    def back(self) -> bool:
        """Esc: the page shown before this one. A popup or a dialog handles its own Esc first."""
        if QApplication.activePopupWidget() is not None:
            return False
        while self._history:
            page = self._history.pop()
            if page is not self.tabs.currentWidget() and self.tabs.indexOf(page) >= 0:
                self._going_back = True
                try:
                    self.tabs.setCurrentWidget(page)
                finally:
                    self._going_back = False
                return True
        return False

    # ------------------------------------------------------------------ remembered
    def restore(self, qs: QSettings) -> None:
        mode = qs.value(SETTING, LIBRARY)
        self._history.clear()
        if mode == WORKSPACE:
            self.show_workspace()
            self._apply(WORKSPACE)
        else:
            self.show_library()
            self._apply(LIBRARY)
        self._history.clear()

    def save(self, qs: QSettings) -> None:
        if qs.value(SETTING, LIBRARY) != self.mode:  # unchanged: the file is left as it is
            qs.setValue(SETTING, self.mode)
            qs.sync()


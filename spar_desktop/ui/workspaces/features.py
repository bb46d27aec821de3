"""Workspaces in the main window: builds their controller and panel, the Workspace menu, and the
dialogs behind the panel's requests (new/edit, export/import, delete). Kept out of main_window.py
so each stays small; chat is ui/chat/features.py, which the main window wires to the controller."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Optional

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QFileDialog, QFrame, QMenu, QMessageBox, QScrollArea, QStyle

from spar_desktop.ui.workspaces.controller import WorkspaceController
from spar_desktop.ui.workspaces.dialog import WorkspaceDialog
from spar_desktop.ui.workspaces.panel import WorkspacePanel


class WorkspaceFeatures(QObject):
    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window
        self.controller = WorkspaceController(window.library, window.runner, self)
        self.panel = WorkspacePanel(self.controller)
        # A short dock scrolls the panel vertically instead of squeezing it.
        self.panel_area = QScrollArea()
        self.panel_area.setObjectName("workspaceScroll")
        self.panel_area.setWidget(self.panel)
        self.panel_area.setWidgetResizable(True)
        self.panel_area.setFrameShape(QFrame.Shape.NoFrame)
        # Never sideways: while shown, the dock is kept as wide as the panel's narrowest layout
        # (its buttons wrap), so nothing in it is cut when the window is small (hold_panel_width).
        self.panel_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.dialog: Optional[WorkspaceDialog] = None

    def hold_panel_width(self, shown: bool) -> None:
        """Only while its tab is the one shown: behind Details it must not widen the dock area
        (a small window's library view would not fit)."""
        width = self.panel.minimumSizeHint().width() + self.panel_area.verticalScrollBar().sizeHint().width()
        self.panel_area.setMinimumWidth(width if shown else 0)

    def connect(self) -> None:
        w, c, p = self.window, self.controller, self.panel
        w.workspace_dock.visibilityChanged.connect(self.hold_panel_width)
        c.status.connect(lambda text: w.statusBar().showMessage(text, 15000))
        c.error.connect(w._show_error)
        p.new_requested.connect(self.new_workspace)
        p.edit_requested.connect(self.edit_workspace)
        p.export_requested.connect(self.export_workspace)
        p.import_requested.connect(self.import_workspace)
        p.delete_requested.connect(self.delete_workspace)
        p.reset_learning_requested.connect(self.reset_learning)
        p.hit_activated.connect(self.open_hit)

    def build_menu(self) -> QMenu:
        w = self.window
        self.new_action = w._action("New workspace…", lambda: self.new_workspace(), QStyle.StandardPixmap.SP_FileDialogNewFolder,
                                    QKeySequence.StandardKey.New,
                                    "Describe the files for a task; check how they are chosen; build a searchable workspace")
        self.import_action = w._action("Import workspace…", self.import_workspace)
        self.new_action.setEnabled(False)
        self.controller.ready.connect(lambda: self.new_action.setEnabled(True))
        menu = w.menuBar().addMenu("&Workspace")
        for act in (self.new_action, self.import_action, None, w.search_action):  # the window adds Chat
            menu.addSeparator() if act is None else menu.addAction(act)
        return menu

    def start(self) -> None:
        self.controller.start()

    # ------------------------------------------------------------------ workspaces
    def show_panel(self) -> None:
        """A created workspace opens at the centre, its list entry beside it."""
        self.window.views.show_workspace()

    def new_workspace(self, request: str = "") -> Optional[WorkspaceDialog]:
        return self._open_dialog(None, request)

    def edit_workspace(self, name: str) -> Optional[WorkspaceDialog]:
        return self._open_dialog(name, "")

    def _open_dialog(self, name: Optional[str], request: str) -> Optional[WorkspaceDialog]:
        if self.controller.service is None:
            self.window.statusBar().showMessage("Workspaces are still opening; try again in a moment", 8000)
            return None
        if self.dialog is not None and self.dialog.isVisible():
            self.dialog.raise_()
            return self.dialog
        dialog = WorkspaceDialog(self.controller, self.window, edit_name=name)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.destroyed.connect(lambda: setattr(self, "dialog", None))
        dialog.created.connect(lambda _v: self.show_panel())
        if request:
            dialog.request_edit.setText(request)
            dialog._request_edited(request)
            dialog.preview()
        self.dialog = dialog
        dialog.open()  # window-modal but not a nested loop: tasks keep delivering
        return dialog

    def export_workspace(self, name: str) -> None:
        safe = re.sub(r"[^\w.-]+", "-", name).strip("-") or "workspace"
        path, _ = QFileDialog.getSaveFileName(self.window, f"Export “{name}”", str(Path.home() / f"{safe}.sparws"),
                                              "SPAR workspace (*.sparws)")
        if path:
            self.controller.export(name, path if path.endswith(".sparws") else path + ".sparws")

    def import_workspace(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.window, "Import a workspace", str(Path.home()),
                                              "SPAR workspace (*.sparws);;All files (*)")
        if path:
            self.controller.import_file(path)

    def _confirmed(self, title: str, question: str) -> bool:
        """Ask in the real app; offscreen (tests, --smoke) there is nobody to ask."""
        if not self.window.interactive:
            return True
        return QMessageBox.question(self.window, title, question) == QMessageBox.StandardButton.Yes

    def delete_workspace(self, name: str) -> None:
        if self._confirmed("Delete workspace",
                           f"Delete the workspace “{name}” with its chat threads and search history?\n\n"
                           "Your files are not touched; the workspace can be created again from its request."):
            self.controller.delete(name)

    def reset_learning(self, name: str) -> None:
        if self._confirmed("Reset learning",
                           f"Forget what search learned from your feedback in “{name}” and go back to the original "
                           "results?\n\nThe files are shared, so other workspaces holding them are reset too."):
            self.controller.reset_learning(name)

    def open_hit(self, hit) -> None:
        """A search result: the viewer at its page with the passage highlighted."""
        self.window.open_document(hit.path, hit.page_start, hit.text)
        results = self.controller.last_results
        self.controller.mark_opened(results.log_id if results is not None else None, hit.file_id)
        self.controller.learn_from_hit(results, hit)  # an opened result confirms its passage for the query

"""Chat in the main window: its controller and pane, the Chat action, and the dialogs behind the
pane's thread requests (rename, delete, export). The main window hands in the workspaces it
follows (chat/controller.WorkspaceSource), so chat never imports the workspaces feature group."""

from __future__ import annotations

import re
from pathlib import Path

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QFileDialog, QInputDialog, QMessageBox

from spar_desktop.ui.base.icons import chat_icon
from spar_desktop.ui.chat.controller import ChatController, WorkspaceSource
from spar_desktop.ui.chat.pane import ChatPane


class ChatFeatures(QObject):
    def __init__(self, window, workspaces: WorkspaceSource) -> None:
        super().__init__(window)
        self.window = window
        self.controller = ChatController(lambda: window.settings, window.runner, workspaces, self)
        self.pane = ChatPane(self.controller)

    def connect(self) -> None:
        w, chat, pane = self.window, self.controller, self.pane
        chat.status.connect(lambda text: w.statusBar().showMessage(text, 15000))
        chat.error.connect(w._show_error)
        chat.open_requested.connect(w.open_document)
        pane.rename_requested.connect(self.rename_thread)
        pane.delete_requested.connect(self.delete_thread)
        pane.export_requested.connect(self.export_thread)

    def build_action(self):
        """Workspace ▸ Chat (and the toolbar's): the workspace view with the question box focused."""
        self.chat_action = self.window._action("Chat", self.focus_chat, None, "Ctrl+Shift+C",
                                               "Ask questions about the current workspace")
        self.chat_action.setIcon(chat_icon())
        return self.chat_action

    def shutdown(self) -> None:
        self.controller.shutdown()

    def focus_chat(self) -> None:
        self.window.views.show_workspace()
        self.pane.input.setFocus()

    # ------------------------------------------------------------------ threads
    def rename_thread(self, thread_id: int, title: str) -> None:
        text, ok = QInputDialog.getText(self.window, "Rename thread", "Title:", text=title)
        if ok and text.strip():
            self.controller.rename_thread(thread_id, text.strip())

    def delete_thread(self, thread_id: int, title: str) -> None:
        if self.window.interactive:
            answer = QMessageBox.question(self.window, "Delete thread", f"Delete the thread “{title}” and its messages?")
            if answer != QMessageBox.StandardButton.Yes:
                return
        self.controller.delete_thread(thread_id)

    def export_thread(self, thread_id: int, title: str) -> None:
        safe = re.sub(r"[^\w.-]+", "-", title).strip("-")[:60] or "thread"
        path, _ = QFileDialog.getSaveFileName(self.window, "Export thread as Markdown", str(Path.home() / f"{safe}.md"),
                                              "Markdown (*.md)")
        if path:
            self.controller.export_thread(thread_id, path)

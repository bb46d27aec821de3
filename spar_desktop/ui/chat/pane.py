"""The chat tab: threads of the current workspace on the left; on the right the messages, the
model picker, the 'no model server' banner, and the question box with Send and Stop."""

from __future__ import annotations

import html
from typing import Optional

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QStyle,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from spar_desktop.ui.base.elided_label import ElidedLabel
from spar_desktop.ui.chat.controller import ChatController
from spar_desktop.ui.chat.view import MessageBubble, MessageList

THREAD_ROLE = Qt.ItemDataRole.UserRole + 1


class QuestionBox(QPlainTextEdit):
    """Enter (or Ctrl+Enter) sends, Shift+Enter starts a new line."""

    submitted = Signal()

    def event(self, event) -> bool:
        # Ctrl+Enter sends here, though the window binds it to "Open" elsewhere: claim the key.
        if (event.type() == QEvent.Type.ShortcutOverride and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
                and event.modifiers() & Qt.KeyboardModifier.ControlModifier):
            event.accept()
            return True
        return super().event(event)

    def keyPressEvent(self, event) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
            self.submitted.emit()
            return
        super().keyPressEvent(event)


class ChatPane(QWidget):
    rename_requested = Signal(int, str)  # thread id, current title
    delete_requested = Signal(int, str)
    export_requested = Signal(int, str)

    def __init__(self, controller: ChatController, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.current: Optional[MessageBubble] = None  # the answer being streamed
        self.tokens_seen = 0
        self._workspace_name: Optional[str] = None
        self._build()
        c = controller
        c.workspace_changed.connect(self._workspace_changed)
        c.threads_loaded.connect(self._threads_loaded)
        c.thread_selected.connect(self._thread_selected)
        c.messages_loaded.connect(self._messages_loaded)
        c.answer_started.connect(self._answer_started)
        c.token.connect(self._token)
        c.answer_finished.connect(self._answer_finished)
        c.answer_failed.connect(self._answer_failed)
        c.server_changed.connect(self._server_changed)
        c.models_loaded.connect(self._models_loaded)
        c.server_settings_changed.connect(self._server_settings_changed)
        c.banner.connect(self.show_banner)
        c.ready.connect(lambda: self._workspace_changed(c.workspace))
        self._workspace_changed(None)

    # ------------------------------------------------------------------ layout
    def _build(self) -> None:
        root = QHBoxLayout(self)
        root.setContentsMargins(0, 0, 0, 0)
        root.setSpacing(0)
        root.addWidget(self._build_threads_section())
        line = QFrame()
        line.setFrameShape(QFrame.Shape.VLine)
        line.setObjectName("separator")
        root.addWidget(line)
        right = QVBoxLayout()
        right.setContentsMargins(0, 0, 0, 0)
        right.setSpacing(0)
        right.addLayout(self._build_title_bar())
        right.addWidget(self._build_banner())
        self.messages = MessageList()
        right.addWidget(self.messages, 1)
        right.addWidget(self._build_question_bar())
        root.addLayout(right, 1)

    def _build_threads_section(self) -> QWidget:
        """The thread list with New, Rename, Delete and Export."""
        left = QWidget()
        left.setObjectName("threadColumn")
        # Narrower when the chat shares the workspace view with the search results.
        left.setMinimumWidth(150)
        left.setMaximumWidth(230)
        ll = QVBoxLayout(left)
        ll.setContentsMargins(8, 8, 8, 8)
        head = QHBoxLayout()
        title = QLabel("Threads")
        title.setObjectName("sectionTitle")
        self.new_button = QToolButton(text="New", toolTip="Start a new thread in this workspace")
        self.new_button.clicked.connect(self.controller.new_thread)
        head.addWidget(title)
        head.addStretch(1)
        head.addWidget(self.new_button)
        ll.addLayout(head)
        self.thread_list = QListWidget()
        self.thread_list.setObjectName("threadList")
        self.thread_list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.thread_list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.thread_list.currentItemChanged.connect(self._thread_clicked)
        ll.addWidget(self.thread_list, 1)
        tools = QHBoxLayout()
        self.rename_button = QToolButton(text="Rename", toolTip="Rename the thread")
        self.delete_button = QToolButton(text="Delete", toolTip="Delete the thread and its messages")
        self.export_button = QToolButton(text="Export", toolTip="Save the thread with its sources as Markdown")
        self.rename_button.clicked.connect(lambda: self._emit_thread(self.rename_requested))
        self.delete_button.clicked.connect(lambda: self._emit_thread(self.delete_requested))
        self.export_button.clicked.connect(lambda: self._emit_thread(self.export_requested))
        for b in (self.rename_button, self.delete_button, self.export_button):
            tools.addWidget(b)
        tools.addStretch(1)
        ll.addLayout(tools)
        return left

    def _build_title_bar(self) -> QHBoxLayout:
        """The workspace's name, the server line and the model choice."""
        bar = QHBoxLayout()
        bar.setContentsMargins(12, 6, 12, 6)
        # Elided: a long workspace name must not widen the window's centre (it squeezes the docks).
        self.title = ElidedLabel("Chat", full_tip=True)
        self.title.setObjectName("viewerTitle")
        self.server_label = QLabel()
        self.server_label.setObjectName("muted")
        self.model_combo = QComboBox()
        self.model_combo.setMinimumWidth(150)
        self.model_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.model_combo.setMinimumContentsLength(14)
        self.model_combo.setToolTip("The Ollama model that writes answers")
        bar.addWidget(self.title, 1)
        bar.addWidget(self.server_label)
        bar.addSpacing(12)
        bar.addWidget(QLabel("Model"))
        bar.addWidget(self.model_combo)
        return bar

    def _build_banner(self) -> QFrame:
        """'Ollama is not reachable…' (hidden until said), with a close button."""
        self.banner = QFrame()
        self.banner.setObjectName("chatBanner")
        bl = QHBoxLayout(self.banner)
        bl.setContentsMargins(12, 8, 8, 8)
        self.banner_label = QLabel()
        self.banner_label.setWordWrap(True)
        self.banner_label.setTextFormat(Qt.TextFormat.RichText)
        self.banner_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        close = QToolButton(autoRaise=True, toolTip="Hide")
        close.setIcon(self.style().standardIcon(QStyle.StandardPixmap.SP_TitleBarCloseButton))
        close.clicked.connect(self.banner.hide)
        bl.addWidget(self.banner_label, 1)
        bl.addWidget(close, 0, Qt.AlignmentFlag.AlignTop)
        self.banner.hide()
        return self.banner

    def _build_question_bar(self) -> QFrame:
        """The question box with Send and Stop."""
        box = QFrame()
        box.setObjectName("questionBar")
        il = QHBoxLayout(box)
        il.setContentsMargins(12, 8, 12, 8)
        self.input = QuestionBox()
        self.input.setObjectName("questionBox")
        self.input.setPlaceholderText("Ask a question about the files in this workspace…  (Enter or Ctrl+Enter to send, Shift+Enter for a new line)")
        self.input.setFixedHeight(64)
        self.input.submitted.connect(self.send)
        self.send_button = QPushButton("Send")
        self.send_button.setObjectName("primaryButton")
        self.send_button.clicked.connect(self.send)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setToolTip("Stop the answer (what was written so far is kept)")
        self.stop_button.clicked.connect(self.controller.stop)
        self.stop_button.hide()
        il.addWidget(self.input, 1)
        il.addWidget(self.send_button, 0, Qt.AlignmentFlag.AlignBottom)
        il.addWidget(self.stop_button, 0, Qt.AlignmentFlag.AlignBottom)
        return box

    # ------------------------------------------------------------------ state
    def _can_ask(self) -> bool:
        c = self.controller
        # searchable: also while an update runs (answers come from the previous build meanwhile)
        return (c.session is not None and c.workspace is not None and c.workspace.searchable
                and not c.answering and c.available)

    def _update_controls(self) -> None:
        c = self.controller
        answering = c.answering
        has_ws = c.workspace is not None
        self.input.setEnabled(self._can_ask() or answering)
        self.send_button.setEnabled(self._can_ask())
        self.send_button.setVisible(not answering)
        self.stop_button.setVisible(answering)
        self.new_button.setEnabled(has_ws and not answering)
        self.thread_list.setEnabled(not answering)
        has_thread = c.thread_id is not None and not answering
        for b in (self.rename_button, self.delete_button, self.export_button):
            b.setEnabled(has_thread)

    def _workspace_changed(self, row) -> None:
        c = self.controller
        name = row.name if row else None
        if name != self._workspace_name:  # another workspace's conversation must not linger
            self._workspace_name = name
            self.messages.clear()
            self.current = None
        self.title.setText(f"Chat · {row.name}" if row else "Chat")
        if row is None:
            hint = "Select a workspace in the Workspace panel (or create one) to ask questions about its files."
        elif not c.available:
            hint = "Chat needs the app's event loop; start SPAR Desktop normally to use it."
        elif row.status == "archived":
            hint = f"“{row.name}” is archived: reactivate it in the Workspace panel to ask questions."
        elif not row.searchable:
            hint = f"Build “{row.name}” in the Workspace panel first; then ask questions about its files here."
        else:
            hint = (f"Ask a question about the {row.file_count:,} files in “{row.name}”. Answers cite their sources: "
                    "click a citation to open the page.")
        self.messages.set_placeholder(hint)
        self._update_controls()

    def _emit_thread(self, signal) -> None:
        item = self.thread_list.currentItem()
        if item is not None:
            signal.emit(item.data(THREAD_ROLE), item.text())

    # ------------------------------------------------------------------ threads
    def _threads_loaded(self, threads: tuple) -> None:
        self.thread_list.blockSignals(True)
        self.thread_list.clear()
        for t in threads:
            item = QListWidgetItem(t.display_title)
            item.setData(THREAD_ROLE, t.id)
            item.setToolTip(f"{t.display_title}\n{t.message_count} messages · {t.updated_at:%Y-%m-%d %H:%M}")
            self.thread_list.addItem(item)
        self.thread_list.blockSignals(False)
        self._thread_selected(self.controller.thread_id)

    def _thread_selected(self, thread_id: Optional[int]) -> None:
        self.thread_list.blockSignals(True)
        self.thread_list.setCurrentRow(-1)
        for i in range(self.thread_list.count()):
            if self.thread_list.item(i).data(THREAD_ROLE) == thread_id:
                self.thread_list.setCurrentRow(i)
        self.thread_list.blockSignals(False)
        if thread_id is None and not self.controller.answering:
            self.messages.clear()
        self._update_controls()

    def _thread_clicked(self, item: Optional[QListWidgetItem], _previous) -> None:
        if item is not None:
            self.controller.select_thread(item.data(THREAD_ROLE))

    def _messages_loaded(self, thread_id: int, messages: tuple) -> None:
        if self.controller.answering:
            return
        self.messages.clear()
        for m in messages:
            self._connect(self.messages.add_message(m))

    def _connect(self, bubble: MessageBubble) -> None:
        if bubble.role != "user":
            bubble.passage_clicked.connect(lambda p, b=bubble: self.controller.open_passage(b.message_id, p))
            bubble.feedback_changed.connect(
                lambda v, b=bubble: self.controller.feedback(b.message_id, v) if b.message_id is not None else None)

    # ------------------------------------------------------------------ asking
    def current_model(self) -> Optional[str]:
        data = self.model_combo.currentData()
        return data or None

    def ask(self, question: str) -> bool:
        self.input.setPlainText(question)
        return self.send()

    def send(self) -> bool:
        text = self.input.toPlainText().strip()
        if not text or not self._can_ask():
            return False
        if self.controller.ask(text, self.current_model()):
            self.input.clear()
            return True
        return False

    def _answer_started(self, question: str) -> None:
        if self.controller.thread_id is None:
            self.messages.clear()
        self.messages.add("user", question)
        self.current = self.messages.add("assistant", streaming=True)
        self.current.set_note("Searching the workspace…")
        self.tokens_seen = 0
        self._connect(self.current)
        self._update_controls()

    def _token(self, delta: str) -> None:
        if self.current is None:
            return
        if self.tokens_seen == 0:
            self.current.set_note("")
        self.tokens_seen += 1
        self.current.append(delta)

    def _answer_finished(self, result) -> None:
        bubble, self.current = self.current, None
        self.messages.stop_rendering()
        if bubble is not None:
            bubble.finish(message_id=result.message_id, text=result.text, status=result.status, mode=result.mode,
                          model=result.model, error=result.error, passages=result.passages,
                          citations=result.citations, timings=result.timings.to_json())
            if self.tokens_seen <= 1:  # arrived in one piece (retrieval only): read it from the top
                self.messages.show_exchange(bubble)
        self._update_controls()

    def _answer_failed(self, message: str) -> None:
        bubble, self.current = self.current, None
        self.messages.stop_rendering()
        if bubble is not None:
            bubble.finish(message_id=None, text=bubble.raw_text, status="error", mode=None, model=None,
                          error=message, passages=(), citations=())
        self._update_controls()

    # ------------------------------------------------------------------ server
    def _server_changed(self, ok: bool) -> None:
        if ok:
            self.server_label.setText("<span style='color:#1e7b34'>●</span> Ollama connected")
            self.banner.hide()
        else:
            self.server_label.setText("<span style='color:#a15c00'>●</span> retrieval only")
        host = self.controller.session.ollama.host if self.controller.session else ""
        self.server_label.setToolTip(f"Ollama at {host}" if ok else
                                     f"No Ollama server at {host}: answers list the most relevant passages")
        self.model_combo.setEnabled(ok)

    def _models_loaded(self, models: tuple) -> None:
        """List the installed models and pick one that is installed: the wanted one (the picker's,
        else the settings') when it is, else one of its family (llama3.2 → llama3.2:3b), else the
        first. Only when nothing is installed is the wanted model listed, as "not installed"."""
        wanted = self.current_model() or self.controller.default_model
        self.model_combo.clear()
        names = [m.name for m in models]
        for m in models:
            detail = " · ".join(x for x in (m.parameter_size, m.quantization) if x)
            self.model_combo.addItem(f"{m.name}  ({detail})" if detail else m.name, m.name)
        if not names:
            self.model_combo.addItem(f"{wanted} (not installed)", wanted)
            self.model_combo.setCurrentIndex(0)
            return
        family = wanted.split(":")[0]
        choice = next((n for n in names if n in (wanted, f"{wanted}:latest")), None) or \
            next((n for n in names if n.split(":")[0] == family), names[0])
        self.model_combo.setCurrentIndex(names.index(choice))
        missing = "" if choice in (wanted, f"{wanted}:latest") else f" ({wanted} is not installed on this server)"
        self.model_combo.setToolTip(f"The Ollama model that writes answers{missing}")

    def _server_settings_changed(self) -> None:
        """Another host or model in the settings: the picker starts again from the new model and
        the server state is unknown until the check that follows."""
        self.model_combo.clear()
        self.model_combo.addItem(self.controller.default_model, self.controller.default_model)
        self.banner.hide()
        self.server_label.setText("<span style='color:#8a909b'>●</span> checking Ollama…")

    def show_banner(self, text: str) -> None:
        parts = html.escape(text).split("`")
        rich = "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts))
        self.banner_label.setText(f"<b>No language model available.</b> {rich}")
        self.banner.show()

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self.model_combo.count() == 0:
            self.model_combo.addItem(self.controller.default_model, self.controller.default_model)

"""Chat state for one window: the ChatSession, the current workspace's threads, the answer being
streamed, the model list and whether Ollama is reachable.

An answer is a coroutine op of the window's TaskRunner (``run_coroutine``): ``ChatSession.answer``
is awaited on the qasync loop, so streamed tokens arrive on the UI thread one by one while the
window stays responsive (retrieval runs in asyncio's worker thread, under the workspace's lock,
which the core takes). Stop cancels the task's CancelToken, which the stream polls; the partial
answer is kept. Thread-store reads and writes are ordinary ops. A watcher coroutine re-checks the
server so chat switches back from retrieval-only as soon as Ollama appears.
"""

from __future__ import annotations

import asyncio
import logging
from functools import partial
from typing import TYPE_CHECKING, Any, Callable, Optional, Protocol

from PySide6.QtCore import QObject, Signal

from spar_desktop.core.config import Settings
from spar_desktop.core.progress import CancelToken, ProgressCallback
from spar_desktop.ui.base.tasks import TaskError, TaskHandle, TaskRunner
from spar_desktop.ui.chat import ops

if TYPE_CHECKING:  # types only: the chat and workspace modules load on a worker (workspaces/ops.py)
    from spar_desktop.core.chat.feedback import LearnTarget
    from spar_desktop.core.workspaces.manager import WorkspaceInfo

log = logging.getLogger(__name__)
WATCH_INTERVAL_S = 15.0


class WorkspaceSource(Protocol):
    """What chat needs of the window's workspaces (ui/workspaces/controller.WorkspaceController, which
    the main window hands in): chat never imports the workspaces feature group."""

    library: Any
    service: Any  # workspaces.ops.WorkspaceService once ``ready`` was emitted, else None
    ready: Any  # Signal(): the service exists
    current_changed: Any  # Signal(Optional[WorkspaceInfo])

    def learn(self, workspace: str, query: str, chunks: Any, success: bool, helpers: Any) -> None: ...


def running_loop() -> Optional[asyncio.AbstractEventLoop]:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class ChatController(QObject):
    ready = Signal()
    workspace_changed = Signal(object)  # Optional[WorkspaceInfo]
    threads_loaded = Signal(object)  # tuple[ThreadInfo, ...]
    thread_selected = Signal(object)  # Optional[int]
    messages_loaded = Signal(int, object)  # thread id, tuple[MessageInfo, ...]
    answer_started = Signal(str)  # question
    token = Signal(str)  # a streamed piece of the answer
    answer_finished = Signal(object)  # AnswerResult
    answer_failed = Signal(str)
    server_changed = Signal(bool)
    models_loaded = Signal(object)  # tuple[ModelInfo, ...]
    banner = Signal(str)  # show the 'Ollama is not reachable' banner
    open_requested = Signal(str, object, object)  # path, page, highlight
    status = Signal(str)
    error = Signal(str, str)
    server_settings_changed = Signal()  # a new Ollama host or model applies from now on

    def __init__(self, settings: Callable[[], Settings], runner: TaskRunner, workspaces: WorkspaceSource,
                 parent: Optional[QObject] = None) -> None:
        super().__init__(parent)
        # The window's settings as they are now (Settings ▸ Save replaces them): read when a request
        # is made, never copied, so a new Ollama host or model reaches the next request.
        self._settings = settings
        self._server: Optional[tuple[str, str]] = None  # (host, model) the session's client was made for
        self.runner = runner
        self.workspaces = workspaces
        self.library = workspaces.library
        self.session: Any = None  # ChatSession, once the workspace service exists
        self.workspace: Optional[WorkspaceInfo] = None
        self.threads: tuple = ()
        self.thread_id: Optional[int] = None
        self.server_ok: Optional[bool] = None
        self.models: tuple = ()
        self.watch_interval = WATCH_INTERVAL_S
        self._answer_task: Optional[TaskHandle] = None
        self._watch_stop: Optional[CancelToken] = None
        self._watch_task: Optional[asyncio.Future] = None
        self._banner_given = False
        self._closed = False
        self._busy = False
        # Expansion units from Ollama (keywords + a hypothetical answer) when it is reachable;
        # the core asks for them before it takes the workspace's lock (memory.feedback.record_feedback).
        self.llm_units = True
        workspaces.ready.connect(self._service_ready)
        workspaces.current_changed.connect(self.set_workspace)

    # ------------------------------------------------------------------ setup
    @property
    def available(self) -> bool:
        """Streaming needs the qasync loop the app runs on (absent only in bare widget tests)."""
        return running_loop() is not None

    @property
    def answering(self) -> bool:
        return self._busy

    def _service_ready(self) -> None:
        from spar_desktop.core.llm.client import Ollama
        from spar_desktop.core.chat.session import ChatSession

        service = self.workspaces.service
        self.session = ChatSession(service.manager, Ollama.from_settings(self.settings))
        self._server = (self.settings.ollama_host, self.settings.ollama_model)
        self.ready.emit()
        if self.workspace is not None:
            self.start_watching()

    @property
    def settings(self) -> Settings:
        return self._settings()

    def apply_settings(self) -> None:
        """Follow the current settings at once: a new Ollama host or model gets a new client, the
        server state is unknown again and is checked now (the banner and the model list follow),
        no restart. Also run before every request, so none goes to a host the settings left."""
        if self.session is None or self._closed:
            return  # the session, made when the workspace service is ready, reads them then
        settings = self.settings
        wanted = (settings.ollama_host, settings.ollama_model)
        if wanted == self._server:
            return
        from spar_desktop.core.llm.client import Ollama

        self._server = wanted
        self.session.ollama = Ollama.from_settings(settings)
        self.session.model = self.session.ollama.model
        self.session.llm_available = None
        self.server_ok, self.models, self._banner_given = None, (), False
        self.server_settings_changed.emit()
        watching = self._watch_task is not None and not self._watch_task.done()
        self._stop_watching()
        if watching or self.workspace is not None:
            self.start_watching()  # its first check runs at once, against the new host

    def _stop_watching(self) -> None:
        if self._watch_stop is not None:
            self._watch_stop.cancel()
        if self._watch_task is not None and not self._watch_task.done():
            self._watch_task.cancel()
        self._watch_stop = self._watch_task = None

    def start_watching(self) -> None:
        """Poll the server in the background (first check at once); idempotent."""
        if self.session is None or self._closed or running_loop() is None:
            return
        if self._watch_task is not None and not self._watch_task.done():
            return
        self._watch_stop = CancelToken()
        self._watch_task = asyncio.ensure_future(self._watch_server(self._watch_stop))

    async def _watch_server(self, stop: CancelToken) -> None:
        """Re-check the server every ``watch_interval`` s and report it when it differs from
        ``server_ok``. Compared with our state, not with the previous check: answers change that
        state too (an answer that streamed means the server is up), and a watcher that only
        reported changes between its own checks missed an outage that began after such an
        answer, so the 'not reachable' banner never came back."""
        while not stop.cancelled:
            try:
                ok = await self.session.check_server()
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - a failed check must not end the watch
                log.info("server check failed", exc_info=True)
                ok = False
            if not stop.cancelled and not self._closed and ok != self.server_ok:
                self._server_seen(ok)
            waited = 0.0
            while waited < self.watch_interval and not stop.cancelled:  # read live: tests shorten it
                await asyncio.sleep(0.1)
                waited += 0.1

    def _server_seen(self, ok: bool) -> None:
        if self._closed or self.session is None:
            return
        self.server_ok = ok
        self.server_changed.emit(ok)
        if ok:
            self._banner_given = False  # if it goes away again, say so again
            asyncio.ensure_future(self._load_models())
        else:
            self._show_banner(self.session.ollama.start_hint)

    def _show_banner(self, text: Optional[str]) -> None:
        if text and not self._banner_given:
            self._banner_given = True
            self.banner.emit(text)

    async def _load_models(self) -> None:
        ollama = self.session.ollama
        try:
            models = tuple(await self.session.list_models())
        except Exception as exc:  # noqa: BLE001 - the picker keeps the configured model
            log.info("cannot list models: %s", exc)
            return
        if not self._closed and self.session.ollama is ollama:  # not the list of a host left since
            self.models = models
            self.models_loaded.emit(models)

    @property
    def default_model(self) -> str:
        return self.session.model if self.session is not None else self.settings.ollama_model

    # ------------------------------------------------------------------ workspace / threads
    def set_workspace(self, row: Optional[WorkspaceInfo]) -> None:
        same = row is not None and self.workspace is not None and row.name == self.workspace.name
        self.workspace = row
        self.workspace_changed.emit(row)
        if same:
            return
        if self.answering:
            self.stop()
        self.threads, self.thread_id = (), None
        self.threads_loaded.emit(())
        self.thread_selected.emit(None)
        if row is not None:
            self.start_watching()
            self.reload_threads()

    def reload_threads(self, select: Optional[int] = None) -> None:
        if self.workspace is None:
            return
        name = self.workspace.name

        def loaded(threads: tuple) -> None:
            if self.workspace is None or self.workspace.name != name:
                return
            self.threads = threads
            self.threads_loaded.emit(threads)
            wanted = select if select is not None else self.thread_id
            if wanted is None and threads:
                wanted = threads[0].id
            if wanted not in {t.id for t in threads}:
                wanted = None
            if wanted != self.thread_id or select is not None:
                self.select_thread(wanted)
            else:
                self.thread_selected.emit(wanted)

        self.runner.run(partial(ops.list_threads, self.library, name), title="Loading chat threads", key="chat-threads",
                        visible=False, on_success=loaded, on_failure=self._failed)

    def select_thread(self, thread_id: Optional[int]) -> None:
        if self.answering and thread_id != self.thread_id:
            return  # the thread being answered stays on screen until the answer ends
        self.thread_id = thread_id
        self.thread_selected.emit(thread_id)
        if thread_id is None:
            self.messages_loaded.emit(0, ())
            return
        self.runner.run(partial(ops.load_messages, self.library, thread_id), title="Loading messages",
                        key="chat-messages", visible=False,
                        on_success=lambda msgs: self.messages_loaded.emit(thread_id, msgs)
                        if self.thread_id == thread_id else None, on_failure=self._failed)

    def new_thread(self) -> None:
        if self.workspace is None or self.answering:
            return
        self.runner.run(partial(ops.create_thread, self.library, self.workspace.name), title="New thread",
                        visible=False, on_success=lambda t: self.reload_threads(select=t.id), on_failure=self._failed)

    def rename_thread(self, thread_id: int, title: str) -> None:
        self.runner.run(partial(ops.rename_thread, self.library, thread_id, title), title="Renaming the thread",
                        visible=False, on_success=lambda _t: self.reload_threads(), on_failure=self._failed)

    def delete_thread(self, thread_id: int) -> None:
        if self.answering and thread_id == self.thread_id:
            return
        if thread_id == self.thread_id:
            self.thread_id = None
        self.runner.run(partial(ops.delete_thread, self.library, thread_id), title="Deleting the thread",
                        visible=False, on_success=lambda _i: self.reload_threads(), on_failure=self._failed)

    def export_thread(self, thread_id: int, path: str) -> None:
        self.runner.run(partial(ops.export_thread, self.library, thread_id, path), title="Exporting the thread",
                        on_success=lambda p: self.status.emit(f"Thread exported to {p}"), on_failure=self._failed)

    # ------------------------------------------------------------------ answering
    def ask(self, question: str, model: Optional[str] = None) -> bool:
        """Start answering ``question`` in the current thread (a new one if none); False when it
        cannot start (no workspace, no loop, an answer already streaming)."""
        question = question.strip()
        if not question or self.session is None or self.workspace is None or self.answering or not self.available:
            return False
        self.apply_settings()
        self._busy = True
        self.answer_started.emit(question)
        name = self.workspace.name
        self._answer_task = self.runner.run_coroutine(
            partial(self._answer, name, question, model), title=f"Answering in {name}", key="chat-answer",
            visible=False, on_success=self._answered, on_failure=self._answer_failed,
            on_cancelled=lambda: self._answer_failed(None))
        return True

    async def _answer(self, workspace: str, question: str, model: Optional[str], progress: ProgressCallback,
                      cancel: CancelToken) -> Any:
        """The coroutine op: the thread (a new one if none is selected), then the streamed answer."""
        try:
            thread_id = self.thread_id
            if thread_id is None:
                thread = await self.runner.run_async(partial(ops.create_thread, self.library, workspace),
                                                     title="New thread", visible=False)
                thread_id = self.thread_id = thread.id
            return await self.session.answer(thread_id, question, self._on_token, cancel, model=model)
        finally:
            self._busy = False

    def _answer_failed(self, err: Optional[TaskError]) -> None:
        self._busy = False
        if not self._closed:
            self.answer_failed.emit(err.message if err is not None else "no answer")

    def _answered(self, result: Any) -> None:
        if self._closed:
            return
        if result is None:
            self.answer_failed.emit("no answer")
            return
        if result.mode == "llm" and self.server_ok is not True:
            self._server_seen(True)  # it answered: the server is back before the watcher noticed
        elif result.mode == "retrieval-only" and result.passages and self.server_ok is not False:
            self.server_ok = False  # passages but no model answer: the server is gone
            self.server_changed.emit(False)
        self._show_banner(result.notice)
        self.answer_finished.emit(result)
        self.reload_threads()

    def _on_token(self, delta: str) -> None:
        if not self._closed:
            self.token.emit(delta)

    def stop(self) -> None:
        if self._answer_task is not None:
            self._answer_task.cancel()  # the stream polls the token: the partial answer is kept

    # ------------------------------------------------------------------ feedback / citations
    def feedback(self, message_id: int, good: Optional[bool]) -> None:
        """Store the rating; a thumbs-up also teaches the workspace's keys (the question and the
        passages the answer cited), a thumbs-down is recorded as a failure (nothing is learned)."""
        self.runner.run(partial(ops.record_feedback, self.library, message_id, good), title="Saving feedback",
                        visible=False, on_success=self._learn, on_failure=self._failed)

    def _learn(self, target: Optional[LearnTarget]) -> None:
        if target is None or self._closed:
            return
        helpers = None
        self.apply_settings()
        if self.llm_units and target.success and self.server_ok and self.session is not None:
            from spar_desktop.core.llm.helpers import LLMHelpers

            helpers = LLMHelpers(self.session.ollama)  # keywords + hypothetical answer (HyDE-style units)
        self.workspaces.learn(target.workspace, target.query, target.chunks, target.success, helpers)

    def open_passage(self, message_id: Optional[int], passage: Any) -> None:
        """Open a cited passage at its page, highlighted; remember that it was opened."""
        # The excerpt is clipped with ' …': highlight only the words that are really there.
        highlight = (passage.excerpt or "").rstrip(" …") or None
        self.open_requested.emit(passage.path, passage.page_start, highlight)
        if message_id is not None:
            self.runner.run(partial(ops.record_citation_opened, self.library, message_id, passage.n),
                            title="Recording the opened citation", visible=False, on_success=self._learn,
                            on_failure=lambda err: log.info("citation not recorded: %s", err.message))

    # ------------------------------------------------------------------ shutdown / errors
    def shutdown(self) -> None:
        self._closed = True
        self.stop()
        self._stop_watching()

    def _failed(self, err: TaskError) -> None:
        log.error("%s failed: %s\n%s", err.title, err.message, err.details)
        self.status.emit(f"{err.title} failed: {err.message}")
        self.error.emit(f"{err.title} failed: {err.message}", err.details)

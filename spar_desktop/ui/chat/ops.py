"""Background ops for chat threads (no Qt): one-line calls of the thread store and of
core/chat/feedback.py, returning frozen values (ThreadInfo, MessageInfo, Citation, LearnTarget).

Answering itself is a coroutine op the TaskRunner awaits on the qasync loop (chat/controller.py);
everything here is plain synchronous database work that must not run on the UI thread. The chat
modules are imported on the worker: the UI thread imports this module at start-up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from spar_desktop.core.progress import CancelToken, ProgressCallback

if TYPE_CHECKING:
    from spar_desktop.core.chat.feedback import LearnTarget


def _store(library: Any) -> Any:
    from spar_desktop.core.chat.threads import ThreadStore

    return ThreadStore(library)


def list_threads(library: Any, workspace: str, progress: ProgressCallback, cancel: CancelToken) -> tuple:
    return tuple(_store(library).list(workspace))


def create_thread(library: Any, workspace: str, progress: ProgressCallback, cancel: CancelToken):
    return _store(library).create(workspace)


def rename_thread(library: Any, thread_id: int, title: str, progress: ProgressCallback, cancel: CancelToken):
    return _store(library).rename(thread_id, title)


def delete_thread(library: Any, thread_id: int, progress: ProgressCallback, cancel: CancelToken) -> int:
    _store(library).delete(thread_id)
    return thread_id


def load_messages(library: Any, thread_id: int, progress: ProgressCallback, cancel: CancelToken) -> tuple:
    return tuple(_store(library).messages(thread_id))


def export_thread(library: Any, thread_id: int, path: str, progress: ProgressCallback, cancel: CancelToken) -> str:
    from spar_desktop.core.chat.share import export_thread_markdown

    return str(export_thread_markdown(_store(library), thread_id, path))


def record_feedback(library: Any, message_id: int, good: Optional[bool], progress: ProgressCallback,
                    cancel: CancelToken) -> Optional[LearnTarget]:
    from spar_desktop.core.chat.feedback import rate_answer

    return rate_answer(_store(library), message_id, good)


def record_citation_opened(library: Any, message_id: int, n: int, progress: ProgressCallback,
                           cancel: CancelToken) -> Optional[LearnTarget]:
    from spar_desktop.core.chat.feedback import open_citation

    return open_citation(_store(library), message_id, n)

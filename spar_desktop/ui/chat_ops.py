"""Background ops for chat threads (no Qt): the thread store's reads and writes as TaskRunner
ops returning frozen values (ThreadInfo, MessageInfo and Citation are frozen dataclasses).

Answering itself is a coroutine on the qasync loop (see chat_controller.py); everything here is
plain synchronous database work that must not run on the UI thread.
"""

from __future__ import annotations

from typing import Any, Optional

from spar_desktop.core.progress import CancelToken, ProgressCallback


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
                    cancel: CancelToken) -> None:
    _store(library).record_feedback(message_id, good)


def record_citation_opened(library: Any, message_id: int, n: int, progress: ProgressCallback, cancel: CancelToken):
    return _store(library).record_citation_opened(message_id, n)

"""Background ops for chat threads (no Qt): the thread store's reads and writes as TaskRunner
ops returning frozen values (ThreadInfo, MessageInfo and Citation are frozen dataclasses).

Answering itself is a coroutine on the qasync loop (see chat_controller.py); everything here is
plain synchronous database work that must not run on the UI thread.
"""

from __future__ import annotations

from dataclasses import dataclass
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


@dataclass(frozen=True)
class LearnTarget:
    """What a rating or an opened citation teaches the evolving keys: the question, the chunks
    ('<file id>#<chunk id>') it confirms and whether it counts as success."""

    workspace: str
    query: str
    chunks: tuple[str, ...]
    success: bool


def _chunk_key(p: Any) -> Optional[str]:
    return f"{p.file_id}#{p.chunk_id}" if p.file_id is not None and p.chunk_id else None


def _target(store: Any, message_id: int, passages: Optional[tuple] = None,
            success: bool = True) -> Optional[LearnTarget]:
    """The question this answer replied to and the chunks to credit: ``passages`` when given, else
    the ones the answer cited, else all it was grounded on (a retrieval-only answer cites none)."""
    m = store.message(message_id)
    question = next((u.content for u in reversed(store.messages(m.thread_id))
                     if u.role == "user" and u.id < m.id), None)
    if not question:
        return None
    if passages is None:
        by_n = {p.n: p for p in m.passages}
        cited = [by_n[c.n] for c in m.citations if c.valid and c.n in by_n]
        passages = tuple(cited or m.passages)
    chunks = tuple(dict.fromkeys(k for k in map(_chunk_key, passages) if k))
    if not chunks:
        return None
    return LearnTarget(store.get(m.thread_id).workspace, question, chunks, success)


def record_feedback(library: Any, message_id: int, good: Optional[bool], progress: ProgressCallback,
                    cancel: CancelToken) -> Optional[LearnTarget]:
    """Store the rating; return what the memory should learn from it (None for a cleared rating
    or one that did not change: a repeated click is not a second confirmation)."""
    store = _store(library)
    before = store.message(message_id).feedback
    store.record_feedback(message_id, good)
    if good is None or good is before:
        return None
    return _target(store, message_id, success=good)


def record_citation_opened(library: Any, message_id: int, n: int, progress: ProgressCallback,
                           cancel: CancelToken) -> Optional[LearnTarget]:
    """Remember the opened citation; the first open of [n] counts as success for its chunk."""
    store = _store(library)
    first = int(n) not in store.message(message_id).opened
    cite = store.record_citation_opened(message_id, n)
    if cite is None or not first:
        return None
    p = next((p for p in store.message(message_id).passages if p.n == int(n)), None)
    return _target(store, message_id, (p,)) if p is not None else None

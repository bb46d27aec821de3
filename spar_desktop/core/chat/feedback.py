"""What a rating or an opened citation teaches the evolving keys (core/memory): the question the
answer replied to, the chunks it confirms and whether it counts as success. The thread store
records the rating or the open; these functions say what, if anything, memory should learn."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from spar_desktop.core.chat.threads import ThreadStore


@dataclass(frozen=True)
class LearnTarget:
    workspace: str
    query: str
    chunks: tuple[str, ...]  # '<file id>#<chunk id>'
    success: bool


def _chunk_key(p: Any) -> Optional[str]:
    return f"{p.file_id}#{p.chunk_id}" if p.file_id is not None and p.chunk_id else None


def _target(store: ThreadStore, m: Any, passages: Optional[tuple] = None,
            success: bool = True) -> Optional[LearnTarget]:
    """The question answer ``m`` replied to and the chunks to credit: ``passages`` when given, else
    the ones the answer cited, else all it was grounded on (a retrieval-only answer cites none)."""
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


def rate_answer(store: ThreadStore, message_id: int, good: Optional[bool]) -> Optional[LearnTarget]:
    """Store the rating; return what memory should learn from it (None for a cleared rating or one
    that did not change: a repeated click is not a second confirmation)."""
    m = store.message(message_id)  # read once: recording changes its rating, not what it cites
    before = m.feedback
    store.record_feedback(message_id, good)
    if good is None or good is before:
        return None
    return _target(store, m, success=good)


def open_citation(store: ThreadStore, message_id: int, n: int) -> Optional[LearnTarget]:
    """Remember the opened citation; the first open of [n] counts as success for its chunk."""
    m = store.message(message_id)  # read once: recording the open changes .opened, not the passages
    first = int(n) not in m.opened
    cite = store.record_citation_opened(message_id, n)
    if cite is None or not first:
        return None
    p = next((p for p in m.passages if p.n == int(n)), None)
    return _target(store, m, (p,)) if p is not None else None

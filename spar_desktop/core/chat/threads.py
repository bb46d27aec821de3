"""Threads: several per workspace, every message persisted with its grounding and feedback.

Every operation opens its own short session (``with library.session()``), so a thread is never
held open across a streamed answer and the UI thread and workers can share one store.

Failure policy (tested): the user's message is stored before anything can fail; an assistant
message that failed is stored too, with status 'error', the partial text and the error, so the
thread shows what happened. Failed and retrieval-only turns are not replayed to the model as
history, so one bad answer never poisons the next.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Optional, Sequence, Union

from sqlalchemy import delete, func, select

from spar_desktop.core.chat.models import AnswerMode, ChatMessage, ChatThread, MessageStatus
from spar_desktop.core.chat.prompt import Citation, Passage
from spar_desktop.core.library.models import utcnow
from spar_desktop.core.workspaces.errors import WorkspaceNotFound
from spar_desktop.core.workspaces.models import Workspace
from spar_desktop.core.workspaces.search import mark_opened

WorkspaceRef = Union[str, int]
TITLE_CHARS = 80


class ThreadError(Exception):
    """Unknown thread or message, or a bad value; the message says which."""


@dataclass(frozen=True)
class ThreadInfo:
    id: int
    workspace_id: int
    workspace: str
    title: Optional[str]
    model: Optional[str]
    created_at: datetime
    updated_at: datetime
    message_count: int

    @property
    def display_title(self) -> str:
        return self.title or "New thread"

    def to_json(self) -> dict:
        return {"id": self.id, "workspace": self.workspace, "title": self.display_title, "model": self.model,
                "created_at": self.created_at.isoformat(), "updated_at": self.updated_at.isoformat(),
                "messages": self.message_count}


@dataclass(frozen=True)
class MessageInfo:
    id: int
    thread_id: int
    role: str
    content: str
    status: str
    mode: Optional[str]
    error: Optional[str]
    model: Optional[str]
    passages: tuple[Passage, ...]
    citations: tuple[Citation, ...]
    timings: dict
    feedback: Optional[bool]
    opened: tuple[int, ...]
    created_at: datetime
    log_id: Optional[int] = None

    def to_json(self) -> dict:
        return {"id": self.id, "role": self.role, "content": self.content, "status": self.status, "mode": self.mode,
                "error": self.error, "model": self.model, "passages": [p.to_json() for p in self.passages],
                "citations": [c.to_json() for c in self.citations], "timings": dict(self.timings),
                "feedback": self.feedback, "opened": list(self.opened), "created_at": self.created_at.isoformat()}


def make_title(question: str) -> str:
    text = " ".join(question.split())
    return text if len(text) <= TITLE_CHARS else text[:TITLE_CHARS - 1].rsplit(" ", 1)[0] + "…"


def _message(m: ChatMessage) -> MessageInfo:
    fb = None if m.feedback is None else m.feedback > 0
    return MessageInfo(m.id, m.thread_id, m.role, m.content or "", m.status, m.mode, m.error, m.model,
                       tuple(Passage.from_json(p) for p in (m.passages or [])),
                       tuple(Citation.from_json(c) for c in (m.citations or [])), dict(m.timings or {}), fb,
                       tuple(int(n) for n in (m.opened or [])), m.created_at, m.log_id)


class ThreadStore:
    def __init__(self, library: Any) -> None:
        self.library = library

    # -- threads ----------------------------------------------------------------------------
    def _workspace(self, s: Any, ref: WorkspaceRef) -> Workspace:
        ws = s.get(Workspace, ref) if isinstance(ref, int) else (
            s.scalar(select(Workspace).where(Workspace.name == ref))
            or s.scalar(select(Workspace).where(func.lower(Workspace.name) == str(ref).lower())))
        if ws is None:
            raise WorkspaceNotFound(f"no workspace named '{ref}'")
        return ws

    def _thread(self, s: Any, thread_id: int) -> ChatThread:
        t = s.get(ChatThread, int(thread_id))
        if t is None:
            raise ThreadError(f"no thread {thread_id} (it may have been deleted)")
        return t

    def _info(self, s: Any, t: ChatThread) -> ThreadInfo:
        n = s.scalar(select(func.count(ChatMessage.id)).where(ChatMessage.thread_id == t.id)) or 0
        ws_name = s.scalar(select(Workspace.name).where(Workspace.id == t.workspace_id)) or "?"
        return ThreadInfo(t.id, t.workspace_id, ws_name, t.title, t.model, t.created_at, t.updated_at, n)

    def create(self, workspace: WorkspaceRef, title: Optional[str] = None) -> ThreadInfo:
        with self.library.session() as s:
            ws = self._workspace(s, workspace)
            t = ChatThread(workspace_id=ws.id, title=make_title(title) if title and title.strip() else None)
            s.add(t)
            s.flush()
            return self._info(s, t)

    def get(self, thread_id: int) -> ThreadInfo:
        with self.library.session() as s:
            return self._info(s, self._thread(s, thread_id))

    def list(self, workspace: WorkspaceRef) -> list[ThreadInfo]:
        """Threads of a workspace, most recently used first."""
        with self.library.session() as s:
            ws = self._workspace(s, workspace)
            rows = s.scalars(select(ChatThread).where(ChatThread.workspace_id == ws.id)
                             .order_by(ChatThread.updated_at.desc(), ChatThread.id.desc()))
            return [self._info(s, t) for t in rows]

    def resolve(self, workspace: WorkspaceRef, ref: str) -> Optional[ThreadInfo]:
        """A thread of ``workspace`` named by id or by title (case-insensitive); None if none."""
        ref = (ref or "").strip()
        threads = self.list(workspace)
        if ref.isdigit():
            for t in threads:
                if t.id == int(ref):
                    return t
        for t in threads:
            if (t.title or "").lower() == ref.lower():
                return t
        return None

    def rename(self, thread_id: int, title: str) -> ThreadInfo:
        if not title or not title.strip():
            raise ThreadError("a thread title cannot be empty")
        with self.library.session() as s:
            t = self._thread(s, thread_id)
            t.title = make_title(title)
            s.flush()
            return self._info(s, t)

    def delete(self, thread_id: int) -> None:
        with self.library.session() as s:
            t = self._thread(s, thread_id)
            # Explicit, not only the FK cascade: a database without FK enforcement stays clean too.
            s.execute(delete(ChatMessage).where(ChatMessage.thread_id == t.id))
            s.delete(t)

    def touch(self, thread_id: int, model: Optional[str] = None, title_from: Optional[str] = None) -> None:
        with self.library.session() as s:
            t = self._thread(s, thread_id)
            t.updated_at = utcnow()
            if model:
                t.model = model
            if title_from and not t.title:
                t.title = make_title(title_from)

    # -- messages ---------------------------------------------------------------------------
    def messages(self, thread_id: int) -> list[MessageInfo]:
        with self.library.session() as s:
            self._thread(s, thread_id)
            rows = s.scalars(select(ChatMessage).where(ChatMessage.thread_id == int(thread_id)).order_by(ChatMessage.id))
            return [_message(m) for m in rows]

    def message(self, message_id: int) -> MessageInfo:
        with self.library.session() as s:
            m = s.get(ChatMessage, int(message_id))
            if m is None:
                raise ThreadError(f"no message {message_id}")
            return _message(m)

    def history(self, thread_id: int) -> list[tuple[str, str]]:
        """Completed model turns as (role, content) for the next prompt; failed, stopped and
        retrieval-only answers (and the questions they answered) are left out."""
        out: list[tuple[str, str]] = []
        question: Optional[str] = None
        for m in self.messages(thread_id):
            if m.role == "user":
                question = m.content
            elif question is not None and m.status == MessageStatus.OK and m.mode == AnswerMode.LLM and m.content:
                out += [("user", question), ("assistant", m.content)]
                question = None
        return out

    def add_user_message(self, thread_id: int, text: str) -> int:
        with self.library.session() as s:
            t = self._thread(s, thread_id)
            m = ChatMessage(thread_id=t.id, role="user", content=text)
            s.add(m)
            t.updated_at = utcnow()
            s.flush()
            return m.id

    def add_assistant_message(self, thread_id: int, *, content: str, status: str, mode: Optional[str],
                              error: Optional[str], model: Optional[str], passages: Sequence[Passage],
                              citations: Sequence[Citation], timings: dict, log_id: Optional[int]) -> int:
        if status not in MessageStatus.ALL:
            raise ThreadError(f"unknown message status '{status}'")
        with self.library.session() as s:
            t = self._thread(s, thread_id)
            m = ChatMessage(thread_id=t.id, role="assistant", content=content, status=status, mode=mode, error=error,
                            model=model, passages=[p.to_json() for p in passages],
                            citations=[c.to_json() for c in citations], timings=dict(timings), log_id=log_id)
            s.add(m)
            s.flush()
            return m.id

    # -- feedback -----------------------------------------------------------------------------
    def record_feedback(self, message_id: int, good: Optional[bool]) -> None:
        """Thumbs up (True), down (False) or cleared (None) on an assistant message."""
        with self.library.session() as s:
            m = s.get(ChatMessage, int(message_id))
            if m is None or m.role != "assistant":
                raise ThreadError(f"no answer {message_id} to rate")
            m.feedback = None if good is None else (1 if good else -1)

    def record_citation_opened(self, message_id: int, n: int) -> Optional[Citation]:
        """The user opened citation [n]: remember it on the message and mark the file opened in
        the query log (the relevance signal relations and evolving keys learn from). Returns the
        citation to open, or None when [n] names no passage."""
        with self.library.session() as s:
            m = s.get(ChatMessage, int(message_id))
            if m is None:
                raise ThreadError(f"no message {message_id}")
            passages = {p["n"]: p for p in (m.passages or []) if isinstance(p, dict) and "n" in p}
            p = passages.get(int(n))
            if p is None:
                return None
            if int(n) not in (m.opened or []):
                m.opened = list(m.opened or []) + [int(n)]
            log_id = m.log_id
            cite = Citation(int(n), p.get("file_id"), p.get("path"), p.get("page_start"), p.get("page_end"),
                            p.get("chunk_id"), True)
        if log_id is not None and cite.file_id is not None:
            mark_opened(self.library, log_id, cite.file_id)
        return cite


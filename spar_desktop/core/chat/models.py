"""Chat tables, in the metadata database beside the workspaces (so threads move, archive and
survive with them): one row per thread, one per message with everything needed to show, export
and learn from it later (the passages it was grounded on, the model, timings, the user's
feedback and which citations were opened — the signal evolving keys are gated on)."""

from __future__ import annotations

from datetime import datetime
from typing import Optional

from sqlalchemy import JSON, DateTime, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from spar_desktop.core.library.models import Base, utcnow
from spar_desktop.core.workspaces import models as _workspace_tables  # noqa: F401  (chat_threads → workspaces.id)


class MessageStatus:
    OK = "ok"
    STOPPED = "stopped"  # the user stopped generation: the partial text is kept
    ERROR = "error"  # the model failed: partial text (maybe empty) + ``error`` says why

    ALL = (OK, STOPPED, ERROR)


class AnswerMode:
    LLM = "llm"
    RETRIEVAL_ONLY = "retrieval-only"


class ChatThread(Base):
    __tablename__ = "chat_threads"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    # CASCADE: deleting a workspace deletes its threads (SQLite enforces it: foreign_keys=ON).
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"), index=True)
    title: Mapped[Optional[str]] = mapped_column(Text, nullable=True)  # None until the first question
    model: Mapped[Optional[str]] = mapped_column(String(200), nullable=True)  # last model used
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class ChatMessage(Base):
    __tablename__ = "chat_messages"
    __table_args__ = (Index("ix_chat_messages_thread", "thread_id", "id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    thread_id: Mapped[int] = mapped_column(ForeignKey("chat_threads.id", ondelete="CASCADE"))
    role: Mapped[str] = mapped_column(String(16))  # user | assistant
    content: Mapped[str] = mapped_column(Text, default="")
    status: Mapped[str] = mapped_column(String(16), default=MessageStatus.OK)
    mode: Mapped[Optional[str]] = mapped_column(String(20), nullable=True)  # assistant: llm | retrieval-only
    error: Mapped[Optional[str]] = mapped_column(Text, nullable=True)
    model: Mapped[Optional[str]] = mapped_column(String(200), nullable=True)
    # Passages as given to the model: [{n, file_id, path, title, page_start, page_end, chunk_id,
    # score, text, excerpt}], copied so the thread still reads right after files change.
    passages: Mapped[list] = mapped_column(JSON, default=list)
    citations: Mapped[list] = mapped_column(JSON, default=list)  # [{n, file_id, ..., valid}]
    timings: Mapped[dict] = mapped_column(JSON, default=dict)
    log_id: Mapped[Optional[int]] = mapped_column(Integer, nullable=True)  # query_log row of its retrieval
    feedback: Mapped[Optional[int]] = mapped_column(Integer, nullable=True)  # 1 good, -1 bad, None
    opened: Mapped[list] = mapped_column(JSON, default=list)  # citation numbers the user opened
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)

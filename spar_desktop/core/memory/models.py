"""ERM tables, in the metadata index database (they move with it, like workspaces). The evolved
keys they produce are workspaces' table (``workspaces/evolved_keys.py``): builds read them.

Memory and evolved keys are keyed by (file content hash, chunker key, chunk id, model id), not by
workspace: they survive archive/reactivate, are shared by every workspace holding the same file
(chunked the same way), and a memory built with another embedding model is never mixed in.
"""

from __future__ import annotations

from datetime import datetime
from typing import Optional

from sqlalchemy import DateTime, Float, ForeignKey, Index, Integer, LargeBinary, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from spar_desktop.core.library.models import Base, utcnow
from spar_desktop.core.workspaces import models as _workspace_tables  # noqa: F401  (erm_progress → workspaces.id)


class MemoryUnitRow(Base):
    """One expansion unit in one chunk's memory u_i, with its accumulated score s_ij."""

    __tablename__ = "erm_memory"
    __table_args__ = (Index("ix_erm_memory_chunk", "content_hash", "chunker_key", "chunk_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    content_hash: Mapped[str] = mapped_column(String(80))
    chunker_key: Mapped[str] = mapped_column(String(200))
    chunk_id: Mapped[str] = mapped_column(String(40))
    model_id: Mapped[str] = mapped_column(String(120))
    text: Mapped[str] = mapped_column(Text)
    kind: Mapped[str] = mapped_column(String(16))
    vector: Mapped[bytes] = mapped_column(LargeBinary)  # float32, unit length
    score: Mapped[float] = mapped_column(Float)
    hits: Mapped[int] = mapped_column(Integer, default=1)
    updated_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class MemoryProgressRow(Base):
    """Batching state of one workspace's feedback (ERMLearner.BatchProgress) and counters."""

    __tablename__ = "erm_progress"

    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"), primary_key=True)
    pending: Mapped[int] = mapped_column(Integer, default=0)
    batch_gain: Mapped[float] = mapped_column(Float, default=0.0)
    best_gain: Mapped[float] = mapped_column(Float, default=0.0)
    stale: Mapped[int] = mapped_column(Integer, default=0)
    batches: Mapped[int] = mapped_column(Integer, default=0)
    rounds: Mapped[int] = mapped_column(Integer, default=0)
    accepted: Mapped[int] = mapped_column(Integer, default=0)  # feedback that fed the memory
    ignored: Mapped[int] = mapped_column(Integer, default=0)  # failed gate, bad input...
    last_evolved_at: Mapped[Optional[datetime]] = mapped_column(DateTime, nullable=True)

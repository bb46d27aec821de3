"""Workspace tables, in the same database as the metadata index (so they move with it)."""

from __future__ import annotations

from datetime import datetime
from typing import Optional

from sqlalchemy import JSON, DateTime, Float, ForeignKey, Index, Integer, LargeBinary, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from spar_desktop.core.library.models import Base, utcnow


class WorkspaceStatus:
    DRAFT = "draft"  # filter chosen, never built
    BUILDING = "building"
    ACTIVE = "active"  # vectors in a collection, searchable
    ARCHIVED = "archived"  # vectors dropped; filter, files, threads, history kept
    ERROR = "error"
    # Derived, never stored: BUILDING in the database while no process is building it (the build
    # was killed). Building again resumes from the embedding cache.
    INTERRUPTED = "interrupted"


class Workspace(Base):
    __tablename__ = "workspaces"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(Text, unique=True)
    collection: Mapped[str] = mapped_column(String(120), unique=True)
    status: Mapped[str] = mapped_column(String(16), default=WorkspaceStatus.DRAFT)
    filter_json: Mapped[dict] = mapped_column(JSON, default=dict)
    model_id: Mapped[Optional[str]] = mapped_column(String(120), nullable=True)
    chunker_key: Mapped[Optional[str]] = mapped_column(String(200), nullable=True)
    # How its files are cut into passages (core/workspaces/chunkings.py); None: hierarchical.
    chunking: Mapped[Optional[str]] = mapped_column(String(16), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    built_at: Mapped[Optional[datetime]] = mapped_column(DateTime, nullable=True)
    last_used_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    archived_at: Mapped[Optional[datetime]] = mapped_column(DateTime, nullable=True)
    chunk_count: Mapped[int] = mapped_column(Integer, default=0)
    last_error: Mapped[Optional[str]] = mapped_column(Text, nullable=True)


class WorkspaceFileState:
    READY = "ready"  # in the collection
    PENDING = "pending"  # admitted, not built yet
    FAILED = "failed"  # could not be read/embedded: see error
    NO_TEXT = "no_text"  # read fine, nothing to search (scanned PDF, image...)
    MISSING = "missing"  # gone from disk since it was admitted
    DUPLICATE = "duplicate"  # the same content as another admitted file: searched once, under that one


class WorkspaceFile(Base):
    __tablename__ = "workspace_files"
    __table_args__ = (UniqueConstraint("workspace_id", "file_id"), Index("ix_wsfiles_file", "file_id"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    workspace_id: Mapped[int] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    file_id: Mapped[Optional[int]] = mapped_column(ForeignKey("files.id", ondelete="SET NULL"), nullable=True)
    path: Mapped[str] = mapped_column(Text)  # kept even if the file row goes away
    content_hash: Mapped[Optional[str]] = mapped_column(String(80), nullable=True)  # as built
    state: Mapped[str] = mapped_column(String(16), default=WorkspaceFileState.PENDING)
    error: Mapped[Optional[str]] = mapped_column(Text, nullable=True)
    chunks: Mapped[int] = mapped_column(Integer, default=0)


class QueryLogEntry(Base):
    """Every search or chat retrieval: the query, ranked files with scores, what was opened or
    cited. Workspace history, and the input of query-marginalized relations (EDR-MQ)."""

    __tablename__ = "query_log"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    workspace_id: Mapped[Optional[int]] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"), index=True)
    session_key: Mapped[str] = mapped_column(String(80), index=True)  # thread id or time-bucketed run
    query: Mapped[str] = mapped_column(Text)
    source: Mapped[str] = mapped_column(String(16), default="search")  # search | chat | eval
    results: Mapped[list] = mapped_column(JSON, default=list)  # [[file_id, score], ...] best first
    opened: Mapped[list] = mapped_column(JSON, default=list)  # file ids opened or cited
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow, index=True)
    latency_ms: Mapped[Optional[float]] = mapped_column(Float, nullable=True)


class EvolvedKeyRow(Base):
    """The key a chunk evolved to at the last evolution (the original stays in the cache). ERM
    (core/memory, above workspaces) writes these; builds and saved searchers read them
    (``evolved_keys.py``), so the table lives with its readers."""

    __tablename__ = "erm_keys"
    __table_args__ = (UniqueConstraint("content_hash", "chunker_key", "chunk_id", "model_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    content_hash: Mapped[str] = mapped_column(String(80), index=True)
    chunker_key: Mapped[str] = mapped_column(String(200))
    chunk_id: Mapped[str] = mapped_column(String(40))
    model_id: Mapped[str] = mapped_column(String(120))
    vector: Mapped[bytes] = mapped_column(LargeBinary)
    extra_text: Mapped[str] = mapped_column(Text, default="")
    tag: Mapped[str] = mapped_column(String(40))
    evolved_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class TagVocabularyEntry(Base):
    """One tag of the vocabulary index (tag_index.py): its label as normalised words (what
    lexical matching compares), the inputs of its embedded text as they were when it was last
    indexed (a change of label, description or parents re-embeds it), and the fingerprint of the
    texts in the tag collection (None: not embedded yet, so embedding resumes where it stopped).
    No foreign key on purpose: a deleted tag's row says which vectors to delete."""

    __tablename__ = "tag_vocabulary"
    # By fingerprint with the model: the store check at a process's first request reads the
    # distinct fingerprints of one model from this index alone (118k tags at 1M files: 0.31 s
    # through the rows, 0.025 s from the index).
    __table_args__ = (Index("ix_tag_vocabulary_fp_model", "fp", "model_id"),)

    tag_id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    words: Mapped[str] = mapped_column(Text, default="")
    value: Mapped[str] = mapped_column(Text, default="")
    description: Mapped[Optional[str]] = mapped_column(Text, nullable=True)
    parents: Mapped[int] = mapped_column(Integer, default=0)  # parent edges when indexed
    fp: Mapped[Optional[str]] = mapped_column(String(16), nullable=True)
    model_id: Mapped[Optional[str]] = mapped_column(String(120), nullable=True)
    texts: Mapped[int] = mapped_column(Integer, default=0)  # vectors it has in the collection


class TagWord(Base):
    """word → tags whose label has it: keyword → tag matching reads only the tags sharing a word
    with the keyword (an index lookup), never the whole vocabulary."""

    __tablename__ = "tag_words"

    word: Mapped[str] = mapped_column(String(200), primary_key=True)
    tag_id: Mapped[int] = mapped_column(Integer, primary_key=True, index=True)


class TagVocabularyMeta(Base):
    """Small facts about the vocabulary index, e.g. the signature of the tag tables it was last
    brought up to date with: an unchanged signature spares a request the per-tag comparison."""

    __tablename__ = "tag_vocabulary_meta"

    key: Mapped[str] = mapped_column(String(40), primary_key=True)
    value: Mapped[str] = mapped_column(Text, default="")

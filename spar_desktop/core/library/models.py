"""SQLAlchemy 2.0 models of the Metadata Index.

Tables follow SPAR's Table 1 (Files, Tags) plus what a desktop app needs: tag_edges (a DAG, a
tag may have several parents as in MeSH), file_tags (who assigned a tag and how sure), folders
(roots the user added) and scan_issues (problems that are not a single file's, e.g. an
unreadable folder).
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Optional

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


def utcnow() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


class Base(DeclarativeBase):
    pass


def only_on(dialect: str, index: Index) -> Index:
    """An index created on that dialect only (``index_applies`` tells the bulk scan's index list)."""
    index.info["dialect"] = dialect
    return index.ddl_if(dialect=dialect)


def postgresql_only(index: Index) -> Index:
    return only_on("postgresql", index)


def index_applies(index: Index, dialect: str) -> bool:
    return index.info.get("dialect", dialect) == dialect


class FileStatus:
    """Values of File.status. Anything but OK carries a human-readable File.error."""

    OK = "ok"
    EMPTY = "empty"  # 0 bytes: indexed, nothing to read
    ERROR = "error"  # unreadable, corrupt, broken link ...
    ENCRYPTED = "encrypted"  # password-protected document
    UNSUPPORTED = "unsupported"  # binary or a format we cannot read text from
    MISSING = "missing"  # was indexed, no longer on disk

    ALL = (OK, EMPTY, ERROR, ENCRYPTED, UNSUPPORTED, MISSING)


class TagSource:
    PATH = "path"
    DATE = "date"
    TAXONOMY = "taxonomy"
    AUTO = "auto"
    USER = "user"
    LLM = "llm"

    ALL = (PATH, DATE, TAXONOMY, AUTO, USER, LLM)


class Folder(Base):
    """A root folder the user added. Files under it are scanned and tagged by their sub-path."""

    __tablename__ = "folders"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    path: Mapped[str] = mapped_column(Text, unique=True)
    ignore_patterns: Mapped[list] = mapped_column(JSON, default=list)
    watched: Mapped[bool] = mapped_column(Boolean, default=True)
    added_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    last_scan_at: Mapped[Optional[datetime]] = mapped_column(DateTime, nullable=True)
    last_scan_complete: Mapped[bool] = mapped_column(Boolean, default=False)


class File(Base):
    __tablename__ = "files"
    # The file table's default order (file_pages.sort_keys: names ignoring case, then path) read
    # from an index: at 1M files a sort of every row took seconds before the first row showed.
    # The Issues list's pages (issue_pages.py): one kind's, one reason's files by path.
    # The document date (queries.document_date_expr) on PostgreSQL: its planner has no statistics
    # for an expression without an index (a year's files estimated at 1/16 of their number), and
    # a date filter reads its files by the index. SQLite (no statistics) plans as before without.
    # Paths in code point order on PostgreSQL (its default collation is the locale's): the first
    # files by path among those tied at a ranking's edge (group_scores.first_by_path).
    __table_args__ = (Index("ix_files_name_order", text("lower(name)"), "path", "status"),
                      Index("ix_files_status_error_path", "status", "error", "path"),
                      postgresql_only(Index("ix_files_doc_date", text("coalesce(created_at, modified_at)"))),
                      # SQLite: a date filter's count read from the index alone (with the status).
                      only_on("sqlite", Index("ix_files_date_status", text("coalesce(created_at, modified_at)"),
                                              "status")),
                      # The collation rides in the operator class slot ("path COLLATE "C""): as an
                      # expression index, reflection reads it back as a plain index on path.
                      postgresql_only(Index("ix_files_path_c", "path", postgresql_ops={"path": 'COLLATE "C"'})))

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    # Display-safe absolute path (unique). Names that are not valid UTF-8 keep their real bytes in
    # raw_path and show \xNN escapes here, so nothing is lost and the database stays valid text.
    path: Mapped[str] = mapped_column(Text, unique=True)
    raw_path: Mapped[Optional[bytes]] = mapped_column(LargeBinary, nullable=True)
    folder_id: Mapped[Optional[int]] = mapped_column(ForeignKey("folders.id", ondelete="SET NULL"), index=True)
    rel_path: Mapped[str] = mapped_column(Text)  # relative to its root folder, '/'-separated
    name: Mapped[str] = mapped_column(Text)
    size: Mapped[int] = mapped_column(BigInteger, default=0)
    mtime_ns: Mapped[int] = mapped_column(BigInteger, default=0)
    content_hash: Mapped[Optional[str]] = mapped_column(String(80), nullable=True, index=True)
    # Bumped whenever the content hash changes, so caches keyed on older content invalidate.
    content_version: Mapped[int] = mapped_column(Integer, default=1)
    format: Mapped[str] = mapped_column(String(32), index=True)
    title: Mapped[Optional[str]] = mapped_column(Text, nullable=True)
    author: Mapped[Optional[str]] = mapped_column(Text, nullable=True)
    created_at: Mapped[Optional[datetime]] = mapped_column(DateTime, nullable=True)
    modified_at: Mapped[Optional[datetime]] = mapped_column(DateTime, nullable=True, index=True)
    page_count: Mapped[Optional[int]] = mapped_column(Integer, nullable=True)
    status: Mapped[str] = mapped_column(String(16), default=FileStatus.OK, index=True)
    error: Mapped[Optional[str]] = mapped_column(Text, nullable=True)
    extra: Mapped[Optional[dict]] = mapped_column(JSON, nullable=True)  # other metadata fields
    # A child document (an archive member, a mail attachment, a message of an mbox) points at
    # its container; its path is the container's path, "!/" and its name inside it. Children
    # go with their container: rescanned when it changes, removed with it.
    parent_id: Mapped[Optional[int]] = mapped_column(ForeignKey("files.id", ondelete="CASCADE"), nullable=True,
                                                     index=True)
    first_seen_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)
    changed_at: Mapped[Optional[datetime]] = mapped_column(DateTime, nullable=True)


class Tag(Base):
    __tablename__ = "tags"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    # Unique key: folder tags use their relative path ('comp/sys/mac'); other sources use a prefix
    # ('date:2019-05', 'tax:Neoplasms') so a folder and a taxonomy term of the same name coexist.
    key: Mapped[str] = mapped_column(Text, unique=True)
    value: Mapped[str] = mapped_column(Text, index=True)  # display label
    description: Mapped[Optional[str]] = mapped_column(Text, nullable=True)
    source: Mapped[str] = mapped_column(String(16), index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class TagEdge(Base):
    __tablename__ = "tag_edges"
    __table_args__ = (UniqueConstraint("parent_id", "child_id"), Index("ix_tag_edges_child", "child_id"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    parent_id: Mapped[int] = mapped_column(ForeignKey("tags.id", ondelete="CASCADE"))
    child_id: Mapped[int] = mapped_column(ForeignKey("tags.id", ondelete="CASCADE"))


class FileTag(Base):
    __tablename__ = "file_tags"
    # ix_file_tags_confirmed covers the tag tree's counts (tag_counts.py): one GROUP BY, no row reads;
    # ix_file_tags_tag_links a keyword's links with what ranking reads of them (group_scores.py).
    __table_args__ = (UniqueConstraint("file_id", "tag_id"),
                      Index("ix_file_tags_tag_links", "tag_id", "confirmed", "score", "file_id"),
                      Index("ix_file_tags_confirmed", "confirmed", "source", "tag_id", "file_id"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    file_id: Mapped[int] = mapped_column(ForeignKey("files.id", ondelete="CASCADE"))
    tag_id: Mapped[int] = mapped_column(ForeignKey("tags.id", ondelete="CASCADE"))
    source: Mapped[str] = mapped_column(String(16))
    score: Mapped[float] = mapped_column(Float, default=1.0)
    confirmed: Mapped[bool] = mapped_column(Boolean, default=False)


class ScanIssue(Base):
    """A problem found while scanning that is not one file's: unreadable folder, skipped link."""

    __tablename__ = "scan_issues"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    folder_id: Mapped[Optional[int]] = mapped_column(ForeignKey("folders.id", ondelete="CASCADE"), index=True)
    path: Mapped[str] = mapped_column(Text)
    message: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class FileSummary(Base):
    """One short text (title + opening) and its vector per file, for tag suggestions and ranked
    admission: one vector per file, not a chunk index. Stale when the file's content hash or the
    encoder's model id differs from the stored ones."""

    __tablename__ = "file_summaries"

    file_id: Mapped[int] = mapped_column(ForeignKey("files.id", ondelete="CASCADE"), primary_key=True)
    content_hash: Mapped[Optional[str]] = mapped_column(String(80), nullable=True)
    model_id: Mapped[str] = mapped_column(Text)
    text: Mapped[str] = mapped_column(Text)
    vector: Mapped[bytes] = mapped_column(LargeBinary)  # float32, L2-normalised
    # What the file's suggestions were last computed against (tag vocabulary and method);
    # None: not yet. A rewritten summary starts again at None, so its suggestions are redone.
    suggest_key: Mapped[Optional[str]] = mapped_column(String(64), nullable=True)
    updated_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class TagRejection(Base):
    """A suggestion the user rejected: that tag is never suggested for that file again."""

    __tablename__ = "tag_rejections"
    __table_args__ = (UniqueConstraint("file_id", "tag_id"), Index("ix_tag_rejections_tag", "tag_id"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    file_id: Mapped[int] = mapped_column(ForeignKey("files.id", ondelete="CASCADE"))
    tag_id: Mapped[int] = mapped_column(ForeignKey("tags.id", ondelete="CASCADE"))
    rejected_at: Mapped[datetime] = mapped_column(DateTime, default=utcnow)


class TagFileCount(Base):
    """Files under each tag (itself or a descendant), as the tag tree shows them: kept by
    count_store.py so the tree's start-up reads these rows instead of counting every link."""

    __tablename__ = "tag_file_counts"

    tag_id: Mapped[int] = mapped_column(ForeignKey("tags.id", ondelete="CASCADE"), primary_key=True)
    files: Mapped[int] = mapped_column(Integer, default=0)


class RootTopCount(Base):
    """Files of a root under each of its top-level folders (``top`` = the folder's name; '' = all
    of the root's files), kept by count_store.py beside TagFileCount."""

    __tablename__ = "root_top_counts"

    folder_id: Mapped[int] = mapped_column(ForeignKey("folders.id", ondelete="CASCADE"), primary_key=True)
    top: Mapped[str] = mapped_column(Text, primary_key=True)
    files: Mapped[int] = mapped_column(Integer, default=0)


class CountState(Base):
    """One row: ``generation`` grows with every committed write to the counted tables (files,
    file_tags, tags, tag_edges, folders); the stored counts hold for ``fresh`` = the generation
    they were computed at, and are ignored when it is behind."""

    __tablename__ = "count_state"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    generation: Mapped[int] = mapped_column(BigInteger, default=0)
    fresh: Mapped[int] = mapped_column(BigInteger, default=-1)

"""The metadata index of release 0.1.0 (commit 203d98c), written out table by table.

Frozen: it never imports today's models, so later model changes need a new revision and cannot
change what 0001 means. Idempotent: a table (or index) that already exists is left alone. 0.1.0
made its schema with create_all and no version table, so an unversioned 0.1.0 database goes
through this revision too: it gains only what it lacks (nothing, unless 0.1.0 was interrupted
while creating tables) and the stamp.

Revision ID: 0001
Revises:
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def _table(name: str, *items: sa.SchemaItem, indexes: tuple[tuple[str, list[str]], ...] = ()) -> None:
    inspector = sa.inspect(op.get_bind())
    if not inspector.has_table(name):
        op.create_table(name, *items)
        have: set[str] = set()
    else:
        have = {ix["name"] for ix in inspector.get_indexes(name)}
    for index_name, columns in indexes:
        if index_name not in have:
            op.create_index(index_name, name, columns, unique=False)


def upgrade() -> None:
    _table(
        "folders",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("path", sa.Text(), nullable=False),
        sa.Column("ignore_patterns", sa.JSON(), nullable=False),
        sa.Column("watched", sa.Boolean(), nullable=False),
        sa.Column("added_at", sa.DateTime(), nullable=False),
        sa.Column("last_scan_at", sa.DateTime(), nullable=True),
        sa.Column("last_scan_complete", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("path"),
    )
    _table(
        "tags",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("key", sa.Text(), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("source", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("key"),
        indexes=(("ix_tags_source", ["source"]), ("ix_tags_value", ["value"])),
    )
    _table(
        "workspaces",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("collection", sa.String(length=120), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("filter_json", sa.JSON(), nullable=False),
        sa.Column("model_id", sa.String(length=120), nullable=True),
        sa.Column("chunker_key", sa.String(length=200), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("built_at", sa.DateTime(), nullable=True),
        sa.Column("last_used_at", sa.DateTime(), nullable=False),
        sa.Column("archived_at", sa.DateTime(), nullable=True),
        sa.Column("chunk_count", sa.Integer(), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name"),
        sa.UniqueConstraint("collection"),
    )
    _table(
        "erm_keys",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("content_hash", sa.String(length=80), nullable=False),
        sa.Column("chunker_key", sa.String(length=200), nullable=False),
        sa.Column("chunk_id", sa.String(length=40), nullable=False),
        sa.Column("model_id", sa.String(length=120), nullable=False),
        sa.Column("vector", sa.LargeBinary(), nullable=False),
        sa.Column("extra_text", sa.Text(), nullable=False),
        sa.Column("tag", sa.String(length=40), nullable=False),
        sa.Column("evolved_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("content_hash", "chunker_key", "chunk_id", "model_id"),
        indexes=(("ix_erm_keys_content_hash", ["content_hash"]),),
    )
    _table(
        "erm_memory",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("content_hash", sa.String(length=80), nullable=False),
        sa.Column("chunker_key", sa.String(length=200), nullable=False),
        sa.Column("chunk_id", sa.String(length=40), nullable=False),
        sa.Column("model_id", sa.String(length=120), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("vector", sa.LargeBinary(), nullable=False),
        sa.Column("score", sa.Float(), nullable=False),
        sa.Column("hits", sa.Integer(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        indexes=(("ix_erm_memory_chunk", ["content_hash", "chunker_key", "chunk_id"]),),
    )
    _table(
        "files",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("path", sa.Text(), nullable=False),
        sa.Column("raw_path", sa.LargeBinary(), nullable=True),
        sa.Column("folder_id", sa.Integer(), nullable=True),
        sa.Column("rel_path", sa.Text(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("mtime_ns", sa.BigInteger(), nullable=False),
        sa.Column("content_hash", sa.String(length=80), nullable=True),
        sa.Column("content_version", sa.Integer(), nullable=False),
        sa.Column("format", sa.String(length=32), nullable=False),
        sa.Column("title", sa.Text(), nullable=True),
        sa.Column("author", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=True),
        sa.Column("modified_at", sa.DateTime(), nullable=True),
        sa.Column("page_count", sa.Integer(), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("extra", sa.JSON(), nullable=True),
        sa.Column("first_seen_at", sa.DateTime(), nullable=False),
        sa.Column("changed_at", sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("path"),
        sa.ForeignKeyConstraint(["folder_id"], ["folders.id"], ondelete="SET NULL"),
        indexes=(
            ("ix_files_content_hash", ["content_hash"]),
            ("ix_files_folder_id", ["folder_id"]),
            ("ix_files_format", ["format"]),
            ("ix_files_modified_at", ["modified_at"]),
            ("ix_files_status", ["status"]),
        ),
    )
    _table(
        "chat_threads",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("workspace_id", sa.Integer(), nullable=False),
        sa.Column("title", sa.Text(), nullable=True),
        sa.Column("model", sa.String(length=200), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["workspace_id"], ["workspaces.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        indexes=(("ix_chat_threads_workspace_id", ["workspace_id"]),),
    )
    _table(
        "erm_progress",
        sa.Column("workspace_id", sa.Integer(), nullable=False),
        sa.Column("pending", sa.Integer(), nullable=False),
        sa.Column("batch_gain", sa.Float(), nullable=False),
        sa.Column("best_gain", sa.Float(), nullable=False),
        sa.Column("stale", sa.Integer(), nullable=False),
        sa.Column("batches", sa.Integer(), nullable=False),
        sa.Column("rounds", sa.Integer(), nullable=False),
        sa.Column("accepted", sa.Integer(), nullable=False),
        sa.Column("ignored", sa.Integer(), nullable=False),
        sa.Column("last_evolved_at", sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(["workspace_id"], ["workspaces.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("workspace_id"),
    )
    _table(
        "query_log",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("workspace_id", sa.Integer(), nullable=True),
        sa.Column("session_key", sa.String(length=80), nullable=False),
        sa.Column("query", sa.Text(), nullable=False),
        sa.Column("source", sa.String(length=16), nullable=False),
        sa.Column("results", sa.JSON(), nullable=False),
        sa.Column("opened", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("latency_ms", sa.Float(), nullable=True),
        sa.ForeignKeyConstraint(["workspace_id"], ["workspaces.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        indexes=(
            ("ix_query_log_created_at", ["created_at"]),
            ("ix_query_log_session_key", ["session_key"]),
            ("ix_query_log_workspace_id", ["workspace_id"]),
        ),
    )
    _table(
        "scan_issues",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("folder_id", sa.Integer(), nullable=True),
        sa.Column("path", sa.Text(), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["folder_id"], ["folders.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        indexes=(("ix_scan_issues_folder_id", ["folder_id"]),),
    )
    _table(
        "tag_edges",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("parent_id", sa.Integer(), nullable=False),
        sa.Column("child_id", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("parent_id", "child_id"),
        sa.ForeignKeyConstraint(["parent_id"], ["tags.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["child_id"], ["tags.id"], ondelete="CASCADE"),
        indexes=(("ix_tag_edges_child", ["child_id"]),),
    )
    _table(
        "chat_messages",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("thread_id", sa.Integer(), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("mode", sa.String(length=20), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("model", sa.String(length=200), nullable=True),
        sa.Column("passages", sa.JSON(), nullable=False),
        sa.Column("citations", sa.JSON(), nullable=False),
        sa.Column("timings", sa.JSON(), nullable=False),
        sa.Column("log_id", sa.Integer(), nullable=True),
        sa.Column("feedback", sa.Integer(), nullable=True),
        sa.Column("opened", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["thread_id"], ["chat_threads.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        indexes=(("ix_chat_messages_thread", ["thread_id", "id"]),),
    )
    _table(
        "file_tags",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("file_id", sa.Integer(), nullable=False),
        sa.Column("tag_id", sa.Integer(), nullable=False),
        sa.Column("source", sa.String(length=16), nullable=False),
        sa.Column("score", sa.Float(), nullable=False),
        sa.Column("confirmed", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("file_id", "tag_id"),
        sa.ForeignKeyConstraint(["file_id"], ["files.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["tag_id"], ["tags.id"], ondelete="CASCADE"),
        indexes=(("ix_file_tags_tag", ["tag_id"]),),
    )
    _table(
        "workspace_files",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("workspace_id", sa.Integer(), nullable=False),
        sa.Column("file_id", sa.Integer(), nullable=True),
        sa.Column("path", sa.Text(), nullable=False),
        sa.Column("content_hash", sa.String(length=80), nullable=True),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("chunks", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("workspace_id", "file_id"),
        sa.ForeignKeyConstraint(["workspace_id"], ["workspaces.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["file_id"], ["files.id"], ondelete="SET NULL"),
        indexes=(("ix_wsfiles_file", ["file_id"]),),
    )


def downgrade() -> None:
    raise NotImplementedError("0001 is the first schema: there is nothing older to go back to")

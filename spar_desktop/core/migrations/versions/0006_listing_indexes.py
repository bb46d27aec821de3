"""Indexes for the app at a million files (issue 29): the file table's default order (names
ignoring case, then path) read from an index instead of sorting every row, and the tag tree's
counts as one GROUP BY over a covering index of confirmed links, and the Issues list's pages
(one kind's or one reason's files by path).

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_files_name_order", "files", [sa.text("lower(name)"), "path", "status"], unique=False)
    op.create_index("ix_files_status_error_path", "files", ["status", "error", "path"], unique=False)
    op.create_index("ix_file_tags_confirmed", "file_tags", ["confirmed", "source", "tag_id", "file_id"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_file_tags_confirmed", table_name="file_tags")
    op.drop_index("ix_files_status_error_path", table_name="files")
    op.drop_index("ix_files_name_order", table_name="files")

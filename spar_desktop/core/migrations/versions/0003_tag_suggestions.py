"""Tag suggestions: file_summaries (one summary text + vector per file) and tag_rejections
(suggestions the user rejected, never made again).

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "file_summaries",
        sa.Column("file_id", sa.Integer(), nullable=False),
        sa.Column("content_hash", sa.String(length=80), nullable=True),
        sa.Column("model_id", sa.Text(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("vector", sa.LargeBinary(), nullable=False),
        sa.Column("suggest_key", sa.String(length=64), nullable=True),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("file_id"),
        sa.ForeignKeyConstraint(["file_id"], ["files.id"], ondelete="CASCADE"),
    )
    op.create_table(
        "tag_rejections",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("file_id", sa.Integer(), nullable=False),
        sa.Column("tag_id", sa.Integer(), nullable=False),
        sa.Column("rejected_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("file_id", "tag_id"),
        sa.ForeignKeyConstraint(["file_id"], ["files.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["tag_id"], ["tags.id"], ondelete="CASCADE"),
    )
    op.create_index("ix_tag_rejections_tag", "tag_rejections", ["tag_id"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_tag_rejections_tag", table_name="tag_rejections")
    op.drop_table("tag_rejections")
    op.drop_table("file_summaries")

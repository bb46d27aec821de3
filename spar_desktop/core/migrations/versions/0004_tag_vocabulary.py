"""Tag vocabulary index state (issue 29): tag_vocabulary (which tags are embedded, with what) and
tag_words (label words → tags), tag_vocabulary_meta (the tag tables' signature when last synced), so a request never reads the whole tag collection back.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "tag_vocabulary",
        sa.Column("tag_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("words", sa.Text(), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("parents", sa.Integer(), nullable=False),
        sa.Column("fp", sa.String(length=16), nullable=True),
        sa.Column("model_id", sa.String(length=120), nullable=True),
        sa.Column("texts", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("tag_id"),
    )
    op.create_index("ix_tag_vocabulary_fp", "tag_vocabulary", ["fp"], unique=False)
    op.create_table(
        "tag_words",
        sa.Column("word", sa.String(length=200), nullable=False),
        sa.Column("tag_id", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("word", "tag_id"),
    )
    op.create_index("ix_tag_words_tag_id", "tag_words", ["tag_id"], unique=False)
    op.create_table(
        "tag_vocabulary_meta",
        sa.Column("key", sa.String(length=40), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("key"),
    )


def downgrade() -> None:
    op.drop_table("tag_vocabulary_meta")
    op.drop_index("ix_tag_words_tag_id", table_name="tag_words")
    op.drop_table("tag_words")
    op.drop_index("ix_tag_vocabulary_fp", table_name="tag_vocabulary")
    op.drop_table("tag_vocabulary")

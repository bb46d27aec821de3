"""The tag tree's counts kept in the index (issue 29, the app window at 1M files): files under each
tag (tag_file_counts), a root's files per top-level folder (root_top_counts) and the generation they
hold for (count_state); filled here for an existing index (core/library/count_store.py).

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.orm import Session

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "tag_file_counts",
        sa.Column("tag_id", sa.Integer(), nullable=False),
        sa.Column("files", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["tag_id"], ["tags.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("tag_id"),
    )
    op.create_table(
        "root_top_counts",
        sa.Column("folder_id", sa.Integer(), nullable=False),
        sa.Column("top", sa.Text(), nullable=False),
        sa.Column("files", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["folder_id"], ["folders.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("folder_id", "top"),
    )
    op.create_table(
        "count_state",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("generation", sa.BigInteger(), nullable=False),
        sa.Column("fresh", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    # Counted with the code's own computation (the same as a scan's refresh), in this transaction.
    from spar_desktop.core.library import count_store

    session = Session(bind=op.get_bind())
    count_store.fill(session)
    session.flush()


def downgrade() -> None:
    op.drop_table("count_state")
    op.drop_table("root_top_counts")
    op.drop_table("tag_file_counts")

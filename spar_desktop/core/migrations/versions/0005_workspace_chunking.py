"""Chunking per workspace (issue 32): workspaces.chunking (hierarchical, fixed, semantic or
contextual; NULL reads as hierarchical, so existing workspaces keep their passages and caches).

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("workspaces") as batch:
        batch.add_column(sa.Column("chunking", sa.String(length=16), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("workspaces") as batch:
        batch.drop_column("chunking")

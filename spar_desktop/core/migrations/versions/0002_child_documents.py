"""Child documents: files.parent_id links an archive member or a mail attachment to its container.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("files") as batch:
        batch.add_column(sa.Column("parent_id", sa.Integer(), nullable=True))
        batch.create_foreign_key("fk_files_parent_id_files", "files", ["parent_id"], ["id"], ondelete="CASCADE")
        batch.create_index("ix_files_parent_id", ["parent_id"], unique=False)
    # Formats this release reads that 0.1.0 did not (spreadsheets, slides, mail, archives, images
    # by OCR): their rows are probed again at the next scan (mtime -1 never matches the disk).
    op.execute("UPDATE files SET mtime_ns = -1 WHERE status = 'unsupported' OR format IN ('email', 'archive', 'image')")


def downgrade() -> None:
    with op.batch_alter_table("files") as batch:
        batch.drop_index("ix_files_parent_id")
        batch.drop_constraint("fk_files_parent_id_files", type_="foreignkey")
        batch.drop_column("parent_id")

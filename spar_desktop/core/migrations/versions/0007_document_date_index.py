"""The document date (coalesce(created_at, modified_at)) indexed on PostgreSQL (issue 29): its
planner keeps no statistics for an expression without an index, and estimated a year's files at
about 1/16 of their number (a date filter then joined every link to the files it misjudged);
with the index, ANALYZE samples the expression and a date filter reads its files by it. SQLite
plans without statistics: nothing is created there.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.create_index("ix_files_doc_date", "files", [sa.text("coalesce(created_at, modified_at)")], unique=False)
        # The expression's statistics come from ANALYZE, not from building the index; an index
        # nothing changes afterwards would otherwise wait for its next scan (a sample: ~1 s at 1M).
        op.execute("ANALYZE files")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.drop_index("ix_files_doc_date", table_name="files")

"""Two indexes on PostgreSQL for a 1M-file index (issue 29); SQLite needs neither (nothing is
created there):
- the document date (coalesce(created_at, modified_at)): the planner keeps no statistics for an
  expression without an index and estimated a year's files at about 1/16 of their number; with
  the index, ANALYZE samples the expression and a date filter reads its files by it;
- the path in code point order (COLLATE "C"): ranked admission picks the first files by path
  among those tied at the budget's edge (group_scores.first_by_path), which read and sorted
  every tied file (0.85 s at 1M) and now walks this index until it has them (0.07 s). SQLite's
  path index is in that order already.

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
        op.create_index("ix_files_path_c", "files", ["path"], unique=False, postgresql_ops={"path": 'COLLATE "C"'})
        # The expression's statistics come from ANALYZE, not from building the index; an index
        # nothing changes afterwards would otherwise wait for its next scan (a sample: ~1 s at 1M).
        if op.get_bind().execute(sa.text("SELECT EXISTS (SELECT 1 FROM files)")).scalar():
            op.execute("ANALYZE files")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.drop_index("ix_files_path_c", table_name="files")
        op.drop_index("ix_files_doc_date", table_name="files")

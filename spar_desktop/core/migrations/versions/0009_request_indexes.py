"""Three indexes for a workspace request at 1M files (issue 29):
- file_tags by (tag_id, confirmed, score, file_id), replacing the index on tag_id alone: ranked
  admission reads a keyword's links by tag and needs exactly these columns, so it reads the index
  and never the links' rows (the 166k links of 16,687 'minutes' folders at 1M files);
- on SQLite, files by document date (coalesce(created_at, modified_at)) and status: a request
  for "2019" counted its 100k files by reading every file row (0.26-0.45 s, twice a request);
  the index answers the count alone (0.02 s). PostgreSQL has its own date index (0007);
- the tag vocabulary by (fp, model_id), replacing the index on fp alone: a process's first request
  checks the vector store against the distinct fingerprints of its model (0.31 s at 1M files
  through the rows, 0.025 s from the index).

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # "If exists": a bulk first scan drops the query indexes and builds them at its end; one killed
    # in between leaves them missing (query_indexes.py), and an index made since has the new ones.
    op.drop_index("ix_file_tags_tag", table_name="file_tags", if_exists=True)
    op.create_index("ix_file_tags_tag_links", "file_tags", ["tag_id", "confirmed", "score", "file_id"], unique=False,
                    if_not_exists=True)
    op.drop_index("ix_tag_vocabulary_fp", table_name="tag_vocabulary", if_exists=True)
    op.create_index("ix_tag_vocabulary_fp_model", "tag_vocabulary", ["fp", "model_id"], unique=False,
                    if_not_exists=True)
    if op.get_bind().dialect.name == "sqlite":
        op.create_index("ix_files_date_status", "files", [sa.text("coalesce(created_at, modified_at)"), "status"],
                        unique=False, if_not_exists=True)


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.drop_index("ix_files_date_status", table_name="files")
    op.drop_index("ix_tag_vocabulary_fp_model", table_name="tag_vocabulary")
    op.create_index("ix_tag_vocabulary_fp", "tag_vocabulary", ["fp"], unique=False)
    op.drop_index("ix_file_tags_tag_links", table_name="file_tags")
    op.create_index("ix_file_tags_tag", "file_tags", ["tag_id"], unique=False)

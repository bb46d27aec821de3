"""Schema migrations of the metadata index (Alembic revisions in ``versions/``, run by ``runner.py``
whenever ``Library`` opens a database). Light on purpose: the CLI imports the error from here
without loading SQLAlchemy or Alembic.

Revisions: 0001 = release 0.1.0's schema; 0002 = child documents (files.parent_id);
0003 = tag suggestions (file_summaries, tag_rejections); 0004 = tag vocabulary index state
(tag_vocabulary, tag_words); 0005 = chunking per workspace; 0006 = the listing indexes; 0007 = the
document date and code point path indexes on PostgreSQL; 0008 = the tag tree's counts kept in the index
(count_store.py); 0009 = the request's indexes (a tag's links with their scores, the vocabulary by
fingerprint and model, SQLite's document date). A change to any table needs a new revision (a test
compares the migrated schema with the models) and ``HEAD_REVISION`` moved to it.
"""

from __future__ import annotations

# The newest revision this code knows; checked against versions/ by the tests. Opening a database
# already at this revision costs one SELECT and never loads Alembic.
HEAD_REVISION = "0009"


class IndexTooNewError(RuntimeError):
    """The database was migrated by a newer SPAR Desktop: this one must not touch it."""

    def __init__(self, revision: str, where: str) -> None:
        self.revision = revision
        self.where = where
        super().__init__(
            f"this index was written by a newer SPAR Desktop (revision {revision}); install that version "
            f"or newer. Nothing was changed in {where}."
        )


class MigrationError(RuntimeError):
    """An upgrade failed and was rolled back; the message says where the backup is, if any."""

"""Alembic environment: run by ``runner.py`` with a connection already in a transaction (never from
an alembic.ini; the app configures Alembic in code). Developers make a new revision with
``python -m spar_desktop.core.migrations.runner "what changed"``."""

from __future__ import annotations

from alembic import context

import spar_desktop.core.schema  # noqa: F401  (registers every table on Base)
from spar_desktop.core.library.models import Base


def run_migrations() -> None:
    connection = context.config.attributes["connection"]
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        # SQLite alters a table by copying it: batch mode does that (runner.py turns foreign keys
        # off for the copy and checks them before committing).
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():  # a no-op: runner.py owns the transaction
        context.run_migrations()


# Alembic executes this file with its context set up; anything else importing it (a scan of
# every core module) gets the function and nothing runs.
if getattr(context, "config", None) is not None:
    run_migrations()

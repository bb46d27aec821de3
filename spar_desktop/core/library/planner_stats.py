"""Planner statistics after a scan, on PostgreSQL (issue 29).

A scan into PostgreSQL left the tables it wrote without statistics until autovacuum came by
(~20 s after a 100k-file scan, while the user's first request was running): the planner then
guessed row counts, and the first statements also paid for setting the hint bits of every
freshly written page (0.5-1.2 s at 100k). So a scan that wrote rows ends with ``ANALYZE`` of
the tables it writes, which reads a sample of at most 30,000 rows a table (300 × the default
statistics target): about the same cost at 1M files as at 100k. After a bulk first scan (every
page new) it is ``VACUUM (ANALYZE)``, which also sets the hint bits and the visibility map
(index-only scans) once, in the scan, instead of in the first requests; it reads each table
whole, which a first scan has just written whole anyway.

SQLite plans these queries without statistics (the index's shape, and ``queries.py``'s query
forms, were chosen for that), so nothing is run there.
"""

from __future__ import annotations

import logging
import time

from sqlalchemy import Engine
from sqlalchemy.exc import DBAPIError

log = logging.getLogger(__name__)

# What a scan writes: the files (and their containers' members), their folder and date links,
# and the folder/date tags with their edges.
SCANNED_TABLES = ("files", "file_tags", "tags", "tag_edges")


def applies(engine: Engine) -> bool:
    return engine.dialect.name == "postgresql"


def refresh_after_scan(engine: Engine, bulk: bool) -> float:
    """``ANALYZE`` (``VACUUM (ANALYZE)`` after a bulk load) of the scanned tables on PostgreSQL;
    returns the seconds it took (0.0 elsewhere). A failure (a user who does not own the tables,
    a server going away) is logged, never raised: the scan's rows are committed, and autovacuum
    gathers the statistics later anyway."""
    if not applies(engine):
        return 0.0
    statement = f"{'VACUUM (ANALYZE)' if bulk else 'ANALYZE'} {', '.join(SCANNED_TABLES)}"
    start = time.perf_counter()
    try:
        # VACUUM cannot run inside a transaction block.
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.exec_driver_sql(statement)
    except DBAPIError as exc:
        log.warning("could not update the database's statistics after the scan (%s): %s", statement, exc)
    seconds = time.perf_counter() - start
    log.info("%s after the scan: %.2f s", statement, seconds)
    return seconds

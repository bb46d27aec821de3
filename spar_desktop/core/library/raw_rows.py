"""Big reads on the driver's own cursor.

A million rows through SQLAlchemy's result rows cost several times the query itself (measured at
1M files under load: the file table's order 19.6 s against 2.9 s; 120k tags' rows 5 s of 11).
The statement is still built and compiled by SQLAlchemy, for either backend."""

from __future__ import annotations

from typing import Any, Iterable

from sqlalchemy import bindparam
from sqlalchemy.orm import Session


def driver_cursor(session: Session, statement: Any) -> Any:
    """A DB-API cursor positioned on ``statement``'s rows (plain tuples)."""
    conn = session.connection()
    compiled = statement.compile(dialect=conn.dialect, compile_kwargs={"render_postcompile": True})
    params = compiled.construct_params()
    args = tuple(params[k] for k in compiled.positiontup) if compiled.positional else params
    cursor = conn.connection.dbapi_connection.cursor()
    cursor.execute(str(compiled), args)
    return cursor


def driver_rows(session: Session, statement: Any) -> list[tuple]:
    return driver_cursor(session, statement).fetchall()


def ids_in(column: Any, ids: Iterable[int]) -> Any:
    """``column IN (ids)`` with the integer ids written into the SQL (nothing to escape): any
    number of them, where bound values would pass SQLite's variable limit, and without the cost
    of compiling and converting one bound value per id (tens of thousands at 1M files)."""
    return column.in_(bindparam(None, [int(i) for i in ids], expanding=True, literal_execute=True))

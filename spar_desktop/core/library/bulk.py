"""Bulk inserts for the scanner: plain dicts in, one executemany out.

On SQLite, SQLAlchemy's per-row parameter handling (construct_params and the bind processors,
called per row and per column) costs about as much CPU as SQLite's own insert with six
indexes. ``insert_rows`` therefore hands SQLite the rows as tuples, with each column type's
own bind processor applied (so DateTime and JSON values are stored exactly as the ORM stores
them) and scalar column defaults filled in. Other dialects get a Core ``insert(table)``
executemany, which SQLAlchemy turns into batched multi-row INSERTs (insertmanyvalues) there.
"""

from __future__ import annotations

from datetime import datetime
from operator import itemgetter
from typing import Any, Callable, Optional

from sqlalchemy import Connection, Select, Table, func, insert, select

_Plan = tuple[str, tuple[str, ...], tuple[Optional[Callable], ...], tuple[tuple[str, object], ...]]
_plans: dict[tuple[int, str, tuple[str, ...]], Optional[_Plan]] = {}


def _plan(conn: Connection, table: Table, keys: tuple[str, ...]) -> Optional[_Plan]:
    """SQL, column order, bind processors and defaults for these keys; None: use Core."""
    cache_key = (id(table), conn.dialect.name, keys)
    if cache_key in _plans:
        return _plans[cache_key]
    plan: Optional[_Plan] = None
    if conn.dialect.name == "sqlite" and conn.dialect.paramstyle == "qmark":
        defaults = []
        ok = True
        for col in table.columns:
            if col.key in keys or col.primary_key:
                continue
            if col.default is None:
                continue
            if not col.default.is_scalar:
                ok = False  # a callable or SQL default: let Core evaluate it per row
                break
            defaults.append((col.key, col.default.arg))
        if ok:
            names = keys + tuple(k for k, _ in defaults)
            dialect = conn.dialect
            procs = tuple(table.c[k].type.dialect_impl(dialect).bind_processor(dialect) for k in names)
            sql = (f"INSERT INTO {dialect.identifier_preparer.format_table(table)} "
                   f"({', '.join(dialect.identifier_preparer.quote(table.c[k].name) for k in names)}) "
                   f"VALUES ({', '.join('?' * len(names))})")
            plan = (sql, keys, procs, tuple(defaults))
    _plans[cache_key] = plan
    return plan


def insert_rows(conn: Connection, table: Table, rows: list[dict]) -> None:
    """INSERT every row (all rows must have the same keys) in one executemany."""
    if not rows:
        return
    plan = _plan(conn, table, tuple(rows[0]))
    if plan is None:
        conn.execute(insert(table), rows)
        return
    sql, keys, procs, defaults = plan
    # Column by column: the rows' values are gathered and zipped back into tuples in C
    # (itemgetter, zip), and only the columns with a bind processor are walked in Python.
    n = len(rows)
    get = itemgetter(*keys)
    columns: list = list(zip(*map(get, rows))) if len(keys) > 1 else [[get(r) for r in rows]]
    for i, process in enumerate(procs):
        if i >= len(keys):
            value = defaults[i - len(keys)][1]
            columns.append([value if process is None else process(value)] * n)
        elif process is not None:
            columns[i] = _converted(columns[i], process)
    conn.exec_driver_sql(sql, list(zip(*columns)))


def _converted(values, process: Callable) -> list:
    """One column's values through its bind processor. Processors are pure: None (JSON's 'null',
    most of a batch), a value repeated from the row before, and a naive datetime met before in
    the batch (a scan's dates: one first_seen_at, shared mtimes) are converted once."""
    out = []
    append = out.append
    none = process(None)
    seen: dict = {}
    last = last_out = None
    for v in values:
        if v is None:
            append(none)
        elif v is last:
            append(last_out)
        elif v.__class__ is datetime and v.tzinfo is None:  # equal naive datetimes: the same text
            last = v
            last_out = seen.get(v)
            if last_out is None:
                last_out = seen[v] = process(v)
            append(last_out)
        else:
            last = v
            last_out = process(v)
            append(last_out)
    return out


def ids_appended(conn: Connection, id_column, top: int, n: int) -> Optional[list[int]]:
    """The ids of ``n`` rows just inserted, in order and without ids of their own, into a table whose
    largest id was ``top``, when SQLite says so: it gives each such row the largest rowid + 1, so if the
    table now holds exactly ``n`` ids above ``top`` and the largest is top + n, they are top + 1, ...,
    top + n in insert order (the transaction holds the write lock: no other writer's rows among
    them). None on other dialects or when the ids are not that: read them back another way."""
    if conn.dialect.name != "sqlite":
        return None
    count, last = conn.execute(select(func.count(), func.max(id_column)).where(id_column > top)).one()
    return list(range(top + 1, top + n + 1)) if count == n and last == top + n else None


def insert_tuples(conn: Connection, table: Table, keys: tuple[str, ...], rows: list[tuple],
                  constants: dict[str, object]) -> None:
    """INSERT rows given as tuples of ``keys`` plus the same ``constants`` in every row (a scan's
    tag links: 200,000 at 100k files). On SQLite the constants are converted once and appended to
    each tuple, with no per-row dict; columns of ``keys`` must need no bind processing (integers,
    text). Other dialects: dicts through ``insert_rows``."""
    if not rows:
        return
    names = keys + tuple(constants)
    plan = _plan(conn, table, names)
    if plan is None:
        insert_rows(conn, table, [dict(zip(keys, r), **constants) for r in rows])
        return
    sql, _, procs, defaults = plan
    assert all(p is None for p in procs[:len(keys)]), "insert_tuples: a key column needs conversion"
    tail = tuple(p(v) if p is not None else v
                 for p, v in zip(procs[len(keys):], [*constants.values(), *(v for _, v in defaults)]))
    conn.exec_driver_sql(sql, [r + tail for r in rows])


def fetch_rows(conn: Connection, stmt: Select) -> list[tuple]:
    """All rows of a select as the driver's plain tuples, skipping SQLAlchemy's Row objects (a
    re-scan loads every known file of a root this way). Only for columns whose values need no
    result processing (integers, text): no DateTime/JSON columns here. An ``in_`` list is written
    out as bound values (render_postcompile)."""
    compiled = stmt.compile(dialect=conn.dialect, compile_kwargs={"render_postcompile": True})
    params = compiled.construct_params()
    if compiled.positional:
        params = tuple(params[k] for k in compiled.positiontup)
    cursor = conn.connection.cursor()
    try:
        cursor.execute(str(compiled), params)
        return cursor.fetchall()
    finally:
        cursor.close()


def execute_rows(conn: Connection, statement: Any, rows: list[dict]) -> None:
    """An UPDATE or DELETE with bound parameters, run once per row of ``rows``. On SQLite the SQL
    is compiled once and the rows go to the driver's executemany as tuples (SQLAlchemy's per-row
    parameter handling cost more than SQLite's updates: 71,603 tag rows of a first vocabulary
    sync); values must need no conversion (integers, text). Elsewhere Core's executemany."""
    if not rows:
        return
    if conn.dialect.name != "sqlite" or conn.dialect.paramstyle != "qmark":
        conn.execute(statement, rows)
        return
    compiled = statement.compile(dialect=conn.dialect)
    fixed = {name: bind.value for name, bind in compiled.binds.items()}  # the same in every row
    names = compiled.positiontup
    conn.exec_driver_sql(str(compiled), [tuple(row[k] if k in row else fixed[k] for k in names) for row in rows])

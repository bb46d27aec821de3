"""The same metadata index on a real PostgreSQL server (the team set-up), started on loopback."""

from __future__ import annotations

import json
import os

from sqlalchemy import select

from spar_desktop.core.library.database import Library, make_engine
from spar_desktop.core.library.models import File, FileStatus
from spar_desktop.core.library.queries import FileFilter, find_files
from spar_desktop.core.library.scanner import Scanner
from spar_desktop.core.library.tags import resolve_tags
from spar_desktop.core.library.taxonomy import import_taxonomy


def test_scan_tags_and_queries_on_postgres(pg_url, tmp_path):
    share = tmp_path / "share"
    (share / "Finance" / "2019").mkdir(parents=True)
    for i in range(30):
        (share / "Finance" / "2019" / f"r{i}.txt").write_text(f"report {i}", encoding="utf-8")
    (share / "empty.md").write_bytes(b"")
    raw_name = os.path.join(os.fsencode(str(share)), b"caf\xe9.txt")
    with open(raw_name, "wb") as fh:
        fh.write(b"latin-1 name")
    tax = tmp_path / "t.json"
    tax.write_text(json.dumps([{"name": "Money", "children": [{"name": "Budget"}]}]), encoding="utf-8")

    lib = Library(make_engine(pg_url), None)
    try:
        [report] = Scanner(lib, batch_size=7).scan([str(share)])
        assert report.new == 32
        [again] = Scanner(lib).scan([str(share)])
        assert (again.new, again.unchanged) == (0, 32)
        with lib.session() as s:
            import_taxonomy(s, tax)
            fin = resolve_tags(s, "Finance")[0].id
            rows = find_files(s, FileFilter(tag_groups=(frozenset({fin}),)))
            assert len(rows) == 30
            assert s.scalar(select(File.status).where(File.name == "empty.md")) == FileStatus.EMPTY
            raw = s.scalar(select(File.raw_path).where(File.name.like("caf%")))
            assert raw == raw_name
            assert {t.value for t in resolve_tags(s, "budget")} == {"Budget"}
    finally:
        lib.close()


def test_bulk_first_scan_and_repair_after_a_kill_on_postgres(pg_url, tmp_path):
    """The bulk path (query indexes dropped, re-created at the end or at the next open) on the
    team set-up: the same rows, links and answers as an ordinary scan into SQLite."""
    from sqlalchemy import create_engine, text

    from spar_desktop.core.library.query_indexes import drop_query_indexes, missing_query_indexes

    from .test_bulk_scan import answers, make_share, scanned, snapshot

    admin = create_engine(pg_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text("CREATE DATABASE bulk_scan"))
    admin.dispose()
    url = pg_url.rsplit("/", 1)[0] + "/bulk_scan"
    share = make_share(tmp_path / "share")
    lib = Library(make_engine(url), None)
    reference = scanned(tmp_path, "reference", share, False)
    try:
        dropped = []
        report = Scanner(lib, batch_size=8).scan_one(str(share), progress=lambda p: dropped.append(
            bool(missing_query_indexes(lib.engine))))
        assert report.new > 40 and any(dropped) and missing_query_indexes(lib.engine) == []
        assert snapshot(lib) == snapshot(reference)
        drop_query_indexes(lib.engine)  # as a scan killed before re-creating them leaves it
        lib.close()
        lib = Library(make_engine(url), None)
        assert missing_query_indexes(lib.engine) == []
        assert answers(lib) == answers(reference)
    finally:
        lib.close()
        reference.close()


def test_a_scan_leaves_the_planner_statistics_of_what_it_wrote(pg_url, tmp_path):
    """The planner sizes the files, links and tags of a fresh scan from statistics, not guesses
    (it chose plans over every link of the index without them): a scan that wrote rows ends
    with them gathered (and, after a bulk first scan, the tables vacuumed); one that changed
    nothing leaves them as they were."""
    from sqlalchemy import text

    from spar_desktop.core.library.planner_stats import SCANNED_TABLES

    from .test_bulk_scan import make_share
    from tests.support.servers import fresh_database

    def stats(lib: Library) -> dict[str, tuple]:
        with lib.engine.connect() as conn:
            rows = conn.execute(text("SELECT relname, analyze_count, vacuum_count FROM pg_stat_user_tables"))
            return {name: (a, v) for name, a, v in rows if name in SCANNED_TABLES}

    share = make_share(tmp_path / "share")
    lib = Library(make_engine(fresh_database(pg_url)), None)
    try:
        assert set(stats(lib).values()) == {(0, 0)}
        Scanner(lib, batch_size=8).scan_one(str(share))  # a bulk first scan
        assert set(stats(lib).values()) == {(1, 1)}
        with lib.engine.connect() as conn:  # the planner now knows the row counts
            counted = conn.execute(text("SELECT reltuples FROM pg_class WHERE relname = 'files'")).scalar()
            assert counted == conn.execute(text("SELECT count(*) FROM files")).scalar()
        Scanner(lib).scan_one(str(share))  # nothing changed on disk: nothing to gather
        assert set(stats(lib).values()) == {(1, 1)}
        (share / "Legal" / "new.txt").write_text("a new note", encoding="utf-8")
        Scanner(lib, bulk_load=False).scan_one(str(share))
        assert set(stats(lib).values()) == {(2, 1)}  # ANALYZE alone
    finally:
        lib.close()


def test_sessions_run_without_jit_and_a_date_filter_is_sized_from_statistics(pg_url, tmp_path):
    """At 1M files PostgreSQL compiled short statements it misjudged as huge (JIT: 0.78 s of a
    1.13 s tag query) and guessed a year's files at 1/16 of their number (no statistics for the
    document date expression): SPAR's sessions run without JIT, and a scan leaves statistics of
    the document date (its index) from which the planner sizes a year. The index of paths in code
    point order (the first tied files by path) is built by the bulk scan like the others."""
    from datetime import date, datetime

    from sqlalchemy import text

    from spar_desktop.core.library.queries import build_query
    from tests.support.servers import fresh_database

    share = tmp_path / "share"
    for year in range(2012, 2022):
        folder = share / str(year)
        folder.mkdir(parents=True)
        for i in range(40):
            path = folder / f"f{i}.txt"
            path.write_text(f"{year} {i}", encoding="utf-8")
            os.utime(path, (datetime(year, 3, 1).timestamp(),) * 2)
    lib = Library(make_engine(fresh_database(pg_url)), None)
    try:
        Scanner(lib).scan_one(str(share))
        with lib.session() as s:
            assert s.scalar(text("SHOW jit")) == "off"
            # Built by the bulk scan from the models, as the migration builds it: code point order.
            definition = s.scalar(text("SELECT indexdef FROM pg_indexes WHERE indexname = 'ix_files_path_c'"))
            assert definition.endswith('(path COLLATE "C")')
            flt = FileFilter(since=date(2019, 1, 1), until=date(2019, 12, 31))
            q = build_query(s, flt).order_by(None).with_only_columns(File.id)
            compiled = q.compile(dialect=s.get_bind().dialect, compile_kwargs={"literal_binds": True})
            [[plan]] = s.execute(text(f"EXPLAIN (FORMAT JSON) {compiled}")).all()
            assert len(s.scalars(q).all()) == 40
            assert 20 <= plan[0]["Plan"]["Plan Rows"] <= 80  # without statistics: 2 rows
    finally:
        lib.close()

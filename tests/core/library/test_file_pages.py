"""The SQL listing (file_pages) against the in-memory one it replaces (overview.load_files):
the same files in the same order for every column, direction and filter."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest
from sqlalchemy import update

from spar_desktop.core.config import Settings
from spar_desktop.core.library import file_pages, overview
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.models import File, FileStatus
from spar_desktop.core.library.queries import FileFilter, find_files
from spar_desktop.core.library.scanner import Scanner
from spar_desktop.core.library.tags import tag_infos

NAMES = ["Budget.txt", "budget.md", "alpha.txt", "Zeta.md", "notes.txt", "b.csv", "report.md", "a.md"]


@pytest.fixture
def library(tmp_path: Path):
    roots = [tmp_path / "share", tmp_path / "other" / "Archive"]
    for n, root in enumerate(roots):
        for i, name in enumerate(NAMES):
            folder = root / ("Finance/2023" if i % 3 == 0 else "HR" if i % 3 == 1 else "")
            folder.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text("x" * ((i * 7 + n) % 4))  # equal sizes: ties broken by path
    lib = Library.open(Settings(data_dir=tmp_path / "data"))
    Scanner(lib).scan([str(r) for r in roots])
    with lib.session() as s:  # the columns a scan of text files leaves empty, varied
        ids = sorted(s.scalars(File.__table__.select().with_only_columns(File.id)))
        for k, fid in enumerate(ids):
            s.execute(update(File).where(File.id == fid).values(
                title=None if k % 3 == 0 else f"{'T' if k % 2 else 't'}itle {k % 4}",
                author=None if k % 4 == 0 else ["Ann", "bob", "Cy"][k % 3],
                page_count=None if k % 5 == 0 else k % 3,
                modified_at=None if k % 6 == 0 else datetime(2020, 1 + k % 3, 1),
                status=[FileStatus.OK, FileStatus.ERROR, FileStatus.OK, FileStatus.MISSING, FileStatus.EMPTY][k % 5],
                error=None if k % 5 in (0, 2) else f"problem {k % 2}"))
    yield lib
    lib.close()


def filters(lib: Library) -> list[FileFilter]:
    with lib.session() as s:
        hr = next(i for i, t in tag_infos(s).items() if t.key == "HR")
    return [FileFilter(), FileFilter(formats=("md",)), FileFilter(tag_groups=(frozenset({hr}),)),
            FileFilter(statuses=(FileStatus.ERROR, FileStatus.MISSING), include_missing=True),
            FileFilter(path_glob="*.txt")]


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("column", range(10))
def test_the_sql_order_is_the_in_memory_order(library, column, descending):
    for flt in filters(library):
        expected = [r.id for r in overview.load_files(library, flt, (column, descending)).records]
        with library.session() as s:
            order = file_pages.file_order(s, flt, (column, descending))
            assert list(order.ids) == expected, (flt, column, descending)
            page = file_pages.file_page(s, flt, (column, descending), offset=2, limit=3)
            assert [r.id for r in page.records] == expected[2:5] and page.total == len(expected)
    assert len(expected) == 4  # the glob's: six *.txt files, two of them missing


def test_a_page_reads_its_records_in_the_listings_order(library):
    listing = file_pages.listing(library, FileFilter(), (3, True))
    reference = overview.load_files(library, FileFilter(), (3, True)).records
    assert listing.total == len(reference) == 13  # 16 files, 3 missing
    assert listing.read(listing.order.ids[4:9]) == list(reference[4:9])  # whole FileRecords, equal
    assert list(listing.reorder((0, False)).ids) == [r.id for r in overview.load_files(library, FileFilter()).records]


def test_the_same_orders_on_postgres(tmp_path):
    """The team set-up: the SQL sort keys (strpos for instr, explicit NULLS FIRST/LAST) and the tag
    counts on a real PostgreSQL server."""
    from spar_desktop.core.library.database import make_engine
    from tests.support.servers import postgres_server

    share = tmp_path / "share"
    for i, name in enumerate(NAMES):
        folder = share / ("Finance/2023" if i % 3 == 0 else "HR" if i % 3 == 1 else "")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text("x" * (i % 3))
    try:
        server = postgres_server()
        url = server.__enter__()
    except RuntimeError as exc:
        pytest.skip(str(exc))
    try:
        lib = Library(make_engine(url), None)
        Scanner(lib).scan([str(share)])
        with lib.session() as s:
            s.execute(update(File).where(File.name == "notes.txt").values(modified_at=None, status=FileStatus.ERROR))
        for column in range(10):
            for descending in (False, True):
                expected = [r.id for r in overview.load_files(lib, FileFilter(), (column, descending)).records]
                with lib.session() as s:
                    assert list(file_pages.file_order(s, FileFilter(), (column, descending)).ids) == expected, column
        with lib.session() as s:  # the tag tree's counts (driver cursor, GROUP BY) there too
            counts = {t.key: t.file_count for t in tag_infos(s).values()}
        assert (counts["Finance"], counts["Finance/2023"], counts["HR"]) == (3, 3, 3)
        lib.close()
    finally:
        server.__exit__(None, None, None)


def test_counts_leave_out_missing_files_whatever_the_filter(library):
    """The whole index's count (what a request's budget and funnel start from) is read by a quicker
    path than other filters': it must agree with listing the files, missing ones left out."""
    from spar_desktop.core.library.queries import count_files

    with library.session() as s:
        for flt in filters(library):
            assert count_files(s, flt) == len(find_files(s, flt)), flt
        assert count_files(s, FileFilter()) == 13  # 16 files, 3 missing

"""A first scan into an empty index bulk-loads without the query indexes (issue 29): it must
store exactly what the ordinary scan stores, put the indexes back when it ends, and a scan
killed before that must leave an index that the next open repairs, answering queries right."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

from sqlalchemy import func, insert, select
from sqlalchemy.orm import aliased

from spar_desktop.core.config import load_settings
from spar_desktop.core.library.bulk import ids_appended, insert_rows
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.file_pages import file_page
from spar_desktop.core.library.models import File, FileStatus, FileTag, Tag, TagEdge, utcnow
from spar_desktop.core.library.queries import FileFilter, find_files
from spar_desktop.core.library.query_indexes import missing_query_indexes, query_indexes
from spar_desktop.core.library.scanner import Scanner
from spar_desktop.core.library.tags import resolve_tags


def make_share(root: Path) -> Path:
    """Folders over three levels, dated files, an empty one, a zip with members, a bad PDF."""
    for dept in ("Finance", "Legal", "HR"):
        for year in ("2019", "2020"):
            d = root / dept / year
            d.mkdir(parents=True)
            for i in range(7):
                (d / f"{dept.lower()}-{i}.txt").write_text(f"{dept} {year} note {i}", encoding="utf-8")
            os.utime(d / f"{dept.lower()}-0.txt", (1_500_000_000, 1_500_000_000))
    (root / "empty.md").write_bytes(b"")
    (root / "Legal" / "broken.pdf").write_bytes(b"not a pdf at all")
    with zipfile.ZipFile(root / "Finance" / "bundle.zip", "w") as zf:
        zf.writestr("inner/a.txt", "first member")
        zf.writestr("b.md", "second member")
    return root


def snapshot(lib: Library) -> dict:
    """What a scan stored, without ids and timestamps of the run."""
    with lib.session() as s:
        parent = aliased(File)
        files = sorted(s.execute(select(
            File.path, File.raw_path, File.rel_path, File.name, File.size, File.mtime_ns, File.content_hash,
            File.format, File.status, File.error, File.created_at, File.modified_at, File.extra, parent.path,
        ).outerjoin(parent, parent.id == File.parent_id)).all())
        links = sorted(s.execute(select(File.path, Tag.key, FileTag.source, FileTag.confirmed, FileTag.score)
                                 .join(File, File.id == FileTag.file_id).join(Tag, Tag.id == FileTag.tag_id)).all())
        tags = sorted(s.execute(select(Tag.key, Tag.value, Tag.source)).all())
        up, down = aliased(Tag), aliased(Tag)
        edges = sorted(s.execute(select(up.key, down.key).join(TagEdge, TagEdge.parent_id == up.id)
                                 .join(down, down.id == TagEdge.child_id)).all())
    return {"files": files, "links": links, "tags": tags, "edges": edges}


def answers(lib: Library) -> dict:
    """Queries that the dropped indexes serve: tag filter, format/status filters, the file table's pages."""
    with lib.session() as s:
        finance = frozenset(t.id for t in resolve_tags(s, "Finance"))
        by_tag = sorted(r.path for r in find_files(s, FileFilter(tag_groups=(finance,))))
        by_format = sorted(r.path for r in find_files(s, FileFilter(formats=("txt",))))
        errors = sorted(r.path for r in find_files(s, FileFilter(statuses=(FileStatus.ERROR,))))
        page = file_page(s, FileFilter(), offset=5, limit=10)
    return {"by_tag": by_tag, "by_format": by_format, "errors": errors,
            "page": [r.path for r in page.records], "total": page.total}


def scanned(tmp_path: Path, name: str, share: Path, bulk: bool) -> Library:
    lib = Library.open(load_settings(tmp_path / name))
    report = Scanner(lib, batch_size=8, bulk_load=bulk).scan_one(str(share))
    assert report.new > 40 and report.children == 2
    return lib


def test_bulk_first_scan_stores_what_the_ordinary_scan_stores(tmp_path):
    share = make_share(tmp_path / "share")
    bulk, plain = scanned(tmp_path, "bulk", share, True), scanned(tmp_path, "plain", share, False)
    try:
        assert snapshot(bulk) == snapshot(plain)
        assert missing_query_indexes(bulk.engine) == []  # put back when the scan ended
        assert answers(bulk) == answers(plain)
        assert len(answers(bulk)["by_tag"]) == 2 * 7 + 1 + 2  # Finance's notes, the zip and its members
    finally:
        bulk.close()
        plain.close()


def test_bulk_path_really_drops_the_indexes_and_a_reader_meanwhile_gets_right_answers(tmp_path):
    share = make_share(tmp_path / "share")
    settings = load_settings(tmp_path / "data")
    lib = Library.open(settings)
    seen: list[tuple] = []

    def progress(p) -> None:  # after each folder: the app's window opening the index mid-scan
        if seen or not missing_query_indexes(lib.engine):
            return
        reader = Library.open(settings)  # must not rebuild them under the running scan
        try:
            with reader.session() as s:
                rows = s.execute(select(File.path, File.format).where(File.parent_id.is_(None))).all()
                seen.append((missing_query_indexes(reader.engine), len(rows),
                             sorted(p for p, fmt in rows if fmt == "txt"),
                             sorted(r.path for r in find_files(s, FileFilter(formats=("txt",)))),
                             file_page(s, FileFilter(), limit=5).total))
        finally:
            reader.close()

    try:
        Scanner(lib, batch_size=8).scan_one(str(share), progress=progress)
        assert seen, "the first scan of an empty index should have dropped the query indexes"
        missing, committed, txt_rows, txt_found, total = seen[0]
        assert sorted(missing) == sorted(str(ix.name) for ix in query_indexes("sqlite"))
        assert committed >= 8 and txt_found == txt_rows and total >= committed
        assert missing_query_indexes(lib.engine) == []
    finally:
        lib.close()


_KILLED_SCAN = textwrap.dedent("""
    import os, signal, sys
    from spar_desktop.core.config import load_settings
    from spar_desktop.core.library import scanner
    from spar_desktop.core.library.database import Library

    def killed(engine):  # the process dies where the scan would re-create the indexes
        os.kill(os.getpid(), signal.SIGKILL)

    scanner.ensure_query_indexes = killed
    lib = Library.open(load_settings(sys.argv[1]))
    scanner.Scanner(lib, batch_size=8).scan_one(sys.argv[2])
""")


def test_a_scan_killed_before_rebuilding_leaves_an_index_the_next_open_repairs(tmp_path):
    share = make_share(tmp_path / "share")
    data = tmp_path / "killed"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(__file__).resolve().parents[3]), *sys.path]))
    done = subprocess.run([sys.executable, "-c", _KILLED_SCAN, str(data), str(share)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == -signal.SIGKILL, done.stderr
    settings = load_settings(data)
    from spar_desktop.core.library.database import make_engine
    engine = make_engine(settings.resolved_database_url)
    try:
        assert sorted(missing_query_indexes(engine)) == sorted(str(ix.name) for ix in query_indexes("sqlite"))
    finally:
        engine.dispose()
    reopened = Library.open(settings)
    reference = scanned(tmp_path, "reference", share, False)
    try:
        assert missing_query_indexes(reopened.engine) == []
        # Every batch was committed before the kill: the same rows, and the same answers.
        assert snapshot(reopened) == snapshot(reference)
        assert answers(reopened) == answers(reference)
    finally:
        reopened.close()
        reference.close()


def test_a_rescan_or_a_scan_into_a_full_index_keeps_the_indexes(tmp_path, monkeypatch):
    share = make_share(tmp_path / "share")
    lib = scanned(tmp_path, "data", share, True)
    dropped: list[int] = []
    from spar_desktop.core.library import scan_write
    monkeypatch.setattr(scan_write, "drop_query_indexes", lambda engine: dropped.append(1))
    try:
        (share / "HR" / "2020" / "new.txt").write_text("a new file", encoding="utf-8")
        assert Scanner(lib, batch_size=1).scan_one(str(share)).new == 1
        other = make_share(tmp_path / "other")
        monkeypatch.setattr("spar_desktop.core.library.scanner.BULK_MAX_EXISTING", 10)
        assert Scanner(lib, batch_size=8).scan_one(str(other)).new > 40
        assert dropped == []
    finally:
        lib.close()


def test_ids_of_appended_rows_come_from_the_rowid_rule_only_when_it_holds(tmp_path):
    """The scan takes a batch's new ids as top + 1 ... top + n only when the table says nothing else
    is there; a row of another writer above ``top`` sends it back to reading the ids by key."""
    lib = Library.open(load_settings(tmp_path / "data"))
    try:
        with lib.engine.begin() as conn:
            top = conn.execute(select(func.max(Tag.id))).scalar() or 0
            rows = [{"key": f"k{i}", "value": f"v{i}", "source": "user", "created_at": utcnow()} for i in range(5)]
            insert_rows(conn, Tag.__table__, rows)
            ids = ids_appended(conn, Tag.id, top, len(rows))
            assert ids == list(range(top + 1, top + 6))
            assert dict(conn.execute(select(Tag.key, Tag.id).where(Tag.id > top)).all()) == dict(
                zip([r["key"] for r in rows], ids))
            top = max(ids)
            conn.execute(insert(Tag.__table__).values(id=top + 10, key="other", value="other", source="user",
                                                      created_at=utcnow()))
            insert_rows(conn, Tag.__table__, [dict(rows[0], key="late")])
            assert ids_appended(conn, Tag.id, top, 1) is None
    finally:
        lib.close()

"""The fast paths of the scan (issue 12) describe files exactly as the slow paths did: one read
serves sniff and hash, bulk inserts store what the ORM stores, a FIFO never blocks a scan."""

from __future__ import annotations

import hashlib
import os
import sqlite3
from datetime import datetime

import pytest
from sqlalchemy import insert, select

from spar_desktop.core.library.bulk import insert_rows
from spar_desktop.core.library.models import File, FileStatus, FileTag, Tag, utcnow
from spar_desktop.core.library.probe import EXTENSION_FORMATS, READ_ONCE, format_from_name, probe_file
from spar_desktop.core.library.scanner import Scanner

from .test_scanner import all_files


def b2(data: bytes) -> str:
    return "b2:" + hashlib.blake2b(data, digest_size=20).hexdigest()


@pytest.mark.parametrize("size", [1, READ_ONCE - 1, READ_ONCE, READ_ONCE + 1, 3 * READ_ONCE + 17, 2 * 1024 * 1024 + 5])
def test_content_hash_is_the_whole_file_whatever_its_size(tmp_path, size):
    data = (b"line of text %d\n" * (size // 10 + 1))[:size]
    path = tmp_path / "f.txt"
    path.write_bytes(data)
    result = probe_file(str(path), "f.txt")
    assert (result.size, result.content_hash, result.format, result.status) == (size, b2(data), "txt", FileStatus.OK)


def test_a_difference_after_the_first_read_changes_the_hash(tmp_path):
    a, b = tmp_path / "a.md", tmp_path / "b.md"
    body = bytearray(b"x" * (READ_ONCE * 2))
    a.write_bytes(bytes(body))
    body[READ_ONCE + 10] = ord("y")
    b.write_bytes(bytes(body))
    assert probe_file(str(a), "a.md").content_hash != probe_file(str(b), "b.md").content_hash


def test_format_from_name_reads_extensions_as_splitext_does():
    names = ["a.pdf", ".pdf", "..pdf", "x.PDF", "/a/b.c/d", "/a/.pdf", "/a/b.pdf", "noext", "a.", "a..pdf",
             ".a.pdf", "/x.y/.z.txt", "...", "a.tar.gz", "/a/..txt", "é.Md", ".", "/"]
    for name in names:
        assert format_from_name(name) == EXTENSION_FORMATS.get(os.path.splitext(name)[1].lower(), "other"), name


def test_bulk_insert_stores_exactly_what_core_stores(library):
    row = {"path": "/a", "raw_path": b"caf\xe9", "folder_id": None, "rel_path": "a", "name": "a", "size": 3,
           "mtime_ns": 5, "content_hash": "b2:x", "format": "txt", "title": "T", "author": None,
           "created_at": datetime(2020, 1, 2, 3, 4, 5, 6), "modified_at": datetime(2021, 1, 1), "page_count": None,
           "status": "ok", "error": None, "extra": None, "first_seen_at": utcnow()}
    with library.engine.begin() as conn:
        conn.execute(insert(File.__table__), [row, dict(row, path="/b", extra={"warning": "w"})])
        insert_rows(conn, File.__table__, [dict(row, path="/c"), dict(row, path="/d", extra={"warning": "w"})])
        conn.execute(insert(Tag.__table__), [{"key": "k", "value": "k", "source": "path"}])
        tag_id = conn.execute(select(Tag.id)).scalar()
        ids = dict(conn.execute(select(File.path, File.id)).all())
        conn.execute(insert(FileTag.__table__), [{"file_id": ids["/a"], "tag_id": tag_id, "source": "path",
                                                  "score": 1.0, "confirmed": True}])
        insert_rows(conn, FileTag.__table__, [{"file_id": ids["/c"], "tag_id": tag_id, "source": "path",
                                               "score": 1.0, "confirmed": True}])
    con = sqlite3.connect(library.engine.url.database)
    try:
        stored = {r[1]: r[2:] for r in con.execute("SELECT * FROM files")}
        links = [r[1:] for r in con.execute("SELECT id, file_id, tag_id, source, score, confirmed FROM file_tags ORDER BY id")]
    finally:
        con.close()
    assert stored["/a"] == stored["/c"] and stored["/b"] == stored["/d"]
    assert links[0][1:] == links[1][1:]
    with library.session() as s:  # and the ORM reads both back the same way
        rows = {f.path: f for f in s.scalars(select(File))}
        assert rows["/c"].created_at == row["created_at"] and rows["/c"].extra is None
        assert rows["/d"].extra == {"warning": "w"} and rows["/c"].content_version == 1


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX FIFOs")
def test_a_fifo_in_the_tree_neither_blocks_nor_is_indexed(library, scanner, share):
    (share / "doc.txt").write_text("text", encoding="utf-8")
    os.mkfifo(share / "pipe.txt")
    [report] = scanner.scan([str(share)])
    assert set(all_files(library)) == {"doc.txt"} and report.new == 1


def test_mixed_folder_rescan_probes_only_what_changed(library, share):
    for i in range(30):
        (share / f"f{i:02d}.txt").write_text(f"file {i}", encoding="utf-8")
    scanner = Scanner(library, batch_size=7)
    scanner.scan([str(share)])
    before = all_files(library)
    (share / "f03.txt").write_text("file 3, edited", encoding="utf-8")
    (share / "f10.txt").unlink()
    (share / "new.txt").write_text("new", encoding="utf-8")
    [again] = scanner.scan([str(share)])
    assert (again.new, again.changed, again.unchanged, again.missing) == (1, 1, 28, 1)
    after = all_files(library)
    assert after["f03.txt"].content_hash == b2(b"file 3, edited") != before["f03.txt"].content_hash
    assert after["f10.txt"].status == FileStatus.MISSING and after["f04.txt"].id == before["f04.txt"].id
    assert after["new.txt"].content_hash == b2(b"new")
    with library.session() as s:  # folder/date links: exactly one of each per file, none duplicated
        pairs = s.execute(select(FileTag.file_id, FileTag.source)).all()
    assert len(pairs) == len(set(pairs)) == len(after)  # files at the root: a date tag each, no folder tag

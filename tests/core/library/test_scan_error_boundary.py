"""One file never stops a scan, nor the rescans after it: hostile files made for real in tmp_path
(a PDF whose page tree claims 99,999,999 pages, mtimes in 2400 and before 1970, names that differ
only in an undecodable byte, FIFOs and sockets), each a status or a problem line of its own."""

from __future__ import annotations

import logging
import os
import socket
from datetime import datetime
from pathlib import Path

import pytest
from sqlalchemy import select

from spar_desktop.core.documents.errors import ExtractionError
from spar_desktop.core.documents.extract_pdf import extract_pdf
from spar_desktop.core.library import scan_report, scan_walk
from spar_desktop.core.library import scanner as scanner_mod
from spar_desktop.core.library.models import File, FileStatus, ScanIssue
from spar_desktop.core.library.paths import os_path

from .test_scanner import all_files

# 2400-01-01 00:00 UTC in nanoseconds: past 2**63, what SQLite and PostgreSQL store.
YEAR_2400_NS = 13_569_465_600 * 10**9
YEAR_1960_NS = -315_619_200 * 10**9


def tiny_pdf(count: int, text: bytes = b"hello pages") -> bytes:
    """A one-page PDF, written by hand with a correct xref table, whose page tree says /Count ``count``."""
    stream = b"BT /F1 12 Tf 72 720 Td (" + text + b") Tj ET"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count %d >>" % count,
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
        b" /Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % off for off in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def problems_by_name(report) -> dict[str, str]:
    return {os.path.basename(p): m for p, m in report.problems}


def assert_clean_rescan(scanner, share: Path, rows: int) -> None:
    """A rescan of an unchanged folder completes and finds every row unchanged."""
    [again] = scanner.scan([str(share)])
    assert not again.cancelled
    assert (again.new, again.changed, again.unchanged, again.missing) == (0, 0, rows, 0)


def test_pdf_claiming_99999999_pages_is_that_files_error(library, scanner, share):
    (share / "bomb.pdf").write_bytes(tiny_pdf(99_999_999))
    (share / "good.pdf").write_bytes(tiny_pdf(1))
    (share / "notes.txt").write_text("still indexed", encoding="utf-8")

    [report] = scanner.scan([str(share)])

    assert not report.cancelled and report.new == 3
    files = all_files(library)
    assert files["good.pdf"].status == FileStatus.OK and files["good.pdf"].page_count == 1
    assert files["notes.txt"].status == FileStatus.OK
    bomb = files["bomb.pdf"]
    assert bomb.status == FileStatus.ERROR
    assert bomb.error == "corrupt PDF: its page list is damaged (it claims an impossible number of pages)"
    assert "code=" not in problems_by_name(report)["bomb.pdf"]  # no MuPDF jargon
    assert_clean_rescan(scanner, share, 3)


def test_pdf_claiming_99999999_pages_gives_an_extraction_error(tmp_path):
    (tmp_path / "bomb.pdf").write_bytes(tiny_pdf(99_999_999))
    (tmp_path / "good.pdf").write_bytes(tiny_pdf(1))
    with pytest.raises(ExtractionError, match="page list is damaged"):
        extract_pdf(tmp_path / "bomb.pdf", 10_000)
    [page] = extract_pdf(tmp_path / "good.pdf", 10_000).pages
    assert page.text == "hello pages"


def _set_mtime(path: Path, ns: int) -> None:
    os.utime(path, ns=(ns, ns))
    if os.stat(path).st_mtime_ns != ns:
        pytest.skip(f"this file system cannot store the mtime {ns}")


def test_files_dated_2400_and_before_1970(library, scanner, share):
    future, old, fine = share / "future.txt", share / "old.txt", share / "fine.txt"
    for p in (future, old, fine):
        p.write_text(p.stem, encoding="utf-8")
    _set_mtime(future, YEAR_2400_NS)
    _set_mtime(old, YEAR_1960_NS)

    [report] = scanner.scan([str(share)])

    assert not report.cancelled and report.new == 3 and report.problems == []
    files = all_files(library)
    assert all(f.status == FileStatus.OK for f in files.values())
    assert files["future.txt"].mtime_ns == 2**63 - 1  # clamped to 64 bits, not refused
    assert files["future.txt"].modified_at == datetime.fromtimestamp(YEAR_2400_NS // 10**9)  # the real date
    assert files["old.txt"].mtime_ns == YEAR_1960_NS
    assert_clean_rescan(scanner, share, 3)  # the clamped mtime still reads as unchanged

    _set_mtime(future, YEAR_2400_NS + 10**9)  # an edit stays visible once the clock is sane again
    future.write_text("edited", encoding="utf-8")
    [after_edit] = scanner.scan([str(share)])
    assert (after_edit.changed, after_edit.unchanged) == (1, 2)


def _touch(folder: bytes, name: bytes, content: bytes) -> None:
    fd = os.open(os.path.join(folder, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        os.write(fd, content)
    finally:
        os.close(fd)


def test_names_that_differ_only_in_an_undecodable_byte(library, scanner, share):
    raw = os.fsencode(str(share))
    _touch(raw, b"r\xe9sum\xe9.txt", b"one")  # two latin-1 names, one byte apart: two rows
    _touch(raw, b"r\xe8sum\xe9.txt", b"two")
    _touch(raw, b"a\\xff.txt", b"literal")  # the exact text 'a\xff.txt'...
    _touch(raw, b"a\xff.txt", b"byte")  # ...and the name it would be shown as
    _touch(raw, b"\\xfe\xff.txt", b"first")  # two escaped names shown alike
    _touch(raw, b"\xfe\\xff.txt", b"second")
    os.mkdir(os.path.join(raw, b"d\\xff"))
    os.mkdir(os.path.join(raw, b"d\xff"))
    _touch(os.path.join(raw, b"d\\xff"), b"in.txt", b"literal folder")
    _touch(os.path.join(raw, b"d\xff"), b"in.txt", b"byte folder")

    [report] = scanner.scan([str(share)])

    assert not report.cancelled
    files = all_files(library)
    assert sorted(files) == sorted(["r\\xe9sum\\xe9.txt", "r\\xe8sum\\xe9.txt", "a\\xff.txt", "\\xfe\\xff.txt",
                                    "d\\xff/in.txt"])
    for row in files.values():  # every row opens the file it describes
        with open(os_path(row.path, row.raw_path), "rb") as fh:
            content = fh.read()
        assert row.status == FileStatus.OK and row.size == len(content)
    assert files["a\\xff.txt"].raw_path is None  # the exact name keeps its path
    assert files["d\\xff/in.txt"].raw_path is None
    assert files["\\xfe\\xff.txt"].raw_path == os.path.join(raw, b"\\xfe\xff.txt")  # first in name order
    clashes = [(p, m) for p, m in report.problems if "another" in m]
    assert len(clashes) == 3
    assert all("shows under this same name" in m and "rename one" in m for _, m in clashes)
    assert sum("folder" in m for _, m in clashes) == 1
    with library.session() as s:  # kept with the folder's scan issues, shown until renamed
        assert len([i for i in s.scalars(select(ScanIssue)) if "same name" in i.message]) == 3

    [again] = scanner.scan([str(share)])
    assert (again.new, again.changed, again.unchanged, again.missing) == (0, 0, 5, 0)
    assert len([m for _, m in again.problems if "same name" in m]) == 3


def test_a_row_the_database_refuses_is_a_problem_line_not_a_failed_scan(library, scanner, share, monkeypatch):
    """Behind the name check: were a clash to reach the database, the batch is written file by file."""
    monkeypatch.setattr(scan_walk.TreeWalk, "_drop_name_clashes", lambda self, regular, links, stack, pushed:
                        (regular, links))
    raw = os.fsencode(str(share))
    _touch(raw, b"a\\xff.txt", b"literal")
    _touch(raw, b"a\xff.txt", b"byte")
    for i in range(5):
        (share / f"n{i}.txt").write_text(f"note {i}", encoding="utf-8")

    [report] = scanner.scan([str(share)])

    assert not report.cancelled and report.new == 6
    files = all_files(library)
    assert len(files) == 6 and all(f.status == FileStatus.OK for f in files.values())
    assert [m for _, m in report.problems] == [scan_report.UNEXPECTED_RECORD]
    [again] = scanner.scan([str(share)])
    assert not again.cancelled and (again.new, again.changed) == (0, 0)


def test_an_unexpected_exception_becomes_that_files_error(library, scanner, share, monkeypatch, caplog):
    for name in ("a.txt", "deep.json", "z.txt"):
        (share / name).write_text("{}", encoding="utf-8")
    real_probe = scanner_mod.probe_file
    probed: list[str] = []

    def probe(path, name):
        probed.append(name)
        if name == "deep.json":
            raise RecursionError("maximum recursion depth exceeded")  # a parser's surprise
        return real_probe(path, name)

    monkeypatch.setattr(scanner_mod, "probe_file", probe)
    with caplog.at_level(logging.WARNING, logger="spar_desktop.core.library.scanner"):
        [report] = scanner.scan([str(share)])

    assert not report.cancelled and report.new == 3
    files = all_files(library)
    assert files["a.txt"].status == FileStatus.OK and files["z.txt"].status == FileStatus.OK
    deep = files["deep.json"]
    assert (deep.status, deep.error) == (FileStatus.ERROR, scan_report.UNEXPECTED_READ)
    assert deep.size == 2 and deep.mtime_ns == os.stat(share / "deep.json").st_mtime_ns
    assert problems_by_name(report)["deep.json"] == scan_report.UNEXPECTED_READ
    assert any("deep.json" in r.getMessage() and r.exc_info for r in caplog.records)  # the details, logged
    probed.clear()
    assert_clean_rescan(scanner, share, 3)
    assert probed == []  # nothing re-read: its status stands until the file changes


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX special files")
def test_special_files_are_skipped_with_a_message(library, scanner, share):
    (share / "doc.txt").write_text("a document", encoding="utf-8")
    (share / "was-a-file.txt").write_text("soon a pipe", encoding="utf-8")
    os.mkfifo(share / "pipe.txt")  # opened without O_NONBLOCK, this would hang the scan
    os.symlink(share / "pipe.txt", share / "link-to-pipe.txt")
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(share / "s.sock"))
    except OSError:  # the socket path is too long for AF_UNIX here: the FIFO still counts
        pass
    finally:
        sock.close()
    has_socket = os.path.exists(share / "s.sock")

    [report] = scanner.scan([str(share)])

    msgs = problems_by_name(report)
    assert msgs["pipe.txt"] == "not a regular file (a named pipe): skipped"
    assert msgs["link-to-pipe.txt"] == "symbolic link to something that is not a regular file (a named pipe): skipped"
    if has_socket:
        assert msgs["s.sock"] == "not a regular file (a socket): skipped"
    assert set(all_files(library)) == {"doc.txt", "was-a-file.txt"}
    with library.session() as s:
        assert {os.path.basename(i.path) for i in s.scalars(select(ScanIssue))} >= {"pipe.txt", "link-to-pipe.txt"}

    # A file that became a FIFO between two scans: said, and its row marked missing.
    os.unlink(share / "was-a-file.txt")
    os.mkfifo(share / "was-a-file.txt")
    [again] = scanner.scan([str(share)])
    assert problems_by_name(again)["was-a-file.txt"] == "not a regular file (a named pipe): skipped"
    assert again.missing == 1
    with library.session() as s:
        row = s.scalars(select(File).where(File.name == "was-a-file.txt")).one()
        assert row.status == FileStatus.MISSING

    [direct] = scanner.scan([str(share / "pipe.txt")])  # named on its own
    assert direct.problems == [(str(share / "pipe.txt"), "not a folder or a regular file (a named pipe)")]

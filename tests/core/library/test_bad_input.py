"""Bad input never stops a scan: each problem file gets a status + message, user files untouched."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pymupdf
import pytest
from sqlalchemy import select

from spar_desktop.core.library import scanner as scanner_mod
from spar_desktop.core.library.models import File, FileStatus, ScanIssue
from spar_desktop.core.library.paths import os_path

from .test_scanner import all_files, make_pdf, snapshot


def problems_by_name(report) -> dict[str, str]:
    return {os.path.basename(p): m for p, m in report.problems}


def test_awkward_files_get_clear_statuses_and_the_scan_goes_on(library, scanner, share):
    (share / "empty.txt").write_bytes(b"")
    (share / "binary.txt").write_bytes(bytes(range(256)) * 20)
    make_pdf(share / "good.pdf")
    good = (share / "good.pdf").read_bytes()
    (share / "corrupt.pdf").write_bytes(good[: len(good) // 3])
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "secret")
    doc.save(share / "locked.pdf", encryption=pymupdf.PDF_ENCRYPT_AES_256, owner_pw="o", user_pw="u")
    (share / "fake.pdf").write_text("just text", encoding="utf-8")
    (share / "junk.docx").write_bytes(b"PK\x03\x04" + os.urandom(300))
    (share / "ok.txt").write_text("fine", encoding="utf-8")
    os.symlink(share / "nowhere.txt", share / "broken-link.txt")
    os.symlink(share / "loop-b", share / "loop-a")
    os.symlink(share / "loop-a", share / "loop-b")
    (share / "sub").mkdir()
    os.symlink(share / "sub", share / "link-to-sub")
    before = snapshot(share)
    listing = sorted(os.listdir(share))

    [report] = scanner.scan([str(share)])

    files = all_files(library)
    assert files["ok.txt"].status == FileStatus.OK and files["good.pdf"].status == FileStatus.OK
    assert (files["empty.txt"].status, files["empty.txt"].error) == (FileStatus.EMPTY, "empty file (0 bytes)")
    assert files["binary.txt"].status == FileStatus.UNSUPPORTED
    assert "binary" in files["binary.txt"].error
    assert files["corrupt.pdf"].status == FileStatus.ERROR and "corrupt PDF" in files["corrupt.pdf"].error
    assert files["locked.pdf"].status == FileStatus.ENCRYPTED and "password" in files["locked.pdf"].error
    assert files["fake.pdf"].status == FileStatus.ERROR and "PDF header" in files["fake.pdf"].error
    assert files["junk.docx"].status == FileStatus.ERROR and "DOCX" in files["junk.docx"].error
    assert files["broken-link.txt"].status == FileStatus.ERROR and "broken symbolic link" in files["broken-link.txt"].error
    assert "loop" in files["loop-a"].error and "loop" in files["loop-b"].error
    msgs = problems_by_name(report)
    assert set(msgs) >= {"empty.txt", "binary.txt", "corrupt.pdf", "locked.pdf", "fake.pdf", "junk.docx",
                         "broken-link.txt", "loop-a", "loop-b", "link-to-sub"}
    assert "not followed" in msgs["link-to-sub"]
    assert snapshot(share) == before  # nothing the user had is changed
    assert sorted(os.listdir(share)) == listing  # and nothing was added to it


def test_non_utf8_names_are_kept_exactly(library, scanner, share):
    raw_dir = os.fsencode(str(share))
    name = b"caf\xe9 r\xe9sum\xe9.txt"  # latin-1 bytes: not valid UTF-8
    with open(os.path.join(raw_dir, name), "wb") as fh:
        fh.write("contenu d\u00e9j\u00e0 vu".encode("cp1252"))
    [report] = scanner.scan([str(share)])
    assert report.new == 1 and report.problems == []
    [row] = all_files(library).values()
    assert "\\xe9" in row.path and row.raw_path == os.path.join(raw_dir, name)
    assert os.path.exists(os_path(row.path, row.raw_path))
    [again] = scanner.scan([str(share)])
    assert (again.new, again.unchanged) == (0, 1)


def test_very_long_paths(library, scanner, share):
    # 14 levels of 250-char names: ~3.5k chars, near PATH_MAX, still indexable.
    deep = share
    for i in range(14):
        deep = deep / (f"{i:02d}" + "x" * 248)
    os.makedirs(deep)
    (deep / ("y" * 240 + ".txt")).write_text("deep", encoding="utf-8")
    # One more level goes past PATH_MAX (4096): built relative to an fd, reported, scan goes on.
    fd = os.open(deep, os.O_RDONLY)
    try:
        os.mkdir("z" * 250, dir_fd=fd)
        os.mkdir(os.path.join("z" * 250, "w" * 250), dir_fd=fd)
        os.mkdir(os.path.join("z" * 250, "w" * 250, "v" * 250), dir_fd=fd)
    finally:
        os.close(fd)
    (share / "short.txt").write_text("s", encoding="utf-8")
    [report] = scanner.scan([str(share)])
    files = all_files(library)
    assert files["short.txt"].status == FileStatus.OK
    assert any(len(p) > 3400 and f.status == FileStatus.OK for p, f in ((f.path, f) for f in files.values()))
    assert any("too long" in m for _, m in report.problems)


def test_two_gigabyte_sparse_file_is_cheap(library, scanner, share):
    big = share / "huge.log"
    with open(big, "wb") as fh:
        fh.truncate(2 * 1024**3)
    [report] = scanner.scan([str(share)])
    row = all_files(library)["huge.log"]
    assert row.size == 2 * 1024**3
    assert row.content_hash.startswith("b2s:")  # sampled hash, not 2 GB of reading
    assert row.status == FileStatus.UNSUPPORTED and "binary" in row.error  # all NUL bytes


def test_file_vanishing_or_replaced_between_listing_and_reading(library, scanner, share, monkeypatch):
    (share / "gone.txt").write_text("about to vanish", encoding="utf-8")
    (share / "swapped.txt").write_text("short", encoding="utf-8")
    (share / "stays.txt").write_text("stays", encoding="utf-8")
    real_probe = scanner_mod.probe_file

    def racing_probe(path, name):
        if name == "gone.txt":
            os.unlink(path)  # another program deletes it after the listing
        if name == "swapped.txt":
            Path(path).write_text("replaced by a much longer text", encoding="utf-8")
        return real_probe(path, name)

    monkeypatch.setattr(scanner_mod, "probe_file", racing_probe)
    [report] = scanner.scan([str(share)])
    files = all_files(library)
    assert "gone.txt" not in files and ("vanished" in problems_by_name(report)["gone.txt"])
    assert files["swapped.txt"].size == len("replaced by a much longer text")  # consistent with what was read
    assert files["stays.txt"].status == FileStatus.OK


@pytest.mark.skipif(not hasattr(os, "fork"), reason="POSIX permissions")
def test_unreadable_files_and_folders():
    """Scans as an unprivileged user in a forked child (root reads everything), so the
    permissions are real; the parent then reads what the child recorded."""
    import json

    base = Path(tempfile.mkdtemp(prefix="spar-perm-"))
    share, data = base / "share", base / "data"
    (share / "locked").mkdir(parents=True)
    (share / "locked" / "inside.txt").write_text("x", encoding="utf-8")
    (share / "secret.txt").write_text("x", encoding="utf-8")
    (share / "public.txt").write_text("x", encoding="utf-8")
    data.mkdir()
    os.chmod(share / "secret.txt", 0)
    os.chmod(share / "locked", 0)
    for p in (base, data):
        os.chmod(p, 0o777)
    from spar_desktop.core.config import load_settings
    from spar_desktop.core.library.database import Library
    from spar_desktop.core.library.scanner import Scanner

    Library.open(load_settings(data)).close()  # create the schema as ourselves
    for f in data.iterdir():
        os.chmod(f, 0o666)
    pid = os.fork()
    if pid == 0:  # child: drop privileges, scan, write the report, exit without pytest teardown
        code = 1
        try:
            if os.geteuid() == 0:
                os.setgid(65534)
                os.setuid(65534)
            lib = Library.open(load_settings(data))
            [report] = Scanner(lib).scan([str(share)])
            (base / "report.json").write_text(json.dumps(report.problems))
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    problems = {os.path.basename(p): m for p, m in json.loads((base / "report.json").read_text())}
    if os.access(share / "secret.txt", os.R_OK) and os.geteuid() != 0:
        pytest.skip("this user can read mode-000 files")
    assert problems["secret.txt"] == "permission denied: cannot read this file"
    assert problems["locked"].startswith("folder skipped: permission denied")
    lib = Library.open(load_settings(data))
    files = all_files(lib)
    assert files["public.txt"].status == FileStatus.OK
    assert files["secret.txt"].status == FileStatus.ERROR and "permission denied" in files["secret.txt"].error
    assert "locked/inside.txt" not in files
    with lib.session() as s:
        assert any("permission denied" in i.message for i in s.scalars(select(ScanIssue)))
    lib.close()
    os.chmod(share / "locked", 0o755)

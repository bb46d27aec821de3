"""A big first scan probes new files in a second process (probe_ahead.py): what it stores must be
what probing in line stores, file by file, and a helper that cannot start or dies must cost the
user nothing but time."""

from __future__ import annotations

import logging
import os
import sys
import zipfile
from pathlib import Path

import pytest
from sqlalchemy import select

from spar_desktop.core.config import load_settings
from spar_desktop.core.library import probe_ahead
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.models import File, FileStatus
from spar_desktop.core.library.probe import probe_file
from spar_desktop.core.library.scanner import Scanner

from .test_scanner import make_docx, make_pdf, snapshot

_COLUMNS = (File.path, File.raw_path, File.rel_path, File.name, File.size, File.mtime_ns, File.content_hash,
            File.format, File.title, File.author, File.created_at, File.page_count, File.status, File.error, File.extra)


def _mixed_share(root: Path) -> Path:
    """Every kind of outcome a probe has: text, office and PDF metadata, empty, binary named as
    text, a corrupt PDF, an encrypted-looking DOCX, an archive, a mail, an undecodable name."""
    for i in range(40):
        folder = root / f"dept-{i % 4}" / f"{2015 + i % 5}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"note-{i}.txt").write_text(f"note {i} " * (i + 1), encoding="utf-8")
    make_pdf(root / "dept-0" / "report.pdf")
    make_docx(root / "dept-1" / "minutes.docx")
    (root / "dept-1" / "locked.docx").write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 600)
    (root / "dept-2" / "empty.md").write_bytes(b"")
    (root / "dept-2" / "binary.txt").write_bytes(bytes(range(256)) * 4)
    (root / "dept-2" / "broken.pdf").write_bytes(b"not a pdf at all")
    (root / "dept-2" / "movie.mp4").write_bytes(b"\0\1\2" * 100)
    with zipfile.ZipFile(root / "dept-3" / "bundle.zip", "w") as zf:
        zf.writestr("inside.txt", "a member")
    (root / "dept-3" / "mail.eml").write_text("From: a@b.c\nSubject: Budget\n\nThe budget.\n", encoding="utf-8")
    (root / os.fsdecode(b"dept-3/caf\xe9-latin1.txt")).write_bytes(b"latin-1 name")
    return root


def _stored(data_dir: Path, share: Path, **scanner_args) -> tuple[list[tuple], object]:
    lib = Library.open(load_settings(data_dir))
    try:
        report = Scanner(lib, batch_size=7, **scanner_args).scan_one(str(share))
        with lib.session() as s:
            rows = [tuple(r) for r in s.execute(select(*_COLUMNS).order_by(File.path))]
    finally:
        lib.close()
    return rows, report


def test_files_probed_in_a_second_process_are_stored_as_probed_in_line(tmp_path):
    share = _mixed_share(tmp_path / "share")
    before = snapshot(share)
    in_line, report_a = _stored(tmp_path / "a", share, probe_ahead_after=10**9)
    ahead, report_b = _stored(tmp_path / "b", share, probe_ahead_after=1)
    assert ahead == in_line
    assert len(in_line) >= 50 and {r[12] for r in in_line} >= {FileStatus.OK, FileStatus.EMPTY, FileStatus.ERROR,
                                                                FileStatus.ENCRYPTED, FileStatus.UNSUPPORTED}
    assert sorted(report_b.problems) == sorted(report_a.problems) and report_b.new == report_a.new
    assert snapshot(share) == before  # nothing written into the user's folder


def test_a_helper_that_cannot_start_or_dies_leaves_the_files_probed_in_line(tmp_path, monkeypatch, caplog):
    share = _mixed_share(tmp_path / "share")
    expected, _ = _stored(tmp_path / "ref", share, probe_ahead_after=10**9)
    # Dies after reading a little of the first message, without answering.
    monkeypatch.setattr(probe_ahead, "helper_command",
                        lambda module: [sys.executable, "-c", "import sys; sys.stdin.buffer.read(10)"])
    with caplog.at_level(logging.WARNING, logger=probe_ahead.__name__):
        died, _ = _stored(tmp_path / "died", share, probe_ahead_after=1)
    assert died == expected
    assert "the rest is probed in line" in caplog.text
    monkeypatch.setattr(probe_ahead, "helper_command", lambda module: [str(tmp_path / "no-such-interpreter")])
    never, _ = _stored(tmp_path / "never", share, probe_ahead_after=1)
    assert never == expected


def test_a_probe_read_ahead_raises_its_own_error_for_its_own_file(tmp_path):
    """Results come back in order and an exception only for the file that raised it (the scan
    turns it into that file's status, as if it had probed the file itself)."""
    good, gone = tmp_path / "good.txt", tmp_path / "gone.txt"
    good.write_text("here", encoding="utf-8")
    folder = ("", [good, gone], [])
    ahead = probe_ahead.ProbeAhead(start_after=1)
    walk = iter([folder])
    listings = ahead.listings(walk, lambda regular: [(str(p), p.name) for p in regular])
    assert next(listings) is folder
    with pytest.raises(FileNotFoundError):
        ahead.take(str(gone))
    assert ahead.take(str(good)) == probe_file(str(good), "good.txt")
    assert ahead.take(str(good)) is None  # used once; a file not sent is probed in line
    assert list(listings) == []

"""A full disk, a read-only data dir and a locked index are said in words a user can act on, and
only those: any other error keeps its own message (and traceback for the log)."""

from __future__ import annotations

import errno
import sqlite3

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import OperationalError

from spar_desktop.core.storage_errors import storage_failure


def sqlalchemy_error(message: str) -> OperationalError:
    """SQLAlchemy's wrapper around a real sqlite3 error, as a commit on a full disk raises it."""
    engine = create_engine("sqlite://")
    with engine.connect() as conn:
        try:
            conn.execute(text(f"SELECT RAISE(ABORT, '{message}')"))
        except OperationalError as exc:
            return exc
    raise AssertionError("no error raised")


def test_disk_full_from_sqlite_through_sqlalchemy_names_the_folder_and_the_way_on(tmp_path):
    exc = sqlalchemy_error("database or disk is full")
    assert isinstance(exc.orig, sqlite3.OperationalError)
    message = storage_failure(exc, str(tmp_path))
    assert message.startswith(f"the disk holding the data folder {tmp_path} is full (")
    assert "MB free" in message and "carries on where it stopped" in message


def test_disk_full_as_an_os_error_wrapped_in_another_error():
    try:
        try:
            raise OSError(errno.ENOSPC, "No space left on device")
        except OSError as inner:
            raise RuntimeError("could not save the search index") from inner
    except RuntimeError as exc:
        assert "is full" in storage_failure(exc)


@pytest.mark.parametrize("exc, words", [
    (OSError(errno.EROFS, "Read-only file system"), "cannot be written"),
    (sqlite3.OperationalError("attempt to write a readonly database"), "cannot be written"),
    (sqlite3.OperationalError("database is locked"), "is busy"),
])
def test_read_only_and_locked(exc, words):
    assert words in storage_failure(exc, "/data")


@pytest.mark.parametrize("exc", [ValueError("bad page count"), sqlite3.OperationalError("no such table: files"),
                                 OSError(errno.ENOENT, "No such file or directory")])
def test_other_errors_are_left_alone(exc):
    assert storage_failure(exc, "/data") is None


@pytest.fixture
def tiny_disk(tmp_path):
    """A real 2 MB filesystem (tmpfs); needs root, skipped elsewhere."""
    import subprocess

    mount = tmp_path / "tiny"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], capture_output=True).returncode:
        pytest.skip("cannot mount a small tmpfs here (needs root)")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def test_the_cli_on_a_full_disk_says_so_in_one_line_and_the_index_stays_sound(tiny_disk, tmp_path, capsys):
    from spar_desktop.cli import main

    share = tmp_path / "share"
    share.mkdir()
    for i in range(1500):  # rows enough to outgrow 2 MB of index
        (share / f"note-{i:04d}-{'x' * 150}.txt").write_text(f"note {i}", encoding="utf-8")
    code = main(["--data-dir", str(tiny_disk / "data"), "index", str(share), "--quiet"])
    _, err = capsys.readouterr()
    assert code == 1
    assert err.startswith(f"spar: error: the disk holding the data folder {tiny_disk / 'data'} is full")
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    con = sqlite3.connect(tiny_disk / "data" / "library.sqlite3")
    assert con.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    con.close()

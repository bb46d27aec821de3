"""Scanning real folder trees: metadata, tags, incremental re-scans, resume, ignore patterns."""

from __future__ import annotations

import hashlib
import os
from datetime import datetime
from pathlib import Path

import pymupdf
import pytest
from sqlalchemy import func, select

from spar_desktop.core.library.models import File, FileStatus, FileTag, Folder, Tag
from spar_desktop.core.library.queries import FileFilter, find_files
from spar_desktop.core.library.scanner import Scanner
from spar_desktop.core.progress import CancelToken


def make_pdf(path: Path, pages: int = 3, title: str = "Quarterly Report", author: str = "Ada Lovelace") -> None:
    doc = pymupdf.open()
    for i in range(pages):
        doc.new_page().insert_text((72, 72), f"Page {i + 1} of the report")
    doc.set_metadata({"title": title, "author": author, "creationDate": "D:20190525120000"})
    doc.save(path)
    doc.close()


def make_docx(path: Path) -> None:
    import docx

    d = docx.Document()
    d.add_paragraph("Meeting minutes")
    d.core_properties.title = "Board minutes"
    d.core_properties.author = "Grace Hopper"
    d.core_properties.created = datetime(2021, 3, 4, 10, 0, 0)
    d.save(path)


def snapshot(root: Path) -> dict[str, tuple[str, int]]:
    """Every file's content hash and mtime: proves a scan changed nothing in the user's folder."""
    out = {}
    for dirpath, _, names in os.walk(root):
        for n in names:
            p = os.path.join(dirpath, n)
            if os.path.islink(p):
                out[p] = (os.readlink(p), 0)
                continue
            try:
                st = os.stat(p)
                with open(p, "rb") as fh:
                    out[p] = (hashlib.sha1(fh.read(1 << 20)).hexdigest(), st.st_mtime_ns)
            except OSError as exc:
                out[p] = (type(exc).__name__, 0)
    return out


def all_files(library) -> dict[str, File]:
    with library.session() as s:
        return {f.rel_path: f for f in s.scalars(select(File))}


def test_first_scan_records_metadata_formats_and_tags(library, scanner, share):
    (share / "Finance" / "2019").mkdir(parents=True)
    make_pdf(share / "Finance" / "2019" / "q2.pdf")
    make_docx(share / "Finance" / "minutes.docx")
    (share / "notes.md").write_text("# Notes\nhello", encoding="utf-8")
    (share / "data.csv").write_text("a,b\n1,2\n", encoding="utf-8")

    [report] = scanner.scan([str(share)])

    assert (report.new, report.changed, report.missing, report.problems) == (4, 0, 0, [])
    files = all_files(library)
    pdf = files["Finance/2019/q2.pdf"]
    assert (pdf.format, pdf.title, pdf.author, pdf.page_count) == ("pdf", "Quarterly Report", "Ada Lovelace", 3)
    assert pdf.created_at == datetime(2019, 5, 25, 12, 0, 0)
    assert pdf.content_hash and pdf.status == FileStatus.OK
    docx_row = files["Finance/minutes.docx"]
    assert (docx_row.format, docx_row.title, docx_row.author) == ("docx", "Board minutes", "Grace Hopper")
    assert files["notes.md"].format == "md" and files["data.csv"].format == "csv"
    with library.session() as s:
        keys = set(s.scalars(select(Tag.key)))
        pdf_tags = set(s.scalars(select(Tag.key).join(FileTag, FileTag.tag_id == Tag.id).where(FileTag.file_id == pdf.id)))
    assert {"Finance", "Finance/2019", "date:2019", "date:2019-Q2", "date:2019-05"} <= keys
    assert pdf_tags == {"Finance/2019", "date:2019-05"}
    # Selecting the parent folder tag includes files of its sub-folders (DAG expansion).
    with library.session() as s:
        fin = s.scalar(select(Tag.id).where(Tag.key == "Finance"))
        names = {r.rel_path for r in find_files(s, FileFilter(tag_groups=(frozenset({fin}),)))}
    assert names == {"Finance/2019/q2.pdf", "Finance/minutes.docx"}


def test_rescan_is_incremental_changed_missing_and_restored(library, scanner, share):
    for i in range(120):
        (share / f"f{i:03d}.txt").write_text(f"file {i}", encoding="utf-8")
    scanner.scan([str(share)])
    before = all_files(library)

    [again] = scanner.scan([str(share)])
    assert (again.new, again.changed, again.unchanged, again.missing) == (0, 0, 120, 0)

    changed = share / "f001.txt"
    changed.write_text("file 1, edited and longer", encoding="utf-8")
    (share / "f002.txt").unlink()
    [third] = scanner.scan([str(share)])
    assert (third.new, third.changed, third.missing) == (0, 1, 1)
    after = all_files(library)
    assert after["f001.txt"].content_hash != before["f001.txt"].content_hash
    assert after["f001.txt"].content_version == before["f001.txt"].content_version + 1
    assert after["f001.txt"].changed_at is not None
    assert after["f002.txt"].status == FileStatus.MISSING  # kept, not silently dropped

    (share / "f002.txt").write_text("file 2", encoding="utf-8")
    [fourth] = scanner.scan([str(share)])
    assert fourth.restored == 1
    assert all_files(library)["f002.txt"].status == FileStatus.OK


def test_cancelled_scan_resumes_without_duplicates(library, share):
    for i in range(300):
        (share / f"d{i % 7}").mkdir(exist_ok=True)
        (share / f"d{i % 7}" / f"{i}.txt").write_text(str(i), encoding="utf-8")
    cancel = CancelToken()
    seen = []

    def progress(p):
        seen.append(p.done)
        if p.done >= 100:
            cancel.cancel()

    [partial] = Scanner(library, batch_size=50).scan([str(share)], progress=progress, cancel=cancel)
    assert partial.cancelled and 0 < partial.new < 300
    with library.session() as s:
        assert s.scalar(select(Folder.last_scan_complete)) is False
    [rest] = Scanner(library, batch_size=50).scan([str(share)])
    assert rest.new + partial.new == 300 and rest.unchanged == partial.new and rest.missing == 0
    with library.session() as s:
        assert s.scalar(select(func.count(File.id))) == 300
        assert s.scalar(select(Folder.last_scan_complete)) is True


def test_ignore_patterns_default_and_user(library, scanner, share):
    (share / ".git").mkdir()
    (share / ".git" / "HEAD").write_text("ref", encoding="utf-8")
    (share / "node_modules" / "x").mkdir(parents=True)
    (share / "node_modules" / "x" / "index.js").write_text("1", encoding="utf-8")
    (share / "~$report.docx").write_bytes(b"lock")
    (share / "draft.tmp").write_text("tmp", encoding="utf-8")
    (share / "keep.txt").write_text("keep", encoding="utf-8")
    (share / "private").mkdir()
    (share / "private" / "salaries.csv").write_text("a,b", encoding="utf-8")
    scanner.scan([str(share)], ignore_patterns=["private/*"])
    assert set(all_files(library)) == {"keep.txt"}


def test_folder_given_twice_or_nested(library, scanner, share):
    (share / "a" / "b").mkdir(parents=True)
    (share / "a" / "b" / "x.txt").write_text("x", encoding="utf-8")
    (share / "top.txt").write_text("t", encoding="utf-8")
    scanner.scan([str(share / "a"), str(share / "a")])
    [outer] = scanner.scan([str(share)])
    assert outer.note and "absorbed" in outer.note
    [inner] = scanner.scan([str(share / "a" / "b")])
    assert inner.note and "inside" in inner.note
    files = all_files(library)
    assert set(files) == {"a/b/x.txt", "top.txt"}  # one row per file, paths relative to the outer root
    with library.session() as s:
        assert [f.path for f in s.scalars(select(Folder))] == [str(share.resolve())]
        keys = set(s.scalars(select(Tag.key).join(FileTag, FileTag.tag_id == Tag.id).where(FileTag.file_id == files["a/b/x.txt"].id)))
    assert "a/b" in keys


def test_a_single_file_is_indexed_alone_then_joins_its_folder(library, scanner, share):
    (share / "Finance").mkdir()
    make_pdf(share / "Finance" / "q2.pdf", pages=2)
    (share / "Finance" / "sibling.txt").write_text("not asked for", encoding="utf-8")

    [report] = scanner.scan([str(share / "Finance" / "q2.pdf")])
    assert (report.new, report.problems) == (1, [])
    assert set(all_files(library)) == {"q2.pdf"}  # its siblings were not indexed
    assert all_files(library)["q2.pdf"].page_count == 2
    [again] = scanner.rescan_all()  # a rescan of that root still reads just the file
    assert (again.new, again.unchanged, again.missing) == (0, 1, 0)

    # Adding the folder later absorbs the file's root; the file keeps its row.
    pdf_id = all_files(library)["q2.pdf"].id
    scanner.scan([str(share)])
    files = all_files(library)
    assert set(files) == {"Finance/q2.pdf", "Finance/sibling.txt"} and files["Finance/q2.pdf"].id == pdf_id
    # A file inside an indexed folder is scanned as part of it, alone.
    (share / "Finance" / "sibling.txt").write_text("edited, longer than before", encoding="utf-8")
    (share / "new.txt").write_text("new", encoding="utf-8")
    [one] = scanner.scan([str(share / "Finance" / "sibling.txt")])
    assert (one.new, one.changed, one.missing) == (0, 1, 0)
    assert "new.txt" not in all_files(library)


def test_scan_never_indexes_the_data_dir(tmp_path):
    from spar_desktop.core.config import load_settings
    from spar_desktop.core.library.database import Library

    home = tmp_path / "home"
    (home / "docs").mkdir(parents=True)
    (home / "docs" / "a.txt").write_text("a", encoding="utf-8")
    lib = Library.open(load_settings(home / ".spar"))
    Scanner(lib).scan([str(home)])
    assert {f for f in all_files(lib)} == {"docs/a.txt"}


def test_the_folder_a_list_shows_names_the_indexed_root(library, scanner, tmp_path):
    """Two indexed roots with the same sub-folders must not look alike in the file table."""
    from spar_desktop.core.library.queries import FileFilter, list_files

    for root in ("north", "south"):
        (tmp_path / root / "Finance").mkdir(parents=True)
        (tmp_path / root / "Finance" / f"{root}.txt").write_text(root, encoding="utf-8")
        (tmp_path / root / f"top-{root}.txt").write_text(root, encoding="utf-8")
        scanner.scan([str(tmp_path / root)])
    with library.session() as s:
        folders = {r.name: r.folder for r in list_files(s, FileFilter())}
    assert folders == {"north.txt": "north/Finance", "south.txt": "south/Finance",
                       "top-north.txt": "north", "top-south.txt": "south"}


def test_a_second_scan_of_the_index_waits_its_turn_and_says_so(library, scanner, share):
    """The app's scan worker and `spar index` on one data dir take turns (before, two scans of one
    new folder both inserted its files and one died on the unique path)."""
    import threading

    from spar_desktop.core.file_lock import file_lock

    (share / "a.txt").write_text("a", encoding="utf-8")
    messages: list[str] = []
    reports = []
    with file_lock(library.settings.layout.scan_lock):  # another process is scanning
        worker = threading.Thread(target=lambda: reports.extend(
            scanner.scan([str(share)], progress=lambda p: messages.append(p.message or ""))))
        worker.start()
        worker.join(timeout=1.0)
        assert worker.is_alive() and reports == []  # waiting, not scanning
        assert "waiting for another scan of this index to finish" in messages
    worker.join(timeout=60)
    assert reports and reports[0].new == 1


def test_a_filter_on_a_workspace_sized_set_of_file_ids_does_not_hit_the_sql_variable_limit(library, scanner, share):
    """The Overview narrows the file table to a workspace's files; at a large share that is tens of
    thousands of ids, past SQLite's bound-variable limit when each id is a variable."""
    from spar_desktop.core.library.queries import count_files

    for name in ("a.txt", "b.txt", "c.txt"):
        (share / name).write_text(f"text of {name}", encoding="utf-8")
    scanner.scan([str(share)])
    with library.session() as s:
        everything = {r.id for r in find_files(s, FileFilter())}
        assert len(everything) == 3
        some = sorted(everything)[:2]
        big = frozenset(some) | frozenset(range(10_000_000, 10_400_000))  # 400,002 ids, 2 of them real
        assert {r.id for r in find_files(s, FileFilter(file_ids=big))} == set(some)
        assert count_files(s, FileFilter(file_ids=big)) == 2
        assert count_files(s, FileFilter(file_ids=frozenset(some))) == 2  # small sets stay bound

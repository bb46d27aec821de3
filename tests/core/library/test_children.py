"""Archive members and mail attachments as child documents of the index: listed by the scan with
virtual paths and their own hashes, kept in step with their container, never extracted into the
user's folders, and hostile archives get a status instead of stopping the scan."""

from __future__ import annotations

import os
import zipfile
from email.message import EmailMessage
from pathlib import Path

from sqlalchemy import select

from spar_desktop.core.library.models import File, FileStatus, FileTag, Tag
from spar_desktop.core.library.queries import copies_of_file, duplicate_groups


def children(library, container: Path) -> dict[str, File]:
    prefix = f"{container}!/"
    with library.session() as s:
        rows = s.scalars(select(File).where(File.path.startswith(prefix)))
        out = {f.path[len(prefix):]: f for f in rows}
        for f in out.values():
            s.expunge(f)
        return out


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_zip_members_become_child_documents_and_follow_their_container(library, scanner, share):
    (share / "Audit").mkdir()
    archive = share / "Audit" / "papers.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("2019/findings.md", "Finding 7: unsigned permits.")
        zf.writestr("2019/old.txt", "to be removed")
        zf.writestr("inner.zip", _zip_bytes({"deep.md": "nested member"}))
    (share / "findings-copy.md").write_text("Finding 7: unsigned permits.", encoding="utf-8")
    before = snapshot(share)

    [report] = scanner.scan([str(share)])
    assert report.children == 4 and not report.problems, report.problems
    kids = children(library, archive)
    assert set(kids) == {"2019/findings.md", "2019/old.txt", "inner.zip", "inner.zip!/deep.md"}
    container_id = kids["2019/findings.md"].parent_id
    assert kids["inner.zip!/deep.md"].parent_id == kids["inner.zip"].id != container_id
    assert kids["2019/findings.md"].format == "md" and kids["2019/findings.md"].status == FileStatus.OK
    with library.session() as s:  # filed under the container's folder, not under "papers.zip!/2019"
        tags = set(s.scalars(select(Tag.key).join(FileTag).where(FileTag.file_id == kids["2019/findings.md"].id)))
        assert "Audit" in tags and not any("!/" in t for t in tags)
        loose = s.scalar(select(File.id).where(File.name == "findings-copy.md"))
        assert copies_of_file(s, loose) == (f"{archive}!/2019/findings.md",)  # same bytes: same hash
        assert [len(g.paths) for g in duplicate_groups(s)] == [2]

    [again] = scanner.scan([str(share)])  # unchanged: nothing re-listed, nothing duplicated
    assert again.children == 0 and again.new == 0
    assert set(children(library, archive)) == set(kids)

    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:  # a member changes, one goes
        zf.writestr("2019/findings.md", "Finding 7 (revised): permits signed.")
        zf.writestr("inner.zip", _zip_bytes({"deep.md": "nested member"}))
    os.utime(archive, (1_700_000_000, 1_700_000_000))
    scanner.scan([str(share)])
    after = children(library, archive)
    assert set(after) == {"2019/findings.md", "inner.zip", "inner.zip!/deep.md"}
    assert after["2019/findings.md"].id == kids["2019/findings.md"].id  # the row (and its tags) kept
    assert after["2019/findings.md"].content_hash != kids["2019/findings.md"].content_hash
    assert after["2019/findings.md"].content_version == kids["2019/findings.md"].content_version + 1

    archive.unlink()
    scanner.scan([str(share)])
    assert {f.status for f in children(library, archive).values()} == {FileStatus.MISSING}
    assert snapshot(share) == {k: v for k, v in before.items() if not k.endswith("papers.zip")}


def test_hostile_archives_get_a_status_and_the_scan_goes_on(library, scanner, share):
    with zipfile.ZipFile(share / "unsafe.zip", "w") as zf:
        zf.writestr("../escape.txt", "outside")
        zf.writestr("/etc/passwd-copy", "absolute")
        zf.writestr("fine.txt", "ordinary member")
    (share / "broken.zip").write_bytes(b"PK\x03\x04" + os.urandom(300))
    (share / "ok.md").write_text("still indexed", encoding="utf-8")
    before = snapshot(share)

    [report] = scanner.scan([str(share)])
    kids = children(library, share / "unsafe.zip")
    assert kids["fine.txt"].status == FileStatus.OK
    unsafe = [f for name, f in kids.items() if name != "fine.txt"]
    assert len(unsafe) == 2 and all(f.status != FileStatus.OK and "unsafe" in f.error for f in unsafe)
    messages = " ".join(m for _, m in report.problems)
    assert "unsafe" in messages
    with library.session() as s:
        broken = s.scalar(select(File).where(File.name == "broken.zip"))
        assert broken.status != FileStatus.OK or any("broken.zip" in p for p, _ in report.problems)
        assert s.scalar(select(File.status).where(File.name == "ok.md")) == FileStatus.OK
    assert snapshot(share) == before
    assert not (share.parent / "escape.txt").exists()


def test_mail_attachments_are_children_and_the_mail_gets_its_date(library, scanner, share):
    mail = EmailMessage()
    mail["From"] = "Grace Whitfield <g.whitfield@example.com>"
    mail["To"] = "Owen Pritchard <o.pritchard@example.com>"
    mail["Date"] = "Wed, 05 Jun 2019 14:00:00 +0100"
    mail["Subject"] = "Blade photos"
    mail.set_content("Photos and the log attached.")
    mail.add_attachment(b"yaw misalignment logged on BR-T04", maintype="text", subtype="plain", filename="log.txt")
    mail.add_attachment(b"second copy", maintype="text", subtype="plain", filename="log.txt")
    path = share / "blade.eml"
    path.write_bytes(bytes(mail))

    scanner.scan([str(share)])
    with library.session() as s:
        row = s.scalar(select(File).where(File.name == "blade.eml"))
        assert (row.format, row.title) == ("eml", "Blade photos")
        assert row.author.startswith("Grace Whitfield") and row.created_at.year == 2019 and row.created_at.month == 6
        date_tags = set(s.scalars(select(Tag.key).join(FileTag).where(FileTag.file_id == row.id)))
        assert any(t.startswith("date:2019-06") for t in date_tags)
    kids = children(library, path)
    assert len(kids) == 2 and all(f.status == FileStatus.OK and f.format == "txt" for f in kids.values())
    assert len({f.path for f in kids.values()}) == 2  # two attachments named alike stay two documents


def _zip_bytes(members: dict[str, str]) -> bytes:
    import io

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, text in members.items():
            zf.writestr(name, text)
    return buf.getvalue()

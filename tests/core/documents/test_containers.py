"""Archive members and mail attachments as child documents: names, hashes, limits, and the
hostile archives a legacy share holds (corrupt, zip bombs, unsafe names, encrypted members)."""

from __future__ import annotations

import hashlib
import io
import os
import tempfile
import tracemalloc
import warnings
import zipfile
from datetime import datetime
from email.message import EmailMessage
from email.policy import default as default_policy
from pathlib import Path

import pytest

from spar_desktop.core.documents.budget import ExtractionBudget
from spar_desktop.core.documents.containers import copy_member, extract_zip_listing, list_members, walk_children
from spar_desktop.core.documents.errors import ExtractionError
from spar_desktop.core.documents.extract import extract
from spar_desktop.core.documents.members import Member
from spar_desktop.core.library.probe import probe_file

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "mail"
BUDGET = ExtractionBudget()


@pytest.fixture(autouse=True)
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """All temporary files of the code under test go here, so tests can see what was left."""
    tmp = tmp_path / "systemp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    return tmp


def make_zip(path: Path, files: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> Path:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # duplicate names are on purpose in some tests
        with zipfile.ZipFile(path, "w", method) as zf:
            for name, data in files.items() if isinstance(files, dict) else files:
                zf.writestr(zipfile.ZipInfo(name, (2020, 5, 17, 12, 30, 0)) if not name.endswith("/") else name,
                            data, compress_type=method)
    return path


def make_mail(subject: str, attachments: tuple[tuple[str, bytes], ...] = (),
              messages: tuple[EmailMessage, ...] = (), date: str = "Tue, 5 Mar 2019 11:00:00 +0000") -> EmailMessage:
    msg = EmailMessage()
    msg["From"] = "Alice <alice@example.com>"
    msg["To"] = "bob@example.com"
    msg["Subject"] = subject
    msg["Date"] = date
    msg.set_content(f"Body of {subject}")
    for name, data in attachments:
        maintype, subtype = ("image", "png") if name.endswith(".png") else ("application", "octet-stream")
        msg.add_attachment(data, maintype, subtype, filename=name)
    for inner in messages:
        msg.add_attachment(inner)
    return msg


def write_mail(path: Path, msg: EmailMessage) -> Path:
    path.write_bytes(msg.as_bytes(policy=default_policy))
    return path


def loose_hash(tmp_path: Path, data: bytes) -> str:
    loose = tmp_path / "loose.bin"
    loose.write_bytes(data)
    return probe_file(str(loose), "loose.bin").content_hash


def by_name(members: list[Member]) -> dict[str, Member]:
    return {m.name: m for m in members}


# -- zip ------------------------------------------------------------------------------------
def test_zip_members_are_hashed_like_loose_files(tmp_path: Path) -> None:
    big = os.urandom(3 * 1024 * 1024)  # several read blocks
    path = make_zip(tmp_path / "a.zip", {"docs/": b"", "docs/report.txt": b"quarterly report",
                                         "big.bin": big, "empty.txt": b""})
    members, notes = list_members(path, "zip", BUDGET)
    assert notes == [] and [m.name for m in members] == ["docs/report.txt", "big.bin", "empty.txt"]
    m = by_name(members)
    assert m["docs/report.txt"].content_hash == loose_hash(tmp_path, b"quarterly report")
    assert m["big.bin"].content_hash == loose_hash(tmp_path, big) and m["big.bin"].size == len(big)
    assert m["big.bin"].head == big[:8192]
    assert m["docs/report.txt"].mtime == datetime(2020, 5, 17, 12, 30)
    assert (m["empty.txt"].status, m["empty.txt"].content_hash) == ("empty", loose_hash(tmp_path, b""))
    out = io.BytesIO()
    assert copy_member(path, "zip", "big.bin", out, BUDGET) == len(big) and out.getvalue() == big


def test_member_is_read_through_its_virtual_path(tmp_path: Path, private_tmp: Path) -> None:
    path = make_zip(tmp_path / "Reports.zip", {"2019/audit.txt": b"The audit found nothing."})
    doc = extract(f"{path}!/2019/audit.txt")
    assert doc.text == "The audit found nothing."
    assert list(private_tmp.iterdir()) == []  # the temporary copy is gone


def test_zip_listing_is_searchable_by_member_name(tmp_path: Path) -> None:
    path = make_zip(tmp_path / "Reports.zip", {"2019/audit.pdf": b"%PDF-1.4", "notes.txt": b"x"})
    doc = extract(path)
    assert doc.format == "zip" and doc.text.splitlines() == ["Archive Reports.zip: 2 files", "2019/audit.pdf",
                                                             "notes.txt"]
    small = extract_zip_listing(path, ExtractionBudget(max_members=1))
    assert small.text.splitlines()[1:] == ["2019/audit.pdf"] and "only the first 1" in small.warnings[0]


def test_duplicate_names_stay_unique_and_stable(tmp_path: Path) -> None:
    path = make_zip(tmp_path / "d.zip", [("a.txt", b"one"), ("a.txt", b"two")])
    first = list_members(path, "zip", BUDGET)[0]
    assert [m.name for m in first] == ["a.txt", "a (2).txt"]
    assert first == list_members(path, "zip", BUDGET)[0]
    out = io.BytesIO()
    copy_member(path, "zip", "a (2).txt", out, BUDGET)
    assert out.getvalue() == b"two"


def test_corrupt_zip(tmp_path: Path) -> None:
    path = tmp_path / "broken.zip"
    good = make_zip(tmp_path / "good.zip", {"a.txt": b"hello" * 100}).read_bytes()
    path.write_bytes(good[: len(good) // 2])  # cut in half: no central directory
    for call in (lambda: list_members(path, "zip", BUDGET), lambda: extract_zip_listing(path, BUDGET),
                 lambda: extract(path, format="zip"), lambda: list(walk_children(path, "zip", BUDGET))):
        with pytest.raises(ExtractionError, match="^corrupt zip archive: "):
            call()


def test_corrupt_member_is_reported_not_raised(tmp_path: Path) -> None:
    path = make_zip(tmp_path / "crc.zip", {"a.txt": b"hello world " * 50, "b.txt": b"fine"})
    data = bytearray(path.read_bytes())
    pos = data.find(b"a.txt") + len(b"a.txt") + 3  # inside a.txt's deflated data
    data[pos] ^= 0xFF
    path.write_bytes(bytes(data))
    m = by_name(list_members(path, "zip", BUDGET)[0])
    assert m["a.txt"].status == "error" and "corrupt archive member" in m["a.txt"].error
    assert m["b.txt"].status == "ok"


@pytest.fixture(scope="session")
def gigabyte_bomb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """1 GiB of zeros deflated to ~1 MB, built by streaming (a few seconds, once per session)."""
    path = tmp_path_factory.mktemp("bomb") / "bomb.zip"
    block = bytes(1 << 20)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        with zf.open("zeros.bin", "w", force_zip64=True) as f:
            for _ in range(1024):
                f.write(block)
        zf.writestr("readme.txt", b"harmless")
    return path


@pytest.mark.slow  # building the 1 GiB bomb takes 5-13 s on a busy 2-core machine
def test_gigabyte_zip_bomb_is_not_inflated(gigabyte_bomb: Path) -> None:
    tracemalloc.start()
    try:
        members, _ = list_members(gigabyte_bomb, "zip", BUDGET)
        with pytest.raises(ExtractionError, match="looks like a zip bomb"):
            copy_member(gigabyte_bomb, "zip", "zeros.bin", io.BytesIO(), BUDGET)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    m = by_name(members)
    assert m["zeros.bin"].status == "error" and m["zeros.bin"].content_hash is None
    assert m["zeros.bin"].error.startswith("looks like a zip bomb (") and "compressed inflates past 1.1 GB" in m["zeros.bin"].error
    assert m["readme.txt"].status == "ok"
    assert peak < 16 * 1024 * 1024


def test_small_bomb_and_size_limit_with_a_low_budget(tmp_path: Path) -> None:
    path = make_zip(tmp_path / "z.zip", {"zeros.bin": bytes(5 * 1024 * 1024), "rand.bin": os.urandom(300_000)})
    m = by_name(list_members(path, "zip", BUDGET)[0])
    assert m["zeros.bin"].status == "error" and "looks like a zip bomb" in m["zeros.bin"].error
    low = ExtractionBudget(max_inflated_bytes=100_000, max_compression_ratio=10_000)
    m = by_name(list_members(path, "zip", low)[0])
    assert m["rand.bin"].status == "error" and m["rand.bin"].error.startswith("too large: ")
    assert "Settings" in m["rand.bin"].error
    with pytest.raises(ExtractionError, match="too large"):
        copy_member(path, "zip", "rand.bin", io.BytesIO(), low)


def test_large_member_is_streamed_in_bounded_memory(tmp_path: Path) -> None:
    data = bytes(40 * 1024 * 1024)
    path = make_zip(tmp_path / "large.zip", {"zeros.bin": data})
    budget = ExtractionBudget(max_compression_ratio=1e9)  # allowed: read it all
    tracemalloc.start()
    try:
        member = list_members(path, "zip", budget)[0][0]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert member.status == "ok" and member.size == len(data)
    # Hashed in full (probe.py samples loose files of unreadable formats above 32 MB instead).
    assert member.content_hash == "b2:" + hashlib.blake2b(data, digest_size=20).hexdigest()
    assert peak < 8 * 1024 * 1024


def test_time_limit_stops_listing_with_a_note(tmp_path: Path) -> None:
    path = make_zip(tmp_path / "t.zip", {"a.txt": b"a", "b.txt": b"b", "c.txt": b"c"})
    members, notes = list_members(path, "zip", ExtractionBudget(max_seconds=0))
    assert len(members) == 1 and members[0].status == "error" and members[0].error.startswith("too slow")
    assert notes[0].endswith("the remaining members are not indexed")


def test_unsafe_names_are_listed_not_written(tmp_path: Path, private_tmp: Path) -> None:
    work = tmp_path / "share"
    work.mkdir()
    path = make_zip(work / "evil.zip", [("../evil.txt", b"x"), ("/etc/passwd", b"root::0:0"),
                                        ("C:\\x", b"y"), ("ok/fine.txt", b"fine")])
    before = sorted(p.name for p in tmp_path.iterdir())
    members, _ = list_members(path, "zip", BUDGET)
    m = by_name(members)
    assert set(m) == {"__/evil.txt", "etc/passwd", "C_/x", "ok/fine.txt"}
    for name, raw in (("__/evil.txt", "../evil.txt"), ("etc/passwd", "/etc/passwd"), ("C_/x", "C:\\x")):
        assert m[name].status == "error" and m[name].content_hash is None
        assert m[name].error == f"unsafe name in the archive ({raw}): not read"
        with pytest.raises(ExtractionError, match="unsafe name"):
            copy_member(path, "zip", name, io.BytesIO(), BUDGET)
    walked = dict(walk_children(path, "zip", BUDGET))
    assert walked["ok/fine.txt"].status == "ok"
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert sorted(p.name for p in work.iterdir()) == ["evil.zip"]
    assert list(private_tmp.iterdir()) == []


def _encrypt_flag(path: Path, name: bytes) -> None:
    """Set the 'encrypted' bit of ``name`` in the local and central headers (Python cannot write
    encrypted zips; readers only look at this flag before asking for a password)."""
    data = bytearray(path.read_bytes())
    for sig, flag_at, name_at in ((b"PK\x03\x04", 6, 30), (b"PK\x01\x02", 8, 46)):
        pos = 0
        while (pos := data.find(sig, pos)) >= 0:
            if data[pos + name_at:pos + name_at + len(name)] == name:
                data[pos + flag_at] |= 0x01
            pos += 4
    path.write_bytes(bytes(data))


def test_encrypted_member(tmp_path: Path) -> None:
    path = make_zip(tmp_path / "secret.zip", {"secret.txt": b"the plan", "public.txt": b"hello"})
    _encrypt_flag(path, b"secret.txt")
    m = by_name(list_members(path, "zip", BUDGET)[0])
    assert (m["secret.txt"].status, m["secret.txt"].error) == ("encrypted", "password-protected archive member")
    assert m["public.txt"].status == "ok"
    with pytest.raises(ExtractionError, match="password-protected"):
        extract(f"{path}!/secret.txt")


def test_member_limit_adds_a_note(tmp_path: Path) -> None:
    path = make_zip(tmp_path / "many.zip", {f"f{i:02d}.txt": b"x" for i in range(12)})
    members, notes = list_members(path, "zip", ExtractionBudget(max_members=5))
    assert len(members) == 5 and notes == ["only the first 5 members are indexed"]
    walk = walk_children(path, "zip", ExtractionBudget(max_members=5))
    assert len(list(walk)) == 5 and "only the first 5 members are indexed" in walk.notes


# -- nesting ----------------------------------------------------------------------------------
def test_walk_descends_into_nested_containers(tmp_path: Path, private_tmp: Path) -> None:
    import docx

    d = docx.Document()
    d.add_paragraph("a docx is a zip but not a container")
    buf = io.BytesIO()
    d.save(buf)
    inner = make_zip(tmp_path / "inner.zip", {"a.txt": b"deep text"}).read_bytes()
    mail = write_mail(tmp_path / "m.eml", make_mail("Hi", (("inner.zip", inner),))).read_bytes()
    path = make_zip(tmp_path / "outer.zip", {"inner.zip": inner, "mail.eml": mail, "letter.docx": buf.getvalue(),
                                             "noext": inner})
    walk = walk_children(path, "zip", BUDGET)
    chains = [chain for chain, _ in walk]
    assert chains == ["inner.zip", "inner.zip!/a.txt", "mail.eml", "mail.eml!/inner.zip",
                      "mail.eml!/inner.zip!/a.txt", "letter.docx", "noext", "noext!/a.txt"]
    assert walk.notes == []
    assert list(private_tmp.iterdir()) == []
    assert extract(f"{path}!/mail.eml!/inner.zip!/a.txt").text == "deep text"


def test_unreadable_nested_container_is_a_note(tmp_path: Path) -> None:
    path = make_zip(tmp_path / "outer.zip", {"bad.zip": b"PK\x03\x04 not really a zip", "a.txt": b"a"})
    walk = walk_children(path, "zip", BUDGET)
    assert [(chain, m.status) for chain, m in walk] == [("bad.zip", "ok"), ("a.txt", "ok")]
    assert len(walk.notes) == 1 and walk.notes[0].startswith("bad.zip: corrupt zip archive: ")
    with pytest.raises(ExtractionError, match="corrupt zip archive"):
        extract(f"{path}!/bad.zip")


def test_fifty_nested_messages_stop_at_max_depth(tmp_path: Path) -> None:
    msg = make_mail("level 50")
    for level in range(49, 0, -1):
        msg = make_mail(f"level {level}", messages=(msg,))
    path = write_mail(tmp_path / "deep.eml", msg)
    assert extract(path).text.endswith("Attachments: level 2.eml")
    walk = walk_children(path, "eml", ExtractionBudget(max_depth=3))
    chains = [chain for chain, _ in walk]
    assert chains == ["level 2.eml", "level 2.eml!/level 3.eml", "level 2.eml!/level 3.eml!/level 4.eml"]
    assert walk.notes == ["level 2.eml!/level 3.eml!/level 4.eml: nested more than 3 levels deep: "
                          "its contents are not indexed"]
    deepest = extract(f"{path}!/level 2.eml!/level 3.eml!/level 4.eml")
    assert deepest.title == "level 4" and "Body of level 4" in deepest.text
    with pytest.raises(ExtractionError, match="nested more than 3 levels"):
        extract(f"{path}!/level 2.eml!/level 3.eml!/level 4.eml!/level 5.eml")


# -- mails ----------------------------------------------------------------------------------
def test_mail_attachments_and_attached_messages(tmp_path: Path) -> None:
    forwarded = make_mail("Fwd: plans", (("plan.pdf", b"%PDF-1.4 plan"),), date="Mon, 4 Mar 2019 10:15:00 +0100")
    msg = make_mail("Budget", (("report.pdf", b"%PDF-1.4 one"), ("report.pdf", b"%PDF-1.4 two"),
                               ("../../etc/x.txt", b"sneaky"), ("logo.png", b"\x89PNG\r\n\x1a\n")),
                    messages=(forwarded,))
    path = write_mail(tmp_path / "m.eml", msg)
    members, notes = list_members(path, "eml", BUDGET)
    assert notes == []
    assert [m.name for m in members] == ["report.pdf", "report (2).pdf", "x.txt", "logo.png", "Fwd_ plans.eml"]
    m = by_name(members)
    assert m["report (2).pdf"].content_hash == loose_hash(tmp_path, b"%PDF-1.4 two")
    assert m["logo.png"].head.startswith(b"\x89PNG")
    fwd = m["Fwd_ plans.eml"]
    assert (fwd.title, fwd.author, fwd.created_at) == ("Fwd: plans", "Alice <alice@example.com>",
                                                        datetime(2019, 3, 4, 9, 15))
    out = io.BytesIO()
    copy_member(path, "eml", "Fwd_ plans.eml", out, BUDGET)
    assert loose_hash(tmp_path, out.getvalue()) == fwd.content_hash
    assert list_members(path, "eml", BUDGET)[0] == members  # stable across runs
    assert extract(f"{path}!/Fwd_ plans.eml").text.endswith("Attachments: plan.pdf")
    assert extract(path).text.endswith("Attachments: report.pdf, report (2).pdf, x.txt, logo.png, Fwd_ plans.eml")


def test_unnamed_attachment_gets_a_name_from_its_type(tmp_path: Path) -> None:
    msg = make_mail("Scan")
    msg.add_attachment(b"%PDF-1.4 scan", "application", "pdf", disposition="attachment")
    path = write_mail(tmp_path / "scan.eml", msg)
    assert [m.name for m in list_members(path, "eml", BUDGET)[0]] == ["attachment.pdf"]


def test_mbox_messages_are_members(tmp_path: Path) -> None:
    from tests.core.documents.test_extract_mail import make_mbox

    path = make_mbox(tmp_path / "box.mbox", [
        ("First", "Mon, 4 Mar 2019 10:15:00 +0000", "one"),
        ("Second", "Tue, 5 Mar 2019 11:00:00 +0000", ">From the archive\nline"),
        ("Third", "Wed, 6 Mar 2019 12:30:00 +0000", "three")])
    members, notes = list_members(path, "mbox", BUDGET)
    assert [(m.name, m.title, m.created_at) for m in members] == [
        ("message-00001.eml", "First", datetime(2019, 3, 4, 10, 15)),
        ("message-00002.eml", "Second", datetime(2019, 3, 5, 11, 0)),
        ("message-00003.eml", "Third", datetime(2019, 3, 6, 12, 30))]
    out = io.BytesIO()
    assert copy_member(path, "mbox", "message-00002.eml", out, BUDGET) == members[1].size
    assert out.getvalue().startswith(b"From: Sender 1") and out.getvalue().endswith(b"line\n")
    assert loose_hash(tmp_path, out.getvalue()) == members[1].content_hash
    doc = extract(f"{path}!/message-00002.eml")
    assert doc.title == "Second" and "line" in doc.text
    assert len(list_members(path, "mbox", ExtractionBudget(max_members=2))[0]) == 2


def test_outlook_message_children() -> None:
    path = FIXTURES / "outer.msg"
    members, notes = list_members(path, "msg", BUDGET)
    assert notes == [] and [m.name for m in members] == ["test.eml"]
    inner = members[0]
    assert inner.status == "ok" and inner.title == "test" and inner.created_at.year == 2016
    assert list_members(path, "msg", BUDGET)[0] == members  # the converted message is stable
    doc = extract(f"{path}!/test.eml")
    assert doc.title == "test" and "To: test@foobar.com" in doc.text and doc.text.endswith("body")
    assert [c for c, _ in walk_children(path, "msg", BUDGET)] == ["test.eml"]


def test_not_a_container(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("x")
    with pytest.raises(ExtractionError):
        list_members(path, "txt", BUDGET)
    with pytest.raises(ExtractionError, match="not an OLE file"):
        list_members(path, "msg", BUDGET)


def test_backslash_separators_of_old_windows_zips_are_folders(tmp_path):
    from spar_desktop.core.documents.budget import ExtractionBudget
    from spar_desktop.core.documents.containers import list_members

    path = tmp_path / "old.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("Reports\\2019\\audit.txt", b"audit text")
    members, _ = list_members(path, "zip", ExtractionBudget())
    assert [(m.name, m.status) for m in members] == [("Reports/2019/audit.txt", "ok")]

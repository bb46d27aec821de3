"""Mail readers (.eml, mbox, Outlook .msg): what a person finds in a mail's own text and in the
scan's metadata, and how damaged or odd mails are reported."""

from __future__ import annotations

import tracemalloc
from datetime import datetime
from email.message import EmailMessage
from email.policy import default as default_policy
from pathlib import Path

import pytest

from spar_desktop.core.documents.budget import ExtractionBudget
from spar_desktop.core.documents.errors import ExtractionError
from spar_desktop.core.documents.extract import extract
from spar_desktop.core.documents.extract_mail import (extract_eml, extract_mbox, extract_msg, mail_metadata,
                                                      unique_name)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "mail"
BUDGET = ExtractionBudget()


def make_eml(path: Path, subject: str = "Quarterly budget", body: str = "Numbers attached.",
             html: str | None = None, attachments: tuple[tuple[str, bytes], ...] = (),
             date: str = "Mon, 4 Mar 2019 10:15:00 +0100") -> Path:
    msg = EmailMessage()
    msg["From"] = "Alice Example <alice@example.com>"
    msg["To"] = "bob@example.com, Carol <carol@example.com>"
    msg["Cc"] = "dave@example.com"
    msg["Subject"] = subject
    msg["Date"] = date
    if body is not None:
        msg.set_content(body)
    if html is not None:
        if body is None:
            msg.set_content(html, subtype="html")
        else:
            msg.add_alternative(html, subtype="html")
    for name, data in attachments:
        msg.add_attachment(data, "application", "octet-stream", filename=name)
    path.write_bytes(msg.as_bytes(policy=default_policy))
    return path


def make_mbox(path: Path, messages: list[tuple[str, str, str]]) -> Path:
    """(subject, date header, body) per message, in the classic mbox layout."""
    out = []
    for i, (subject, date, body) in enumerate(messages):
        out.append(f"From sender{i}@example.com Mon Mar  4 10:15:00 2019\n"
                   f"From: Sender {i} <sender{i}@example.com>\nSubject: {subject}\nDate: {date}\n\n{body}\n\n")
    path.write_bytes("".join(out).encode())
    return path


def test_eml_text_has_headers_body_and_attachment_names(tmp_path: Path) -> None:
    path = make_eml(tmp_path / "m.eml", html="<p>HTML version</p>",
                    attachments=(("a.docx", b"PK..."), ("b.pdf", b"%PDF-1.4")))
    doc = extract(path)
    assert doc.format == "eml" and doc.title == "Quarterly budget"
    lines = doc.text.splitlines()
    assert lines[:5] == ["From: Alice Example <alice@example.com>",
                         "To: bob@example.com, Carol <carol@example.com>", "Cc: dave@example.com",
                         "Date: Mon, 04 Mar 2019 10:15:00 +0100", "Subject: Quarterly budget"]
    assert "Numbers attached." in doc.text and "HTML version" not in doc.text  # plain text preferred
    assert lines[-1] == "Attachments: a.docx, b.pdf"
    assert "%PDF" not in doc.text  # attachments are children, read on their own


def test_html_only_mail_is_read_as_text(tmp_path: Path) -> None:
    path = make_eml(tmp_path / "h.eml", body=None,
                    html="<html><body><h1>Offer</h1><p>Price: <b>12</b> EUR</p><script>x()</script></body></html>")
    text = extract_eml(path, BUDGET).text
    assert "Offer" in text and "Price: 12 EUR" in text and "x()" not in text and "<p>" not in text


def test_undecodable_charsets_never_fail_a_mail(tmp_path: Path) -> None:
    raw = (b"From: =?x-unknown?Q?J=F6rg?= <j@example.de>\r\nTo: a@example.com\r\n"
           b"Subject: =?x-bogus?B?SGVsbG8=?= caf\xe9\r\nDate: not a date\r\nMIME-Version: 1.0\r\n"
           b"Content-Type: multipart/mixed; boundary=XX\r\n\r\n"
           b"--XX\r\nContent-Type: text/plain; charset=x-nonsense\r\nContent-Transfer-Encoding: 8bit\r\n\r\n"
           b"Gr\xfc\xdfe aus K\xf6ln\r\n"
           b"--XX\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment; filename*=x-foo''r%E9port.pdf\r\n"
           b"Content-Transfer-Encoding: base64\r\n\r\nJVBERi0=\r\n--XX--\r\n")
    path = tmp_path / "bad.eml"
    path.write_bytes(raw)
    doc = extract(path)
    assert "Grüße aus Köln" in doc.text  # unknown charset: guessed (Windows-1252), not failed
    assert any("unknown character set" in w for w in doc.warnings)
    assert doc.title and doc.title.startswith("Hello")
    assert "Attachments: r" in doc.text and ".pdf" in doc.text
    meta = mail_metadata(path, "eml", BUDGET)
    assert meta.created_at is None and meta.author and "j@example.de" in meta.author


def test_metadata_reads_headers_only_and_gives_utc_date(tmp_path: Path) -> None:
    path = make_eml(tmp_path / "big.eml", body="x" * 100)
    with open(path, "ab") as f:  # a 30 MB body that metadata must not read
        f.write(b"y" * (30 * 1024 * 1024))
    tracemalloc.start()
    try:
        meta = mail_metadata(path, "eml", BUDGET)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2 * 1024 * 1024
    assert meta.title == "Quarterly budget"
    assert meta.author == "Alice Example <alice@example.com>"
    assert meta.created_at == datetime(2019, 3, 4, 9, 15)  # 10:15 +01:00 as naive UTC
    assert meta.to == ("bob@example.com", "Carol <carol@example.com>") and meta.cc == ("dave@example.com",)


def test_mbox_lists_its_messages(tmp_path: Path) -> None:
    path = make_mbox(tmp_path / "box.mbox", [
        ("First", "Mon, 4 Mar 2019 10:15:00 +0000", "one"),
        ("Second", "Tue, 5 Mar 2019 11:00:00 +0000", "two\n\nFrom the desk of Bob"),
        ("Third", "Wed, 6 Mar 2019 12:30:00 +0000", "three")])
    doc = extract(path)
    lines = doc.text.splitlines()
    assert lines[0] == "Mailbox box.mbox: 3 messages"
    assert lines[1:] == ["2019-03-04 10:15 — Sender 0 <sender0@example.com> — First",
                         "2019-03-05 11:00 — Sender 1 <sender1@example.com> — Second",
                         "2019-03-06 12:30 — Sender 2 <sender2@example.com> — Third"]
    assert "two" not in doc.text  # messages are children
    limited = extract_mbox(path, ExtractionBudget(max_members=2))
    assert len(limited.text.splitlines()) == 3 and "only the first 2 messages" in limited.warnings[0]
    assert mail_metadata(path, "mbox", BUDGET).created_at == datetime(2019, 3, 4, 10, 15)


def test_a_file_that_is_not_an_mbox(tmp_path: Path) -> None:
    path = tmp_path / "notes.mbox"
    path.write_text("just some notes\n")
    with pytest.raises(ExtractionError, match="not a mailbox file"):
        extract(path)


def test_msg_that_is_not_ole(tmp_path: Path) -> None:
    path = tmp_path / "fake.msg"
    path.write_text("From: someone\n\nthis is not an Outlook file")
    with pytest.raises(ExtractionError, match=r"^not an Outlook message \(not an OLE file\)$"):
        extract(path)
    with pytest.raises(ExtractionError, match="not an OLE file"):
        mail_metadata(path, "msg", BUDGET)


def test_real_outlook_message() -> None:
    path = FIXTURES / "outer.msg"
    doc = extract_msg(path, BUDGET)
    assert doc.title == "outer subject"
    assert doc.text.splitlines()[0] == "To: outer@foo.bar"
    assert "Subject: outer subject" in doc.text and "Outer body" in doc.text
    assert doc.text.endswith("Attachments: test.eml")
    meta = mail_metadata(path, "msg", BUDGET)
    assert meta.title == "outer subject" and meta.to == ("outer@foo.bar",)
    assert meta.created_at is not None and meta.created_at.year == 2016 and meta.created_at.tzinfo is None


def _patched_msg(tmp_path: Path, old: str, new: str, name: str = "") -> Path:
    """outer.msg with a UTF-16 text replaced in place (and, for ``name``, that stream's size in
    its directory entry updated): there is no free library that writes .msg files."""
    data = bytearray((FIXTURES / "outer.msg").read_bytes())
    o, n = old.encode("utf-16-le"), new.encode("utf-16-le")
    assert data.count(o) >= 1
    data = bytearray(bytes(data).replace(o + bytes(len(n) - len(o)), n) if len(n) > len(o)
                     else bytes(data).replace(o, n))
    if name:
        entry = name.encode("utf-16-le")
        pos = 0
        while (pos := data.find(entry, pos)) >= 0:
            data[pos + 120:pos + 124] = len(n).to_bytes(4, "little")
            pos += 1
    path = tmp_path / "patched.msg"
    path.write_bytes(bytes(data))
    return path


def test_encrypted_outlook_message_is_reported(tmp_path: Path) -> None:
    path = _patched_msg(tmp_path, "IPM.Note", "IPM.Note.SMIME", name="__substg1.0_001A001F")
    with pytest.raises(ExtractionError, match="encrypted Outlook message"):
        extract(path)
    assert mail_metadata(path, "msg", BUDGET).title == "outer subject"  # its envelope is still readable


def test_ole_file_of_another_kind(tmp_path: Path) -> None:
    path = _patched_msg(tmp_path, "__properties_version1.0", "__properties_versionX.0")
    with pytest.raises(ExtractionError, match="not an Outlook message .*another kind"):
        extract(path)


def test_damaged_outlook_message(tmp_path: Path) -> None:
    path = tmp_path / "cut.msg"
    path.write_bytes((FIXTURES / "outer.msg").read_bytes()[:3000])
    with pytest.raises(ExtractionError, match="Outlook message"):
        extract(path)


def test_unique_names() -> None:
    seen: set[str] = set()
    assert [unique_name(n, seen) for n in ("report.pdf", "report.pdf", "report.pdf", "README", "README",
                                           "a/b.txt", "a/b.txt")] == [
        "report.pdf", "report (2).pdf", "report (3).pdf", "README", "README (2)", "a/b.txt", "a/b (2).txt"]


def test_mbox_with_crlf_and_no_date_header_uses_the_envelope_date(tmp_path: Path) -> None:
    path = tmp_path / "win.mbox"
    path.write_bytes(b"From MAILER-DAEMON Fri Jul  8 12:08:34 2011\r\nSubject: no date\r\n\r\nbody\r\n\r\n"
                     b"From someone@example.com Sat Jul  9 08:00:00 2011\r\nSubject: second\r\n\r\nmore\r\n")
    lines = extract(path).text.splitlines()
    assert lines == ["Mailbox win.mbox: 2 messages", "2011-07-08 12:08 — (no sender) — no date",
                     "2011-07-09 08:00 — (no sender) — second"]
    empty = tmp_path / "empty.mbox"
    empty.write_bytes(b"")
    assert extract(empty).no_text_reason == "mailbox holds no messages"
    assert mail_metadata(empty, "mbox", BUDGET).created_at is None

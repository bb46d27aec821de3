"""Mail readers: .eml (stdlib ``email``), mbox (streamed) and Outlook .msg (outlook_msg).

A mail's own text is a header block, its body and the names of its attachments; each
attachment and attached message is a child document read on its own (see containers.py), so
a mail is never one huge text of everything it carries. Charset problems never fail a mail:
undecodable bytes become U+FFFD and the document carries a warning.
"""

from __future__ import annotations

import codecs
import mimetypes
import re
from contextlib import closing
from dataclasses import dataclass
from datetime import datetime, timezone
from email import policy
from email.message import EmailMessage
from email.parser import BytesHeaderParser, BytesParser
from email.utils import format_datetime, parsedate_to_datetime
from pathlib import Path
from typing import Iterator, Optional

from spar_desktop.core.documents.budget import ExtractionBudget, human_bytes, too_large
from spar_desktop.core.documents.errors import ExtractionError
from spar_desktop.core.documents.extract_text import html_to_text
from spar_desktop.core.documents.mbox import BLANK_LINES, MAX_HEADER_BYTES, MboxEntry, first_message, iter_mbox
from spar_desktop.core.documents.outlook_msg import MsgAttachment, MsgMessage, OutlookFile
from spar_desktop.core.documents.textio import detect_encoding
from spar_desktop.core.documents.types import ExtractedDocument, PageText, storable_text

_NAME_MAX = 180
_UNSAFE_CHARS = re.compile(r"[\x00-\x1f\x7f/\\:*?\"<>|]")


@dataclass(frozen=True)
class MailMetadata:
    title: Optional[str]
    author: Optional[str]
    created_at: Optional[datetime]  # naive UTC
    to: tuple[str, ...] = ()
    cc: tuple[str, ...] = ()


# -- names of children ----------------------------------------------------------------------
def safe_file_name(name: str, fallback: str = "attachment") -> str:
    """A single path component a person recognises: no directories, separators or control
    characters (attachment names come from the sender and are not to be trusted)."""
    name = re.split(r"[\\/]", name or "")[-1]
    name = _UNSAFE_CHARS.sub("_", storable_text(name)).strip(" .")
    if not name:
        return fallback
    if len(name) > _NAME_MAX:
        stem, dot, ext = name.rpartition(".")
        name = (stem[:_NAME_MAX - len(ext) - 1] + "." + ext) if dot and len(ext) <= 16 else name[:_NAME_MAX]
    return name


def unique_name(name: str, seen: set[str]) -> str:
    """``name``, or "report (2).pdf" when "report.pdf" is taken; records the result in ``seen``."""
    candidate, n = name, 1
    stem, dot, ext = name.rpartition("/")[2].rpartition(".")
    base = name[: len(name) - len(name.rpartition("/")[2])]
    while candidate in seen:
        n += 1
        candidate = f"{base}{stem} ({n}).{ext}" if dot and stem else f"{name} ({n})"
    seen.add(candidate)
    return candidate


def message_file_name(subject: Optional[str]) -> str:
    return safe_file_name(f"{subject.strip()}.eml", "attached-message.eml") if subject and subject.strip() \
        else "attached-message.eml"


# -- .eml -----------------------------------------------------------------------------------
def read_eml(path: Path, budget: ExtractionBudget) -> EmailMessage:
    """The parsed message; the email package holds it whole, so its size is checked first."""
    size = path.stat().st_size
    if size > budget.max_inflated_bytes:
        raise too_large("mail", human_bytes(size), human_bytes(budget.max_inflated_bytes))
    with open(path, "rb") as f:
        return BytesParser(policy=policy.default).parse(f)


def eml_children(msg: EmailMessage) -> list[tuple[str, str, EmailMessage]]:
    """(unique name, kind "file" | "message", part) of the mail's direct children: parts with a
    file name or marked as attachments, and attached messages (not what they carry)."""
    found: list[tuple[str, EmailMessage]] = []
    if msg.is_multipart() and msg.get_content_maintype() == "multipart":
        for sub in msg.iter_parts():
            found.extend(_visit(sub))
    seen: set[str] = set()
    out = []
    for kind, part in found:
        if kind == "message":
            inner = attached_message(part)
            name = message_file_name(header(inner, "Subject") if inner is not None else None)
        else:
            name = safe_file_name(_filename(part) or "", _unnamed(part))
        out.append((unique_name(name, seen), kind, part))
    return out


def _visit(part: EmailMessage) -> Iterator[tuple[str, EmailMessage]]:
    ctype = part.get_content_type()
    if ctype in ("message/rfc822", "message/global"):
        yield "message", part
    elif part.get_content_maintype() == "multipart":
        for sub in part.iter_parts():
            yield from _visit(sub)
    elif part.get_content_maintype() != "message" and (_filename(part) or part.get_content_disposition() == "attachment"):
        yield "file", part


def _filename(part: EmailMessage) -> Optional[str]:
    try:
        return part.get_filename() or part.get_param("name", header="content-type") or None
    except Exception:  # a malformed RFC 2231 parameter: treat as unnamed
        return None


def _unnamed(part: EmailMessage) -> str:
    ext = mimetypes.guess_extension(part.get_content_type()) or ".bin"
    return f"attachment{ext}"


def attached_message(part: EmailMessage) -> Optional[EmailMessage]:
    payload = part.get_payload()
    return payload[0] if isinstance(payload, list) and payload else None


def attached_message_bytes(part: EmailMessage) -> bytes:
    inner = attached_message(part)
    if inner is None:
        return part.get_payload(decode=True) or b""
    # refold_source="none": headers come out as the sender wrote them, so the bytes are stable.
    return inner.as_bytes(policy=policy.default.clone(refold_source="none"))


def part_bytes(part: EmailMessage) -> bytes:
    return part.get_payload(decode=True) or b""


def header(msg: EmailMessage, name: str) -> str:
    """A header as text; a header the email package cannot parse falls back to its raw value."""
    try:
        value = msg.get(name)
        return " ".join(str(value).split()) if value is not None else ""
    except Exception:
        raw = next((v for k, v in msg.raw_items() if k.lower() == name.lower()), "")
        return " ".join(str(raw).encode("utf-8", "replace").decode("utf-8").split())


def header_people(msg: EmailMessage, name: str) -> tuple[str, ...]:
    try:
        value = msg.get(name)
        if value is not None and getattr(value, "addresses", None) is not None:
            return tuple(" ".join(str(a).split()) for a in value.addresses)
    except Exception:
        pass
    text = header(msg, name)
    return (text,) if text else ()


def header_date(msg: EmailMessage) -> Optional[datetime]:
    try:
        value = msg.get("Date")
        dt = getattr(value, "datetime", None)
    except Exception:
        return None
    return naive_utc(dt)


def naive_utc(dt: Optional[datetime]) -> Optional[datetime]:
    if dt is None:
        return None
    return dt.astimezone(timezone.utc).replace(tzinfo=None) if dt.tzinfo else dt


def decode_part_text(part: EmailMessage) -> tuple[str, list[str]]:
    """A text part's content whatever its declared charset (unknown ones are guessed)."""
    data = part.get_payload(decode=True) or b""
    charset = part.get_content_charset()
    warnings = []
    try:
        encoding = codecs.lookup(charset).name if charset else detect_encoding(data)[0]
    except LookupError:
        encoding = detect_encoding(data)[0]
        warnings.append(f"unknown character set {charset!r} in the message; read as {encoding}")
    text = data.decode(encoding, errors="replace")
    bad = text.count("\ufffd")
    if bad:
        warnings.append(f"{bad} undecodable byte sequence(s) in the message replaced")
    return text, warnings


def _eml_body(msg: EmailMessage) -> tuple[str, list[str]]:
    try:
        body = msg.get_body(preferencelist=("plain", "html"))
    except Exception:
        body = None
    if body is None:
        return "", []
    text, warnings = decode_part_text(body)
    if body.get_content_subtype() == "html":
        text = html_to_text(text)[1]
    return text, warnings


def extract_eml(path: Path, budget: ExtractionBudget) -> ExtractedDocument:
    msg = read_eml(path, budget)
    body, warnings = _eml_body(msg)
    names = [name for name, _kind, _part in eml_children(msg)]
    meta = eml_metadata(msg)
    return _mail_document("eml", meta, header(msg, "Date"), body, names, warnings, budget)


def eml_metadata(msg: EmailMessage) -> MailMetadata:
    return MailMetadata(storable_text(header(msg, "Subject")) or None, storable_text(header(msg, "From")) or None,
                        header_date(msg), header_people(msg, "To"), header_people(msg, "Cc"))


def _mail_document(fmt: str, meta: MailMetadata, date_text: str, body: str, attachments: list[str],
                   warnings: list[str], budget: ExtractionBudget) -> ExtractedDocument:
    lines = [f"From: {meta.author}" if meta.author else "",
             f"To: {', '.join(meta.to)}" if meta.to else "",
             f"Cc: {', '.join(meta.cc)}" if meta.cc else "",
             f"Date: {date_text}" if date_text else "",
             f"Subject: {meta.title}" if meta.title else ""]
    body = re.sub(r"\n[ \t]*\n(?:[ \t]*\n)+", "\n\n", body.replace("\r\n", "\n")).strip()
    blocks = ["\n".join(ln for ln in lines if ln), body,
              f"Attachments: {', '.join(attachments)}" if attachments else ""]
    text = storable_text("\n\n".join(b for b in blocks if b))
    warnings = list(dict.fromkeys(warnings))
    if len(text) > budget.max_chars:
        text = text[:budget.max_chars]
        warnings.append(f"text truncated at {budget.max_chars:,} characters")
    if not text:
        return ExtractedDocument((), fmt, meta.title, tuple(warnings), "empty message")
    return ExtractedDocument((PageText(1, text),), fmt, meta.title, tuple(warnings))


def _eml_header_meta(path: Path) -> MailMetadata:
    """Headers only: the file is read up to the first blank line, never its body."""
    head = bytearray()
    with open(path, "rb") as f:
        while len(head) < MAX_HEADER_BYTES:
            line = f.readline(MAX_HEADER_BYTES)
            if not line or line in BLANK_LINES:
                break
            head += line
    return eml_metadata(BytesHeaderParser(policy=policy.default).parsebytes(bytes(head)))


# -- mbox -----------------------------------------------------------------------------------
def mbox_entry_metadata(entry: MboxEntry) -> MailMetadata:
    meta = eml_metadata(BytesHeaderParser(policy=policy.default).parsebytes(entry.header))
    if meta.created_at is None:  # "From sender Mon Mar  4 10:15:00 2019": the delivery date

        try:
            date = naive_utc(parsedate_to_datetime(entry.from_line.decode("ascii", "replace").split(None, 2)[2]))
            return MailMetadata(meta.title, meta.author, date, meta.to, meta.cc)
        except (IndexError, TypeError, ValueError):
            pass
    return meta


def extract_mbox(path: Path, budget: ExtractionBudget) -> ExtractedDocument:
    clock = budget.clock()
    lines: list[str] = []
    warnings: list[str] = []
    with closing(iter_mbox(path, clock)) as entries:
        for entry in entries:
            if len(lines) >= budget.max_members:
                warnings.append(f"only the first {budget.max_members:,} messages are listed")
                break
            meta = mbox_entry_metadata(entry)
            date = meta.created_at.strftime("%Y-%m-%d %H:%M") if meta.created_at else "(no date)"
            lines.append(f"{date} — {meta.author or '(no sender)'} — {meta.title or '(no subject)'}")
    if not lines:
        return ExtractedDocument((), "mbox", None, tuple(warnings), "mailbox holds no messages")
    head = f"Mailbox {path.name}: {len(lines):,} message{'s' if len(lines) != 1 else ''}"
    text = storable_text("\n".join([head, *lines]))
    if len(text) > budget.max_chars:
        text = text[:budget.max_chars]
        warnings.append(f"text truncated at {budget.max_chars:,} characters")
    return ExtractedDocument((PageText(1, text),), "mbox", None, tuple(warnings))


# -- .msg -----------------------------------------------------------------------------------
def msg_child_name(of: "OutlookFile", att: "MsgAttachment") -> str:
    """The child name of a .msg attachment: an attached message becomes "<subject>.eml"."""
    if att.kind == "message":
        try:
            subject = of.attached_message(att, full=False).subject or att.name
        except ExtractionError:
            subject = att.name
        return message_file_name(subject)
    return safe_file_name(att.name)


def msg_children(of: "OutlookFile", msg: "MsgMessage") -> list[tuple[str, "MsgAttachment"]]:
    seen: set[str] = set()
    return [(unique_name(msg_child_name(of, a), seen), a) for a in msg.attachments]


def extract_msg(path: Path, budget: ExtractionBudget) -> ExtractedDocument:
    with OutlookFile(path, budget) as of:
        msg = of.message()
        if msg.encryption:
            raise ExtractionError(msg.encryption)
        body = msg.body or ""
        if not body.strip() and msg.html:
            body = html_to_text(msg.html)[1]
        names = [name for name, _att in msg_children(of, msg)]
    warnings = ["the message body is stored only as rich text (RTF), which is not read"] \
        if not body.strip() and msg.has_rtf else []
    meta = msg_metadata(msg)
    date_text = format_datetime(msg.date.replace(tzinfo=timezone.utc)) if msg.date else ""
    return _mail_document("msg", meta, date_text, body, names, warnings, budget)


def msg_metadata(msg: "MsgMessage") -> MailMetadata:
    return MailMetadata(storable_text(msg.subject) or None, storable_text(msg.sender) or None, msg.date,
                        tuple(storable_text(p) for p in msg.to), tuple(storable_text(p) for p in msg.cc))


# -- metadata for the scan ------------------------------------------------------------------
def mail_metadata(path: Path, fmt: str, budget: ExtractionBudget) -> MailMetadata:
    """Title (subject), author (sender), date and recipients, read cheaply: headers only for
    .eml, the properties for .msg, the first message's date for an mbox."""
    if fmt == "eml":
        return _eml_header_meta(path)
    if fmt == "msg":
        with OutlookFile(path, budget) as of:
            return msg_metadata(of.message(full=False))
    if fmt == "mbox":
        first = first_message(path)
        return MailMetadata(None, None, mbox_entry_metadata(first).created_at if first else None)
    raise ExtractionError(f"not a mail file format: {fmt}")

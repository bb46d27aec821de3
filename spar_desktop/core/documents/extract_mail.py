"""Mail readers: .eml (stdlib ``email``), mbox (streamed) and Outlook .msg (outlook_msg).

A mail's own text is a header block, its body and the names of its attachments; each
attachment and attached message is a child document read on its own (see containers.py), so
a mail is never one huge text of everything it carries. Charset problems never fail a mail:
undecodable bytes become U+FFFD and the document carries a warning.
"""

from __future__ import annotations

import codecs
import hashlib
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from email import policy
from email.message import EmailMessage
from email.parser import BytesHeaderParser, BytesParser
from pathlib import Path
from typing import Iterator, Optional

from spar_desktop.core.documents.budget import BudgetClock, ExtractionBudget, human_bytes, too_large
from spar_desktop.core.documents.errors import ExtractionError
from spar_desktop.core.documents.types import ExtractedDocument, PageText, storable_text

HEAD_BYTES = 8192
MAX_HEADER_BYTES = 256 * 1024  # a header section larger than this is not a mail's
_READ_BLOCK = 1 << 20
_NAME_MAX = 180
_UNSAFE_CHARS = re.compile(r"[\x00-\x1f\x7f/\\:*?\"<>|]")
_BLANK = (b"\n", b"\r\n")


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
    import mimetypes

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
    from spar_desktop.core.documents.textio import detect_encoding

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
        from spar_desktop.core.documents.extract_text import html_to_text

        text = html_to_text(text)[1]
    return text, warnings


def extract_eml(path: Path, budget: ExtractionBudget) -> ExtractedDocument:
    msg = read_eml(path, budget)
    body, warnings = _eml_body(msg)
    names = [name for name, _kind, _part in eml_children(msg)]
    meta = _eml_meta(msg)
    return _mail_document("eml", meta, header(msg, "Date"), body, names, warnings, budget)


def _eml_meta(msg: EmailMessage) -> MailMetadata:
    return MailMetadata(storable_text(header(msg, "Subject")) or None, storable_text(header(msg, "From")) or None,
                        header_date(msg), header_people(msg, "To"), header_people(msg, "Cc"))


def _mail_document(fmt: str, meta: MailMetadata, date_text: str, body: str, attachments: list[str],
                   warnings: list[str], budget: ExtractionBudget) -> ExtractedDocument:
    lines = [f"From: {meta.author}" if meta.author else "",
             f"To: {', '.join(meta.to)}" if meta.to else "",
             f"Cc: {', '.join(meta.cc)}" if meta.cc else "",
             f"Date: {date_text}" if date_text else "",
             f"Subject: {meta.title}" if meta.title else ""]
    blocks = ["\n".join(ln for ln in lines if ln), body.replace("\r\n", "\n").strip(),
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
            if not line or line in _BLANK:
                break
            head += line
    return _eml_meta(BytesHeaderParser(policy=policy.default).parsebytes(bytes(head)))


# -- mbox -----------------------------------------------------------------------------------
@dataclass
class MboxEntry:
    """One message of an mbox: its bytes are ``[start, end)`` of the file (the "From " line
    and the blank line before the next one are the mbox's, not the message's)."""

    index: int  # 1-based
    start: int
    end: int
    from_line: bytes
    header: bytes
    content_hash: str
    head: bytes

    @property
    def name(self) -> str:
        return f"message-{self.index:05d}.eml"

    @property
    def size(self) -> int:
        return self.end - self.start

    def metadata(self) -> MailMetadata:
        msg = BytesHeaderParser(policy=policy.default).parsebytes(self.header)
        meta = _eml_meta(msg)
        if meta.created_at is None:  # "From sender Mon Mar  4 10:15:00 2019": the delivery date
            from email.utils import parsedate_to_datetime

            try:
                parts = self.from_line.decode("ascii", "replace").split(None, 2)
                return MailMetadata(meta.title, meta.author, naive_utc(parsedate_to_datetime(parts[2].strip())),
                                    meta.to, meta.cc)
            except (IndexError, TypeError, ValueError):
                pass
        return meta


class _MessageSink:
    def __init__(self, index: int, start: int, from_line: bytes) -> None:
        self.entry = MboxEntry(index, start, start, from_line, b"", "", b"")
        self.hasher = hashlib.blake2b(digest_size=20)
        self.head = bytearray()
        self.header = bytearray()
        self.in_header = True

    def feed(self, data: bytes, whole_line: bool) -> None:
        self.hasher.update(data)
        self.entry.end += len(data)
        if len(self.head) < HEAD_BYTES:
            self.head += data[:HEAD_BYTES - len(self.head)]
        if self.in_header:
            if (whole_line and data in _BLANK) or len(self.header) > MAX_HEADER_BYTES:
                self.in_header = False
            else:
                self.header += data

    def done(self) -> MboxEntry:
        e = self.entry
        e.header, e.head = bytes(self.header), bytes(self.head)
        e.content_hash = "b2:" + self.hasher.hexdigest() if e.size else "b2:empty"
        return e


def iter_mbox(path: Path, clock: Optional[BudgetClock] = None) -> Iterator[MboxEntry]:
    """The messages of an mbox, streamed line by line (memory: one line and one header block)."""
    with open(path, "rb") as f:
        pos, at_start, in_from, pending = 0, True, False, b""
        sink: Optional[_MessageSink] = None
        index, lines = 0, 0
        while line := f.readline(_READ_BLOCK):
            is_line, at_start = at_start, line.endswith(b"\n")
            pos += len(line)
            lines += 1
            if clock is not None and lines % 4096 == 0:
                clock.check()
            if is_line and line.startswith(b"From "):
                if sink is not None:
                    yield sink.done()
                index += 1
                sink, pending, in_from = _MessageSink(index, pos, line), b"", not at_start
            elif in_from:  # the rest of an over-long "From " line
                sink.entry.start = sink.entry.end = pos
                in_from = not at_start
            elif sink is None:
                if line.strip():
                    raise ExtractionError('not a mailbox file (it does not start with a "From " line)')
            else:
                if pending:
                    sink.feed(pending, True)
                    pending = b""
                if is_line and line in _BLANK:
                    pending = line  # held back: the blank line before a "From " line is the mbox's
                else:
                    sink.feed(line, is_line)
        if sink is not None:
            yield sink.done()


def extract_mbox(path: Path, budget: ExtractionBudget) -> ExtractedDocument:
    clock = budget.clock()
    lines: list[str] = []
    warnings: list[str] = []
    count = 0
    for entry in iter_mbox(path, clock):
        count += 1
        if count > budget.max_members:
            warnings.append(f"only the first {budget.max_members:,} messages are listed")
            break
        meta = entry.metadata()
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
def msg_child_name(of, att) -> str:
    """The child name of a .msg attachment: an attached message becomes "<subject>.eml"."""
    if att.kind == "message":
        try:
            subject = of.attached_message(att, full=False).subject or att.name
        except ExtractionError:
            subject = att.name
        return message_file_name(subject)
    return safe_file_name(att.name)


def msg_children(of, msg) -> list[tuple[str, object]]:
    seen: set[str] = set()
    return [(unique_name(msg_child_name(of, a), seen), a) for a in msg.attachments]


def extract_msg(path: Path, budget: ExtractionBudget) -> ExtractedDocument:
    from email.utils import format_datetime

    from spar_desktop.core.documents.outlook_msg import OutlookFile

    with OutlookFile(path, budget) as of:
        msg = of.message()
        if msg.encryption:
            raise ExtractionError(msg.encryption)
        body = msg.body or ""
        if not body.strip() and msg.html:
            from spar_desktop.core.documents.extract_text import html_to_text

            body = html_to_text(msg.html)[1]
        names = [name for name, _att in msg_children(of, msg)]
    meta = _msg_meta(msg)
    date_text = format_datetime(msg.date.replace(tzinfo=timezone.utc)) if msg.date else ""
    return _mail_document("msg", meta, date_text, body, names, [], budget)


def _msg_meta(msg) -> MailMetadata:
    return MailMetadata(storable_text(msg.subject) or None, storable_text(msg.sender) or None, msg.date,
                        tuple(storable_text(p) for p in msg.to), tuple(storable_text(p) for p in msg.cc))


# -- metadata for the scan ------------------------------------------------------------------
def mail_metadata(path: Path, fmt: str, budget: ExtractionBudget) -> MailMetadata:
    """Title (subject), author (sender), date and recipients, read cheaply: headers only for
    .eml, the properties for .msg, the first message's date for an mbox."""
    if fmt == "eml":
        return _eml_header_meta(path)
    if fmt == "msg":
        from spar_desktop.core.documents.outlook_msg import OutlookFile

        with OutlookFile(path, budget) as of:
            return _msg_meta(of.message(full=False))
    if fmt == "mbox":
        first = next(iter_mbox(path, budget.clock()), None)
        return MailMetadata(None, None, first.metadata().created_at if first else None)
    raise ExtractionError(f"not a mail file format: {fmt}")

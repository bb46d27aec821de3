"""Outlook ``.msg`` files read with olefile (BSD): subject, people, date, body, attachments.

A .msg is an OLE compound file laid out as in Microsoft's [MS-OXMSG]: each property of the
message is a stream ``__substg1.0_<id><type>`` (strings, binaries) or an entry of the
``__properties_version1.0`` stream (numbers, dates); recipients and attachments are storages of
their own, and an attached message is a storage laid out like a whole message. Reading the few
properties an index needs directly keeps the app free of a GPL dependency (extract-msg).
"""

from __future__ import annotations

import codecs
import hashlib
import struct
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from email.message import EmailMessage
from email.parser import HeaderParser
from email.policy import default as default_policy
from email.utils import format_datetime, getaddresses, parsedate_to_datetime
from pathlib import Path
from typing import Optional

from spar_desktop.core.documents.budget import ExtractionBudget, human_bytes, too_large
from spar_desktop.core.documents.errors import ExtractionError

OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"

PT_LONG, PT_SYSTIME, PT_STRING8, PT_UNICODE, PT_BINARY = 0x0003, 0x0040, 0x001E, 0x001F, 0x0102
PR_MESSAGE_CLASS, PR_SUBJECT, PR_TRANSPORT_HEADERS = 0x001A, 0x0037, 0x007D
PR_CLIENT_SUBMIT_TIME, PR_DELIVERY_TIME, PR_CREATION_TIME = 0x0039, 0x0E06, 0x3007
PR_SENDER_NAME, PR_SENDER_EMAIL, PR_SENDER_SMTP = 0x0C1A, 0x0C1F, 0x5D01
PR_REPRESENTING_NAME, PR_REPRESENTING_EMAIL = 0x0042, 0x0065
PR_DISPLAY_TO, PR_DISPLAY_CC = 0x0E04, 0x0E03
PR_BODY, PR_HTML, PR_RTF_COMPRESSED = 0x1000, 0x1013, 0x1009
PR_RECIPIENT_TYPE, PR_DISPLAY_NAME, PR_EMAIL_ADDRESS, PR_SMTP_ADDRESS = 0x0C15, 0x3001, 0x3003, 0x39FE
PR_ATTACH_METHOD, PR_ATTACH_DATA, PR_ATTACH_FILENAME = 0x3705, 0x3701, 0x3704
PR_ATTACH_LONG_FILENAME, PR_ATTACH_MIME_TAG = 0x3707, 0x370E
PR_MESSAGE_CODEPAGE, PR_INTERNET_CPID = 0x3FFD, 0x3FDE
ATTACH_EMBEDDED_MSG = 5

_PROPS = "__properties_version1.0"
_EMBEDDED = "__substg1.0_3701000D"


@dataclass
class MsgAttachment:
    storage: str  # OLE path of the attachment's storage
    kind: str  # "file" | "message" | "other" (OLE object, link: nothing we can read)
    name: str  # as the sender named it (not yet made safe or unique)
    mime_type: str = "application/octet-stream"
    size: int = 0


@dataclass
class MsgMessage:
    subject: str = ""
    sender: str = ""
    to: tuple[str, ...] = ()
    cc: tuple[str, ...] = ()
    date: Optional[datetime] = None  # naive UTC
    body: Optional[str] = None
    html: Optional[bytes] = None
    has_rtf: bool = False  # a compressed-RTF body (not read: only its plain or HTML forms are)
    message_class: str = ""
    attachments: list[MsgAttachment] = field(default_factory=list)

    @property
    def encryption(self) -> Optional[str]:
        """Why the message's content cannot be read, when it is protected."""
        cls = self.message_class.lower()
        if cls.startswith("ipm.note.smime") and not cls.startswith("ipm.note.smime.multipartsigned"):
            return "encrypted Outlook message (S/MIME): its content cannot be read"
        if ".rpmsg" in cls:
            return "rights-protected Outlook message (IRM): its content cannot be read"
        return None


def is_ole(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(8) == OLE_MAGIC


class OutlookFile:
    """An open .msg; use as a context manager. Raises ExtractionError for files that are not one."""

    def __init__(self, path: Path, budget: ExtractionBudget) -> None:
        if not is_ole(path):
            raise ExtractionError("not an Outlook message (not an OLE file)")
        import olefile  # lazy: only .msg files need it

        self.budget = budget
        try:
            self.ole = olefile.OleFileIO(str(path))
            self._entries = [tuple(e) for e in self.ole.listdir(streams=True, storages=True)]
        except Exception as exc:  # olefile raises bare OSError/struct errors on damaged files
            raise ExtractionError(f"unreadable Outlook message (damaged OLE file: {exc})") from exc
        if not self.ole.exists(_PROPS):
            self.ole.close()
            raise ExtractionError("not an Outlook message (an OLE file of another kind, e.g. a Word or Excel file)")

    def __enter__(self) -> "OutlookFile":
        return self

    def __exit__(self, *exc: object) -> None:
        self.ole.close()

    # -- raw properties ---------------------------------------------------------------------
    def _children(self, storage: str, prefix: str) -> list[str]:
        parts = tuple(storage.split("/")) if storage else ()
        n = len(parts)
        return sorted("/".join(e) for e in self._entries
                      if len(e) == n + 1 and e[:n] == parts and e[n].startswith(prefix))

    def _path(self, storage: str, name: str) -> str:
        return f"{storage}/{name}" if storage else name

    def _stream(self, storage: str, prop: int, ptype: int) -> Optional[bytes]:
        path = self._path(storage, f"__substg1.0_{prop:04X}{ptype:04X}")
        if not self.ole.exists(path):
            return None
        size = self.ole.get_size(path)
        if size > self.budget.max_inflated_bytes:
            raise too_large("message part", human_bytes(size), human_bytes(self.budget.max_inflated_bytes))
        return self.ole.openstream(path).read()

    def _fixed(self, storage: str, header: int) -> dict[int, tuple[int, bytes]]:
        """The fixed-size properties of ``storage``: id -> (type, 8 value bytes)."""
        path = self._path(storage, _PROPS)
        if not self.ole.exists(path):
            return {}
        data = self.ole.openstream(path).read()
        props = {}
        for pos in range(header, len(data) - 15, 16):
            tag, _flags, value = struct.unpack_from("<II8s", data, pos)
            props[tag >> 16] = (tag & 0xFFFF, value)
        return props

    def _text(self, storage: str, prop: int, codepage: str) -> Optional[str]:
        raw = self._stream(storage, prop, PT_UNICODE)
        if raw is not None:
            return raw.decode("utf-16-le", errors="replace").rstrip("\x00")
        raw = self._stream(storage, prop, PT_STRING8)
        if raw is not None:
            return raw.decode(codepage, errors="replace").rstrip("\x00")
        return None

    # -- message ----------------------------------------------------------------------------
    def message(self, storage: str = "", full: bool = True) -> MsgMessage:
        """The message at ``storage`` ("" = the file's own; an attachment's for an attached one);
        without ``full`` only subject, people and date (no body, no attachments)."""
        try:
            return self._message(storage, full)
        except ExtractionError:
            raise
        except Exception as exc:
            raise ExtractionError(f"unreadable Outlook message ({type(exc).__name__}: {exc})") from exc

    def _message(self, storage: str, full: bool) -> MsgMessage:
        fixed = self._fixed(storage, 32 if not storage else 24)
        cp = _codepage(fixed)

        def text(prop: int) -> str:
            return (self._text(storage, prop, cp) or "").strip()

        headers = _parse_headers(text(PR_TRANSPORT_HEADERS))
        msg = MsgMessage(subject=text(PR_SUBJECT), message_class=text(PR_MESSAGE_CLASS))
        msg.sender = (_person(text(PR_SENDER_NAME), text(PR_SENDER_SMTP) or text(PR_SENDER_EMAIL))
                      or _person(text(PR_REPRESENTING_NAME), text(PR_REPRESENTING_EMAIL))
                      or _header_str(headers, "From"))
        to, cc = self._recipients(storage, cp)
        msg.to = to or _header_people(headers, "To") or _split_display(text(PR_DISPLAY_TO))
        msg.cc = cc or _header_people(headers, "Cc") or _split_display(text(PR_DISPLAY_CC))
        msg.date = (_filetime(fixed.get(PR_CLIENT_SUBMIT_TIME)) or _header_date(headers)
                    or _filetime(fixed.get(PR_DELIVERY_TIME)) or _filetime(fixed.get(PR_CREATION_TIME)))
        if not full:
            return msg
        msg.body = self._text(storage, PR_BODY, cp)
        msg.html = self._stream(storage, PR_HTML, PT_BINARY)
        if msg.html is None:
            html = self._text(storage, PR_HTML, cp)
            msg.html = html.encode("utf-8") if html else None
        msg.has_rtf = self.ole.exists(self._path(storage, f"__substg1.0_{PR_RTF_COMPRESSED:04X}{PT_BINARY:04X}"))
        msg.attachments = [self._attachment(a, cp) for a in self._children(storage, "__attach_version1.0_#")]
        return msg

    def _recipients(self, storage: str, cp: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        to: list[str] = []
        cc: list[str] = []
        for recip in self._children(storage, "__recip_version1.0_#"):
            kind = _long(self._fixed(recip, 8).get(PR_RECIPIENT_TYPE))
            person = _person((self._text(recip, PR_DISPLAY_NAME, cp) or "").strip(),
                             (self._text(recip, PR_SMTP_ADDRESS, cp)
                              or self._text(recip, PR_EMAIL_ADDRESS, cp) or "").strip())
            if person and kind in (1, 2):
                (to if kind == 1 else cc).append(person)
        return tuple(to), tuple(cc)

    def _attachment(self, storage: str, cp: str) -> MsgAttachment:
        fixed = self._fixed(storage, 8)
        name = next((n for n in (self._text(storage, p, cp) for p in
                                 (PR_ATTACH_LONG_FILENAME, PR_ATTACH_FILENAME, PR_DISPLAY_NAME)) if n and n.strip()), "")
        att = MsgAttachment(storage, "other", name.strip(),
                            (self._text(storage, PR_ATTACH_MIME_TAG, cp) or "").strip() or "application/octet-stream")
        data = self._path(storage, f"__substg1.0_{PR_ATTACH_DATA:04X}{PT_BINARY:04X}")
        embedded = self._path(storage, _EMBEDDED)
        if _long(fixed.get(PR_ATTACH_METHOD)) == ATTACH_EMBEDDED_MSG and self.ole.exists(embedded):
            att.kind = "message"
        elif self.ole.exists(data):
            att.kind, att.size = "file", self.ole.get_size(data)
        return att

    def attachment_bytes(self, att: MsgAttachment) -> bytes:
        """The bytes of a "file" attachment (olefile holds a stream in memory: it is bounded by
        the .msg's own size, and by the budget)."""
        return self._stream(att.storage, PR_ATTACH_DATA, PT_BINARY) or b""

    def attached_message(self, att: MsgAttachment, full: bool = True) -> MsgMessage:
        return self.message(self._path(att.storage, _EMBEDDED), full)


def _codepage(fixed: dict[int, tuple[int, bytes]]) -> str:
    """The code page of the message's 8-bit strings (Windows-1252 when it does not say)."""
    for prop in (PR_MESSAGE_CODEPAGE, PR_INTERNET_CPID):
        cp = _long(fixed.get(prop))
        if cp:
            name = {65001: "utf-8", 20127: "ascii", 28591: "latin-1", 1200: "utf-16-le"}.get(cp, f"cp{cp}")
            try:
                return codecs.lookup(name).name
            except LookupError:
                continue
    return "cp1252"


def _long(prop: Optional[tuple[int, bytes]]) -> Optional[int]:
    if prop is None or prop[0] != PT_LONG:
        return None
    return struct.unpack_from("<i", prop[1])[0]


def _filetime(prop: Optional[tuple[int, bytes]]) -> Optional[datetime]:
    """A FILETIME (100 ns ticks since 1601, UTC) as a naive UTC datetime."""
    if prop is None or prop[0] != PT_SYSTIME:
        return None
    ticks = struct.unpack_from("<Q", prop[1])[0]
    if ticks == 0 or ticks >= 0x7FFF_FFFF_FFFF_FFFF:
        return None
    try:
        return datetime(1601, 1, 1) + timedelta(microseconds=ticks // 10)
    except OverflowError:
        return None


def _person(name: str, address: str) -> str:
    if "@" not in address:
        address = ""  # an Exchange-internal "/O=ORG/OU=..." address means nothing to a person
    if name and address and name.strip("'\"").lower() != address.lower():
        return f"{name} <{address}>"
    return address or name


def _parse_headers(text: str):
    if not text:
        return None
    try:
        return HeaderParser(policy=default_policy).parsestr(text, headersonly=True)
    except Exception:  # transport headers are a convenience: never fail the message over them
        return None


def _header_str(headers, name: str) -> str:
    try:
        return str(headers.get(name) or "").strip() if headers is not None else ""
    except Exception:
        return ""


def _header_people(headers, name: str) -> tuple[str, ...]:
    value = _header_str(headers, name)
    if not value:
        return ()
    return tuple(_person(n, a) or n for n, a in getaddresses([value]) if n or a)


def _header_date(headers) -> Optional[datetime]:
    value = _header_str(headers, "Date")
    if not value:
        return None
    try:
        dt = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return dt.astimezone(timezone.utc).replace(tzinfo=None) if dt.tzinfo else dt


def _split_display(value: str) -> tuple[str, ...]:
    return tuple(p.strip() for p in value.split(";") if p.strip())


MAX_EMBED_LEVELS = 16  # deeper attached messages are left out of a converted message


def message_as_eml(of: OutlookFile, msg: MsgMessage, levels: int = MAX_EMBED_LEVELS) -> bytes:
    """``msg`` as an RFC 822 message (.eml), its attachments and attached messages included.

    An attached message of a .msg is an OLE storage, not a file: it becomes a child document
    as this .eml. The bytes are deterministic (fixed MIME boundaries), so its hash is stable.
    """
    return _as_email(of, msg, levels, EmailMessage).as_bytes(policy=default_policy)


def _as_email(of: OutlookFile, msg: MsgMessage, levels: int, factory):
    out = factory(policy=default_policy)
    for name, value in (("From", msg.sender), ("To", ", ".join(msg.to)), ("Cc", ", ".join(msg.cc)),
                        ("Subject", msg.subject)):
        if value:
            try:
                out[name] = value
            except Exception:  # odd address text: keep it readable rather than structured
                out[name] = value.encode("ascii", "replace").decode("ascii")
    if msg.date:
        out["Date"] = format_datetime(msg.date.replace(tzinfo=timezone.utc))
    if msg.body is not None or msg.html is None:
        out.set_content(msg.body or "")
    else:
        out.set_content(msg.html, "text", "html")
    for i, att in enumerate(msg.attachments):
        if att.kind == "file":
            maintype, _, subtype = att.mime_type.partition("/")
            if not subtype or maintype == "multipart" or maintype == "message":
                maintype, subtype = "application", "octet-stream"
            out.add_attachment(of.attachment_bytes(att), maintype, subtype, filename=att.name or f"attachment-{i + 1}")
        elif att.kind == "message" and levels > 0:
            out.add_attachment(_as_email(of, of.attached_message(att), levels - 1, factory))
    tag = hashlib.blake2b(f"{msg.subject}|{msg.sender}|{msg.date}".encode("utf-8", "replace"),
                          digest_size=8).hexdigest()
    for n, part in enumerate(p for p in out.walk() if p.is_multipart()):
        part.set_boundary(f"=_spar_{tag}_{n}")  # a random boundary would change the hash per run
    return out

"""Children of mails: the attachments and attached messages of an .eml or .msg, and the
messages of an mbox, as members.Member values and as bytes (see containers.py).

A mail is parsed whole by the email package (its size is checked against the budget first),
so an attachment's bytes come from memory; an mbox message is streamed from its offsets.
"""

from __future__ import annotations

import hashlib
from contextlib import closing
from pathlib import Path
from typing import BinaryIO, Optional

from spar_desktop.core.documents import extract_mail as mail
from spar_desktop.core.documents.budget import BudgetClock, ExtractionBudget
from spar_desktop.core.documents.errors import ExtractionError
from spar_desktop.core.documents.mbox import copy_message, iter_mbox
from spar_desktop.core.documents.members import HEAD_BYTES, Member, limit_note, not_found
from spar_desktop.core.documents.outlook_msg import OutlookFile, message_as_eml


def _hash(data: bytes) -> str:
    return "b2:" + hashlib.blake2b(data, digest_size=20).hexdigest() if data else "b2:empty"


def _data_member(name: str, data: bytes, meta: Optional[mail.MailMetadata] = None) -> Member:
    title, author, created = (meta.title, meta.author, meta.created_at) if meta else (None, None, None)
    if not data:
        return Member(name, 0, "b2:empty", b"", "empty", "empty file (0 bytes)", title, author, created)
    return Member(name, len(data), _hash(data), data[:HEAD_BYTES], "ok", None, title, author, created)


def eml_members(path: Path, budget: ExtractionBudget, clock: BudgetClock) -> tuple[list[Member], list[str]]:
    children = mail.eml_children(mail.read_eml(path, budget))
    members = []
    for name, kind, part in children[:budget.max_members]:
        clock.check()
        try:
            if kind == "message":
                inner = mail.attached_message(part)
                meta = mail.eml_metadata(inner) if inner is not None else None
                members.append(_data_member(name, mail.attached_message_bytes(part), meta))
            else:
                members.append(_data_member(name, mail.part_bytes(part)))
        except Exception as exc:  # one damaged part must not hide the others
            members.append(Member(name, 0, None, b"", "error", f"damaged attachment ({type(exc).__name__})"))
    notes: list[str] = []
    limit_note(notes, len(children) > budget.max_members, budget)
    return members, notes


def msg_members(path: Path, budget: ExtractionBudget, clock: BudgetClock) -> tuple[list[Member], list[str]]:
    members = []
    with OutlookFile(path, budget) as of:
        children = mail.msg_children(of, of.message())
        for name, att in children[:budget.max_members]:
            clock.check()
            try:
                if att.kind == "message":
                    inner = of.attached_message(att)
                    members.append(_data_member(name, message_as_eml(of, inner), mail.msg_metadata(inner)))
                elif att.kind == "file":
                    members.append(_data_member(name, of.attachment_bytes(att)))
                else:
                    members.append(Member(name, 0, None, b"", "unsupported",
                                          "embedded object or link in the message: not read"))
            except ExtractionError as exc:
                members.append(Member(name, att.size, None, b"", "error", exc.message))
            except Exception as exc:  # one damaged attachment must not hide the others
                members.append(Member(name, att.size, None, b"", "error", f"damaged attachment ({type(exc).__name__})"))
    notes: list[str] = []
    limit_note(notes, len(children) > budget.max_members, budget)
    return members, notes


def mail_member_bytes(path: Path, fmt: str, member: str, budget: ExtractionBudget) -> bytes:
    if fmt == "eml":
        for name, kind, part in mail.eml_children(mail.read_eml(path, budget)):
            if name == member:
                return mail.attached_message_bytes(part) if kind == "message" else mail.part_bytes(part)
        raise not_found(member, path)
    if fmt == "msg":
        with OutlookFile(path, budget) as of:
            for name, att in mail.msg_children(of, of.message()):
                if name != member:
                    continue
                if att.kind == "message":
                    return message_as_eml(of, of.attached_message(att))
                if att.kind == "file":
                    return of.attachment_bytes(att)
                raise ExtractionError("embedded object or link in the message: not read")
        raise not_found(member, path)
    raise ExtractionError(f"{fmt} files hold no documents of their own")


def mbox_members(path: Path, budget: ExtractionBudget, clock: BudgetClock) -> tuple[list[Member], list[str]]:
    members: list[Member] = []
    notes: list[str] = []
    with closing(iter_mbox(path, clock)) as entries:
        for entry in entries:
            if len(members) >= budget.max_members:
                limit_note(notes, True, budget)
                break
            meta = mail.mbox_entry_metadata(entry)
            status, error = ("ok", None) if entry.size else ("empty", "empty message")
            members.append(Member(entry.name, entry.size, entry.content_hash, entry.head, status, error,
                                  meta.title, meta.author, meta.created_at))
    return members, notes


def mbox_copy(path: Path, member: str, out: BinaryIO, budget: ExtractionBudget) -> int:
    with closing(iter_mbox(path, budget.clock())) as entries:  # closes the file when found early
        entry = next((e for e in entries if e.name == member), None)
    if entry is None:
        raise not_found(member, path)
    return copy_message(path, entry, out)

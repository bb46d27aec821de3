"""Containers: zip archives and mails whose members (files, attachments, attached messages)
are child documents with virtual paths (``Reports.zip!/2019/audit.pdf``, see virtual.py).

Legacy shares hold hostile and broken archives, so members are streamed, never read whole:
each is hashed block by block while its inflated size and compression ratio are checked
against the budget, and a member that is encrypted, has an unsafe name, looks like a zip bomb
or is over the budget is listed with a status and a message instead of failing the archive.
Nothing is written next to the input: nested containers go to a private temporary folder.

Public API: ``Member``, ``list_members``, ``copy_member``, ``walk_children`` (a ``ChildWalk``:
an iterator of (chain, member) that collects notes in ``.notes``), ``extract_zip_listing``.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
import zipfile
import zlib
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import BinaryIO, Callable, Iterator, Optional

from spar_desktop.core.documents import mail_members
from spar_desktop.core.documents.budget import (BudgetClock, BudgetExceeded, ExtractionBudget, human_bytes,
                                                too_large)
from spar_desktop.core.documents.errors import ExtractionError
from spar_desktop.core.documents.extract_mail import unique_name
from spar_desktop.core.documents.formats import detect_format
from spar_desktop.core.documents.members import HEAD_BYTES, Member, limit_note, not_found
from spar_desktop.core.documents.types import ExtractedDocument, PageText, storable_text
from spar_desktop.core.documents.virtual import CONTAINER_FORMATS, VIRTUAL_SEP, container_format_of

BLOCK = 1 << 20
BOMB_MIN_BYTES = 1 << 20  # below this a high ratio is just a very compressible small file
_ENCRYPTED_FLAGS = 0x1 | 0x40  # traditional PKWARE / strong encryption
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# Zip-based or OLE documents that are read as documents, never opened as containers.
_DOCUMENT_SUFFIXES = frozenset({".docx", ".docm", ".dotx", ".xlsx", ".xlsm", ".pptx", ".pptm", ".odt", ".ods",
                                ".odp", ".odg", ".epub", ".jar", ".apk", ".whl", ".xpi", ".vsdx", ".kmz",
                                ".doc", ".xls", ".ppt", ".vsd", ".pub", ".msi"})
_MAIL_HEAD = re.compile(rb"^(?:Return-Path|Received|From|Message-ID|MIME-Version|Date|Subject|Delivered-To):",
                        re.I | re.M)


def list_members(container: Path, fmt: str, budget: ExtractionBudget) -> tuple[list[Member], list[str]]:
    """(direct children, notes for people) of a zip, eml, msg or mbox file."""
    return _list(Path(container), fmt, budget, budget.clock())


def _list(container: Path, fmt: str, budget: ExtractionBudget, clock: BudgetClock) -> tuple[list[Member], list[str]]:
    readers = {"zip": _zip_members, "eml": mail_members.eml_members, "msg": mail_members.msg_members,
               "mbox": mail_members.mbox_members}
    if fmt not in readers:
        raise ExtractionError(f"{fmt} files hold no documents of their own")
    try:
        return readers[fmt](container, budget, clock)
    except PermissionError as exc:
        raise ExtractionError(f"permission denied: {container.name}") from exc
    except OSError as exc:
        raise ExtractionError(f"cannot read file: {exc.strerror or exc}") from exc


def copy_member(container: Path, fmt: str, member: str, out: BinaryIO, budget: ExtractionBudget) -> int:
    """Stream the bytes of ``member`` into ``out`` (same checks as listing); the byte count."""
    container = Path(container)
    if fmt == "zip":
        return _zip_copy(container, member, out, budget)
    if fmt == "mbox":
        return mail_members.mbox_copy(container, member, out, budget)
    data = mail_members.mail_member_bytes(container, fmt, member, budget)
    out.write(data)
    return len(data)


# -- zip ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _ZipEntry:
    name: str
    info: zipfile.ZipInfo
    status: str = "ok"
    error: Optional[str] = None


@contextmanager
def _open_zip(path: Path) -> Iterator[zipfile.ZipFile]:
    """The open archive; errors opening the file itself (permission, I/O) propagate as OSError."""
    with open(path, "rb") as f:
        try:
            zf = zipfile.ZipFile(f)
        except NotImplementedError as exc:  # a newer zip version than the zipfile module reads
            raise ExtractionError(f"unsupported zip archive ({exc})") from exc
        except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError, OSError) as exc:
            # OSError here is a seek to an offset the damaged directory points to, not an I/O error
            raise ExtractionError(f"corrupt zip archive: {exc}") from exc
        with zf:
            yield zf


def safe_zip_name(raw: str) -> tuple[str, bool]:
    """(a '/'-separated relative name, whether ``raw`` was unsafe). Unsafe: absolute, drive
    letter, '..' component, control characters. A backslash is a folder separator (old Windows
    zip tools wrote them): members are never written out by name, so it is only a name."""
    unsafe = bool(raw.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", raw)
                  or _CONTROL.search(raw) or ".." in re.split(r"[\\/]", raw))
    parts = []
    for part in re.split(r"[\\/]", _CONTROL.sub("_", raw)):
        if part in ("", "."):
            continue
        parts.append("__" if part == ".." else part.replace(":", "_"))
    name = "/".join(parts) or "unnamed"
    return storable_text(name.replace(VIRTUAL_SEP, "_/")), unsafe  # "!/" would split a virtual path


def _zip_entries(zf: zipfile.ZipFile) -> list[_ZipEntry]:
    entries, seen = [], set()
    for info in zf.infolist():
        if info.is_dir():
            continue
        name, unsafe = safe_zip_name(info.orig_filename)
        name = unique_name(name, seen)
        if unsafe:
            shown = _CONTROL.sub("?", info.orig_filename)[:200]
            entries.append(_ZipEntry(name, info, "error", f"unsafe name in the archive ({shown}): not read"))
        elif info.flag_bits & _ENCRYPTED_FLAGS:
            entries.append(_ZipEntry(name, info, "encrypted", "password-protected archive member"))
        else:
            entries.append(_ZipEntry(name, info))
    return entries


def _bomb(compressed: int, inflated: int) -> ExtractionError:
    return ExtractionError(f"looks like a zip bomb ({human_bytes(compressed)} compressed inflates past "
                           f"{human_bytes(inflated)}): not read")


def _check_inflated(info: zipfile.ZipInfo, inflated: int, budget: ExtractionBudget, declared: bool = False) -> None:
    """Raises when a member inflates (or its header says it will) past the ratio or size limits."""
    if inflated > BOMB_MIN_BYTES and inflated > budget.max_compression_ratio * max(info.compress_size, 1):
        raise _bomb(info.compress_size, inflated)
    limit = human_bytes(budget.max_inflated_bytes)
    if inflated > budget.max_inflated_bytes:
        raise too_large("archive member", human_bytes(inflated) if declared else f"more than {limit}", limit)


class _MemberProblem(ExtractionError):
    """A member that cannot be read, with the status it is listed under."""

    def __init__(self, message: str, status: str = "error") -> None:
        super().__init__(message)
        self.status = status


def _stream_zip_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, budget: ExtractionBudget,
                       clock: BudgetClock, sink: Callable[[bytes], None]) -> int:
    """Inflate ``info`` block by block into ``sink``, counting the inflated bytes. zipfile stops
    at the size the central directory declares (a lying header ends in a CRC error), so the
    declared size is checked first and the count is a second guard. ExtractionError for anything
    that stops the member."""
    _check_inflated(info, info.file_size, budget, declared=True)  # before any work
    total = 0
    try:
        with zf.open(info) as f:
            while block := f.read(BLOCK):
                total += len(block)
                _check_inflated(info, total, budget)
                clock.check()
                sink(block)
    except NotImplementedError as exc:  # e.g. Deflate64, PPMd: methods the zipfile module lacks
        raise _MemberProblem(f"unsupported compression in the archive ({exc})", "unsupported") from exc
    except (zipfile.BadZipFile, zlib.error, EOFError, ValueError) as exc:
        raise _MemberProblem(f"corrupt archive member: {exc}") from exc
    except RuntimeError as exc:  # zipfile's "encrypted, password required"
        raise _MemberProblem("password-protected archive member", "encrypted") from exc
    return total


def _zip_mtime(info: zipfile.ZipInfo) -> Optional[datetime]:
    try:
        return datetime(*info.date_time)
    except (TypeError, ValueError):
        return None


def _zip_members(path: Path, budget: ExtractionBudget, clock: BudgetClock) -> tuple[list[Member], list[str]]:
    members: list[Member] = []
    notes: list[str] = []
    with _open_zip(path) as zf:
        entries = _zip_entries(zf)
        for entry in entries[:budget.max_members]:
            member = _zip_member(zf, entry, budget, clock)
            members.append(member)
            if member.status == "error" and clock.elapsed() > budget.max_seconds:
                notes.append(f"{member.error}; the remaining members are not indexed")
                return members, notes
    limit_note(notes, len(entries) > budget.max_members, budget)
    return members, notes


def _zip_member(zf: zipfile.ZipFile, entry: _ZipEntry, budget: ExtractionBudget, clock: BudgetClock) -> Member:
    mtime = _zip_mtime(entry.info)
    if entry.status != "ok":
        return Member(entry.name, entry.info.file_size, None, b"", entry.status, entry.error, mtime=mtime)
    hasher = hashlib.blake2b(digest_size=20)
    head = bytearray()

    def sink(block: bytes) -> None:
        hasher.update(block)
        if len(head) < HEAD_BYTES:
            head.extend(block[:HEAD_BYTES - len(head)])

    try:
        size = _stream_zip_member(zf, entry.info, budget, clock, sink)
    except ExtractionError as exc:  # over a limit, damaged, out of time: listed, not raised
        status = exc.status if isinstance(exc, _MemberProblem) else "error"
        return Member(entry.name, entry.info.file_size, None, bytes(head), status, exc.message, mtime=mtime)
    if size == 0:
        return Member(entry.name, 0, "b2:empty", b"", "empty", "empty file (0 bytes)", mtime=mtime)
    return Member(entry.name, size, "b2:" + hasher.hexdigest(), bytes(head), mtime=mtime)


def _zip_copy(path: Path, member: str, out: BinaryIO, budget: ExtractionBudget) -> int:
    with _open_zip(path) as zf:
        entry = next((e for e in _zip_entries(zf) if e.name == member), None)
        if entry is None:
            raise not_found(member, path)
        if entry.status != "ok":
            raise ExtractionError(entry.error or "archive member cannot be read")
        return _stream_zip_member(zf, entry.info, budget, budget.clock(), out.write)


def extract_zip_listing(path: Path, budget: ExtractionBudget) -> ExtractedDocument:
    """The archive's own text: its member names, so searching a file name finds the archive.
    The members' content is in the child documents."""
    with _open_zip(path) as zf:
        names = [e.name for e in _zip_entries(zf)]
    if not names:
        return ExtractedDocument((), "zip", None, (), "archive holds no files")
    warnings = []
    if len(names) > budget.max_members:
        warnings.append(f"only the first {budget.max_members:,} members are listed")
    shown = names[:budget.max_members]
    text = "\n".join([f"Archive {path.name}: {len(names):,} file{'s' if len(names) != 1 else ''}", *shown])
    if len(text) > budget.max_chars:
        text = text[:budget.max_chars]
        warnings.append(f"text truncated at {budget.max_chars:,} characters")
    return ExtractedDocument((PageText(1, text),), "zip", None, tuple(warnings))


# -- descendants ----------------------------------------------------------------------------
def container_format(name: str, head: bytes) -> Optional[str]:
    """The container format a member looks like: by its name, else (for names that do not say
    what they are) by its first bytes. A zip-based document (.docx ...) is not a container."""
    by_name = container_format_of(name)
    if by_name:
        return by_name
    suffix = os.path.splitext(name)[1].lower()
    if suffix in _DOCUMENT_SUFFIXES:
        return None
    if head.startswith(b"PK\x03\x04"):
        return "zip"
    if suffix:
        return None
    if head.startswith(b"From ") and _MAIL_HEAD.search(head):
        return "mbox"
    if _MAIL_HEAD.match(head) and b"\n\n" in head.replace(b"\r\n", b"\n"):
        return "eml"
    return None


def walk_children(container: Path, fmt: str, budget: ExtractionBudget) -> "ChildWalk":
    """Every descendant of ``container`` as (chain, member): chain is the member's path from the
    top container with '!/' between levels ("inner.zip!/a.pdf"). Notes for people (limits hit,
    nested containers that could not be read) collect in the returned walk's ``notes``."""
    return ChildWalk(Path(container), fmt, budget)


class ChildWalk:
    """An iterator of (chain, Member) over all descendants, depth first; ``notes`` fills while it
    runs. Nested containers are copied into a private temporary folder, removed when the walk
    ends (exhausted, ``close()``d or left by a ``with`` block). The first ``next()`` raises
    ExtractionError when the top container itself cannot be read; anything below it becomes a
    note or a member's status."""

    def __init__(self, container: Path, fmt: str, budget: ExtractionBudget) -> None:
        self.notes: list[str] = []
        self._budget = budget
        self._clock = budget.clock()
        self._count = 0
        self._workdir: Optional[Path] = None
        self._gen = self._walk(container, fmt)

    def __iter__(self) -> "ChildWalk":
        return self

    def __next__(self) -> tuple[str, Member]:
        return next(self._gen)

    def close(self) -> None:
        self._gen.close()

    def __enter__(self) -> "ChildWalk":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _walk(self, container: Path, fmt: str) -> Iterator[tuple[str, Member]]:
        members, notes = _list(container, fmt, self._budget, self._clock)  # unreadable: raises
        self.notes.extend(notes)
        try:
            yield from self._level(container, fmt, members, "", 1)
        except _Stop:
            return
        except BudgetExceeded as exc:  # out of time (see _note_failure)
            self.notes.append(f"{exc.message}; the remaining members are not indexed")
        finally:
            if self._workdir is not None:
                shutil.rmtree(self._workdir, ignore_errors=True)

    def _level(self, container: Path, fmt: str, members: list[Member], prefix: str,
               depth: int) -> Iterator[tuple[str, Member]]:
        budget = self._budget
        for member in members:
            if self._count >= budget.max_members:
                self.notes.append(f"only the first {budget.max_members:,} members are indexed")
                raise _Stop
            self._count += 1
            chain = prefix + member.name
            kind = container_format(member.name, member.head) if member.status == "ok" else None
            if kind is None:
                yield chain, member
                continue
            if depth >= budget.max_depth:
                self.notes.append(f"{chain}: nested more than {budget.max_depth} levels deep: "
                                  "its contents are not indexed")
                yield chain, member
                continue
            self._clock.check()
            try:
                nested = self._materialise(container, fmt, member)
            except ExtractionError as exc:
                self._note_failure(chain, exc)
                yield chain, member
                continue
            try:
                inner = self._open_nested(nested, member, chain)
                yield chain, member
                if inner is not None:
                    yield from self._level(nested, inner[0], inner[1], chain + VIRTUAL_SEP, depth + 1)
            finally:
                nested.unlink(missing_ok=True)

    def _materialise(self, container: Path, fmt: str, member: Member) -> Path:
        if self._workdir is None:
            self._workdir = Path(tempfile.mkdtemp(prefix="spar-walk-"))  # 0700, private to this user
        target = self._workdir / f"{self._count}{os.path.splitext(member.name)[1][:16]}"
        with open(target, "wb") as out:
            copy_member(container, fmt, member.name, out, self._budget)
        return target

    def _open_nested(self, path: Path, member: Member, chain: str) -> Optional[tuple[str, list[Member]]]:
        """(format, members) of a nested container, or None (with a note) when it is not one
        after all or cannot be read; the member itself is still a document."""
        fmt = detect_format(path, name=member.name)
        if fmt not in CONTAINER_FORMATS:
            return None
        try:
            members, notes = _list(path, fmt, self._budget, self._clock)
        except ExtractionError as exc:
            self._note_failure(chain, exc)
            return None
        self.notes.extend(f"{chain}: {note}" for note in notes)
        return fmt, members

    def _note_failure(self, chain: str, exc: ExtractionError) -> None:
        self._clock.check()  # out of time: the whole walk stops (see _walk)
        self.notes.append(f"{chain}: {exc.message}")


class _Stop(Exception):
    """The walk reached the member limit."""

"""Streaming reader of mbox files: where each message starts and ends, its hash and headers.

An mbox is one file of messages, each after a "From " envelope line. Exports of whole
mailboxes run to gigabytes, so the file is read line by line and nothing of a message is kept
but its offsets, its first bytes and its header block; a message's bytes are read again from
its offsets when it is needed as a child document.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Iterator, Optional

from spar_desktop.core.documents.budget import BudgetClock
from spar_desktop.core.documents.errors import ExtractionError

HEAD_BYTES = 8192
MAX_HEADER_BYTES = 256 * 1024  # a header section larger than this is not a mail's
_READ_BLOCK = 1 << 20
BLANK_LINES = (b"\n", b"\r\n")
# "From sender@host Mon Mar  4 10:15:00 2019": a body line "From the desk of..." that a writer
# failed to quote as ">From" is not taken for the start of a message.
_ENVELOPE = re.compile(rb"^From \S*[ \t].*\d:\d\d")


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
            if (whole_line and data in BLANK_LINES) or len(self.header) > MAX_HEADER_BYTES:
                self.in_header = False
            else:
                self.header += data

    def done(self) -> MboxEntry:
        e = self.entry
        e.header, e.head = bytes(self.header), bytes(self.head)
        e.content_hash = "b2:" + self.hasher.hexdigest() if e.size else "b2:empty"
        return e


def iter_mbox(path: Path, clock: Optional[BudgetClock] = None) -> Iterator[MboxEntry]:
    """The messages of an mbox, streamed line by line (memory: one line and one header block).
    A message starts at a "From " envelope line at the top or after a blank line."""
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
            if is_line and line.startswith(b"From ") and (sink is None or pending) and _ENVELOPE.match(line):
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
                if is_line and line in BLANK_LINES:
                    pending = line  # held back: the blank line before a "From " line is the mbox's
                else:
                    sink.feed(line, is_line)
        if sink is not None:
            yield sink.done()


def first_message(path: Path) -> Optional[MboxEntry]:
    """The envelope and headers of the first message only (offsets, hash and head left empty):
    the scan's metadata must not read through a first message of hundreds of MB."""
    with open(path, "rb") as f:
        line = f.readline(MAX_HEADER_BYTES)
        while line in BLANK_LINES:
            line = f.readline(MAX_HEADER_BYTES)
        if not line:
            return None  # an empty mailbox
        if not line.startswith(b"From "):
            raise ExtractionError('not a mailbox file (it does not start with a "From " line)')
        header = bytearray()
        while len(header) < MAX_HEADER_BYTES and (row := f.readline(MAX_HEADER_BYTES)) and row not in BLANK_LINES:
            header += row
    return MboxEntry(1, 0, 0, line, bytes(header), "", b"")


def copy_message(path: Path, entry: MboxEntry, out: BinaryIO) -> int:
    """Stream the bytes of ``entry`` into ``out``; the byte count."""
    left = entry.size
    with open(path, "rb") as f:
        f.seek(entry.start)
        while left > 0 and (block := f.read(min(_READ_BLOCK, left))):
            out.write(block)
            left -= len(block)
    return entry.size - left

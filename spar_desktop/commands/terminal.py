"""Markdown emphasis for a terminal: answers (and the retrieval-only passages) are Markdown,
which a terminal shows as raw '**'. In a terminal, ``**bold**`` becomes bold (or plain text
with NO_COLOR / TERM=dumb); piped or redirected output keeps the Markdown as it is, so
`spar ask ... > answer.md` stays a Markdown file.

Also ``printable``: text that came from a file or a share (names, paths, messages) made safe to
print — a name holding ESC, OSC, BEL, CR or a newline must not clear the screen, retitle the
window or forge an output line.
"""

from __future__ import annotations

import os
import re
from typing import Callable, TextIO

BOLD, NORMAL = "\x1b[1m", "\x1b[22m"

# C0 controls, DEL and C1 controls (a terminal acts on all of them), and lone surrogates (an
# undecodable byte kept by surrogateescape: printing it would raise).
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(m: "re.Match[str]") -> str:
    c = m[0]
    if c in _NAMED:
        return _NAMED[c]
    code = ord(c)
    if 0xDC80 <= code <= 0xDCFF:  # surrogateescape's stand-in for the byte code - 0xDC00
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def printable(text: object) -> str:
    """``text`` with control characters shown as visible escapes (``\\x1b``, ``\\n``, ``\\r``...);
    other Unicode (accents, CJK, emoji) is left as it is. For human-readable output only: JSON
    output is escaped by json.dumps already."""
    s = text if isinstance(text, str) else str(text)
    return _UNPRINTABLE.sub(_escape, s)


_UNPRINTABLE_IN_BODY = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def printable_body(text: object) -> str:
    """Like ``printable`` for running text (an answer, a passage, a message): line breaks and
    tabs stay as they are (Windows line ends become plain newlines); every other control
    character is shown as an escape, so a passage quoted from a hostile file cannot drive the
    terminal."""
    s = text if isinstance(text, str) else str(text)
    return _UNPRINTABLE_IN_BODY.sub(_escape, s.replace("\r\n", "\n"))


def wants_rendering(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def wants_ansi() -> bool:
    return not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"


class MarkdownStream:
    """Streams text to ``write`` with ``**`` pairs turned into bold on/off (``ansi``) or removed.

    Tokens arrive in pieces, so one trailing '*' is held back until the next piece says whether
    it starts a '**'. A lone '*' (e.g. '5 * 3') is written as it is."""

    def __init__(self, write: Callable[[str], object], ansi: bool = True) -> None:
        self._write = write
        self.ansi = ansi
        self.bold = False
        self._pending = ""

    def write(self, text: str) -> None:
        text = self._pending + text
        self._pending = ""
        if text.endswith("*") and not text.endswith("**"):
            text, self._pending = text[:-1], "*"
        out = []
        parts = text.split("**")
        for i, part in enumerate(parts):
            if i:
                self.bold = not self.bold
                if self.ansi:
                    out.append(BOLD if self.bold else NORMAL)
            out.append(part)
        if out:
            self._write("".join(out))

    def close(self) -> None:
        tail = self._pending
        self._pending = ""
        if self.bold and self.ansi:
            tail += NORMAL
        self.bold = False
        if tail:
            self._write(tail)


def terminal_writer(stream: TextIO) -> tuple[Callable[[str], None], Callable[[], None]]:
    """(write, close) for ``stream``: Markdown emphasis rendered when it is a terminal, else as is."""
    if not wants_rendering(stream):
        return (lambda text: stream.write(printable_body(text))), lambda: None
    md = MarkdownStream(stream.write, ansi=wants_ansi())  # escaped first: only our own bold codes pass
    return (lambda text: md.write(printable_body(text))), md.close

"""Reading text files of unknown encoding with bounded memory.

Legacy shares hold everything from UTF-16 exports to cp1252 notes and multi-hundred-MB logs, so
the encoding is decided from a bounded sample (BOM, then strict UTF-8, then charset-normalizer)
and the file is then streamed in blocks up to a character limit: memory is bounded by
``max_chars``, never by the file size.
"""

from __future__ import annotations

import codecs
from pathlib import Path
from typing import IO, Optional

SAMPLE_BYTES = 1 << 20  # enough for a confident guess; charset-normalizer is slow on more
_DETECT_BYTES = 256 * 1024
READ_BLOCK_CHARS = 1 << 20

# UTF-32 before UTF-16: the UTF-32-LE BOM begins with the UTF-16-LE one.
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def detect_encoding(sample: bytes) -> tuple[str, Optional[str]]:
    """(encoding, warning or None) for a file starting with ``sample``."""
    for bom, enc in _BOMS:
        if sample.startswith(bom):
            return enc, None
    try:
        # final=False: the sample may end in the middle of a multi-byte character.
        codecs.getincrementaldecoder("utf-8")().decode(sample, final=False)
        return "utf-8", None
    except UnicodeDecodeError:
        pass
    utf16 = _bomless_utf16(sample)
    if utf16:
        return utf16, None
    return _legacy_encoding(sample[:_DETECT_BYTES])


def _legacy_encoding(sample: bytes) -> tuple[str, Optional[str]]:
    """A single-byte code page via charset-normalizer, biased towards Windows-1252.

    charset-normalizer's first pick among sibling code pages (cp1250/1252/1257, DOS, Mac) is
    unreliable on Western text: they decode the same bytes, differing in a few letters. So among
    near-equally clean candidates we take the most coherent (language-wise), and prefer cp1252
    on ties or when the winner is a DOS/Mac code page, since on Windows file shares the ANSI
    code page is by far the likeliest.
    """
    from charset_normalizer import from_bytes  # deferred: ~0.1 s to import; most files are UTF-8

    try:
        sample.decode("cp1252")
        cp1252_ok = True
    except UnicodeDecodeError:
        cp1252_ok = False
    results = list(from_bytes(sample))
    if not results:
        if cp1252_ok:
            return "cp1252", None
        return "latin-1", "text encoding not recognised; decoded as Latin-1"
    best = min(results, key=lambda m: m.chaos)
    close = [m for m in results if m.chaos <= best.chaos + 0.2]
    top = max(m.coherence for m in close)
    if cp1252_ok and any(m.encoding == "cp1252" and m.coherence >= top - 0.05 for m in close):
        return "cp1252", None
    pick = max(close, key=lambda m: (m.coherence, -m.chaos))
    if cp1252_ok and pick.encoding.startswith(("cp4", "cp7", "cp8", "mac_")):
        return "cp1252", None
    return pick.encoding, None


def _bomless_utf16(sample: bytes) -> Optional[str]:
    """UTF-16 without a BOM shows as NUL in every other byte for Latin text."""
    head = sample[:4096]
    if len(head) < 16:
        return None
    even, odd = head[0::2], head[1::2]
    if odd.count(0) > 0.4 * len(odd) and even.count(0) < 0.05 * len(even):
        return "utf-16-le"
    if even.count(0) > 0.4 * len(even) and odd.count(0) < 0.05 * len(odd):
        return "utf-16-be"
    return None


def sniff_file_encoding(path: Path) -> tuple[str, Optional[str]]:
    with open(path, "rb") as f:
        return detect_encoding(f.read(SAMPLE_BYTES))


def open_text(path: Path, encoding: str, newline: Optional[str] = None) -> IO[str]:
    """Text stream that never fails on bad bytes (they become U+FFFD); universal newlines by
    default so offsets never depend on CRLF vs LF."""
    return open(path, encoding=encoding, errors="replace", newline=newline)


def read_bounded(stream: IO[str], max_chars: int) -> tuple[str, bool]:
    """Up to ``max_chars`` characters from ``stream`` in blocks; (text, truncated)."""
    parts: list[str] = []
    left = max_chars
    while left > 0:
        block = stream.read(min(READ_BLOCK_CHARS, left))
        if not block:
            return "".join(parts), False
        parts.append(block)
        left -= len(block)
    return "".join(parts), bool(stream.read(1))


def read_text_file(path: Path, max_chars: int) -> tuple[str, list[str]]:
    """Decoded text of ``path`` (at most ``max_chars`` chars) and warnings."""
    encoding, warning = sniff_file_encoding(path)
    warnings = [warning] if warning else []
    with open_text(path, encoding) as f:
        text, truncated = read_bounded(f, max_chars)
    if truncated:
        warnings.append(f"file truncated: only the first {max_chars:,} characters were read")
    if "\x00" in text:
        text = text.replace("\x00", "")  # stray NULs break downstream tokenizers and SQLite FTS
    bad = text.count("\ufffd")
    if bad:
        warnings.append(f"{bad} undecodable byte sequence(s) replaced (decoded as {encoding})")
    return text, warnings

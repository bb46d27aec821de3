"""Immutable values passed between extraction, chunking, embedding and retrieval."""

from __future__ import annotations

import re

from dataclasses import dataclass, field
from typing import Optional


@dataclass(frozen=True)
class PageText:
    """Text of one page (1-based ``page``); formats without pages yield a single page 1."""

    page: int
    text: str


@dataclass(frozen=True)
class ExtractedDocument:
    """Everything extraction found in one file.

    ``text`` is the pages joined with '\\n\\n'; ``page_offsets[i]`` is the char offset in ``text``
    where pages[i] starts, so any char span maps back to a page span. ``warnings`` are
    non-fatal notes (e.g. 'page 3 has no text layer'); ``no_text_reason`` is set when the file
    yielded no text at all (scanned PDF, image) so callers report it instead of indexing nothing.
    """

    pages: tuple[PageText, ...]
    format: str
    title: Optional[str] = None
    warnings: tuple[str, ...] = ()
    no_text_reason: Optional[str] = None

    @property
    def text(self) -> str:
        return "\n\n".join(p.text for p in self.pages)

    @property
    def page_offsets(self) -> tuple[int, ...]:
        offsets, pos = [], 0
        for p in self.pages:
            offsets.append(pos)
            pos += len(p.text) + 2
        return tuple(offsets)


@dataclass(frozen=True)
class Chunk:
    """A piece of a document. Children (level 'child') are searched; parents give context.

    ``chunk_id`` is stable for the same (content, chunker config): '<ordinal>' within the file,
    e.g. 'p3' for the 4th parent, 'c17' for the 18th child. ``parent_id`` names the parent of a
    child (None for parents and for flat chunkers). Offsets are into ExtractedDocument.text.
    """

    chunk_id: str
    text: str
    char_start: int
    char_end: int
    page_start: int
    page_end: int
    level: str = "child"  # child | parent | flat
    parent_id: Optional[str] = None
    context: Optional[str] = None  # contextual-enhancement prefix (LLM-written), when enabled
    file_id: Optional[int] = None

    @property
    def embed_text(self) -> str:
        """What the encoder sees: the optional context prefix, then the chunk text."""
        return f"{self.context}\n\n{self.text}" if self.context else self.text


@dataclass(frozen=True)
class ChunkerConfig:
    """Identifies a chunking so cached chunks/vectors are reused only for the same config."""

    method: str = "hierarchical"  # hierarchical | fixed | semantic
    child_tokens: int = 200
    parent_tokens: int = 800
    overlap_tokens: int = 30
    semantic_threshold: float = 0.25  # percentile drop for semantic breakpoints
    contextual: bool = False
    extra: tuple[tuple[str, str], ...] = field(default_factory=tuple)

    @property
    def cache_key(self) -> str:
        parts = [
            self.method,
            f"c{self.child_tokens}",
            f"p{self.parent_tokens}",
            f"o{self.overlap_tokens}",
        ]
        if self.method == "semantic":
            parts.append(f"t{self.semantic_threshold}")
        if self.contextual:
            parts.append("ctx")
        parts.extend(f"{k}={v}" for k, v in self.extra)
        return "-".join(parts)

_SURROGATES = re.compile("[\ud800-\udfff]")


def storable_text(text: str) -> str:
    """Text every later step can encode as UTF-8 (SQLite, Chroma, the tokenizer): a lone surrogate
    (a JSON "\\ud800" escape, an undecodable byte kept as an escape, such a byte in a typed query)
    becomes U+FFFD. Lengths are kept, so offsets into the text stay valid."""
    return _SURROGATES.sub("\ufffd", text) if _SURROGATES.search(text) else text

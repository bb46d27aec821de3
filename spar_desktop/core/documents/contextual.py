"""Contextual enhancement: an LLM-written line situating each chunk within its document.

The context is stored beside the chunk (``Chunk.context``) and only prepended for embedding
(``Chunk.embed_text``); the chunk text itself, its offsets and its citations stay untouched.
It is off by default because it costs one LLM call per searchable chunk.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Callable, Optional

from spar_desktop.core.documents.types import Chunk, ExtractedDocument

log = logging.getLogger(__name__)

ContextFn = Callable[[str, str], str]


class ContextFailed(Exception):
    """Raised by a context function whose caller wants no fallback (an evaluation must not cache
    or measure plain passages as contextual ones): ``contextualize`` lets it through."""

# Local LLMs have small context windows and long legacy documents are common, so the LLM sees
# the document's opening (title, abstract, headings) plus the neighbourhood of the chunk.
DOC_EXCERPT_CHARS = 12_000
# The context shares the encoder's 256-token window with the chunk; keep it to a few sentences.
MAX_CONTEXT_CHARS = 600


def document_excerpt(text: str, title: Optional[str], start: int, end: int,
                     limit: int = DOC_EXCERPT_CHARS) -> str:
    """What the LLM sees of the document for the chunk at [start, end)."""
    head = f"{title}\n\n" if title else ""
    if len(text) <= limit:
        return head + text
    half = limit // 2
    lo = min(max(0, (start + end) // 2 - half // 2), len(text) - half)
    if lo <= half:  # the chunk lies near the start: one contiguous excerpt covers both
        return head + text[:limit]
    return f"{head}{text[:half]}\n[...]\n{text[lo:lo + half]}"


def contextualize(chunks: list[Chunk], doc: ExtractedDocument,
                  context_fn: Optional[ContextFn],
                  max_context_chars: int = MAX_CONTEXT_CHARS) -> list[Chunk]:
    """Chunks with ``context`` set by ``context_fn(document_excerpt, chunk_text)``.

    Only searchable chunks (child/flat) get a context: parents are never embedded. All or
    nothing: if ``context_fn`` is None or raises for any chunk, the input chunks are returned
    unchanged (with a warning) so one collection never mixes enhanced and plain vectors.
    """
    if context_fn is None:
        log.warning("contextual chunking requested but no context function given; skipped")
        return chunks
    text = doc.text
    out: list[Chunk] = []
    for c in chunks:
        if c.level == "parent":
            out.append(c)
            continue
        try:
            ctx = context_fn(document_excerpt(text, doc.title, c.char_start, c.char_end), c.text)
        except ContextFailed:
            raise
        except Exception as exc:  # the LLM is optional: any failure falls back to plain chunks
            log.warning("contextual enhancement failed (%s: %s); using plain chunks",
                        type(exc).__name__, exc)
            return chunks
        ctx = clean_context(ctx, max_context_chars)
        out.append(dataclasses.replace(c, context=ctx or None))
    return out


def clean_context(reply: object, max_context_chars: int = MAX_CONTEXT_CHARS) -> str:
    """A model's reply as a context line: one line of whitespace-collapsed text, capped."""
    return " ".join(str(reply or "").split())[:max_context_chars]


def passage_context(text: str, title: Optional[str], chunk: Chunk, context_fn: ContextFn) -> str:
    """The context line for one passage of a document whose text is ``text`` (raises what
    ``context_fn`` raises: the caller decides what a failure means)."""
    return clean_context(context_fn(document_excerpt(text, title, chunk.char_start, chunk.char_end), chunk.text))


def text_from_chunks(chunks: list[Chunk] | tuple[Chunk, ...]) -> str:
    """The document text rebuilt from its chunks at their offsets (parents cover it; the gaps
    between them are whitespace the chunker dropped): a cached document gets its contexts
    without opening the file again."""
    end = max((c.char_end for c in chunks), default=0)
    buf = [" "] * end
    for c in chunks:
        buf[c.char_start:c.char_end] = c.text
    return "".join(buf)

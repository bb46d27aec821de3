"""The searchable chunks of a searcher as columns: keys, texts, page spans, parents, files.

Columns rather than one Chunk object per chunk so that a saved searcher (searcher_state.py) can
be opened without building 50k objects: texts may be a ``PackedTexts`` over a memory-mapped
UTF-8 blob, decoded only for the chunks a query returns, and page spans are small int arrays.
A searcher built from documents holds the chunks' own str objects (no copy).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional, Sequence

import numpy as np


class PackedTexts(Sequence[str]):
    """Texts stored back to back as UTF-8 (``blob``, often a read-only memmap) with ``offsets``
    (n + 1 int64): text i is blob[offsets[i]:offsets[i+1]]."""

    def __init__(self, blob: np.ndarray, offsets: np.ndarray) -> None:
        self.blob, self.offsets = blob, offsets

    @staticmethod
    def pack(texts: Iterable[str]) -> tuple[np.ndarray, np.ndarray]:
        parts = [t.encode("utf-8") for t in texts]
        offsets = np.zeros(len(parts) + 1, dtype=np.int64)
        if parts:
            np.cumsum([len(b) for b in parts], out=offsets[1:])
        return np.frombuffer(b"".join(parts), dtype=np.uint8), offsets

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        return self.blob[int(self.offsets[i]):int(self.offsets[i + 1])].tobytes().decode("utf-8")


@dataclass
class ChunkTable:
    """Per chunk position: key '<doc id>#<chunk id>', doc id, text, page span, parent; per
    document: title, (content hash, chunker key) and file id. ``parent_pos[p]`` indexes the
    parent columns (-1: none); ``orphans`` names a parent id whose parent text is unknown."""

    keys: list[str] = field(default_factory=list)
    doc_of: list[str] = field(default_factory=list)
    texts: Sequence[str] = field(default_factory=list)
    pages: Any = field(default_factory=list)  # (n, 2) int32 once frozen
    parent_pos: Any = field(default_factory=list)  # (n,) int32 once frozen
    parent_ids: list[str] = field(default_factory=list)
    parent_texts: Sequence[str] = field(default_factory=list)
    orphans: dict[int, str] = field(default_factory=dict)
    contexts: dict[int, str] = field(default_factory=dict)  # contextual-enhancement prefixes, when any
    titles: dict[str, Optional[str]] = field(default_factory=dict)
    doc_refs: dict[str, tuple[str, str]] = field(default_factory=dict)
    file_ids: dict[str, Optional[int]] = field(default_factory=dict)

    def add_document(self, doc_id: str, title: Optional[str], ref: tuple[str, str], file_id: Optional[int],
                     parents: Mapping[str, str], children: Sequence[Any]) -> None:
        assert isinstance(self.texts, list) and isinstance(self.parent_texts, list)
        self.titles[doc_id], self.doc_refs[doc_id], self.file_ids[doc_id] = title, ref, file_id
        where: dict[str, int] = {}
        for pid, text in parents.items():
            where[pid] = len(self.parent_ids)
            self.parent_ids.append(pid)
            self.parent_texts.append(text)
        for c in children:
            p = len(self.keys)
            self.keys.append(f"{doc_id}#{c.chunk_id}")
            self.doc_of.append(doc_id)
            self.texts.append(c.text)
            self.pages.append((c.page_start, c.page_end))
            self.parent_pos.append(where.get(c.parent_id, -1) if c.parent_id else -1)
            if c.parent_id and c.parent_id not in where:
                self.orphans[p] = c.parent_id
            if c.context:
                self.contexts[p] = c.context

    def frozen(self) -> "ChunkTable":
        self.pages = np.asarray(self.pages, dtype=np.int32).reshape(len(self.keys), 2)
        self.parent_pos = np.asarray(self.parent_pos, dtype=np.int32).reshape(len(self.keys))
        return self

    def __len__(self) -> int:
        return len(self.keys)

    def chunk_id(self, p: int) -> str:
        return self.keys[p][len(self.doc_of[p]) + 1:]

    def parent(self, p: int) -> tuple[Optional[str], Optional[str]]:
        """(parent id, parent text) of chunk ``p``."""
        i = int(self.parent_pos[p])
        if i >= 0:
            return self.parent_ids[i], self.parent_texts[i]
        return self.orphans.get(p), None

    def embed_text(self, p: int) -> str:
        """What the encoder and the BM25 index saw (Chunk.embed_text)."""
        ctx = self.contexts.get(p)
        return f"{ctx}\n\n{self.texts[p]}" if ctx else self.texts[p]


def intern_all(values: Iterable[str]) -> list[str]:
    """Loaded ids repeat ('p3' in every document): one str object each."""
    return [sys.intern(v) for v in values]

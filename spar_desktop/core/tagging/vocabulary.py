"""The tags a file can be given, as text to compare summaries with, and their place in the DAG.

Date tags are never suggested (a document's date is read, not guessed). A tag's text is its label,
its description and the labels of its ancestors ("mac (comp > sys)"): the same idea as the tag
vocabulary index of workspaces (``workspaces.tag_index.tag_text``), written here because tagging
sits below workspaces and must not import it.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
from sqlalchemy import select

from spar_desktop.core.library.database import Library
from spar_desktop.core.library.models import Tag, TagEdge, TagSource

SUGGESTABLE_SOURCES = (TagSource.PATH, TagSource.TAXONOMY, TagSource.USER, TagSource.AUTO, TagSource.LLM)
_ANCESTORS_IN_TEXT = 3


def tag_text(value: str, description: Optional[str], ancestors: list[str]) -> str:
    """What a summary is compared with: the label, its description, where it sits (nearest last)."""
    text = value.replace("_", " ").replace("-", " ").strip()
    if description:
        text += f". {description.strip()}"
    if ancestors:
        text += f" ({' > '.join(ancestors)})"
    return text


@dataclass(frozen=True)
class Vocabulary:
    ids: tuple[int, ...]  # tag ids, in the row order of ``vectors``
    keys: tuple[str, ...]
    values: tuple[str, ...]
    sources: tuple[str, ...]
    texts: tuple[str, ...]
    labels: tuple[str, ...]  # unique display names for an LLM prompt ("mac (comp > sys)" when values clash)
    ancestors: dict[int, frozenset[int]]  # tag id -> every ancestor id (all sources)

    @property
    def fingerprint(self) -> str:
        h = hashlib.sha1()
        for tid, text in zip(self.ids, self.texts):
            h.update(f"{tid}\x00{text}\x01".encode("utf-8", "replace"))
        return h.hexdigest()[:16]

    def index(self) -> dict[int, int]:
        return {tid: i for i, tid in enumerate(self.ids)}


def _all_ancestors(parents: dict[int, list[int]]) -> dict[int, frozenset[int]]:
    memo: dict[int, frozenset[int]] = {}

    def walk(tid: int) -> frozenset[int]:
        # Iterative with a visited set: deep or (defensively) cyclic graphs must not recurse.
        seen: set[int] = set()
        stack = list(parents.get(tid, ()))
        while stack:
            p = stack.pop()
            if p in seen or p == tid:
                continue
            seen.add(p)
            if p in memo:
                seen |= memo[p]
                continue
            stack.extend(parents.get(p, ()))
        return frozenset(seen)

    for tid in parents:
        memo[tid] = walk(tid)
    return memo


def load_vocabulary(library: Library) -> Vocabulary:
    with library.session() as s:
        rows = list(s.execute(select(Tag.id, Tag.key, Tag.value, Tag.source, Tag.description).order_by(Tag.id)))
        parents: dict[int, list[int]] = defaultdict(list)
        for p, c in s.execute(select(TagEdge.parent_id, TagEdge.child_id)):
            parents[c].append(p)
    value_of = {r.id: r.value for r in rows}
    ancestors = _all_ancestors(parents)
    chosen = [r for r in rows if r.source in SUGGESTABLE_SOURCES]
    texts, labels = [], []
    seen_values: dict[str, int] = defaultdict(int)
    for r in chosen:
        seen_values[r.value.lower()] += 1
    for r in chosen:
        chain: list[str] = []
        tid = r.id
        while parents.get(tid) and len(chain) < _ANCESTORS_IN_TEXT:  # the first parent's line
            tid = parents[tid][0]
            if tid == r.id or value_of.get(tid) in chain:
                break
            chain.insert(0, value_of.get(tid, ""))
        texts.append(tag_text(r.value, r.description, chain))
        label = r.value if seen_values[r.value.lower()] == 1 else f"{r.value} ({' > '.join(chain) or r.key})"
        labels.append(" ".join(label.split()))
    counts: dict[str, int] = defaultdict(int)
    for label in labels:
        counts[label.lower()] += 1
    labels = [lab if counts[lab.lower()] == 1 else f"{lab} [{r.key}]" for lab, r in zip(labels, chosen)]
    return Vocabulary(tuple(r.id for r in chosen), tuple(r.key for r in chosen), tuple(r.value for r in chosen),
                      tuple(r.source for r in chosen), tuple(texts), tuple(labels), ancestors)


_VECTORS: dict[tuple[str, str], np.ndarray] = {}


def tag_vectors(vocab: Vocabulary, encoder: Any) -> np.ndarray:
    """L2-normalised vectors of the vocabulary's texts; kept per (model, vocabulary) in memory."""
    key = (encoder.model_id, vocab.fingerprint)
    if key not in _VECTORS:
        vecs = np.asarray(encoder.encode(list(vocab.texts)), dtype=np.float32) if vocab.texts else \
            np.zeros((0, 1), dtype=np.float32)
        if len(vecs):
            vecs /= np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
        _VECTORS.clear()  # one vocabulary at a time is what a process uses
        _VECTORS[key] = vecs
    return _VECTORS[key]

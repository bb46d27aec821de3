"""Keeping the tag vocabulary index in step with the tags, incrementally (issue 29).

The state lives in SQL (``tag_vocabulary``, ``tag_words``): which tags are indexed, their label
words and what their embedded texts were made from. A sync finds new, changed and deleted tags
with a few joins, writes their words at once (lexical matching works right away), and embeds the
tags not embedded yet in committed batches: resumable, cancellable, with progress. It never reads
the tag collection back whole: at 30,000 folder tags that read died inside Chroma with "too many
SQL variables", and cost seconds on every request before that.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional, Sequence

import numpy as np
from sqlalchemy import and_, delete, func, or_, select, update

from spar_desktop.core.library.database import Library
from spar_desktop.core.library.models import Tag, TagEdge, TagSource
from spar_desktop.core.progress import CancelToken, Progress, ProgressCallback, check, no_progress
from spar_desktop.core.workspaces.models import TagVocabularyEntry as Entry
from spar_desktop.core.workspaces.models import TagVocabularyMeta, TagWord

# Date tags are matched by the date rules, never semantically ('May 2019' ~ 'June 2019').
INDEXED_SOURCES = (TagSource.PATH, TagSource.TAXONOMY, TagSource.USER, TagSource.AUTO, TagSource.LLM)
LABEL_SUFFIX = ":label"
EMBED_BATCH = 256  # tags per committed batch: a killed sync loses at most one
_IN_CHUNK = 500  # ids per IN (...) list
_SEEN_LIMIT = 20_000  # distinct texts kept per run (~30 MB of MiniLM vectors at most)


@dataclass(frozen=True)
class TagText:
    """What one tag contributes to the collection: ``"<id>"`` (label, description, ancestors)
    and, when that differs from the label, ``"<id>:label"`` (the label alone)."""

    tag_id: int
    key: str
    source: str
    texts: dict[str, str]

    @property
    def fingerprints(self) -> dict[str, str]:
        """Per collection id, as stored in its metadata (the same hash releases before issue 29
        stored, so their vectors are kept on upgrade)."""
        return {i: hashlib.sha1(text.encode()).hexdigest()[:16] for i, text in self.texts.items()}

    @property
    def fingerprint(self) -> str:
        """The tag's state: all its texts together."""
        joined = "\x00".join(f"{i}={fp}" for i, fp in sorted(self.fingerprints.items()))
        return hashlib.sha1(joined.encode()).hexdigest()[:16]


def _chunks(ids: Sequence[int]) -> Iterable[list[int]]:
    ids = list(ids)
    for i in range(0, len(ids), _IN_CHUNK):
        yield ids[i:i + _IN_CHUNK]


def _parent_count():
    return (select(func.count(TagEdge.id)).where(TagEdge.child_id == Tag.id).correlate(Tag).scalar_subquery())


def signature(s) -> str:
    """Changes when tags or edges are added or deleted, or a description is set (the ways the
    index changes tags; labels are never edited in place): counts, highest ids and the newest
    creation time (SQLite may give a new row the id of a deleted last one)."""
    tags = s.execute(select(func.count(Tag.id), func.max(Tag.id), func.max(Tag.created_at),
                            func.count(Tag.description))).one()
    edges = s.execute(select(func.count(TagEdge.id), func.max(TagEdge.id))).one()
    return ",".join(str(x or 0) for x in (*tags, *edges))


def stored_signature(s) -> Optional[str]:
    return s.scalar(select(TagVocabularyMeta.value).where(TagVocabularyMeta.key == "signature"))


def store_signature(s, value: str) -> None:
    s.execute(delete(TagVocabularyMeta).where(TagVocabularyMeta.key == "signature"))
    s.add(TagVocabularyMeta(key="signature", value=value))


def changed_tags(s) -> tuple[list[int], list[int]]:
    """(tags to (re)index, tags to drop): new tags, tags whose label, description or parents
    changed (and the children of a relabelled tag: their text names it), deleted ones."""
    new = list(s.scalars(select(Tag.id).outerjoin(Entry, Entry.tag_id == Tag.id)
                         .where(Entry.tag_id.is_(None), Tag.source.in_(INDEXED_SOURCES))))
    gone = list(s.scalars(select(Entry.tag_id).outerjoin(Tag, Tag.id == Entry.tag_id)
                          .where(or_(Tag.id.is_(None), Tag.source.not_in(INDEXED_SOURCES)))))
    differs = or_(Tag.value != Entry.value,
                  func.coalesce(Tag.description, "") != func.coalesce(Entry.description, ""),
                  _parent_count() != Entry.parents)
    changed = list(s.scalars(select(Tag.id).join(Entry, Entry.tag_id == Tag.id)
                             .where(Tag.source.in_(INDEXED_SOURCES), differs)))
    relabelled = list(s.scalars(select(Tag.id).join(Entry, Entry.tag_id == Tag.id).where(Tag.value != Entry.value)))
    for part in _chunks(relabelled):
        changed += list(s.scalars(select(TagEdge.child_id).join(Entry, Entry.tag_id == TagEdge.child_id)
                                  .where(TagEdge.parent_id.in_(part))))
    return sorted(set(new) | set(changed)), sorted(set(gone))


def tag_texts(s, tag_ids: Sequence[int], text_of: Callable[[Any, list[str]], str],
              label_of: Callable[[str], str]) -> dict[int, TagText]:
    """The texts of ``tag_ids``: only these tags, their parent edges and their parents are read.
    Ancestors in the text: the first two indexed parents, in edge order (as before issue 29)."""
    out: dict[int, TagText] = {}
    for part in _chunks(tag_ids):
        tags = {t.id: t for t in s.scalars(select(Tag).where(Tag.id.in_(part), Tag.source.in_(INDEXED_SOURCES)))}
        edges = list(s.execute(select(TagEdge.child_id, TagEdge.parent_id).where(TagEdge.child_id.in_(part))
                               .order_by(TagEdge.id)))
        parent_ids = sorted({p for _, p in edges})
        parents: dict[int, str] = {}
        for pp in _chunks(parent_ids):
            parents.update(s.execute(select(Tag.id, Tag.value)
                                     .where(Tag.id.in_(pp), Tag.source.in_(INDEXED_SOURCES))).all())
        chains: dict[int, list[str]] = {}
        for c, p in edges:
            if p in parents:
                chains.setdefault(c, []).append(parents[p])
        for tid, tag in tags.items():
            texts = {str(tid): text_of(tag, chains.get(tid, [])[:2])}
            label = label_of(tag.value)
            if label and label != texts[str(tid)]:
                texts[f"{tid}{LABEL_SUFFIX}"] = label
            out[tid] = TagText(tid, tag.key, tag.source, texts)
    return out


def index_words(s, tag_ids: Sequence[int], words_of: Callable[[str], list[str]]) -> None:
    """(Re)write the state rows and label words of ``tag_ids``; their embedding is redone
    (fp cleared) unless the caller keeps it. Tags gone since are skipped."""
    for part in _chunks(tag_ids):
        rows = list(s.execute(select(Tag.id, Tag.value, Tag.description, _parent_count().label("n"))
                              .where(Tag.id.in_(part), Tag.source.in_(INDEXED_SOURCES))))
        s.execute(delete(TagWord).where(TagWord.tag_id.in_(part)))
        s.execute(delete(Entry).where(Entry.tag_id.in_(part)))
        entries, words = [], []
        for tid, value, description, n in rows:
            w = words_of(value)
            entries.append({"tag_id": tid, "words": " ".join(w), "value": value, "description": description,
                            "parents": int(n or 0), "fp": None, "model_id": None, "texts": 0})
            words += [{"word": x[:200], "tag_id": tid} for x in dict.fromkeys(w)]
        if entries:
            s.execute(Entry.__table__.insert(), entries)
        if words:
            s.execute(TagWord.__table__.insert(), words)


def drop_tags(s, tag_ids: Sequence[int]) -> list[str]:
    """Forget ``tag_ids``; returns the collection ids whose vectors must go."""
    for part in _chunks(tag_ids):
        s.execute(delete(TagWord).where(TagWord.tag_id.in_(part)))
        s.execute(delete(Entry).where(Entry.tag_id.in_(part)))
    return [i for tid in tag_ids for i in (str(tid), f"{tid}{LABEL_SUFFIX}")]


def pending(s, model_id: str) -> list[int]:
    """Indexed tags without current vectors (never embedded, or by another model)."""
    return list(s.scalars(select(Entry.tag_id).where(or_(Entry.fp.is_(None), Entry.model_id != model_id))
                          .order_by(Entry.tag_id)))


def expected_vectors(s, model_id: str) -> int:
    return int(s.scalar(select(func.coalesce(func.sum(Entry.texts), 0))
                        .where(Entry.fp.is_not(None), Entry.model_id == model_id)) or 0)


def forget_embeddings(s) -> None:
    """The collection lost vectors (reset, deleted, another store): embed everything again
    (what is still there with the same texts is kept, see ``embed_pending``)."""
    s.execute(update(Entry).values(fp=None, model_id=None))


def embed_pending(library: Library, collection: Any, encoder: Any, text_of: Callable, label_of: Callable,
                  progress: ProgressCallback = no_progress, cancel: Optional[CancelToken] = None) -> int:
    """Embed the indexed tags that have no current vectors, EMBED_BATCH at a time, each batch
    committed with its state (a killed or cancelled sync resumes there). Vectors already in the
    collection with the same texts (an index from before this state existed) are kept, not
    re-encoded. Returns how many tags were embedded."""
    model_id = encoder.model_id
    with library.session() as s:
        todo = pending(s, model_id)
    total, done, embedded = len(todo), 0, 0
    seen: dict[str, np.ndarray] = {}  # text → vector for this run: 'reports (2019)' is in every project
    if total:
        progress(Progress(0, total, "embedding the tag vocabulary"))
    for start in range(0, total, EMBED_BATCH):
        check(cancel)
        batch = todo[start:start + EMBED_BATCH]
        with library.session() as s:
            texts = tag_texts(s, batch, text_of, label_of)
        have = _stored_fingerprints(collection, [i for t in texts.values() for i in t.texts])
        fresh = [t for t in texts.values() if any(have.get(i) != fp for i, fp in t.fingerprints.items())]
        ids = [i for t in fresh for i in t.texts]
        if ids:
            vectors = _encode_once([t.texts[i] for t in fresh for i in t.texts], encoder, seen, cancel)
            metas = [{"fp": fp, "key": t.key, "source": t.source} for t in fresh for fp in t.fingerprints.values()]
            collection.add(ids, vectors, metas)
        stale_labels = [f"{t.tag_id}{LABEL_SUFFIX}" for t in texts.values()
                        if f"{t.tag_id}{LABEL_SUFFIX}" not in t.texts and f"{t.tag_id}{LABEL_SUFFIX}" in have]
        if stale_labels:
            collection.delete(stale_labels)
        with library.session() as s:
            for t in texts.values():
                s.execute(update(Entry).where(Entry.tag_id == t.tag_id)
                          .values(fp=t.fingerprint, model_id=model_id, texts=len(t.texts)))
        embedded += len(fresh)
        done += len(batch)
        progress(Progress(done, total, f"embedded {done}/{total} tags"))
    return embedded


def _encode_once(texts: list[str], encoder: Any, seen: dict[str, np.ndarray],
                 cancel: Optional[CancelToken]) -> np.ndarray:
    """Vectors of ``texts``, encoding each distinct text once per run: a share's folder names
    repeat (thousands of 'reports', 'minutes', '2019'), so the distinct texts are a fraction."""
    new = [t for t in dict.fromkeys(texts) if t not in seen]
    if new:
        if len(seen) + len(new) > _SEEN_LIMIT:
            seen.clear()
        seen.update(zip(new, np.asarray(encoder.encode(new, cancel=cancel), dtype=np.float32)))
    return np.stack([seen[t] for t in texts])


def _stored_fingerprints(collection: Any, ids: list[str]) -> dict[str, Optional[str]]:
    """Fingerprints the collection holds for ``ids`` (a bounded lookup by id, never a full read)."""
    if not ids:
        return {}
    got = collection._col.get(ids=ids, include=["metadatas"])
    return {i: (m or {}).get("fp") for i, m in zip(got["ids"], got["metadatas"] or [])}


def tags_with_words(s, words: Sequence[str]) -> list[tuple[int, str, str, str]]:
    """(tag id, key, value, label words) of the indexed tags whose label has one of ``words``."""
    if not words:
        return []
    q = (select(Entry.tag_id, Tag.key, Tag.value, Entry.words)
         .join(Tag, Tag.id == Entry.tag_id)
         .where(Entry.tag_id.in_(select(TagWord.tag_id).where(TagWord.word.in_(sorted({w[:200] for w in words}))))))
    return list(s.execute(q))


def indexed_tags(s, tag_ids: Sequence[int]) -> dict[int, tuple[str, str]]:
    """tag id → (key, value) of those of ``tag_ids`` that are in the vocabulary."""
    out: dict[int, tuple[str, str]] = {}
    for part in _chunks(sorted(set(tag_ids))):
        q = select(Tag.id, Tag.key, Tag.value).join(Entry, and_(Entry.tag_id == Tag.id)).where(Tag.id.in_(part))
        out.update((tid, (key, value)) for tid, key, value in s.execute(q))
    return out

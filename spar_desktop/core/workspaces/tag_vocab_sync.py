"""Keeping the tag vocabulary index in step with the tags, incrementally (issues 29, 30).

The state lives in SQL (``tag_vocabulary``, ``tag_words``): which tags are indexed, their label
words, what their embedded texts were made from, and ``fp``, the key of the tag's text in the
vector store (tag_vectors.py; a tag also has a row for its label alone when that differs). A sync
finds new, changed and deleted tags with a few joins, writes their words at once (lexical
matching works right away), and gives the tags not embedded yet their rows in committed batches:
resumable, cancellable, with progress. Only texts the store does not hold are encoded: a share's
folder names repeat, so 12,000 tags are ~500 texts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, NamedTuple, Optional, Sequence

from sqlalchemy import and_, bindparam, delete, func, or_, select, update

from spar_desktop.core.library.bulk import execute_rows, insert_rows
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.models import Tag, TagEdge, TagSource
from spar_desktop.core.library.raw_rows import driver_cursor, driver_rows, ids_in
from spar_desktop.core.progress import CancelToken, Progress, ProgressCallback, check, no_progress
from spar_desktop.core.workspaces.models import TagVocabularyEntry as Entry
from spar_desktop.core.workspaces.models import TagVocabularyMeta, TagWord
from spar_desktop.core.workspaces.tag_vectors import text_key

# Date tags are matched by the date rules, never semantically ('May 2019' ~ 'June 2019').
INDEXED_SOURCES = (TagSource.PATH, TagSource.TAXONOMY, TagSource.USER, TagSource.AUTO, TagSource.LLM)
LABEL_SUFFIX = ":label"
# Tags per committed batch: a killed sync loses at most one. Each batch pays its reads, a store
# append with fsync and a commit: 2,000 made 60 batches at 1M files, 10,000 saves 1-2 s of CPU.
EMBED_BATCH = 10_000
_IN_CHUNK = 500  # ids per IN (...) list of bound values
_LITERAL_CHUNK = 5000  # ids per IN (...) list written into the SQL (integers: nothing to escape)


@dataclass(frozen=True)
class TagText:
    """What one tag contributes to the vector store: ``"<id>"`` (label, description, ancestors)
    and, when that differs from the label, ``"<id>:label"`` (the label alone)."""

    tag_id: int
    key: str
    source: str
    texts: dict[str, str]


def _chunks(ids: Sequence[int], size: int = _IN_CHUNK) -> Iterable[list[int]]:
    ids = list(ids)
    for i in range(0, len(ids), size):
        yield ids[i:i + size]


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


class _TagRow(NamedTuple):
    """The columns of a tag that ``text_of`` reads, as attributes."""

    id: int
    key: str
    value: str
    description: Optional[str]
    source: str


def tag_texts(s, tag_ids: Sequence[int], text_of: Callable[[Any, list[str]], str],
              label_of: Callable[[str], str]) -> dict[int, TagText]:
    """The texts of ``tag_ids``: only these tags, their parent edges and their parents are read.
    Ancestors in the text: the first two indexed parents, in edge order (as before issue 29).
    Rows come on the driver's cursor and each distinct (label, description, parents) is made
    into text once: a share's folder names repeat (118k tags at 1M files, ~2,000 texts), and
    the per-tag work was 5 s of a first request there."""
    out: dict[int, TagText] = {}
    made: dict[tuple, tuple[str, str]] = {}
    for part in _chunks(tag_ids, _LITERAL_CHUNK):
        tags = [_TagRow(*row) for row in driver_rows(s, select(Tag.id, Tag.key, Tag.value, Tag.description, Tag.source)
                                                     .where(ids_in(Tag.id, part), Tag.source.in_(INDEXED_SOURCES)))]
        edges = driver_rows(s, select(TagEdge.child_id, TagEdge.parent_id).where(ids_in(TagEdge.child_id, part))
                            .order_by(TagEdge.id))
        parent_ids = sorted({p for _, p in edges})
        parents: dict[int, str] = {}
        for pp in _chunks(parent_ids, _LITERAL_CHUNK):
            parents.update(driver_rows(s, select(Tag.id, Tag.value)
                                       .where(ids_in(Tag.id, pp), Tag.source.in_(INDEXED_SOURCES))))
        chains: dict[int, list[str]] = {}
        for c, p in edges:
            if p in parents:
                chains.setdefault(c, []).append(parents[p])
        for tag in tags:
            chain = chains.get(tag.id, [])[:2]
            memo = (tag.value, tag.description, *chain)
            if memo not in made:
                made[memo] = (text_of(tag, chain), label_of(tag.value))
            text, label = made[memo]
            texts = {str(tag.id): text}
            if label and label != text:
                texts[f"{tag.id}{LABEL_SUFFIX}"] = label
            out[tag.id] = TagText(tag.id, tag.key, tag.source, texts)
    return out


def index_words(s, tag_ids: Sequence[int], words_of: Callable[[str], list[str]]) -> None:
    """(Re)write the state rows and label words of ``tag_ids``; their embedding is redone
    (fp cleared) unless the caller keeps it. Tags gone since are skipped. Each distinct label
    is split into words once (labels repeat across same-named folders)."""
    split: dict[str, list[str]] = {}
    for part in _chunks(tag_ids, _LITERAL_CHUNK):
        rows = driver_rows(s, select(Tag.id, Tag.value, Tag.description, _parent_count().label("n"))
                           .where(ids_in(Tag.id, part), Tag.source.in_(INDEXED_SOURCES)))
        s.execute(delete(TagWord).where(ids_in(TagWord.tag_id, part)))
        s.execute(delete(Entry).where(ids_in(Entry.tag_id, part)))
        entries, words = [], []
        for tid, value, description, n in rows:
            w = split.get(value)
            if w is None:
                w = split[value] = words_of(value)
            entries.append({"tag_id": tid, "words": " ".join(w), "value": value, "description": description,
                            "parents": int(n or 0), "fp": None, "model_id": None, "texts": 0})
            words += [{"word": x[:200], "tag_id": tid} for x in dict.fromkeys(w)]
        insert_rows(s.connection(), Entry.__table__, entries)
        insert_rows(s.connection(), TagWord.__table__, words)


def drop_tags(s, tag_ids: Sequence[int]) -> None:
    """Forget ``tag_ids`` (their texts' rows stay: other tags may share them, and no tag
    points to an unused row, so it never matches)."""
    for part in _chunks(tag_ids):
        s.execute(delete(TagWord).where(TagWord.tag_id.in_(part)))
        s.execute(delete(Entry).where(Entry.tag_id.in_(part)))


def has_entries(s) -> bool:
    return s.scalar(select(Entry.tag_id).limit(1)) is not None


def pending(s, model_id: str) -> list[int]:
    """Indexed tags without current vectors (never embedded, or by another model)."""
    return list(s.scalars(select(Entry.tag_id).where(or_(Entry.fp.is_(None), Entry.model_id != model_id))
                          .order_by(Entry.tag_id)))


def missing_from(s, model_id: str, store: Any, label_of: Callable[[str], str]) -> int:
    """Tags marked embedded whose texts the store does not hold (it was deleted, or a shared
    database was filled by another machine, or the state predates the store: its ``fp`` then
    names no row): marked pending again. Reads the distinct fingerprints and labels, never
    every tag. Returns how many tags were marked."""
    fps = list(s.scalars(select(Entry.fp).where(Entry.fp.is_not(None), Entry.model_id == model_id).distinct()))
    lost = [fp for fp in fps if not store.has(fp)]
    values = list(s.scalars(select(Entry.value).where(Entry.fp.is_not(None), Entry.model_id == model_id,
                                                      Entry.texts > 1).distinct()))
    lost_values = [v for v in values if not store.has(text_key(label_of(v)))]
    marked = 0
    for part in _chunks(lost):
        marked += s.execute(update(Entry).where(Entry.fp.in_(part)).values(fp=None, model_id=None)).rowcount or 0
    for part in _chunks(lost_values):
        marked += s.execute(update(Entry).where(Entry.value.in_(part)).values(fp=None, model_id=None)).rowcount or 0
    return marked


def embed_pending(library: Library, store: Any, encoder: Callable[[], Any], model_id: str, text_of: Callable,
                  label_of: Callable, progress: ProgressCallback = no_progress,
                  cancel: Optional[CancelToken] = None) -> int:
    """Give every indexed tag without current vectors its rows in ``store``: only texts the store
    does not hold yet are encoded (once each, length-sorted by the encoder), then the tags'
    state is written in one statement per batch, each batch committed (a killed or cancelled
    sync resumes there). ``encoder`` is called only when something must be encoded. Returns how
    many tags were brought up to date."""
    with library.session() as s:
        todo = pending(s, model_id)
    total, done = len(todo), 0
    if total:
        progress(Progress(0, total, "embedding the tag vocabulary"))
    for start in range(0, total, EMBED_BATCH):
        check(cancel)
        batch = todo[start:start + EMBED_BATCH]
        with library.session() as s:
            texts = tag_texts(s, batch, text_of, label_of)
        # Each distinct text hashed once (a comprehension over the tags hashed it per tag: 0.7 s at 1M).
        keys = {x: text_key(x) for x in {x for tt in texts.values() for x in tt.texts.values()}}
        new = [t for t, key in keys.items() if not store.has(key)]
        if new:
            store.add(new, encoder().encode(new, cancel=cancel))
        # fp, the tag's state and where its vector is: the key of its full text (which holds its
        # label, so the label row follows from it).
        rows = [{"tid": t.tag_id, "fp": keys[t.texts[str(t.tag_id)]], "n": len(t.texts)} for t in texts.values()]
        if rows:
            with library.session() as s:
                execute_rows(s.connection(), update(Entry.__table__).where(Entry.__table__.c.tag_id == bindparam("tid"))
                             .values(fp=bindparam("fp"), model_id=model_id, texts=bindparam("n")), rows)
        done += len(batch)
        progress(Progress(done, total, f"embedded {done}/{total} tags"))
    return total


def tags_with_words(s, words: Sequence[str]) -> list[tuple[int, str, str, str]]:
    """(tag id, key, value, label words) of the indexed tags whose label has one of ``words``."""
    if not words:
        return []
    q = (select(Entry.tag_id, Tag.key, Tag.value, Entry.words)
         .join(Tag, Tag.id == Entry.tag_id)
         .where(Entry.tag_id.in_(select(TagWord.tag_id).where(TagWord.word.in_(sorted({w[:200] for w in words}))))))
    return driver_rows(s, q)


def indexed_tags(s, tag_ids: Sequence[int]) -> dict[int, tuple[str, str]]:
    """tag id → (key, value) of those of ``tag_ids`` that are in the vocabulary."""
    out: dict[int, tuple[str, str]] = {}
    for part in _chunks(sorted(set(tag_ids))):
        q = select(Tag.id, Tag.key, Tag.value).join(Entry, and_(Entry.tag_id == Tag.id)).where(Tag.id.in_(part))
        out.update((tid, (key, value)) for tid, key, value in s.execute(q))
    return out


def tags_with_text(s, key: str, text: str, model_id: str, words: Sequence[str], label_of: Callable[[str], str],
                   limit: int) -> list[tuple[int, str, str]]:
    """(tag id, key, value) of up to ``limit`` embedded tags whose vector is the row of ``text``
    (key ``key``): as their full text (``fp``, an index lookup) or as their label alone (tags
    having every word of it, an index lookup too), lowest ids first."""
    current = and_(Entry.fp.is_not(None), Entry.model_id == model_id)
    found = {tid: (tid, k, v) for tid, k, v in s.execute(
        select(Tag.id, Tag.key, Tag.value).join(Entry, Entry.tag_id == Tag.id)
        .where(Entry.fp == key, current).order_by(Tag.id).limit(limit))}
    distinct = sorted({w[:200] for w in words})
    if distinct:
        having_all = (select(TagWord.tag_id).where(TagWord.word.in_(distinct)).group_by(TagWord.tag_id)
                      .having(func.count(TagWord.word) == len(distinct)))
        q = (select(Tag.id, Tag.key, Tag.value).join(Entry, Entry.tag_id == Tag.id)
             .where(Entry.tag_id.in_(having_all), current, Entry.texts > 1).order_by(Tag.id))
        labels: dict[str, str] = {}  # a label shared by thousands of same-named folders: made once
        taken, cursor = 0, driver_cursor(s, q)
        try:
            for tid, k, v in cursor:
                if v not in labels:
                    labels[v] = label_of(v)
                if labels[v] == text:
                    found.setdefault(tid, (tid, k, v))
                    taken += 1
                    if taken >= limit:  # ascending ids: the rest cannot be among the first ``limit``
                        break
        finally:
            cursor.close()
    return [found[t] for t in sorted(found)][:limit]

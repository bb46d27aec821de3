"""The tag vocabulary embedded in its own small Chroma collection (SPAR §3.2, App. A.1), kept in
sync with the index, so request keywords match tags by meaning as well as by spelling."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional, Sequence

from spar_desktop.core.library.database import Library
from spar_desktop.core.library.models import Tag
from spar_desktop.core.progress import CancelToken, ProgressCallback, no_progress
from spar_desktop.core.retrieval.vector_store import ChromaCollection
from spar_desktop.core.workspaces import tag_vocab_sync as vocab
from spar_desktop.core.workspaces.tag_vocab_sync import INDEXED_SOURCES, LABEL_SUFFIX  # noqa: F401 - re-exported

TAG_COLLECTION = "spar-tag-vocabulary"
# A keyword whose words are all in a label, not side by side: below a label inside the keyword or
# the keyword inside a label (0.8), above the relative floor a semantic neighbour must reach.
ANY_ORDER_SCORE = 0.7


@dataclass(frozen=True)
class TagMatch:
    tag_id: int
    key: str
    value: str
    score: float
    how: str  # exact | lexical | semantic


def names_one_thing(keyword: str) -> bool:
    """'patient A', 'turbine T-07', 'FY2019 budget': a digit or a one-letter label marks an
    identifier, and a file about another one is not what the user asked for."""
    return any(re.search(r"\d", w) or (len(w) == 1 and w.isupper()) for w in keyword.split())


def normalize_words(text: str) -> list[str]:
    """Lower-case words with separators ('-', '_', '/', '.') as spaces and a crude plural strip:
    the folder 'comp.sys.ibm.pc.hardware' is one tag whose words are comp, sys, ibm, pc, hardware."""
    words = re.findall(r"[a-z0-9]+", text.lower().replace("_", " "))
    return [w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in words]


_DOT_BETWEEN_LETTERS = re.compile(r"(?<=[^\W\d_])\.(?=[^\W\d_])")  # 'comp.graphics', not '1.5' nor 'Dr. X'


def _tag_id(collection_id: str) -> int:
    return int(collection_id.split(":", 1)[0])


def tag_label(value: str) -> str:
    """A tag's label as words: separators ('_', '-', and '.' between letters) as spaces."""
    return " ".join(_DOT_BETWEEN_LETTERS.sub(" ", value.replace("_", " ").replace("-", " ")).split())


def tag_text(tag: Tag, parents: list[str]) -> str:
    """What gets embedded: the label, its description, and where it sits in the hierarchy."""
    text = tag_label(tag.value)
    if tag.description:
        text += f". {tag.description}"
    if parents:
        text += f" ({' > '.join(parents)})"
    return text


class TagIndex:
    """Keyword → tags: lexical rules over the tags that share a word with the keyword (SQL, an
    index lookup) and Chroma's nearest-neighbour query on the tag collection, opened once per
    process. ``sync`` keeps the collection in step incrementally (tag_vocab_sync.py)."""

    def __init__(self, library: Library, client: Any, encoder: Any) -> None:
        self.library = library
        self.encoder = encoder
        self.collection = ChromaCollection(client, TAG_COLLECTION, encoder.model_id)
        self._checked_store = False

    def _check_store(self) -> None:
        """Once per process: a collection holding fewer vectors than the state says (deleted,
        reset, or another machine's store) is filled again; a count, never a read."""
        if self._checked_store:
            return
        with self.library.session() as s:
            if self.collection.count() < vocab.expected_vectors(s, self.encoder.model_id):
                vocab.forget_embeddings(s)
        self._checked_store = True

    def sync(self, progress: ProgressCallback = no_progress, cancel: Optional[CancelToken] = None) -> tuple[int, int]:
        """Index new and changed tags' words, drop deleted tags, embed what is not embedded yet
        (resumable; progress per batch). Returns (embedded, removed) tags."""
        self._check_store()
        gone: list[int] = []
        stale: list[str] = []
        with self.library.session() as s:
            now = vocab.signature(s)
            if vocab.stored_signature(s) != now:  # else no tag or edge changed since the last sync
                todo, gone = vocab.changed_tags(s)
                stale = vocab.drop_tags(s, gone)
                vocab.index_words(s, todo, normalize_words)
                vocab.store_signature(s, now)
        if stale:
            self.collection.delete(stale)
        embedded = vocab.embed_pending(self.library, self.collection, self.encoder, tag_text, tag_label,
                                       progress, cancel)
        return embedded, len(gone)

    def pending(self) -> int:
        """Tags whose vectors are not in the collection yet (0 once a sync finished)."""
        with self.library.session() as s:
            return len(vocab.pending(s, self.encoder.model_id))

    def _lexical(self, keyword: str) -> tuple[dict[int, TagMatch], bool]:
        """Exact and lexical matches of one keyword among the tags sharing a word with it:
        every rule below needs a common word, so the others cannot match. Also says whether
        some label holds every word of the keyword apart (the any-order rule)."""
        found: dict[int, TagMatch] = {}
        kw_words = normalize_words(keyword)
        kw_text = " ".join(kw_words)
        partial: set[int] = set()  # tags whose label is only part of the keyword
        any_order = False
        with self.library.session() as s:
            candidates = vocab.tags_with_words(s, kw_words)
        for tid, key, value, text in candidates:
            words = text.split()
            if not words:
                continue
            if text == kw_text:
                found[tid] = TagMatch(tid, key, value, 1.0, "exact")
            elif _contains(kw_words, words) and len(text) >= 3:
                # The whole tag label appears in the keyword ('Falcon' in 'project Falcon'): surer
                # the more of the keyword it covers ('Prognosis' is a small part of 'rectal cancer
                # prognosis after pelvic exenteration', and must not crowd out better neighbours).
                found[tid] = TagMatch(tid, key, value, round(0.6 + 0.3 * len(words) / len(kw_words), 4), "lexical")
                partial.add(tid)
            elif _contains(words, kw_words) and len(kw_text) >= 3:
                # The keyword appears in a longer label ('gearbox' in 'Gearbox failures').
                found[tid] = TagMatch(tid, key, value, 0.8, "lexical")
            elif len(kw_words) >= 2 and set(kw_words) <= set(words):
                # Every word of the keyword is in the label, in another order or apart: 'comp
                # hardware' in 'comp.sys.ibm.pc.hardware', 'X Windows' in 'comp.windows.x'.
                found[tid] = TagMatch(tid, key, value, ANY_ORDER_SCORE, "lexical")
                any_order = True
        if any(m.how == "exact" for m in found.values()):
            # 'incident reports' names the Incident-Reports tag: 'Reports' elsewhere is another thing.
            found = {t: m for t, m in found.items() if t not in partial}
        return found, any_order

    def match(self, keyword: str, top_n: int = 5, threshold: float = 0.5, relative: float = 0.8) -> list[TagMatch]:
        """Tags for one keyword: exact and lexical matches, plus the top-n semantic neighbours
        at or above ``threshold`` cosine similarity and within ``relative`` of the best match
        (an exact hit makes loose neighbours noise); best first, one entry per tag."""
        if not normalize_words(keyword):
            return []
        found, any_order = self._lexical(keyword)
        if found and names_one_thing(keyword):
            # 'turbine T7' spelled out in a tag: its neighbours in meaning ('Turbine T9') are other things.
            return sorted(found.values(), key=lambda m: (-m.score, m.key))
        # Twice top_n vectors: a tag may come back twice (its full text and its label alone).
        ids, sims = self.collection.query(self.encoder.encode_query(keyword), 2 * top_n)
        best: dict[int, float] = {}
        for sid, sim in zip(ids, sims):
            tid = _tag_id(sid)
            if float(sim) > best.get(tid, -2.0):
                best[tid] = float(sim)
        top = sorted(best.items(), key=lambda kv: -kv[1])[:top_n]
        with self.library.session() as s:
            known = vocab.indexed_tags(s, [tid for tid, _ in top])  # a deleted tag's vector may linger
        for tid, sim in top:
            # Cosine similarity can round to just above 1.0: an exact spelling stays 'exact'.
            if sim >= threshold and tid in known and (tid not in found or (found[tid].how != "exact" and found[tid].score < sim)):
                key, value = known[tid]
                found[tid] = TagMatch(tid, key, value, round(float(sim), 4), "semantic")
        if found:
            floor = relative * max(m.score for m in found.values())
            if any_order:
                # Every word of the keyword is in some label ('comp hardware' in both
                # comp.sys.*.hardware): a tag close only in meaning is a sibling ('comp.graphics')
                # unless it is closer than those.
                floor = max(floor, ANY_ORDER_SCORE)
            found = {t: m for t, m in found.items() if m.how != "semantic" or m.score >= floor}
        return sorted(found.values(), key=lambda m: (-m.score, m.key))


def _contains(haystack: Sequence[str], needle: Sequence[str]) -> bool:
    """True when ``needle`` occurs as a contiguous word sequence in ``haystack``."""
    haystack, needle = list(haystack), list(needle)  # the lexicon stores tuples; a list never equals a tuple
    n = len(needle)
    return any(haystack[i:i + n] == needle for i in range(len(haystack) - n + 1))

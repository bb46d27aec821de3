"""The tag vocabulary embedded in its own small Chroma collection (SPAR §3.2, App. A.1), kept in
sync with the index, so request keywords match tags by meaning as well as by spelling."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any, Optional, Sequence

from sqlalchemy import select

from spar_desktop.core.library.database import Library
from spar_desktop.core.library.models import Tag, TagEdge, TagSource
from spar_desktop.core.progress import CancelToken, ProgressCallback, no_progress
from spar_desktop.core.retrieval.vector_store import ChromaCollection

TAG_COLLECTION = "spar-tag-vocabulary"
# A keyword whose words are all in a label, not side by side: below a label inside the keyword or
# the keyword inside a label (0.8), above the relative floor a semantic neighbour must reach.
ANY_ORDER_SCORE = 0.7
# Date tags are matched by the date rules, never semantically ('May 2019' ~ 'June 2019').
INDEXED_SOURCES = (TagSource.PATH, TagSource.TAXONOMY, TagSource.USER, TagSource.AUTO, TagSource.LLM)


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


LABEL_SUFFIX = ":label"


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
    def __init__(self, library: Library, client: Any, encoder: Any) -> None:
        self.library = library
        self.encoder = encoder
        self.collection = ChromaCollection(client, TAG_COLLECTION, encoder.model_id)
        self._lexicon: Optional[dict[int, tuple[str, str, tuple[str, ...]]]] = None

    def _vocabulary(self) -> tuple[dict[int, Tag], dict[str, str]]:
        """Tags and the texts embedded for them, by collection id: ``"<id>"`` for the full text
        (label, description, ancestors) and, when that differs from the label, ``"<id>:label"``
        for the label alone. A match takes the better of the two: the ancestors that place a tag
        ('comp graphics (20_newsgroups)') also dilute it (0.41 for 'computer graphics', 0.76
        against 'comp graphics' alone)."""
        with self.library.session() as s:
            tags = {t.id: t for t in s.scalars(select(Tag).where(Tag.source.in_(INDEXED_SOURCES)))}
            parents: dict[int, list[int]] = {}
            for p, c in s.execute(select(TagEdge.parent_id, TagEdge.child_id)):
                parents.setdefault(c, []).append(p)
        texts: dict[str, str] = {}
        for tid, tag in tags.items():
            chain = [tags[p].value for p in parents.get(tid, []) if p in tags][:2]
            texts[str(tid)] = full = tag_text(tag, chain)
            label = tag_label(tag.value)
            if label and label != full:
                texts[f"{tid}{LABEL_SUFFIX}"] = label
        return tags, texts

    def sync(self, progress: ProgressCallback = no_progress, cancel: Optional[CancelToken] = None) -> tuple[int, int]:
        """Embed new/changed tags, drop deleted ones. Returns (embedded, removed) tags."""
        tags, texts = self._vocabulary()
        self._lexicon = {tid: (t.key, t.value, tuple(normalize_words(t.value))) for tid, t in tags.items()}
        fingerprints = {i: hashlib.sha1(text.encode()).hexdigest()[:16] for i, text in texts.items()}
        stored = self.collection._col.get(include=["metadatas"])
        have = {i: (m or {}).get("fp") for i, m in zip(stored["ids"], stored["metadatas"])}
        stale = [i for i in have if i not in fingerprints]
        todo = [i for i, fp in fingerprints.items() if have.get(i) != fp]
        if stale:
            self.collection.delete(stale)
        if todo:
            vectors = self.encoder.encode([texts[i] for i in todo], progress=progress, cancel=cancel)
            metas = [{"fp": fingerprints[i], "key": tags[_tag_id(i)].key, "source": tags[_tag_id(i)].source} for i in todo]
            self.collection.add(todo, vectors, metas, progress, cancel)
        return len({_tag_id(i) for i in todo}), len({_tag_id(i) for i in stale})

    def lexicon(self) -> dict[int, tuple[str, str, tuple[str, ...]]]:
        if self._lexicon is None:
            tags, _ = self._vocabulary()
            self._lexicon = {tid: (t.key, t.value, tuple(normalize_words(t.value))) for tid, t in tags.items()}
        return self._lexicon

    def match(self, keyword: str, top_n: int = 5, threshold: float = 0.5, relative: float = 0.8) -> list[TagMatch]:
        """Tags for one keyword: exact and lexical matches, plus the top-n semantic neighbours
        at or above ``threshold`` cosine similarity and within ``relative`` of the best match
        (an exact hit makes loose neighbours noise); best first, one entry per tag."""
        found: dict[int, TagMatch] = {}
        kw_words = normalize_words(keyword)
        if not kw_words:
            return []
        kw_text = " ".join(kw_words)
        partial: set[int] = set()  # tags whose label is only part of the keyword
        any_order = False  # some label holds every word of the keyword, not side by side
        for tid, (key, value, words) in self.lexicon().items():
            if not words:
                continue
            if " ".join(words) == kw_text:
                found[tid] = TagMatch(tid, key, value, 1.0, "exact")
            elif len(words) >= 1 and _contains(kw_words, words) and len(" ".join(words)) >= 3:
                # The whole tag label appears in the keyword ('Falcon' in 'project Falcon'): surer
                # the more of the keyword it covers ('Prognosis' is a small part of 'rectal cancer
                # prognosis after pelvic exenteration', and must not crowd out better neighbours).
                found[tid] = TagMatch(tid, key, value, round(0.6 + 0.3 * len(words) / len(kw_words), 4), "lexical")
                partial.add(tid)
            elif len(kw_words) >= 1 and _contains(words, kw_words) and len(kw_text) >= 3:
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
        if found and names_one_thing(keyword):
            # 'turbine T7' spelled out in a tag: its neighbours in meaning ('Turbine T9') are other things.
            return sorted(found.values(), key=lambda m: (-m.score, m.key))
        # Twice top_n vectors: a tag may come back twice (its full text and its label alone).
        ids, sims = self.collection.query(self.encoder.encode_query(keyword), 2 * top_n)
        lex = self.lexicon()
        best: dict[int, float] = {}
        for sid, sim in zip(ids, sims):
            tid = _tag_id(sid)
            if float(sim) > best.get(tid, -2.0):
                best[tid] = float(sim)
        for tid, sim in sorted(best.items(), key=lambda kv: -kv[1])[:top_n]:
            # Cosine similarity can round to just above 1.0: an exact spelling stays 'exact'.
            if sim >= threshold and tid in lex and (tid not in found or (found[tid].how != "exact" and found[tid].score < sim)):
                key, value, _ = lex[tid]
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

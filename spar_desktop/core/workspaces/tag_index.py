"""The tag vocabulary embedded in a small vector file of its own (SPAR §3.2, App. A.1), kept in
sync with the index, so request keywords match tags by meaning as well as by spelling."""

from __future__ import annotations

import re
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

import numpy as np

from spar_desktop.core.library.commits import CommitWatch
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.models import Tag
from spar_desktop.core.progress import CancelToken, ProgressCallback, no_progress
from spar_desktop.core.workspaces import tag_vocab_sync as vocab
from spar_desktop.core.workspaces.tag_vectors import TextVectors, known_model, model_folder, remember_model
from spar_desktop.core.workspaces.tag_vocab_sync import INDEXED_SOURCES, LABEL_SUFFIX  # noqa: F401 - re-exported

TAG_VECTORS = "tag-vectors"  # under the data dir: the vocabulary's vectors, per model (tag_vectors.py)
# A keyword whose words are all in a label, not side by side: below a label inside the keyword or
# the keyword inside a label (0.8), above the relative floor a semantic neighbour must reach.
ANY_ORDER_SCORE = 0.7


@dataclass(frozen=True)
class TagChoice:
    """A tag chosen for a keyword group: matched (exact | lexical | semantic), chosen by the user,
    or a folder the request named. A match is already the filter's choice (no copy per match)."""

    tag_id: int
    key: str
    value: str
    score: float = 1.0
    how: str = "user"  # exact | lexical | semantic | user | folder


_new_choice = object.__new__


def _choice(tag_id: int, key: str, value: str, score: float, how: str) -> TagChoice:
    """``TagChoice(...)`` without the frozen ``__init__`` (a setattr through ``object.__setattr__``
    per field): a keyword meets one per same-named folder, 16,660 'reports' at 1M files."""
    made = _new_choice(TagChoice)
    made.__dict__.update(tag_id=tag_id, key=key, value=value, score=score, how=how)
    return made


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


def encoder_identity(settings: Any) -> str:
    """What decides the encoder's model id, known without loading it: device, runtime, model."""
    from spar_desktop.core.embedding.cpu_class import cpu_class
    from spar_desktop.core.embedding.encoder import DEFAULT_RUNTIME, bundled_model

    runtime = settings.embed_runtime or DEFAULT_RUNTIME
    # int8 vectors differ between CPU classes (their model id names it): a data dir moved to
    # another machine must not reuse the model id remembered on the first one.
    where = f"|{cpu_class()}" if "int8" in runtime else ""
    return f"{settings.embedding_device}|{runtime}|{bundled_model()[1]}{where}"


class TagIndex:
    """Keyword → tags: lexical rules over the tags that share a word with the keyword (SQL, an
    index lookup) and an exact nearest-neighbour search over the vocabulary's distinct texts
    (tag_vectors.py), opened once per process. ``sync`` keeps it in step incrementally
    (tag_vocab_sync.py). The encoder (an object, or a function returning it) is loaded only when
    a text or a keyword has no vector yet."""

    def __init__(self, library: Library, encoder: Any, settings: Any = None) -> None:
        self.library = library
        self._encoder = encoder if hasattr(encoder, "encode") else None
        self._load_encoder: Callable[[], Any] = (lambda: encoder) if self._encoder is not None else encoder
        settings = settings or library.settings
        self._settings = settings
        self.root = Path(settings.layout.root) / TAG_VECTORS
        self.identity = encoder_identity(settings)
        self._model_id = self._encoder.model_id if self._encoder is not None else known_model(self.root, self.identity)
        self._store: Optional[TextVectors] = None
        self._queries: Optional[TextVectors] = None
        self._checked_store = False
        self.last_sync = (0, 0)
        # The signature reads every tag and edge (0.06 s at 1M files); a request's second sync
        # (the CLI syncs with its progress line, then matches) and any sync with no commit
        # since the last one skip it (SQLite's data_version).
        self._commits = CommitWatch(library.engine)
        self._empty = True
        self._settled: Optional[str] = None

    @property
    def encoder(self) -> Any:
        if self._encoder is None:
            self._encoder = self._load_encoder()
        if self._model_id is None or self._model_id != self._encoder.model_id:
            self._model_id = self._encoder.model_id
            self._store = self._queries = None
        remember_model(self.root, self.identity, self._model_id)
        return self._encoder

    @property
    def model_id(self) -> str:
        return self._model_id if self._model_id is not None else self.encoder.model_id

    @property
    def store(self) -> TextVectors:
        if self._store is None:
            self._store = TextVectors(model_folder(self.root, self.model_id))
        return self._store

    def _check_store(self) -> None:
        """Once per process: tags marked embedded whose texts the store lacks (deleted, another
        machine's database, or a state from the Chroma collection of before) are embedded again."""
        if self._checked_store:
            return
        with self.library.session() as s:
            vocab.missing_from(s, self.model_id, self.store, tag_label)
        self._checked_store = True

    def sync(self, progress: ProgressCallback = no_progress, cancel: Optional[CancelToken] = None) -> tuple[int, int]:
        """Index new and changed tags' words, drop deleted tags, embed what is not embedded yet
        (resumable; progress per batch). Returns (tags brought up to date, tags removed), also
        kept as ``last_sync``. An index without tags never loads the encoder."""
        gone: list[int] = []
        unchanged = self._commits.unchanged()
        if not unchanged:  # else nothing at all was committed since the last check
            seen = self._commits.now()  # before reading: a commit from now on is seen by the next sync
            with self.library.session() as s:
                now = vocab.signature(s)
                if vocab.stored_signature(s) != now:  # else no tag or edge changed since the last sync
                    todo, gone = vocab.changed_tags(s)
                    if todo:
                        self._prepare_encoder()
                    vocab.drop_tags(s, gone)
                    vocab.index_words(s, todo, normalize_words)
                    vocab.store_signature(s, now)
                self._empty = not vocab.has_entries(s)
            self._commits.mark(seen)
        embedded = 0
        if not self._empty and not (unchanged and self._settled == self.model_id):
            self._check_store()
            self.store.refresh()  # rows another process (the app's background job, a CLI) added
            embedded = vocab.embed_pending(self.library, self.store, lambda: self.encoder, self.model_id, tag_text,
                                           tag_label, progress, cancel)
            self._settled = self.model_id  # every tag embedded for it: nothing pending until a commit
        self.last_sync = (embedded, len(gone))
        return self.last_sync

    def _prepare_encoder(self) -> None:
        """New or changed tags will need the encoder: its graph, when not built yet, is built in a
        second process while this one makes the tags' words and texts."""
        if self._encoder is None:
            from spar_desktop.core.embedding.encoder import prepare_graph  # deferred, as in encoder_identity

            prepare_graph(runtime=self._settings.embed_runtime, cache_dir=self._settings.layout.onnx_cache)

    def pending(self) -> int:
        """Tags whose vectors are not in the store yet (0 once a sync finished)."""
        with self.library.session() as s:
            return len(vocab.pending(s, self.model_id))

    def query_vector(self, keyword: str) -> np.ndarray:
        """The keyword's vector: a vocabulary text's own when it is one (a folder's name), else
        from the per-model cache of keywords seen before, else encoded (and cached)."""
        found = self.store.vector(keyword)
        if found is not None:
            return found
        if self._queries is None:
            self._queries = TextVectors(model_folder(self.root, self.model_id) / "queries")
        found = self._queries.vector(keyword)
        if found is None:
            found = self.encoder.encode_query(keyword)
            self._queries.add([keyword], np.asarray([found], dtype=np.float32))
        return np.asarray(found, dtype=np.float32)

    def _neighbours(self, keyword: str, top_n: int, threshold: float) -> list[tuple[int, str, str, float]]:
        """Up to ``top_n`` (tag id, key, value, cosine) at or above ``threshold``, best first:
        the nearest texts, each standing for the tags that have it (lowest ids first on a tie)."""
        out: dict[int, tuple[int, str, str, float]] = {}
        query = self.query_vector(keyword)  # first: loading the encoder may name another model's store
        self.store.refresh()
        hits = self.store.search(query, threshold)
        with self.library.session() as s:
            for key, sim in hits:
                if len(out) >= top_n:
                    break
                text = self.store.text(key) or ""
                for tid, k, v in vocab.tags_with_text(s, key, text, self.model_id, normalize_words(text), tag_label,
                                                      top_n - len(out)):
                    out.setdefault(tid, (tid, k, v, sim))
        return list(out.values())

    def _lexical(self, keyword: str) -> tuple[dict[int, TagChoice], bool]:
        """Exact and lexical matches of one keyword among the tags sharing a word with it:
        every rule below needs a common word, so the others cannot match. Also says whether
        some label holds every word of the keyword apart (the any-order rule)."""
        found: dict[int, TagChoice] = {}
        kw_words = normalize_words(keyword)
        kw_text = " ".join(kw_words)
        partial: set[int] = set()  # tags whose label is only part of the keyword
        any_order = False
        with self.library.session() as s:
            candidates = vocab.tags_with_words(s, kw_words)
        judged: dict[str, Optional[tuple[float, str]]] = {}  # per distinct label: 16,687 'minutes' folders share one
        for tid, key, value, text in candidates:
            if text not in judged:
                judged[text] = _lexical_score(kw_words, kw_text, text)
            verdict = judged[text]
            if verdict is None:
                continue
            score, how = verdict
            found[tid] = _choice(tid, key, value, score, "exact" if how == "exact" else "lexical")
            if how == "partial":
                partial.add(tid)
            elif how == "any order":
                any_order = True
        if any(m.how == "exact" for m in found.values()):
            # 'incident reports' names the Incident-Reports tag: 'Reports' elsewhere is another thing.
            found = {t: m for t, m in found.items() if t not in partial}
        return found, any_order

    def match(self, keyword: str, top_n: int = 5, threshold: float = 0.5, relative: float = 0.8) -> list[TagChoice]:
        """Tags for one keyword: exact and lexical matches, plus the top-n semantic neighbours
        at or above ``threshold`` cosine similarity and within ``relative`` of the best match
        (an exact hit makes loose neighbours noise); best first, one entry per tag."""
        if not normalize_words(keyword):
            return []
        found, any_order = self._lexical(keyword)
        if found and names_one_thing(keyword):
            # 'turbine T7' spelled out in a tag: its neighbours in meaning ('Turbine T9') are other things.
            return _best_first(found.values())
        for tid, key, value, sim in self._neighbours(keyword, top_n, threshold):
            # Cosine similarity can round to just above 1.0: an exact spelling stays 'exact'.
            if tid not in found or (found[tid].how != "exact" and found[tid].score < sim):
                found[tid] = _choice(tid, key, value, round(float(sim), 4), "semantic")
        if found:
            floor = relative * max(m.score for m in found.values())
            if any_order:
                # Every word of the keyword is in some label ('comp hardware' in both
                # comp.sys.*.hardware): a tag close only in meaning is a sibling ('comp.graphics')
                # unless it is closer than those.
                floor = max(floor, ANY_ORDER_SCORE)
            found = {t: m for t, m in found.items() if m.how != "semantic" or m.score >= floor}
        return _best_first(found.values())


def _best_first(matches) -> list[TagChoice]:
    """Best score first, then by key: the order of ``sorted(key=lambda m: (-m.score, m.key))``, in
    two stable sorts by attribute (a key function per match cost 0.03 s of the 16,667 'minutes'
    folders a keyword matches at 1M files)."""
    return sorted(sorted(matches, key=attrgetter("key")), key=attrgetter("score"), reverse=True)


def _lexical_score(kw_words: Sequence[str], kw_text: str, text: str) -> Optional[tuple[float, str]]:
    """How a tag label (its normalised words, ``text``) matches a keyword, if it does: (score,
    'exact' | 'partial' | 'inside' | 'any order')."""
    words = text.split()
    if not words:
        return None
    if text == kw_text:
        return 1.0, "exact"
    if _contains(kw_words, words) and len(text) >= 3:
        # The whole tag label appears in the keyword ('Falcon' in 'project Falcon'): surer
        # the more of the keyword it covers ('Prognosis' is a small part of 'rectal cancer
        # prognosis after pelvic exenteration', and must not crowd out better neighbours).
        return round(0.6 + 0.3 * len(words) / len(kw_words), 4), "partial"
    if _contains(words, kw_words) and len(kw_text) >= 3:
        # The keyword appears in a longer label ('gearbox' in 'Gearbox failures').
        return 0.8, "inside"
    if len(kw_words) >= 2 and set(kw_words) <= set(words):
        # Every word of the keyword is in the label, in another order or apart: 'comp
        # hardware' in 'comp.sys.ibm.pc.hardware', 'X Windows' in 'comp.windows.x'.
        return ANY_ORDER_SCORE, "any order"
    return None


def _contains(haystack: Sequence[str], needle: Sequence[str]) -> bool:
    """True when ``needle`` occurs as a contiguous word sequence in ``haystack``."""
    haystack, needle = list(haystack), list(needle)  # the lexicon stores tuples; a list never equals a tuple
    n = len(needle)
    return any(haystack[i:i + n] == needle for i in range(len(haystack) - n + 1))

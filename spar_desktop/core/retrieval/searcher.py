"""HybridSearcher: dense over child chunks + BM25 over their parents, TM2C2 or RRF fusion.

Dense proposes its top ``candidate_depth`` chunks and BM25 its top ``candidate_depth`` keyword
units (parent sections by default, keyword_units.py: a child takes its parent's BM25 score), i.e.
their children (100 by default: deeper than the paper's 10 because documents are ranked by their
best chunk and a document-level top-10 needs many more chunk candidates); the union is fused,
chunks are returned with their parent's text and the parts of their score (explain.py), and files
are ranked by their best chunk.
"""

from __future__ import annotations

import copy
import re
from typing import Any, Mapping, Optional, Sequence

import numpy as np

from spar_desktop.core.embedding.cache import CachedDocument
from spar_desktop.core.progress import CancelToken, Progress, ProgressCallback, check, no_progress
from spar_desktop.core.retrieval import fusion as fz
from spar_desktop.core.retrieval.bm25_index import BM25Index, TokenizerConfig, top_k_positive
from spar_desktop.core.retrieval.chunk_table import ChunkTable
from spar_desktop.core.retrieval.explain import FusionParts
from spar_desktop.core.retrieval.keyword_units import (
    DEFAULT_KEYWORD_UNIT,
    ChunkingChoice,
    UnitMap,
    check_unit,
    chunking_choice,
    prefer_matching_passages,
)
# The result types and key overrides live in results.py (names kept importable from here).
from spar_desktop.core.retrieval.results import (  # noqa: F401
    AlphaPredictor,
    ChunkHit,
    FileHit,
    KeyOverride,
    SearchResults,
)
from spar_desktop.core.retrieval.vector_store import (
    ChromaBackend,
    ChromaCollection,
    DenseBackend,
    NumpyBackend,
    cosine_scores,
)

METHODS = ("hybrid", "bm25", "dense")
TAG_FIELD = "spar_key"  # Chroma metadata: which key a vector is (ORIGINAL_TAG or an evolution tag)
ORIGINAL_TAG = "original"
VERSION_FIELD = "spar_doc"  # Chroma metadata: the content hash of the document version a vector is from
FILLS = ("exact", "zero")
DEFAULT_CANDIDATES = 100
_HAS_WORD = re.compile(r"[^\W_]", re.UNICODE)


class HybridSearcher:
    """Immutable after construction, so one instance can serve concurrent queries."""

    # A workspace still being built (core/retrieval/partial.py): which chunks have their dense key
    # yet (None: all of them) and whether this is a build's snapshot rather than its result.
    dense_ready: Optional[np.ndarray] = None
    building: bool = False
    keyword_coverage: float = 1.0  # share of the files a snapshot has read (and BM25 covers)

    def __init__(
        self,
        documents: Mapping[str, CachedDocument],
        encoder: Any = None,
        *,
        file_ids: Optional[Mapping[str, int]] = None,
        tokenizer: Optional[TokenizerConfig] = None,
        candidate_depth: int = DEFAULT_CANDIDATES,
        default_alpha: float = fz.DEFAULT_ALPHA,
        fill_missing: str = fz.DEFAULT_FILL,
        key_overrides: Optional[Mapping[str, KeyOverride]] = None,
        alpha_model: Optional[AlphaPredictor] = None,
        keyword_unit: str = DEFAULT_KEYWORD_UNIT,
        alpha_rule: str = fz.DEFAULT_ALPHA_RULE,
        progress: ProgressCallback = no_progress,
        cancel: Optional[CancelToken] = None,
    ) -> None:
        """``documents``: doc id → CachedDocument (a workspace passes str(file_id)).
        ``encoder`` may be None for a BM25-only searcher. The dense side runs on an exact numpy
        matrix; ``with_collection`` moves it into a Chroma collection the caller has filled
        (collection_sync.py: a constructor never writes to a store).
        ``key_overrides`` (chunk key → KeyOverride) are evolved keys used in place of the
        originals; ``alpha_model`` predicts the fusion weight per query when no alpha is given.
        ``keyword_unit``: what BM25 scores, 'parent' sections or 'chunk's (keyword_units.py).
        ``alpha_rule``: with no alpha and no model, 'flatness' sets the weight per query from
        BM25's flatness around ``default_alpha`` (fusion.py); 'fixed' always uses it."""
        self.encoder = encoder
        self.alpha_model = alpha_model
        self.collection: Optional[ChromaCollection] = None
        self.candidate_depth = candidate_depth
        self.default_alpha = fz.check_alpha(default_alpha)
        self.alpha_rule = fz.check_alpha_rule(alpha_rule)
        self.fill_missing = _check_fill(fill_missing)
        self.tokenizer = tokenizer
        explicit = dict(file_ids or {})
        table = ChunkTable()
        blocks: list[np.ndarray] = []
        tokenizer_ = TokenizerConfig() if tokenizer is None else tokenizer
        for doc_id, doc in documents.items():
            children = doc.children
            # An explicit mapping wins: cached chunks carry no file id (the cache is keyed by content).
            file_id = explicit[doc_id] if doc_id in explicit else (children[0].file_id if children else None)
            table.add_document(doc_id, doc.title, (doc.content_hash, doc.chunker_key), file_id,
                               {pid: p.text for pid, p in doc.parents.items()}, children)
            if encoder is not None and children:
                blocks.append(doc.vectors)
        self._set_table(table.frozen(), key_overrides, keyword_unit)
        # Tokens of the original keyword units, kept so evolved keys rebuild the index without
        # re-tokenizing every unit (Porter stemming in Python is most of a build).
        self._token_cache: Optional[list[list[str]]] = [tokenizer_.tokenize(t) for t in self.units.texts(self.table)]
        check(cancel)
        progress(Progress(0, 2, "building the keyword index"))
        self.bm25 = BM25Index(tokenizer=tokenizer)
        self.bm25.build_tokens(self._bm25_tokens(), self.units.ids, cancel)
        self.original_vectors: Optional[np.ndarray] = None
        self.vectors: Optional[np.ndarray] = None
        self.dense: Optional[DenseBackend] = None
        if encoder is not None:
            dim = int(getattr(encoder, "dim", 0) or (blocks[0].shape[1] if blocks else 0))
            self.original_vectors = np.ascontiguousarray(np.vstack(blocks) if blocks else np.empty((0, dim)),
                                                         dtype=np.float32)
            self.vectors = self._evolved_matrix()
            self.dense = NumpyBackend(self.vectors)
        progress(Progress(2, 2, f"{len(self.keys)} chunks searchable"))

    def _set_table(self, table: "ChunkTable", overrides: Optional[Mapping[str, KeyOverride]],
                   keyword_unit: str = DEFAULT_KEYWORD_UNIT) -> None:
        self.table = table
        self.keyword_unit = check_unit(keyword_unit)
        self.units = UnitMap.build(table, keyword_unit)
        self.keys = table.keys
        self._doc_of = table.doc_of
        self._pos = {key: i for i, key in enumerate(self.keys)}
        self.overrides: dict[str, KeyOverride] = {k: o for k, o in (overrides or {}).items() if k in self._pos}

    @classmethod
    def restore(cls, table: "ChunkTable", bm25: BM25Index, original_vectors: Optional[np.ndarray], encoder: Any, *,
                overrides: Optional[Mapping[str, KeyOverride]] = None, collection: Optional[ChromaCollection] = None,
                tokenizer: Optional[TokenizerConfig] = None, candidate_depth: int = DEFAULT_CANDIDATES,
                default_alpha: float = fz.DEFAULT_ALPHA, fill_missing: str = fz.DEFAULT_FILL,
                alpha_model: Optional[AlphaPredictor] = None,
                keyword_unit: str = DEFAULT_KEYWORD_UNIT,
                alpha_rule: str = fz.DEFAULT_ALPHA_RULE) -> "HybridSearcher":
        """A searcher from saved parts (searcher_state.py), exactly as the one that was saved:
        ``bm25`` already holds the evolved BM25 keys and ``collection`` the vectors of
        ``original_vectors`` + ``overrides`` (the caller checked it), so nothing is synced."""
        self = cls.__new__(cls)
        self.encoder, self.alpha_model, self.collection = encoder, alpha_model, collection
        self.candidate_depth = candidate_depth
        self.default_alpha = fz.check_alpha(default_alpha)
        self.alpha_rule = fz.check_alpha_rule(alpha_rule)
        self.fill_missing = _check_fill(fill_missing)
        self.tokenizer = tokenizer
        self._set_table(table, overrides, keyword_unit)
        self._token_cache = None  # worked out again only if evolved BM25 text changes (with_keys)
        self.bm25 = bm25
        self.original_vectors = original_vectors if encoder is not None else None
        self.vectors, self.dense = None, None
        if self.original_vectors is not None:
            self.vectors = self._evolved_matrix()
            self.dense = ChromaBackend(collection, self.keys, self._pos) if collection is not None \
                else NumpyBackend(self.vectors)
        return self

    def use_fixed_alpha(self, value: float) -> None:
        """Every query with dense weight ``value`` (e.g. `spar eval --alpha 0.6` with learning)."""
        self.default_alpha = fz.check_alpha(value)
        self.alpha_rule = "fixed"

    @property
    def _tokens(self) -> list[list[str]]:
        if self._token_cache is None:
            tok = self.bm25.tokenizer
            self._token_cache = [tok.tokenize(t) for t in self.units.texts(self.table)]
        return self._token_cache

    # -- evolved keys (ERM) ------------------------------------------------------------------
    def _bm25_tokens(self) -> list[list[str]]:
        tokens = list(self._tokens)
        for key, o in self.overrides.items():
            if o.extra_text:  # an evolved chunk's extra text joins its keyword unit
                u = int(self.units.unit_of[self._pos[key]])
                tokens[u] = tokens[u] + self.bm25.tokenizer.tokenize(o.extra_text)
        return tokens

    def _evolved_matrix(self) -> np.ndarray:
        assert self.original_vectors is not None
        vectors = self.original_vectors
        dense = [(self._pos[k], o.vector) for k, o in self.overrides.items() if o.vector is not None]
        if dense:
            vectors = vectors.copy()
            for p, v in dense:
                vectors[p] = v
        return vectors

    def with_collection(self, collection: ChromaCollection) -> "HybridSearcher":
        """This searcher with its dense side in ``collection``, which must already hold exactly
        these keys' vectors (collection_sync.sync_collection writes them). Writes nothing."""
        new = copy.copy(self)
        new.collection = collection
        if new.vectors is not None:
            new.dense = ChromaBackend(collection, new.keys, new._pos)
        return new

    def metas(self) -> list[dict[str, Any]]:
        """Chroma metadata per chunk, in key order: document, chunk, key tag and document version."""
        return self._metas()

    def _metas(self) -> list[dict[str, Any]]:
        tags = {k: o.tag for k, o in self.overrides.items() if o.vector is not None}
        refs = self.table.doc_refs
        return [{"doc_id": d, "chunk_id": self.table.chunk_id(p), TAG_FIELD: tags.get(k, ORIGINAL_TAG),
                 VERSION_FIELD: refs[d][0] if d in refs else None}
                for p, (d, k) in enumerate(zip(self._doc_of, self.keys))]

    def with_keys(self, overrides: Mapping[str, KeyOverride], cancel: Optional[CancelToken] = None) -> "HybridSearcher":
        """A new searcher over the same chunks whose keys are the originals plus ``overrides``
        (an empty mapping gives back the original keys exactly). This searcher is left as it was,
        so queries running on it are unaffected; with Chroma, the changed vectors are written
        (and put back if the write fails part-way, so the collection never mixes two states)."""
        new = copy.copy(self)
        new.overrides = {k: o for k, o in overrides.items() if k in self._pos}
        if {k: o.extra_text for k, o in new.overrides.items()} != {k: o.extra_text for k, o in self.overrides.items()}:
            new.bm25 = BM25Index(tokenizer=self.tokenizer).build_tokens(new._bm25_tokens(), self.units.ids, cancel)
        if self.original_vectors is not None:
            new.vectors = new._evolved_matrix()
            if self.collection is not None:
                touched = sorted(self._pos[k] for k in set(self.overrides) | set(new.overrides))
                changed = [p for p in touched if not np.array_equal(new.vectors[p], self.vectors[p])]
                metas = new._metas()
                try:
                    self.collection.add([self.keys[p] for p in changed], new.vectors[changed],
                                        [metas[p] for p in changed], cancel=cancel)
                except BaseException:
                    old = self._metas()
                    self.collection.add([self.keys[p] for p in changed], self.vectors[changed],
                                        [old[p] for p in changed])
                    raise
                new.dense = ChromaBackend(self.collection, self.keys, self._pos)
            else:
                new.dense = NumpyBackend(new.vectors)
        return new

    def position(self, key: str) -> Optional[int]:
        return self._pos.get(key)

    def chunk_ref(self, key: str) -> Optional[tuple[str, str, str]]:
        """(content hash, chunker key, chunk id) of a chunk key: what ERM memory is keyed by."""
        p = self._pos.get(key)
        if p is None:
            return None
        content_hash, chunker_key = self.table.doc_refs[self._doc_of[p]]
        return content_hash, chunker_key, self.table.chunk_id(p)

    def content_hashes(self) -> set[str]:
        return {h for h, _ in self.table.doc_refs.values()}

    def chunk_text(self, key: str) -> Optional[str]:
        p = self._pos.get(key)
        return None if p is None else self.table.texts[p]

    def doc_of(self, key: str) -> Optional[str]:
        p = self._pos.get(key)
        return None if p is None else self._doc_of[p]

    @property
    def chunking(self) -> "ChunkingChoice":
        """How this collection is cut and scored (short vs long documents), for the panel."""
        choice = self.__dict__.get("_chunking")
        if choice is None:
            choice = self.__dict__["_chunking"] = chunking_choice(self.table, self.units)
        return choice

    def __len__(self) -> int:
        return len(self.keys)

    @property
    def dense_coverage(self) -> float:
        """Share of the chunks meaning (dense) search covers: 1.0 once every one is embedded."""
        ready = self.dense_ready
        if self.dense is None:
            return 0.0
        return 1.0 if ready is None or not len(ready) else float(np.count_nonzero(ready)) / len(ready)

    # -- retrieval ---------------------------------------------------------------------------
    def search(
        self,
        query: str,
        k: int = 10,
        method: str = "hybrid",
        alpha: Optional[float] = None,
        fusion: str = "tm2c2",
        candidates: Optional[int] = None,
        fill_missing: Optional[str] = None,
        query_vector: Optional[np.ndarray] = None,
    ) -> SearchResults:
        """Top ``k`` chunks and top ``k`` files for ``query``.

        ``fill_missing`` (TM2C2 only): a chunk proposed by only one retriever is scored by the
        other with its true score ('exact': BM25 from the full score vector, cosine from the stored
        vector — both are at hand, so eq. 16 runs over the whole candidate union), or gets the
        normalised minimum 0 ('zero', for when the other score is unknowable). See fusion.py for
        the measurements behind the default. ``query_vector`` skips encoding the query (callers
        that already have it, e.g. ERM training). With no ``alpha`` and an ``alpha_model``, the
        dense weight is predicted for this query (query-aware fusion); with neither, the alpha rule
        sets it (fusion.py: from BM25's flatness, or fixed)."""
        fill = _check_fill(fill_missing or self.fill_missing)
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, not '{method}'")
        if fusion not in fz.FUSIONS:
            raise ValueError(f"fusion must be one of {fz.FUSIONS}, not '{fusion}'")
        if method != "bm25" and self.dense is None:
            raise ValueError("this searcher has no encoder; only method='bm25' is available")
        a = fz.check_alpha(self.default_alpha if alpha is None else alpha)
        tm2c2 = method == "hybrid" and fusion == "tm2c2"
        shown_alpha = a if tm2c2 else None

        def empty(message: str) -> SearchResults:
            return SearchResults(query, method, fusion, shown_alpha, (), (), message)

        if not query or not _HAS_WORD.search(query):
            return empty("Type a word or phrase to search for.")
        if not self.keys:
            return empty("There is nothing to search yet: no document has searchable text.")
        depth = max(k, candidates or self.candidate_depth)
        if method != "bm25" and query_vector is None:
            query_vector = self.encoder.encode_query(query)
        bm25, dense, top_units = self._candidates(query, method, depth, fill if tm2c2 else "zero", query_vector)
        flatness = None
        if tm2c2 and alpha is None and self.alpha_model is not None:
            a = shown_alpha = fz.check_alpha(min(1.0, max(0.0, float(self.alpha_model.predict(query, dense, bm25)))))
        elif tm2c2 and alpha is None and self.alpha_rule == "flatness":
            flatness = fz.keyword_flatness(top_units, len(self.bm25))
            a = shown_alpha = fz.flatness_alpha(flatness, self.default_alpha)

        if method == "bm25":
            fused = bm25
        elif method == "dense":
            fused = dense
        elif fusion == "rrf":
            fused = fz.rrf_fuse([list(dense), list(bm25)])
        else:
            fused = fz.tm2c2_fuse(dense, bm25, a)
        if not fused:
            if method == "bm25":
                return empty("No document contains any of the search words.")
            return empty("No results.")
        ranking = fz.ranked(fused)
        files = self._files(ranking, k)  # documents: by their best chunk, as measured
        why = FusionParts(self, ranking, dense, bm25, a, query_vector) if tm2c2 else None
        if why is not None and self.keyword_unit == "parent":
            ranking = why.ranking = fz.ranked(prefer_matching_passages(self, query, fused, ranking[:k], why))
        hits = tuple(self._hit(rank, p, s, bm25.get(p), dense.get(p), why)
                     for rank, (p, s) in enumerate(ranking[:k], 1))
        return SearchResults(query, method, fusion, shown_alpha, hits, files, keyword_flatness=flatness)

    def _candidates(self, query: str, method: str, depth: int, fill: str,
                    qvec: Optional[np.ndarray]) -> tuple[dict[int, float], dict[int, float], np.ndarray]:
        """Raw (BM25, cosine) scores of each retriever's top ``depth`` chunks by position (with
        fill 'exact' both dicts cover the union of the two candidate lists), and BM25's top unit
        scores best first (what the flatness rule reads)."""
        bm25: dict[int, float] = {}
        dense: dict[int, float] = {}
        all_bm25 = None
        unit_scores = np.empty(0, dtype=np.float32)
        if method in ("hybrid", "bm25"):
            all_bm25 = self.bm25.scores(query)  # per keyword unit; a chunk takes its unit's score
            units, unit_scores = top_k_positive(all_bm25, depth)
            for u, s in zip(units.tolist(), unit_scores.tolist()):
                for p in self.units.chunks_of((u,)):
                    bm25[p] = s
        if method in ("hybrid", "dense"):
            if qvec is None:
                qvec = self.encoder.encode_query(query)
            pos, sc = self.dense.search(qvec, depth)  # type: ignore[union-attr]
            dense = dict(zip(pos.tolist(), sc.tolist()))
        if method == "hybrid" and fill == "exact" and all_bm25 is not None:
            for p in sorted(dense.keys() - bm25.keys()):  # sorted: deterministic tie order
                bm25[p] = float(all_bm25[self.units.unit_of[p]])
            only_bm25 = sorted(bm25.keys() - dense.keys())
            if only_bm25:
                sims = cosine_scores(self.vectors[only_bm25], qvec)  # type: ignore[index]
                dense.update(zip(only_bm25, sims.tolist()))
        return bm25, dense, unit_scores

    def candidate_scores(self, query: str, candidates: Optional[int] = None,
                         query_vector: Optional[np.ndarray] = None) -> tuple[dict[str, float], dict[str, float]]:
        """(raw cosine, raw BM25) by chunk key over the hybrid candidate union, exactly as fusion
        sees them: what a fusion weight is learned from (retrieval/alpha.py)."""
        if self.dense is None or not query or not self.keys:
            return {}, {}
        bm25, dense, _ = self._candidates(query, "hybrid", candidates or self.candidate_depth, "exact", query_vector)
        return ({self.keys[p]: s for p, s in dense.items()}, {self.keys[p]: s for p, s in bm25.items()})

    def _hit(self, rank: int, pos: int, score: float, bm25: Optional[float], dense: Optional[float],
             why: Optional[FusionParts] = None) -> ChunkHit:
        t, doc_id = self.table, self._doc_of[pos]
        parent_id, parent_text = t.parent(pos)
        key = self.keys[pos]
        parts = why.parts(pos) if why is not None else (None, None)
        return ChunkHit(
            rank=rank, key=key, doc_id=doc_id, file_id=t.file_ids.get(doc_id),
            chunk_id=t.chunk_id(pos), text=t.texts[pos], page_start=int(t.pages[pos, 0]),
            page_end=int(t.pages[pos, 1]), parent_id=parent_id, parent_text=parent_text, score=float(score),
            bm25_score=bm25, dense_score=dense, keyword_part=parts[0], meaning_part=parts[1],
            alpha=why.alpha if why is not None else None, evolved=key in self.overrides,
            rank_without_evolution=why.original_rank(pos) if why is not None and key in self.overrides else None,
        )

    def _files(self, ranking: Sequence[tuple[int, float]], k: int) -> tuple[FileHit, ...]:
        """A file scores as its best chunk (ranking is already best first)."""
        best: dict[str, tuple[float, int]] = {}
        counts: dict[str, int] = {}
        for pos, score in ranking:
            doc_id = self._doc_of[pos]
            counts[doc_id] = counts.get(doc_id, 0) + 1
            best.setdefault(doc_id, (score, pos))
        out = []
        for rank, (doc_id, (score, pos)) in enumerate(list(best.items())[:k], 1):
            out.append(FileHit(rank, doc_id, self.table.file_ids.get(doc_id), self.table.titles.get(doc_id),
                               float(score), self.keys[pos], counts[doc_id]))
        return tuple(out)


def _check_fill(fill: str) -> str:
    if fill not in FILLS:
        raise ValueError(f"fill_missing must be one of {FILLS}, not '{fill}'")
    return fill

"""What a relations build will cost before it starts: documents, what still has to be embedded,
queries to run, and a duration from per-unit rates.

Nothing here reads a file's text or loads the encoder: the scope's files come from the index,
what the embedding cache already holds from its list of content hashes, a stored build's
fingerprints from its meta.json (0.15 s for 400 files here, after the first call's imports), so
the CLI and the app can ask before they build.

Costs are per document and per query, measured on newsgroup posts (~2 KB of text, 6.5 chunk
vectors each): a share of long PDFs embeds more chunks per document than that, so its first
build takes longer than estimated — until this machine's own builds have corrected the factor.

The rates (RATES) were measured on the development machine; ``record_build`` then keeps, in
<data dir>/relations/rates.json, how this machine's finished builds compared with them (a
smoothed factor), so "on this machine" becomes true after its first long build.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from spar_desktop.core.data_layout import DataLayout
from spar_desktop.core.relations import persist
from spar_desktop.core.relations.build_delta import CONTEXT_DOCS, diff
from spar_desktop.core.relations.checkpoint import pending_queries
from spar_desktop.core.relations.edrmq import EdrmqParams
from spar_desktop.core.relations.errors import RelationsError
from spar_desktop.core.relations.eta import format_range
from spar_desktop.core.relations.names import DEFAULT_RETRIEVER, METHODS, RETRIEVERS
from spar_desktop.core.relations.querylog import read_query_log
from spar_desktop.core.relations.scope import no_documents, scope_files, scope_key, workspace_id

if TYPE_CHECKING:
    from spar_desktop.core.library.database import Library


@dataclass(frozen=True)
class Rates:
    """Seconds per unit of work (see RATES for where the numbers come from)."""

    embed_document: float  # a document not in the embedding cache: read, chunk, embed its chunks
    cached_document: float  # a document whose chunks and vectors the cache holds
    read_document: float  # a document read as text only (TF-IDF, words-only EDR-MQ)
    draw_queries: float  # per document: its salient sentences (TF-IDF over the documents)
    fit_document: float  # per document: the lexical index EDR-MQ's hybrid and words-only scoring use
    encode_query: float  # a query through the encoder
    pair: dict[str, float] = field(default_factory=dict)  # per query × document: EDR-MQ's two stages, by retriever
    per_query: dict[str, float] = field(default_factory=dict)  # per query, apart from encoding and ``pair``
    tfidf_document: float = 0.0  # per document: TF-IDF top-25 after reading
    cooc_document: float = 0.0  # per document: walks, Word2Vec, agglomerative clustering


# Measured 2026-11-27 on the development VM (2 cores shared with other jobs: load average 1.8-7
# during the runs) on newsgroups20 posts (/work/shared/data/newsgroups20/corpus.jsonl, shuffled
# with seed 0; 6.5 chunk vectors per post), default settings, ONNX MiniLM on 2 threads:
# - full builds through build_relations, empty embedding cache: 400 posts in 349 s (documents
#   0.74 s each at load 4-7, 1,136 queries 45 ms each) and 200 posts in 119 s (documents 0.35 s
#   each at load 2-4.5, 569 queries 81 ms each); the same 400 with the cache warm: 46 s (a cached
#   document 0.3 ms, salient sentences 1.6 ms per post, queries 40 ms each); TF-IDF 0.22 s and
#   co-occurrence 24 s for the 400 (one sentence per post encoded, 56 ms each);
# - 600 salient sentences encoded alone: 40 ms each at load 2;
# - marginalisation alone, 1,000 salient sentences over 1,000 / 3,000 / 7,532 posts (random unit
#   vectors for the dense side, load 1.8): hybrid 0.38 / 0.63 / 2.55 s, words only 0.29 / 0.37 /
#   1.18 s, dense 0.14 / 0.22 / 1.10 s; salient sentences 1.1 ms and the lexical fit 0.4 ms per
#   post, TF-IDF top-25 0.6 ms per post, co-occurrence after the vectors 3-4 ms per post; BM25
#   7 ms per query at 1,000 and 3,000 posts (scores touch only documents sharing a word).
# Rates are the middle of what was measured under load (the encoder's share dominates); SPREAD
# covers the rest. The 31-minute report — 7,532 posts, 20,430 queries, documents already
# embedded, the app under load — is at the top of the range these give: 15-32 minutes around 20
# ("about 15–35 min"); with every post still to embed the same build is 1-3 hours.
RATES = Rates(
    embed_document=0.50,
    cached_document=0.0005,
    read_document=0.0003,
    draw_queries=0.0015,
    fit_document=0.0004,
    encode_query=0.055,
    pair={"hybrid": 4.0e-7, "lexical": 1.8e-7, "dense": 1.5e-7, "bm25": 0.0},
    per_query={"bm25": 0.007},
    tfidf_document=0.0006,
    cooc_document=0.004,
)
# Synthetic queries per document: three salient sentences (synthetic.PER_DOC), fewer for short
# documents and shared sentences (kept once): newsgroups20 2.71 (20,430 for 7,532 posts; 2.84 in
# the 400-post sample), SciFact 3.0.
QUERIES_PER_DOCUMENT = 2.7
# The range shown around the estimate: measured rates moved 2× with the machine's load (queries
# 40-88 ms, the 88 ms implied by the 31-minute report; documents 0.35-0.74 s).
SPREAD = (0.75, 1.6)
RATES_FILE = "rates.json"
MIN_RECORDED_S = 20.0  # shorter builds are mostly fixed costs: they do not teach the factor anything


@dataclass(frozen=True)
class BuildEstimate:
    method: str
    scope: str  # "index" or "workspace-<id>"
    workspace: Optional[str]
    documents: int  # readable files in scope
    to_embed: int  # of those, not in the embedding cache yet (0 for text-only methods)
    queries: int  # EDR-MQ: queries to run (synthetic + logged + given); co-occurrence: one sentence per document
    seconds: float
    low: float
    high: float
    incremental: bool = False  # relations are stored: only the difference is estimated
    changed: Optional[int] = None  # files added, changed or removed since the stored build
    resumable: int = 0  # queries a cancelled build with these parameters left done (used if its queries are the same)
    notes: tuple[str, ...] = ()

    @property
    def whole_index(self) -> bool:
        return self.workspace is None

    @property
    def where(self) -> str:
        return "whole index" if self.workspace is None else f"workspace “{self.workspace}”"

    def duration(self) -> str:
        """'about 25–35 min on this machine'."""
        return f"{format_range(self.low, self.high)} on this machine"

    def short_duration(self) -> str:
        """'about 15–35 min', for a button."""
        return format_range(self.low, self.high)

    def summary(self) -> str:
        """One line: 'whole index: 7,532 documents, ~20,400 queries to run, about 25–35 min on this machine'."""
        parts = [f"{self.documents:,} document{'s' if self.documents != 1 else ''}"]
        if self.incremental:
            parts[0] += f" ({self.changed:,} changed since the last build)"
        if self.to_embed:
            parts.append(f"{self.to_embed:,} to embed")
        if self.method == "edrmq" and not self.queries:
            parts.append("no queries to run")
        elif self.method == "edrmq":
            q = f"~{_round3(self.queries):,} queries to run"
            if self.resumable:
                q += f" ({min(self.resumable, self.queries):,} done by a cancelled build)"
            parts.append(q)
        elif self.method == "tfidf":
            parts.append("every file's text read")
        return f"{self.where}: {', '.join(parts)}, {self.duration()}"

    def to_json(self) -> dict:
        return {**self.__dict__, "summary": self.summary()}


def _round3(n: int) -> int:
    """Three significant figures: 20,430 → 20,400 (an estimate should not look exact)."""
    if n < 1000:
        return n
    digits = int(math.floor(math.log10(n))) - 2
    return int(round(n / 10 ** digits) * 10 ** digits)


def estimate_build(library: "Library", workspace: Optional[str] = None, method: str = "edrmq", *,
                   retriever: str = DEFAULT_RETRIEVER, params: EdrmqParams = EdrmqParams(), synthetic: bool = True,
                   extra_queries: int = 0, incremental: bool = True, questions: bool = False,
                   encoder: Any = None, rates: Optional[Rates] = None) -> BuildEstimate:
    """The cost of ``build_relations`` with these arguments (see the module doc). An EDR-MQ build
    with relations stored for the scope (same model and parameters) is estimated as the update
    it will be: the synthetic queries of added and changed files and the searches logged since.
    TF-IDF and co-occurrence recompute in full every time, and say so."""
    if method not in METHODS:
        raise RelationsError(f"unknown method '{method}': use one of {', '.join(METHODS)}")
    if retriever not in RETRIEVERS:
        raise RelationsError(f"retriever must be one of {', '.join(RETRIEVERS)}")
    r = rates or local_rates(library.settings.data_dir)
    ws_id = workspace_id(library, workspace)
    files = scope_files(library, ws_id)
    if not files:
        raise no_documents(ws_id)
    n = len(files)
    vectors = method == "cooc" or (method == "edrmq" and (retriever == "dense" or
                                                          (retriever == "hybrid" and params.alpha > 0)))
    notes: list[str] = []
    to_embed = _not_embedded(library, [f.content_hash for f in files], encoder) if vectors else 0
    seconds = (to_embed * r.embed_document + (n - to_embed) * r.cached_document) if vectors else n * r.read_document
    out_dir = persist.relations_dir(library.settings.data_dir, scope_key(ws_id), method)
    stored_meta = _meta(out_dir)
    inc, changed, queries, resumable = False, None, 0, 0
    if method == "edrmq":
        param_key = {**params.to_json(), "retriever": retriever}
        param_key.pop("batch_size", None)
        prev = stored_meta if incremental and stored_meta is not None and stored_meta.get("params") == param_key else None
        model = getattr(encoder, "model_id", None) if vectors else None
        if prev is not None and model is not None and prev.get("model_id") != model:
            prev = None  # another model: the build starts over (without an encoder the model is not known)
        after = int(prev.get("last_log_id", 0)) if prev is not None else 0
        logged = len(read_query_log(library, ws_id, after_id=after))
        if prev is not None:
            inc = True
            changes = diff(persist.known_files(prev), {str(f.file_id): f.content_hash for f in files})
            changed = len(changes)
            fresh = len(changes.added) + len(changes.changed)
            drawn = min(n, fresh + CONTEXT_DOCS) if fresh else 0
        else:
            fresh = drawn = n
        synth = int(round(fresh * QUERIES_PER_DOCUMENT)) if synthetic else 0
        queries = synth + logged + extra_queries
        resumable = min(pending_queries(out_dir, param_key) or 0, queries)
        todo = queries - resumable
        kind = {"hybrid": "hybrid" if params.alpha > 0 else "lexical", "dense": "dense", "bm25": "bm25"}[retriever]
        if synthetic:
            seconds += drawn * r.draw_queries
        if todo:
            seconds += (n * r.fit_document if kind in ("hybrid", "lexical") else 0.0)
            seconds += todo * ((r.encode_query if vectors else 0.0) + n * r.pair.get(kind, 0.0)
                               + r.per_query.get(kind, 0.0))
        if questions:
            notes.append("generated questions (one Ollama call per new document) are not in the estimate")
    elif method == "tfidf":
        seconds += n * r.tfidf_document
    else:  # cooc: one salient sentence per document encoded, then walks, Word2Vec and clustering
        queries = n
        seconds += n * (r.draw_queries + r.encode_query + r.cooc_document)
    if stored_meta is not None and not inc:
        notes.append("relations are stored for this scope; this build recomputes them in full")
    return BuildEstimate(method, scope_key(ws_id), workspace, n, to_embed, queries, seconds,
                         seconds * SPREAD[0], seconds * SPREAD[1], inc, changed, resumable, tuple(notes))


def _meta(out_dir: Path) -> Optional[dict]:
    try:
        return persist.load_meta(out_dir)
    except persist.RelationsStoreError:
        return None


def _not_embedded(library: "Library", hashes: list[str], encoder: Any) -> int:
    """How many of ``hashes`` the embedding cache holds no chunks and vectors for (with this
    chunker; with the encoder's model when one is given — else any model's rows count, which
    only differs after switching the runtime to int8)."""
    from spar_desktop.core.embedding.cache import EmbeddingCache  # deferred: sqlite, the cache's schema
    from spar_desktop.core.workspaces.engine import chunker_config  # deferred: the search stack

    key = chunker_config(library.settings).cache_key
    model = getattr(encoder, "model_id", None) if encoder is not None else None
    cache = EmbeddingCache(library.settings.data_dir)
    try:
        have = cache.hashes(key, model)
    finally:
        cache.close()
    return len({h for h in hashes if h not in have})


# -- this machine's own builds --------------------------------------------------------------------
def _rates_path(data_dir: str | Path) -> Path:
    return DataLayout(Path(data_dir)).relations / RATES_FILE


def local_factor(data_dir: str | Path) -> float:
    """How this machine's finished builds compared with RATES (1.0 until one is recorded)."""
    try:
        data = json.loads(_rates_path(data_dir).read_text(encoding="utf-8"))
        f = float(data.get("factor", 1.0))
    except (OSError, ValueError, TypeError, AttributeError):
        return 1.0
    return f if 0.05 <= f <= 20 else 1.0


def local_rates(data_dir: str | Path) -> Rates:
    f = local_factor(data_dir)
    if f == 1.0:
        return RATES
    scaled = {k: v * f for k, v in RATES.__dict__.items() if k not in ("pair", "per_query")}
    return Rates(**scaled, pair={k: v * f for k, v in RATES.pair.items()},
                 per_query={k: v * f for k, v in RATES.per_query.items()})


def record_build(data_dir: str | Path, estimated_s: float, actual_s: float) -> None:
    """Fold one finished build into the machine's factor: the estimate it had at its start (with
    the factor then in use) against what it took. Halfway towards each new build's ratio (in log
    space), each ratio capped at 5× either way; builds under MIN_RECORDED_S teach nothing."""
    if actual_s < MIN_RECORDED_S or estimated_s <= 0:
        return
    old = local_factor(data_dir)
    ratio = min(5.0, max(0.2, actual_s / estimated_s))
    factor = math.exp(math.log(old) + 0.5 * math.log(ratio))
    path = _rates_path(data_dir)
    try:
        builds = int(json.loads(path.read_text(encoding="utf-8")).get("builds", 0))
    except (OSError, ValueError, TypeError, AttributeError):
        builds = 0
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{RATES_FILE}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"factor": round(factor, 4), "builds": builds + 1}), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:  # a read-only data dir keeps the rates it had: never a reason to fail a build
        pass

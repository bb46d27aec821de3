"""Tag-hierarchy induction: files' key phrases clustered into two levels, each node named.

For shares whose only tags are folders and dates (SPAR §3.2 induces intermediate tags the same
way). Files are placed by their TF-IDF phrase rows reduced with LSA (or, when given, by their
summary vectors, or both), clustered top-down with k-means: top topics first, then sub-topics
inside each. Counts come from the number of files, bounded, so a 40-file share gets a handful of
topics and a 100k-file share no more than ``max_top`` × ``max_sub``. Each node is named from its
most distinctive phrases against its siblings (c-TF-IDF), or by an injected ``namer`` (the
command and UI get one from ``ollama_namer``, over core.llm's connection).
"""

from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional

import numpy as np

from spar_desktop.core.config import Settings
from spar_desktop.core.llm.prompts import topic_naming_prompt
from spar_desktop.core.progress import CancelToken, Progress, ProgressCallback, check, no_progress
from spar_desktop.core.tagging.phrases import PhraseTable, build_phrase_table, class_tfidf, distinct_phrases
from spar_desktop.core.tagging.proposal import Proposal, TopicNode, check_name, save_proposal
from spar_desktop.core.tagging.summaries import SummaryStore, summarize_files

log = logging.getLogger(__name__)

Namer = Callable[[list[str]], str]
MIN_FILES = 6
NAMER_FAILURES = 3  # after this many failed names, stop asking (a dead or confused server)


class InductionError(ValueError):
    """Too few files, or files without any shared phrase."""


@dataclass(frozen=True)
class InduceConfig:
    min_top: int = 2
    max_top: int = 12
    max_sub: int = 8
    min_leaf: int = 3  # a topic is split only when each sub-topic can hold this many files
    lsa_dims: int = 100
    features: str = "auto"  # "phrases" (LSA), "vectors", "both"; auto = both when vectors are given
    name_phrases: int = 2  # phrases joined into a node's name
    example_phrases: int = 8
    choose_k: bool = True  # pick the top-level count by silhouette within the bounds from n
    seed: int = 0


def top_count(n: int, cfg: InduceConfig) -> int:
    """Top topics for n files: ~√n / 1.5, bounded (40 files → 4, 1,000 → max_top)."""
    return max(cfg.min_top, min(cfg.max_top, round(math.sqrt(n) / 1.5), n // cfg.min_leaf))


def sub_count(n: int, cfg: InduceConfig) -> int:
    """Sub-topics of a topic of n files: ~√(n/4), bounded; 0 (no split) below 2 × min_leaf."""
    if n < 2 * cfg.min_leaf:
        return 0
    return max(2, min(cfg.max_sub, round(math.sqrt(n / 4)), n // cfg.min_leaf))


def naming_prompt(phrases: list[str]) -> str:
    """The Ollama prompt a namer sends (the CLI and the UI ask the same thing)."""
    return topic_naming_prompt(phrases)


def ollama_namer(settings: Settings) -> tuple[Optional[Callable[[list[str]], str]], Optional[str]]:
    """(namer, None) when the settings' Ollama server answers, else (None, why not)."""
    from spar_desktop.core.llm.connection import ollama_generator  # deferred: loads ollama/httpx

    generate, why_not = ollama_generator(settings)
    if generate is None:
        return None, why_not
    return (lambda phrases: generate(naming_prompt(phrases))), None


def clean_name(reply: str) -> str:
    """A model's reply as a topic name: first line, quotes, 'Topic:' and trailing dots removed."""
    line = next((ln for ln in reply.strip().splitlines() if ln.strip()), "")
    line = re.sub(r"^\s*(topic( name)?|name)\s*:\s*", "", line, flags=re.I)
    line = line.strip(" \t\"'*`“”.:")
    return " ".join(line.split()[:6])[:60]


def _mode(cfg: InduceConfig, vectors: Optional[tuple[np.ndarray, np.ndarray]]) -> str:
    if vectors is None:
        return "phrases"
    return cfg.features if cfg.features != "auto" else "both"


def _features(table: PhraseTable, vectors: Optional[tuple[np.ndarray, np.ndarray]], cfg: InduceConfig) -> np.ndarray:
    # Deferred here and below: scikit-learn takes ~1 s to import; only an induction run needs it.
    from sklearn.decomposition import TruncatedSVD
    from sklearn.preprocessing import normalize

    n, v = table.weights.shape
    mode = _mode(cfg, vectors)
    lsa = None
    if mode != "vectors":
        dims = max(1, min(cfg.lsa_dims, n - 1, v - 1))
        lsa = TruncatedSVD(n_components=dims, random_state=cfg.seed).fit_transform(table.weights) if dims > 1 \
            else table.weights.toarray()
        lsa = normalize(lsa)
    if lsa is not None and (mode == "phrases" or vectors is None):
        return lsa.astype(np.float32)
    assert vectors is not None
    ids, vecs = vectors
    pos = {int(i): k for k, i in enumerate(ids)}
    dense = np.zeros((n, vecs.shape[1]), dtype=np.float32)
    for row, fid in enumerate(table.file_ids):
        k = pos.get(int(fid))
        if k is not None:
            dense[row] = vecs[k]
    dense = normalize(dense)
    if lsa is None:
        return dense
    return normalize(np.hstack([lsa, dense])).astype(np.float32)


def _kmeans(x: np.ndarray, k: int, seed: int) -> np.ndarray:
    """Labels 0..k'-1 (k' ≤ k: duplicate points can leave clusters empty), largest cluster first."""
    from sklearn.cluster import KMeans  # deferred: see _features

    k = min(k, len(x))
    if k <= 1:
        return np.zeros(len(x), dtype=np.int64)
    labels = KMeans(n_clusters=k, n_init=2, random_state=seed).fit_predict(x)
    sizes = np.bincount(labels, minlength=k)
    order = [c for c in np.argsort(-sizes, kind="stable") if sizes[c] > 0]
    remap = np.full(k, -1, dtype=np.int64)
    remap[order] = np.arange(len(order))
    return remap[labels]


def _choose_top(x: np.ndarray, k_max: int, cfg: InduceConfig) -> np.ndarray:
    """Top-level labels: k from ⌈k_max/2⌉..k_max with the best cosine silhouette, so four clear
    groups give four topics rather than the √n bound; k_max alone when not choosing."""
    if not cfg.choose_k or k_max <= cfg.min_top:
        return _kmeans(x, k_max, cfg.seed)
    from sklearn.metrics import silhouette_score  # deferred: see _features

    best, best_labels = -2.0, None
    low = max(cfg.min_top, (k_max + 1) // 2)
    # At most five candidates: each is a k-means run, the dominant cost on a large share.
    for k in sorted(set(np.linspace(low, k_max, num=min(5, k_max - low + 1)).round().astype(int))):
        labels = _kmeans(x, k, cfg.seed)
        if labels.max() < 1:
            continue
        score = silhouette_score(x, labels, metric="cosine", sample_size=min(len(x), 2000), random_state=cfg.seed)
        if score > best:
            best, best_labels = score, labels
    return best_labels if best_labels is not None else _kmeans(x, k_max, cfg.seed)


def _scores(x: np.ndarray) -> np.ndarray:
    """Cosine of each row to the group's centroid: how typical a file is of its topic."""
    centroid = x.mean(axis=0)
    norm = np.linalg.norm(centroid)
    if norm == 0:
        return np.zeros(len(x))
    return np.clip(x @ (centroid / norm), 0.0, 1.0)


def _rank_phrases(table: PhraseTable, rows: np.ndarray, labels: np.ndarray, n_classes: int,
                  k: int, exclude: Optional[list[set[str]]] = None) -> list[list[str]]:
    """Each class's most distinctive phrases: c-TF-IDF over file counts (binary, so one long
    file repeating a word cannot name a topic) times the phrase's corpus-wide IDF, which keeps
    words every topic uses ('time', 'people', 'data') out of names. A phrase must occur in at
    least two of the class's files."""
    raw = table.counts[rows].tocsr()
    counts = raw.sign()
    scores = class_tfidf(counts, labels, n_classes)
    df_all = np.asarray(counts.sum(axis=0)).ravel()
    scores = scores * np.log((len(rows) + 1) / (df_all + 1))[None, :]
    out = []
    for c in range(n_classes):
        members = labels == c
        df = np.asarray(counts[members].sum(axis=0)).ravel()
        uses = np.asarray(raw[members].sum(axis=0)).ravel()
        tie = 1e-9 * uses / (uses.max() + 1.0) if len(uses) else 0.0  # ties go to the phrase used most
        s = np.where(df >= min(2, int(members.sum())), scores[c] + tie, 0.0)
        order = np.argsort(-s, kind="stable")[: 20 * k]
        skip = exclude[c] if exclude else set()
        ranked = [str(table.phrases[j]) for j in order if s[j] > 0 and not set(str(table.phrases[j]).split()) <= skip]
        out.append(distinct_phrases(ranked, k))
    return out


def _unique_names(names: list[str], phrases: list[list[str]], cfg: InduceConfig) -> list[str]:
    """Sibling names must differ (they become tag keys): extend a clash by a further phrase."""
    out: list[str] = []
    for name, ph in zip(names, phrases):
        extra = iter(ph[cfg.name_phrases:])
        candidate = name
        while candidate.casefold() in {o.casefold() for o in out}:
            nxt = next(extra, None)
            candidate = f"{candidate}, {nxt}" if nxt else f"{name} ({len(out) + 1})"
        out.append(candidate)
    return out


def name_words(phrases: list[str], n: int) -> list[str]:
    """The first n phrases that share no word: 'breast cancer, survival', not 'breast cancer,
    breast cancer patients'."""
    out: list[str] = []
    used: set[str] = set()
    for p in phrases:
        words = set(p.split())
        if not words & used:
            out.append(p)
            used |= words
            if len(out) == n:
                break
    return out


class _Naming:
    """Names nodes from phrases, through the namer while it works."""

    def __init__(self, namer: Optional[Namer], cfg: InduceConfig) -> None:
        self.namer, self.cfg, self.failures, self.used = namer, cfg, 0, False

    def name(self, phrases: list[str]) -> str:
        fallback = ", ".join(name_words(phrases, self.cfg.name_phrases)) or "misc"
        if self.namer is None or self.failures >= NAMER_FAILURES or not phrases:
            return check_name(fallback)
        try:
            name = check_name(clean_name(self.namer(list(phrases))))
            self.used = True
            return name
        except Exception as exc:  # noqa: BLE001 - a namer is a network call; phrases are the fallback
            self.failures += 1
            log.info("topic naming failed (%s); using phrases", exc)
            return check_name(fallback)


def induce_hierarchy(texts: Mapping[int, str], vectors: Optional[tuple[np.ndarray, np.ndarray]] = None,
                     namer: Optional[Namer] = None, config: InduceConfig = InduceConfig(),
                     progress: ProgressCallback = no_progress, cancel: Optional[CancelToken] = None) -> Proposal:
    """A two-level Proposal from ``texts`` (file id -> summary); ``vectors`` = (ids, L2-normalised
    rows) optionally joins the phrase features. Raises InductionError, Cancelled."""
    texts = {int(i): t for i, t in texts.items() if t and t.strip()}
    if len(texts) < MIN_FILES:
        raise InductionError(f"{len(texts)} files with text: topics need at least {MIN_FILES}")
    progress(Progress(0, None, "finding key phrases"))
    try:
        table = build_phrase_table(texts)
    except ValueError as exc:
        raise InductionError(str(exc)) from exc
    check(cancel)
    placed = np.flatnonzero(table.weights.getnnz(axis=1) > 0)
    if vectors is not None:
        with_vec = set(int(i) for i in vectors[0])
        placed = np.union1d(placed, [r for r, f in enumerate(table.file_ids) if int(f) in with_vec]).astype(np.int64)
    if len(placed) < MIN_FILES:
        raise InductionError("too few files share key phrases to group them")
    x = _features(table, vectors, config)[placed]
    n_top = top_count(len(placed), config)
    check(cancel)
    progress(Progress(0, n_top + 2, f"grouping {len(placed)} files into topics"))
    top_labels = _choose_top(x, n_top, config)
    n_top = int(top_labels.max()) + 1
    # Leaf groups: every sub-topic, plus one group per topic for its own (unsplit or stray) files.
    leaf_labels = np.empty(len(placed), dtype=np.int64)
    leaf_top: list[int] = []  # leaf group -> its topic
    is_child: list[bool] = []
    for t in range(n_top):
        check(cancel)
        progress(Progress(t + 1, n_top + 2, f"sub-topics of topic {t + 1}"))
        idx = np.flatnonzero(top_labels == t)
        subs = _split(x[idx], config)
        own = [i for i, lab in zip(idx, subs) if lab < 0]
        for c in range(int(subs.max()) + 1 if len(subs) else 0):
            leaf_labels[idx[subs == c]] = len(leaf_top)
            leaf_top.append(t)
            is_child.append(True)
        if own:
            leaf_labels[own] = len(leaf_top)
            leaf_top.append(t)
            is_child.append(False)
    progress(Progress(n_top + 1, n_top + 2, "naming topics"))
    naming = _Naming(namer, config)
    k = config.example_phrases
    top_phrases = _rank_phrases(table, placed, top_labels, n_top, k)
    top_names = _unique_names([naming.name(p) for p in top_phrases], top_phrases, config)
    # Sub-topics are named against every leaf group, not just their siblings, without the
    # words of their topic's name.
    exclude = [set(" ".join(name_words(top_phrases[t], config.name_phrases)).split()) for t in leaf_top]
    leaf_phrases = _rank_phrases(table, placed, leaf_labels, len(leaf_top), k, exclude)
    tops: list[TopicNode] = []
    for t in range(n_top):
        check(cancel)
        groups = [g for g in range(len(leaf_top)) if leaf_top[g] == t]
        children_g = [g for g in groups if is_child[g]]
        names = _unique_names([naming.name(leaf_phrases[g]) for g in children_g],
                              [leaf_phrases[g] for g in children_g], config)
        top_x = x[top_labels == t]
        children = tuple(TopicNode(f"{t + 1}.{j + 1}", names[j], tuple(leaf_phrases[g]),
                                   _files(table, placed[leaf_labels == g], x[leaf_labels == g]))
                         for j, g in enumerate(children_g))
        own_g = [g for g in groups if not is_child[g]]
        own_rows = leaf_labels == own_g[0] if own_g else np.zeros(len(placed), dtype=bool)
        own = _files(table, placed[own_rows], x[own_rows], None if not children else top_x)
        tops.append(TopicNode(str(t + 1), top_names[t], tuple(top_phrases[t]), own, children))
    progress(Progress(n_top + 2, n_top + 2, f"{n_top} topics"))
    method = {"phrases": "tfidf-lsa", "vectors": "summary-vectors", "both": "tfidf-lsa+summary-vectors"}
    mode = _mode(config, vectors)
    return Proposal(tuple(tops), file_count=len(texts), unplaced=len(texts) - len(placed),
                    method=f"{method[mode]}+kmeans", named_by="ollama" if naming.used else "phrases")


def _split(x: np.ndarray, cfg: InduceConfig) -> np.ndarray:
    """Sub-topic labels of one topic's rows: 0..m-1, or -1 for the topic's own files (strays in
    groups under min_leaf, or every file when fewer than two sub-topics hold min_leaf files)."""
    k = sub_count(len(x), cfg)
    if not k:
        return np.full(len(x), -1, dtype=np.int64)
    labels = _kmeans(x, k, cfg.seed)
    sizes = np.bincount(labels)
    keep = [c for c in range(len(sizes)) if sizes[c] >= cfg.min_leaf]
    if len(keep) < 2:  # one sub-topic equal to its topic says nothing
        return np.full(len(x), -1, dtype=np.int64)
    remap = np.full(len(sizes), -1, dtype=np.int64)
    remap[keep] = np.arange(len(keep))
    return remap[labels]


def _files(table: PhraseTable, rows: np.ndarray, x: np.ndarray,
           reference: Optional[np.ndarray] = None) -> tuple[tuple[int, float], ...]:
    scores = _scores(x) if reference is None else _score_against(x, reference)
    pairs = sorted(((int(table.file_ids[r]), round(float(s), 4)) for r, s in zip(rows, scores)),
                   key=lambda p: (-p[1], p[0]))
    return tuple(pairs)


def _score_against(x: np.ndarray, reference: np.ndarray) -> np.ndarray:
    centroid = reference.mean(axis=0)
    norm = np.linalg.norm(centroid)
    return np.clip(x @ (centroid / norm), 0.0, 1.0) if norm else np.zeros(len(x))


def induce_for_library(library: Any, settings: Any, encoder: Any, namer: Optional[Namer] = None,
                       config: InduceConfig = InduceConfig(), progress: ProgressCallback = no_progress,
                       cancel: Optional[CancelToken] = None) -> Proposal:
    """Summarise the files that lack a current summary (resumable), induce from every summary
    (its vector joining unless ``config.features`` says phrases), and save the proposal in the
    data dir, replacing the previous one. ``encoder`` None: phrases only, no new summaries."""
    if encoder is not None:
        summarize_files(library, settings, encoder, progress=progress, cancel=cancel)
    store = SummaryStore(library)
    texts = store.texts()
    vectors = None
    if encoder is not None and config.features != "phrases":
        ids, vecs = store.matrix(encoder.model_id)
        vectors = (ids, vecs) if len(ids) else None
    proposal = induce_hierarchy(texts, vectors, namer, config, progress, cancel)
    save_proposal(settings.data_dir, proposal)
    return proposal

"""Session evaluation on a BEIR collection: vanilla dense retrieval vs co-occurrence clusters.

Sessions are the queries judged relevant to ≥ 2 documents (SciFact: claims citing several
abstracts; NFCorpus: questions with their graded citations). The entry query is the query
itself; the simulated user's follow-up for a missing document is that document's most salient
sentence (drawn over the whole corpus, so it does not depend on which sessions are evaluated;
its title or opening words when it has no sentence, see document_queries).

Co-occurrence sequences follow the paper: ground-truth groups (the qrels' document sets, ×10),
embedding walks, and question-driven paths. With ``holdout`` > 0 a seeded share of the sessions
is evaluated and kept out of the ground-truth sequences — the honest setting for a new session;
holdout = 0 is the paper's transductive setting (every evaluated group is in training).
``train_evaluated`` with holdout > 0 evaluates the same held-out share but trains on every
group: the transductive figure on exactly the sessions of the held-out one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np

from spar_desktop.core.eval.beir import load_beir
from spar_desktop.core.progress import CancelToken, ProgressCallback, no_progress
from spar_desktop.core.relations.clusters import CoocClusters, Word2VecParams, cluster_sequences
from spar_desktop.core.relations.cooc import SequenceParams, build_sequences, nearest_neighbors, question_sequences
from spar_desktop.core.relations.doc_vectors import DocSet
from spar_desktop.core.relations.evaluation import cluster_pair_stats, corpus_docs, eval_encoder, pairs_from_groups
from spar_desktop.core.relations.expansion import ExpansionParams, cluster_boost, cluster_expand, dense_ranking
from spar_desktop.core.relations.session_metrics import EvalSession, SessionEvalReport, evaluate_sessions
from spar_desktop.core.relations.synthetic import salient_sentences
from spar_desktop.core.relations.topk import top_k_rows


@dataclass(frozen=True)
class CoocConfig:
    """Everything that shapes the co-occurrence clusters of an evaluation."""

    sequences: SequenceParams = field(default_factory=SequenceParams)
    word2vec: Word2VecParams = field(default_factory=Word2VecParams)


@dataclass(frozen=True)
class SessionSetup:
    sessions: list[EvalSession]  # evaluated
    train_groups: list[list[str]]  # ground-truth co-occurrence given to the clustering
    follow_up_sentences: dict[str, str]


Group = tuple[str, list[str]]


def relevant_groups(qrels: dict[str, dict[str, int]], docs: DocSet, *, min_docs: int = 2,
                    min_relevance: int = 1) -> list[Group]:
    """(query id, its relevant documents in the corpus) for queries with ≥ min_docs of them;
    ``min_relevance`` picks the grade on graded qrels (NFCorpus: 2 = directly cited)."""
    index = docs.index()
    out = []
    for qid, rels in qrels.items():
        members = [d for d, r in rels.items() if r >= min_relevance and d in index]
        if len(members) >= min_docs:
            out.append((qid, members))
    return out


def split_groups(n: int, holdout: float, seed: int) -> tuple[list[int], list[int]]:
    """(evaluated, trained) positions: a seeded share ``holdout`` is evaluated, the rest trains;
    holdout = 0 evaluates everything and trains on everything."""
    order = np.random.default_rng(seed).permutation(n)
    n_out = int(round(holdout * n))
    if not n_out:
        return list(range(n)), list(range(n))
    return sorted(order[:n_out].tolist()), sorted(order[n_out:].tolist())


OPENING_WORDS = 30


def document_queries(docs: DocSet, cancel: Optional[CancelToken] = None) -> list[str]:
    """Per document a query a user might ask about it: its most salient sentence, else its title,
    else its first OPENING_WORDS words. Why the last fallback: collections stored without
    punctuation (the shared NFCorpus: lower-cased, no titles) have no sentences at all, and an
    empty follow-up or question would retrieve noise."""
    sent = salient_sentences(list(docs.texts), per_doc=1, cancel=cancel)
    return [s[0] if s else (docs.titles[i].strip() or " ".join(docs.texts[i].split()[:OPENING_WORDS]))
            for i, s in enumerate(sent)]


def follow_up_sentences(docs: DocSet, cancel: Optional[CancelToken] = None) -> dict[str, str]:
    """Per document the follow-up query of a simulated user (see document_queries)."""
    return dict(zip(docs.ids, document_queries(docs, cancel)))


def setup_from_groups(groups: Sequence[Group], evaluated: Sequence[int], trained: Sequence[int],
                      queries: dict[str, str], follow: dict[str, str]) -> SessionSetup:
    sessions = [EvalSession(qid, tuple(m), queries[qid], {d: follow[d] for d in m})
                for qid, m in (groups[i] for i in evaluated)]
    return SessionSetup(sessions, [list(groups[i][1]) for i in trained], follow)


def make_sessions(qrels: dict[str, dict[str, int]], queries: dict[str, str], docs: DocSet, *, min_docs: int = 2,
                  min_relevance: int = 1, holdout: float = 0.0, train_evaluated: bool = False, seed: int = 42,
                  follow: Optional[dict[str, str]] = None) -> SessionSetup:
    groups = relevant_groups(qrels, docs, min_docs=min_docs, min_relevance=min_relevance)
    evaluated, trained = split_groups(len(groups), holdout, seed)
    if train_evaluated:
        trained = list(range(len(groups)))
    return setup_from_groups(groups, evaluated, trained, queries, follow or follow_up_sentences(docs))


def question_paths(docs: DocSet, encoder: Any, neighbors: int = 3,
                   cancel: Optional[CancelToken] = None) -> list[list[int]]:
    """Question-driven paths: each document's query (see document_queries) retrieves its neighbours."""
    if neighbors <= 0:
        return []
    text = document_queries(docs, cancel)
    src = [i for i, t in enumerate(text) if t]
    if not src:
        return []
    V = encoder.encode([text[i] for i in src], batch_size=128, cancel=cancel)
    depth = neighbors + 1
    retrieved = np.vstack([top_k_rows(V[i:i + 1024] @ docs.vectors.T, depth)[0] for i in range(0, len(V), 1024)])
    return question_sequences(src, retrieved, neighbors)


def cooc_clusters(docs: DocSet, encoder: Any, train_groups: list[list[str]], *, seed: int = 42,
                  config: Optional[CoocConfig] = None, questions: Optional[list[list[int]]] = None,
                  progress: ProgressCallback = no_progress, cancel: Optional[CancelToken] = None) -> CoocClusters:
    """Clusters from the training groups, embedding walks and question paths (``questions``
    may be passed in precomputed; ``config`` seeds default to ``seed``)."""
    config = config or CoocConfig(SequenceParams(seed=seed), Word2VecParams(seed=seed))
    sp = config.sequences
    index = docs.index()
    real = [[index[d] for d in g if d in index] for g in train_groups]
    neighbors = nearest_neighbors(docs.vectors, sp.walk_neighbors, cancel=cancel) if sp.walks_per_doc > 0 else None
    if questions is None:
        questions = question_paths(docs, encoder, sp.question_neighbors, cancel)
    seqs = build_sequences(len(docs), real=real, neighbors=neighbors, questions=questions, params=sp,
                           progress=progress, cancel=cancel)
    return cluster_sequences(seqs, len(docs), config.word2vec, progress=progress, cancel=cancel)


def ranker(name: str, docs: DocSet, clusters: CoocClusters, vecs: dict[str, np.ndarray], params: ExpansionParams,
           k: int):
    """A RankFn for evaluate_sessions: 'vanilla' (dense), 'expand' or 'boost' over it."""
    D, ids = docs.vectors, docs.ids
    cache: dict[str, list[str]] = {}

    def rank(query: str) -> list[str]:
        if query not in cache:
            q = vecs[query]
            ranked = dense_ranking(q, D, 100)
            if name == "expand":
                ranked = cluster_expand(ranked, q, D, clusters, k_v=params.k_v, k=k, rerank=params.rerank,
                                        max_added=params.max_added)
            elif name == "boost":
                ranked = cluster_boost(ranked, q, D, clusters, alpha=params.alpha, k_v=params.k_v, k=k)
            cache[query] = [ids[i] for i in ranked]
        return cache[query]
    return rank


def session_texts(sessions: Sequence[EvalSession]) -> list[str]:
    return sorted({s.query for s in sessions} | {q for s in sessions for q in s.follow_ups.values()})


def evaluate_setup(docs: DocSet, setup: SessionSetup, clusters: CoocClusters, encoder: Any,
                   systems: dict[str, tuple[str, ExpansionParams]], *, k: int = 8, seed: int = 42,
                   progress: ProgressCallback = no_progress,
                   cancel: Optional[CancelToken] = None) -> SessionEvalReport:
    """``systems``: report name → (vanilla | expand | boost, its parameters); the first is the
    baseline of the paired deltas."""
    texts = session_texts(setup.sessions)
    vecs = dict(zip(texts, encoder.encode(texts, batch_size=128, cancel=cancel)))
    fns = {name: ranker(kind, docs, clusters, vecs, p, k) for name, (kind, p) in systems.items()}
    return evaluate_sessions(setup.sessions, fns, k=k, seed=seed, progress=progress, cancel=cancel)


def evaluate_beir_sessions(folder: str | Path, split: str, data_dir: str | Path, *, k: int = 8, k_v: int = 3,
                           alpha: float = 0.2, holdout: float = 0.0, seed: int = 42, encoder: Any = None,
                           device: str = "cpu", runtime: Optional[str] = None, config: Optional[CoocConfig] = None,
                           expansion: Optional[ExpansionParams] = None, train_evaluated: bool = False,
                           min_relevance: int = 1, progress: ProgressCallback = no_progress,
                           cancel: Optional[CancelToken] = None) -> tuple[SessionEvalReport, dict]:
    """Vanilla vs expand vs boost on one collection. ``expansion`` overrides k_v/alpha."""
    dataset = load_beir(folder, split)
    if encoder is None:
        encoder = eval_encoder(data_dir, device, runtime)
    docs = corpus_docs(list(dataset.corpus.values()), data_dir, encoder=encoder, progress=progress, cancel=cancel)
    setup = make_sessions(dataset.qrels, dataset.queries, docs, holdout=holdout, seed=seed,
                          train_evaluated=train_evaluated, min_relevance=min_relevance)
    if not setup.sessions:
        raise ValueError(f"no query of {dataset.name}/{split} has two or more relevant documents: no sessions")
    clusters = cooc_clusters(docs, encoder, setup.train_groups, seed=seed, config=config, progress=progress,
                             cancel=cancel)
    params = expansion or ExpansionParams(k_v=k_v, alpha=alpha)
    report = evaluate_setup(docs, setup, clusters, encoder,
                            {"vanilla": ("vanilla", params), "expand": ("expand", params), "boost": ("boost", params)},
                            k=k, seed=seed, progress=progress, cancel=cancel)
    eval_pairs = pairs_from_groups([s.documents for s in setup.sessions], docs.index())
    extras = {"dataset": dataset.name, "split": split, "documents": len(docs), "holdout": holdout,
              "train_evaluated": train_evaluated, "train_groups": len(setup.train_groups),
              "clusters": clusters.n_clusters, "expansion": vars(params),
              "evaluated_pairs_in_same_cluster": cluster_pair_stats(clusters.labels, eval_pairs)}
    report.notes.append("sessions = queries with >= 2 relevant documents; follow-ups = each missing document's "
                        "most salient sentence")
    return report, extras

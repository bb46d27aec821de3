"""Session evaluation on a BEIR collection: vanilla dense retrieval vs co-occurrence clusters.

Sessions are the queries judged relevant to ≥ 2 documents (SciFact: claims citing several
abstracts). The entry query is the query itself; the simulated user's follow-up for a missing
document is that document's most salient sentence.

Co-occurrence sequences follow the paper: ground-truth groups (the qrels' document sets, ×10),
embedding walks, and question-driven paths. With ``holdout`` > 0 a seeded share of the sessions
is kept out of the ground-truth sequences and only those are evaluated — the honest setting for
a new session; holdout = 0 is the paper's transductive setting (its groups are in training).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import numpy as np

from spar_desktop.core.progress import CancelToken, ProgressCallback, no_progress
from spar_desktop.core.relations.clusters import CoocClusters, Word2VecParams, cluster_sequences
from spar_desktop.core.relations.cooc import SequenceParams, build_sequences, nearest_neighbors, question_sequences
from spar_desktop.core.relations.documents import DocSet
from spar_desktop.core.relations.edrmq import top_k_rows
from spar_desktop.core.relations.expansion import cluster_boost, cluster_expand, dense_ranking
from spar_desktop.core.relations.session_metrics import EvalSession, SessionEvalReport, evaluate_sessions
from spar_desktop.core.relations.synthetic import salient_sentences


@dataclass(frozen=True)
class SessionSetup:
    sessions: list[EvalSession]  # evaluated
    train_groups: list[list[str]]  # ground-truth co-occurrence given to the clustering
    follow_up_sentences: dict[str, str]


def make_sessions(qrels: dict[str, dict[str, int]], queries: dict[str, str], docs: DocSet, *, min_docs: int = 2,
                  holdout: float = 0.0, seed: int = 42) -> SessionSetup:
    index = docs.index()
    groups = []
    for qid, rels in qrels.items():
        members = [d for d, r in rels.items() if r > 0 and d in index]
        if len(members) >= min_docs:
            groups.append((qid, members))
    order = np.random.default_rng(seed).permutation(len(groups))
    n_out = int(round(holdout * len(groups)))
    evaluated = [groups[i] for i in sorted(order[:n_out])] if n_out else groups
    trained = [groups[i] for i in sorted(order[n_out:])]
    needed = sorted({index[d] for _, m in evaluated for d in m})
    sent = salient_sentences([docs.texts[i] for i in needed], per_doc=1)
    follow = {}
    for row, s in zip(needed, sent):
        follow[docs.ids[row]] = s[0] if s else docs.titles[row]
    sessions = [EvalSession(qid, tuple(m), queries[qid], {d: follow[d] for d in m}) for qid, m in evaluated]
    return SessionSetup(sessions, [m for _, m in trained], follow)


def cooc_clusters(docs: DocSet, encoder: Any, train_groups: list[list[str]], *, seed: int = 42,
                  progress: ProgressCallback = no_progress, cancel: Optional[CancelToken] = None) -> CoocClusters:
    index = docs.index()
    real = [[index[d] for d in g] for g in train_groups]
    neighbors = nearest_neighbors(docs.vectors, 10, cancel=cancel)
    sent = salient_sentences(list(docs.texts), per_doc=1, cancel=cancel)
    src = [i for i, s in enumerate(sent) if s]
    questions: list[list[int]] = []
    if src:
        V = encoder.encode([sent[i][0] for i in src], batch_size=128, cancel=cancel)
        retrieved = np.vstack([top_k_rows(V[i:i + 1024] @ docs.vectors.T, 4)[0] for i in range(0, len(V), 1024)])
        questions = question_sequences(src, retrieved, 3)
    seqs = build_sequences(len(docs), real=real, neighbors=neighbors, questions=questions,
                           params=SequenceParams(seed=seed), progress=progress, cancel=cancel)
    return cluster_sequences(seqs, len(docs), Word2VecParams(seed=seed), progress=progress, cancel=cancel)


def evaluate_beir_sessions(folder: str | Path, split: str, data_dir: str | Path, *, k: int = 8, k_v: int = 3,
                           alpha: float = 0.2, holdout: float = 0.0, seed: int = 42, encoder: Any = None,
                           device: str = "cpu", progress: ProgressCallback = no_progress,
                           cancel: Optional[CancelToken] = None) -> tuple[SessionEvalReport, dict]:
    from spar_desktop.core.eval.beir import load_beir
    from spar_desktop.core.relations.evaluation import cluster_pair_stats, corpus_docs, pairs_from_groups

    dataset = load_beir(folder, split)
    if encoder is None:
        from spar_desktop.core.embedding.encoder import get_encoder

        encoder = get_encoder(device)
    docs = corpus_docs(list(dataset.corpus.values()), data_dir, encoder=encoder, progress=progress, cancel=cancel)
    setup = make_sessions(dataset.qrels, dataset.queries, docs, holdout=holdout, seed=seed)
    if not setup.sessions:
        raise ValueError(f"no query of {dataset.name}/{split} has two or more relevant documents: no sessions")
    clusters = cooc_clusters(docs, encoder, setup.train_groups, seed=seed, progress=progress, cancel=cancel)
    D = docs.vectors
    texts = sorted({s.query for s in setup.sessions} | {q for s in setup.sessions for q in s.follow_ups.values()})
    vecs = dict(zip(texts, encoder.encode(texts, batch_size=128, cancel=cancel)))
    ids = docs.ids
    cache: dict[tuple[str, str], list[str]] = {}

    def system(name: str):
        def rank(query: str) -> list[str]:
            key = (name, query)
            if key not in cache:
                q = vecs[query]
                ranked = dense_ranking(q, D, 100)
                if name == "expand":
                    ranked = cluster_expand(ranked, q, D, clusters, k_v=k_v, k=k)
                elif name == "boost":
                    ranked = cluster_boost(ranked, q, D, clusters, alpha=alpha, k_v=k_v, k=k)
                cache[key] = [ids[i] for i in ranked]
            return cache[key]
        return rank

    report = evaluate_sessions(setup.sessions, {"vanilla": system("vanilla"), "expand": system("expand"),
                                                "boost": system("boost")}, k=k, seed=seed, progress=progress,
                               cancel=cancel)
    index = docs.index()
    eval_pairs = pairs_from_groups([s.documents for s in setup.sessions], index)
    extras = {"dataset": dataset.name, "split": split, "documents": len(docs), "holdout": holdout,
              "train_groups": len(setup.train_groups), "clusters": clusters.n_clusters,
              "evaluated_pairs_in_same_cluster": cluster_pair_stats(clusters.labels, eval_pairs)}
    report.notes.append("sessions = queries with >= 2 relevant documents; follow-ups = each missing document's "
                        "most salient sentence")
    return report, extras

"""Issue 18 item 2: sequence construction options, cluster count from embedded rows, expansion
re-ranking and caps, and the held-out / transductive session splits of beir_sessions."""

from __future__ import annotations

import numpy as np
import pytest

from spar_desktop.core.relations.beir_sessions import (
    CoocConfig, cooc_clusters, evaluate_setup, make_sessions, relevant_groups, split_groups,
)
from spar_desktop.core.relations.clusters import CoocClusters, Word2VecParams, agglomerative_labels, cluster_sequences
from spar_desktop.core.relations.cooc import SequenceParams, build_sequences, embedding_walks, real_sequences
from spar_desktop.core.relations.doc_vectors import DocSet, normalize_rows
from spar_desktop.core.relations.expansion import ExpansionParams, cluster_expand, dense_ranking


def test_real_groups_are_reshuffled_per_copy_so_all_members_share_contexts():
    group = list(range(12))
    rng = np.random.default_rng(0)
    seqs = real_sequences(20, [group], SequenceParams(real_upsample=10, shuffle_real=True), rng)
    assert len(seqs) == 10 and seqs[0] == group and all(sorted(s) == group for s in seqs)
    assert len({tuple(s) for s in seqs}) > 1
    adjacent = {frozenset(p) for s in seqs for p in zip(s, s[1:])}
    assert len(adjacent) > 11  # a fixed order would only ever pair 11 neighbours
    fixed = real_sequences(20, [group], SequenceParams(real_upsample=10), rng)  # the default: the paper's
    assert all(s == group for s in fixed)
    assert real_sequences(20, [[1, 2], [3, 99]], SequenceParams(real_upsample=0), rng) == []
    assert real_sequences(20, [[3, 99]], SequenceParams(real_upsample=2), rng) == []  # 99 dropped: too short


def test_no_walks_when_walks_per_doc_is_zero():
    nb = np.tile(np.arange(1, 5), (6, 1))
    assert embedding_walks(nb, SequenceParams(walks_per_doc=0)) == []
    assert len(build_sequences(6, real=[[0, 1, 2]], neighbors=nb, params=SequenceParams(walks_per_doc=0))) == 30


def test_cluster_count_comes_from_documents_with_a_vector():
    """Real co-access covering 10 of 60 documents: two groups of 5 must still form two clusters
    (M = ceil(10/5)), not ten singletons (M = ceil(60/5) capped at 10 rows)."""
    rng = np.random.default_rng(3)
    real = [list(rng.permutation(g)) for g in ([0, 1, 2, 3, 4], [5, 6, 7, 8, 9]) for _ in range(6)]
    clusters = cluster_sequences(build_sequences(60, real=real, params=SequenceParams(seed=42)), 60)
    assert len(set(clusters.labels[:5].tolist())) == 1 and len(set(clusters.labels[5:10].tolist())) == 1
    assert clusters.labels[0] != clusters.labels[5]
    assert clusters.n_clusters == 2 + 50  # the 50 unseen documents stay singletons
    emb = np.zeros((10, 2), np.float32)
    emb[:4] = [[1, 0], [1, 0.1], [0, 1], [0.1, 1]]
    assert len(set(agglomerative_labels(emb, cluster_size=2)[:4].tolist())) == 2


def _expansion_case():
    # documents 0-2 match the query; cluster {0, 5, 6, 7}: 5 looks like the query, 7 co-occurs with 0
    D = normalize_rows(np.array([[1, 0, 0], [1, 0.1, 0], [1, 0.2, 0], [0.9, 0.3, 0.1], [0.8, 0.4, 0.1],
                                 [0.7, 0.7, 0], [0.2, 0, 1], [0, 0.1, 1]], dtype=np.float32))
    labels = np.array([0, 1, 2, 3, 4, 0, 0, 0])
    E = np.zeros((8, 3), np.float32)
    E[:, 2] = 1
    E[0] = E[7] = [1, 0, 0]  # 0 and 7 co-occur
    E[6] = [0, 1, 0]
    return D, CoocClusters(labels, E), np.array([1, 0, 0], np.float32)


def test_expand_rerank_by_cooccurrence_and_cap():
    D, clusters, q = _expansion_case()
    ranked = dense_ranking(q, D, 8)
    by_query = cluster_expand(ranked, q, D, clusters, k_v=1, k=4)
    by_cooc = cluster_expand(ranked, q, D, clusters, k_v=1, k=4, rerank="cooc")
    assert by_query[:1] == by_cooc[:1] == [0]
    assert by_query[1] == 5 and by_cooc[1] == 7  # co-occurrence puts 7 (co-accessed with 0) first
    capped = cluster_expand(ranked, q, D, clusters, k_v=1, k=4, rerank="cooc", max_added=1)
    assert capped[:2] == [0, 7] and capped[2:] == [d for d in ranked[1:] if d != 7][:2]
    assert cluster_expand(ranked, q, D, clusters, k_v=1, k=4, max_added=0) == ranked[:4]
    with pytest.raises(ValueError):
        cluster_expand(ranked, q, D, clusters, rerank="title")


def test_split_groups_heldout_and_transductive():
    ev, tr = split_groups(10, 0.5, 42)
    assert len(ev) == 5 and sorted(ev + tr) == list(range(10)) and not set(ev) & set(tr)
    assert split_groups(10, 0.5, 42) == (ev, tr)
    assert split_groups(4, 0.0, 1) == ([0, 1, 2, 3], [0, 1, 2, 3])


def _tiny_collection():
    texts = [f"Topic {t} document {i}. It discusses {t} matters at length with {t} examples and details."
             for t in ("rockets", "bread", "engines") for i in range(4)]
    ids = [f"d{i}" for i in range(len(texts))]
    rng = np.random.default_rng(0)
    centers = normalize_rows(rng.normal(size=(3, 8)))
    V = normalize_rows(np.repeat(centers, 4, axis=0) + 0.2 * rng.normal(size=(12, 8)))
    docs = DocSet(tuple(ids), tuple(f"title {i}" for i in ids), tuple(texts), V.astype(np.float32))
    qrels = {"q1": {"d0": 1, "d1": 2, "d5": 0}, "q2": {"d4": 2, "d5": 1, "d6": 1}, "q3": {"d8": 1},
             "q4": {"d9": 2, "d10": 2}}
    queries = {q: f"question {q}" for q in qrels}
    return docs, qrels, queries


class _FakeEncoder:
    """Deterministic text vectors (hash-seeded), enough for the plumbing."""

    def encode(self, texts, batch_size=128, progress=None, cancel=None):
        import zlib

        return normalize_rows(np.stack([np.random.default_rng(zlib.crc32(t.encode())).normal(size=8)
                                        for t in texts]).astype(np.float32))


def test_sessions_grades_splits_and_evaluation():
    docs, qrels, queries = _tiny_collection()
    assert [q for q, _ in relevant_groups(qrels, docs)] == ["q1", "q2", "q4"]  # q3: one document
    assert [q for q, _ in relevant_groups(qrels, docs, min_relevance=2)] == ["q4"]  # graded qrels
    held = make_sessions(qrels, queries, docs, holdout=0.34, seed=1)
    assert len(held.sessions) == 1 and len(held.train_groups) == 2
    assert tuple(held.sessions[0].documents) not in {tuple(g) for g in held.train_groups}
    trans = make_sessions(qrels, queries, docs, holdout=0.34, seed=1, train_evaluated=True)
    assert [s.key for s in trans.sessions] == [s.key for s in held.sessions] and len(trans.train_groups) == 3
    assert all(s.follow_ups for s in trans.sessions)
    config = CoocConfig(SequenceParams(walks_per_doc=0, question_neighbors=0), Word2VecParams(epochs=5))
    clusters = cooc_clusters(docs, _FakeEncoder(), trans.train_groups, config=config)
    assert clusters.labels.shape == (12,)
    rep = evaluate_setup(docs, trans, clusters, _FakeEncoder(),
                         {"vanilla": ("vanilla", ExpansionParams()), "expand": ("expand", ExpansionParams(k_v=1)),
                          "boost": ("boost", ExpansionParams(alpha=0.1))}, k=4)
    assert rep.sessions == 1 and set(rep.systems) == {"vanilla", "expand", "boost"}
    assert rep.systems["expand"].coverage_delta is not None


def test_distance_threshold_lets_the_groups_decide_the_number_of_clusters():
    """Three tight pairs and two loners: with M = ceil(8/5) = 2 average linkage must merge unrelated
    pairs; a cosine-distance threshold keeps exactly the pairs together and the loners alone."""
    emb = np.array([[1, 0, 0, 0, 0], [0.98, 0.2, 0, 0, 0], [0, 1, 0, 0, 0], [0, 0.98, 0.2, 0, 0],
                    [0, 0, 1, 0, 0], [0, 0, 0.98, 0.2, 0], [0, 0, 0, 1, 0], [0, 0, 0, 0, 1]], dtype=np.float32)
    emb = normalize_rows(emb)
    fixed = agglomerative_labels(emb, cluster_size=5)
    assert len(set(fixed.tolist())) == 2
    labels = agglomerative_labels(emb, cluster_size=5, distance_threshold=0.1)
    assert labels[0] == labels[1] and labels[2] == labels[3] and labels[4] == labels[5]
    assert len(set(labels.tolist())) == 5  # three pairs, two loners
    # the parameter reaches the clustering through Word2VecParams
    n, real = 20, [list(np.random.default_rng(i).permutation(g)) for i in range(6)
                   for g in ([0, 1, 2, 3], [10, 11, 12, 13])]
    clusters = cluster_sequences(build_sequences(n, real=real), n, Word2VecParams(distance_threshold=0.5))
    assert clusters.n_clusters == len(set(clusters.labels.tolist()))
    assert (clusters.labels[:4] == clusters.labels[0]).all()


def test_skipgram_embeddings_group_co_accessed_documents():
    rng = np.random.default_rng(5)
    groups = [list(range(g * 4, g * 4 + 4)) for g in range(5)]
    real = [list(rng.permutation(g)) for g in groups for _ in range(8)]
    seqs = build_sequences(20, real=real, params=SequenceParams(seed=42))
    emb = cluster_sequences(seqs, 20, Word2VecParams(sg=True, epochs=50)).embeddings
    S = emb @ emb.T
    same = np.array([[i // 4 == j // 4 and i != j for j in range(20)] for i in range(20)])
    diff = np.array([[i // 4 != j // 4 for j in range(20)] for i in range(20)])
    assert S[same].mean() > S[diff].mean() + 0.2


def test_documents_without_sentences_still_get_a_follow_up_query():
    """A collection stored without punctuation or titles (the shared NFCorpus) has no sentences:
    the follow-up falls back to the title, then to the opening words — never an empty query."""
    from spar_desktop.core.relations.beir_sessions import OPENING_WORDS, document_queries, follow_up_sentences

    words = " ".join(f"word{i} statin cohort" for i in range(40))
    texts = ("Statins lower cholesterol in adults. The cohort was followed for ten years in Finland.",
             words, words)
    docs = DocSet(("a", "b", "c"), ("", "Statin trial", ""), texts, normalize_rows(np.eye(3, 4, dtype=np.float32)))
    q = document_queries(docs)
    assert q[0].startswith("The cohort was followed") or q[0].startswith("Statins lower")
    assert q[1] == "Statin trial"
    assert q[2] == " ".join(words.split()[:OPENING_WORDS])
    assert follow_up_sentences(docs) == dict(zip(("a", "b", "c"), q))

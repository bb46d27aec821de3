"""TF-IDF top-k baseline, co-occurrence sequences, Word2Vec clusters and cluster expansion."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import numpy as np
import pytest

from spar_desktop.core.relations.clusters import CoocClusters, agglomerative_labels, cluster_sequences
from spar_desktop.core.relations.cooc import (
    SequenceParams, augment, build_sequences, embedding_walks, nearest_neighbors, question_sequences,
)
from spar_desktop.core.relations.doc_vectors import normalize_rows
from spar_desktop.core.relations.expansion import cluster_boost, cluster_expand, dense_ranking
from spar_desktop.core.relations.tfidf import tfidf_top_k

TOPICS = ["rocket orbit launch nasa", "bread flour oven yeast", "engine brakes clutch gearbox"]


def test_tfidf_top_k_links_within_topics_only():
    texts = [f"{TOPICS[i % 3]} note {i}" for i in range(30)]
    R = tfidf_top_k(texts, k=5, block=7)
    assert R.shape == (30, 30) and R.diagonal().sum() == 0
    assert all(R.getrow(i).nnz == 5 for i in range(30))
    rows, cols = R.nonzero()
    assert all(r % 3 == c % 3 for r, c in zip(rows, cols))


def test_walks_augmentation_and_question_sequences():
    rng = np.random.default_rng(1)
    V = normalize_rows(rng.normal(size=(30, 8)))
    nb = nearest_neighbors(V, 4)
    assert nb.shape == (30, 4) and not (nb == np.arange(30)[:, None]).any()
    walks = embedding_walks(nb, SequenceParams(seed=7))
    assert len(walks) == 30 and sorted(w[0] for w in walks) == list(range(30))  # every doc starts one
    assert all(4 <= len(w) <= 6 for w in walks)  # 3 to 5 steps
    aug = augment([[1, 2, 3, 4, 5]], np.random.default_rng(0))
    assert aug[0] == [1, 2, 3, 4, 5] and aug[1] == [5, 4, 3, 2, 1] and 2 <= len(aug[2]) <= 4
    assert question_sequences([3], np.array([[3, 9, 8, 7, 6]]), 3) == [[3, 9, 8, 7]]
    seqs = build_sequences(30, real=[[0, 1]], neighbors=nb, questions=[[2, 3]], params=SequenceParams(seed=7))
    assert len(seqs) == 3 * (10 + 30 + 1)  # real ×10, one walk per doc, one question; all ×3


def _planted(n_groups: int = 8, size: int = 5, seed: int = 0):
    """Sessions that always co-access the same 5 documents: the clusters should recover them."""
    rng = np.random.default_rng(seed)
    n = n_groups * size
    real = []
    for g in range(n_groups):
        members = list(range(g * size, (g + 1) * size))
        for _ in range(6):
            real.append(list(rng.permutation(members)))
    return n, real


def test_clusters_recover_planted_sessions_and_are_deterministic():
    n, real = _planted()
    seqs = build_sequences(n, real=real, params=SequenceParams(seed=42))
    a = cluster_sequences(seqs, n)
    b = cluster_sequences(seqs, n)
    assert a.n_clusters == math.ceil(n / 5) == 8
    np.testing.assert_array_equal(a.labels, b.labels)
    np.testing.assert_allclose(a.embeddings, b.embeddings)
    for g in range(8):
        assert len(set(a.labels[g * 5:(g + 1) * 5].tolist())) == 1
    R = a.relation_matrix()
    assert R.nnz == 8 * 5 * 4 and R.diagonal().sum() == 0


def test_clusters_are_identical_across_processes():
    """gensim hashes with Python's hash() by default (PYTHONHASHSEED-dependent): we pass a stable
    one, so a fresh process with another hash seed gets exactly the same embeddings."""
    from spar_desktop.core.relations.clusters import train_embeddings

    n, real = _planted()
    here = train_embeddings(build_sequences(n, real=real, params=SequenceParams(seed=42)), n)
    code = ("import numpy as np, sys; sys.path.insert(0, '.');"
            "from tests.core.relations.test_tfidf_cooc import _planted;"
            "from spar_desktop.core.relations.cooc import build_sequences, SequenceParams;"
            "from spar_desktop.core.relations.clusters import train_embeddings;"
            "n, real = _planted(); e = train_embeddings(build_sequences(n, real=real, params=SequenceParams(seed=42)), n);"
            "print(repr(float(e[:, :5].sum())))")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    env = dict(os.environ, PYTHONHASHSEED=str(12345 if os.environ.get("PYTHONHASHSEED") != "12345" else 54321))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env, cwd=root)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == repr(float(here[:, :5].sum()))


def test_unseen_documents_become_singletons():
    emb = np.zeros((4, 3), dtype=np.float32)
    emb[0] = emb[1] = [1, 0, 0]
    labels = agglomerative_labels(emb, n_clusters=1)
    assert labels.tolist() == [0, 0, 1, 2]


def _clusters(labels):
    labels = np.asarray(labels)
    return CoocClusters(labels, np.eye(len(labels), dtype=np.float32))


def test_cluster_expand_returns_k_and_keeps_vanilla_first():
    rng = np.random.default_rng(2)
    D = normalize_rows(rng.normal(size=(40, 6)))
    q = D[0] + 0.1
    labels = np.arange(40) // 5  # 8 clusters of 5
    clusters = _clusters(labels)
    ranked = dense_ranking(q, D, 40)
    out = cluster_expand(ranked, q, D, clusters, k_v=3, k=8)
    assert len(out) == 8 and len(set(out)) == 8
    assert out[:3] == ranked[:3]
    members = set(np.flatnonzero(np.isin(labels, labels[ranked[:3]])).tolist())
    assert set(out[3:]) <= members | set(ranked)
    # expansion candidates are re-ranked by cosine to the query
    exp = [d for d in out[3:] if d in members]
    sims = D[exp] @ q
    assert list(sims) == sorted(sims, reverse=True)
    # singleton clusters: nothing to add, the vanilla ranking fills the budget
    solo = _clusters(np.arange(40))
    assert cluster_expand(ranked, q, D, solo, 3, 8) == ranked[:8]


def test_cluster_boost_promotes_a_matching_cluster():
    D = normalize_rows(np.array([[1, 0.0], [0.9, 0.1], [0.0, 1], [0.2, 1], [0.1, 1]], dtype=np.float32))
    q = np.array([0.6, 0.8], dtype=np.float32)
    clusters = _clusters([0, 0, 1, 1, 1])
    ranked = dense_ranking(q, D, 5)
    out = cluster_boost(ranked, q, D, clusters, alpha=0.2, k=5)
    assert sorted(out) == [0, 1, 2, 3, 4]
    assert cluster_boost(ranked, q, D, clusters, alpha=0.0, k=5) == ranked
    with pytest.raises(Exception):
        cluster_boost(ranked, q, D, _clusters([0]), k=5)  # labels must cover the documents

"""Hybrid EDR-MQ: the batched matrix form equals the definition computed one query at a time,
α = 1 is the dense method, α = 0 needs no vectors, and shared rare words relate two documents."""

from __future__ import annotations

import numpy as np
import pytest

from spar_desktop.core.relations.edrmq import EdrmqParams, RelationAccumulator, accumulate_dense, softmax_rows
from spar_desktop.core.relations.hybrid import LexicalIndex, accumulate_hybrid

BASE = [
    "The XJ900 carburetor leaks fuel at idle; the float needle seems stuck.",
    "Re the XJ900 carburetor: a stuck float needle leaks fuel, clean the needle seat.",
    "Bake the bread at high heat; knead the dough with flour and yeast.",
    "Sourdough bread needs a starter, flour, water and a long proof before baking.",
    "The probe entered orbit around Jupiter after a long cruise from the launch.",
    "Launch windows to Jupiter open every thirteen months; the probe used a gravity assist.",
    "Dough hydration changes the crumb of the bread; more water gives larger holes.",
    "Clean the carburetor jets before adjusting the idle mixture screw.",
]
# 24 distinct documents (three signed variants of each): enough for min_df = 2 / max_df = 0.5 to
# keep the topical words, and no exact ties that float32 and float64 could break differently
TEXTS = [f"{t} Noted by {['Ann', 'Bob', 'Cy'][j]} on {['Monday', 'Tuesday'][(i + j) % 2]}."
         for j in range(3) for i, t in enumerate(BASE)]
QUERIES = ["float needle stuck", "bread flour yeast", "probe launch Jupiter", "idle mixture", "proof the dough",
           "gravity assist", "fuel leaks", "crumb holes water"]


def unit(rng, shape):
    v = rng.standard_normal(shape).astype(np.float32)
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def by_definition(lex: LexicalIndex, queries, params: EdrmqParams, alpha: float, D=None, Q=None) -> np.ndarray:
    """R from the definition, one query and one z at a time: the conditional query [z; x] is the
    normalised sum of z's and x's unit vectors, on the lexical and on the dense side."""
    T = lex.matrix.toarray().astype(np.float64)
    tq = lex.transform(queries).toarray().astype(np.float64)
    n = T.shape[0]
    R = np.zeros((n, n))
    for qi in range(len(queries)):
        s1 = (1 - alpha) * (T @ tq[qi]) + (alpha * (D @ Q[qi]) if alpha > 0 else 0)
        z = np.lexsort((np.arange(n), -s1))[:params.k1]
        p1 = softmax_rows(s1[z][None, :], params.temperature)[0]
        for zi, pz in zip(z, p1):
            c = T[zi] + tq[qi]
            s2 = (1 - alpha) * (T @ (c / np.linalg.norm(c)))
            if alpha > 0:
                cd = D[zi] + Q[qi]
                s2 = s2 + alpha * (D @ (cd / np.linalg.norm(cd)))
            s2[zi] = -np.inf
            zj = np.lexsort((np.arange(n), -s2))[:params.k2]
            p2 = softmax_rows(s2[zj][None, :], params.temperature)[0]
            R[zi, zj] += pz * p2
    return R / len(queries)


def random_bags(rng, n: int, words: int, vocab: int = 60) -> list[str]:
    """Texts of random words with random repeats: TF-IDF weights without exact ties, which the
    product leaves unspecified at the top-k cut and the definition breaks by index."""
    return [" ".join(f"w{w}" for w in rng.integers(0, vocab, words)) for _ in range(n)]


@pytest.mark.parametrize("alpha", [0.0, 0.5])
def test_batched_hybrid_equals_the_definition(alpha):
    rng = np.random.default_rng(3)
    texts, queries = random_bags(rng, 30, 18), random_bags(rng, 11, 4)
    lex = LexicalIndex.fit(texts)
    D, Q = unit(rng, (len(texts), 16)), unit(rng, (len(queries), 16))
    params = EdrmqParams(temperature=0.1)
    acc = accumulate_hybrid(lex, queries, params, alpha, D, Q, batch_size=3)  # batches cut mid-list
    np.testing.assert_allclose(acc.matrix().toarray(), by_definition(lex, queries, params, alpha, D, Q), atol=1e-5)
    assert acc.n_queries == len(queries)


def test_a_document_without_terms_follows_the_definition():
    # A document whose words all fall out of the vocabulary has a zero TF-IDF row: as a first-stage
    # pick z, its conditional query is x's terms alone (length |t_x|, not that of a sum of two units).
    rng = np.random.default_rng(7)
    texts, queries = random_bags(rng, 30, 18), random_bags(rng, 6, 4)
    texts[4] = "singleword"  # in one document only: below min_df, no term left
    lex = LexicalIndex.fit(texts)
    assert lex.matrix[4].nnz == 0
    D, Q = unit(rng, (len(texts), 16)), unit(rng, (len(queries), 16))
    D[4] = Q[0]  # the first query's dense side picks it
    params = EdrmqParams(temperature=0.1)
    R = accumulate_hybrid(lex, queries, params, 0.5, D, Q).matrix().toarray()
    assert R[4].sum() > 0  # it was a first-stage pick
    np.testing.assert_allclose(R, by_definition(lex, queries, params, 0.5, D, Q), atol=1e-5)


def test_dense_weight_one_is_the_dense_method():
    rng = np.random.default_rng(5)
    texts = [f"document number {i} about topic {i % 7} and {i % 5}" for i in range(40)]
    D, Q = unit(rng, (40, 24)), unit(rng, (30, 24))
    queries = [f"topic {i % 7}" for i in range(30)]
    hybrid = accumulate_hybrid(LexicalIndex.fit(texts), queries, EdrmqParams(), 1.0, D, Q).matrix().toarray()
    dense = accumulate_dense(D, Q, EdrmqParams(), neighbors=None).matrix().toarray()
    np.testing.assert_allclose(hybrid, dense, atol=1e-5)


def test_words_only_needs_no_vectors_and_relates_documents_that_share_rare_words():
    texts = list(BASE)
    texts += [f"Unrelated note {i}: meeting moved to the afternoon, bring the quarterly figures." for i in range(12)]
    lex = LexicalIndex.fit(texts)
    R = accumulate_hybrid(lex, QUERIES, EdrmqParams(), alpha=0.0).matrix().toarray()
    both = R + R.T
    assert both[0].argmax() in (1, 7)  # the carburetor post relates to the other carburetor posts
    assert both[2].argmax() in (3, 6)  # bread with bread
    assert both[4].argmax() == 5  # the Jupiter probe posts with each other
    with pytest.raises(ValueError):
        accumulate_hybrid(lex, QUERIES, EdrmqParams(), alpha=0.5)  # a dense weight needs vectors


def test_queries_without_a_known_word_count_but_add_nothing():
    lex = LexicalIndex.fit(TEXTS)
    acc = accumulate_hybrid(lex, ["zzzz qqqq", "xyzzy"], EdrmqParams(), alpha=0.0, acc=RelationAccumulator(len(TEXTS)))
    assert acc.n_queries == 2
    assert np.isfinite(acc.matrix().toarray()).all()

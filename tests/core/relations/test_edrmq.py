"""EDR-MQ on corpora small enough to check by hand, incremental = batch, BM25 variant, cancel."""

from __future__ import annotations

import math

import numpy as np
import pytest

from spar_desktop.core.progress import CancelToken, Cancelled
from spar_desktop.core.relations.doc_vectors import document_vector, normalize_rows
from spar_desktop.core.relations.edrmq import (
    EdrmqParams, RelationAccumulator, accumulate_bm25, accumulate_dense, dense_batch, softmax_rows, top_k_rows,
)

H = math.sqrt(0.5)
# d0 = x axis, d1 = y axis, d2 = the diagonal between them
DOCS = np.array([[1.0, 0.0], [0.0, 1.0], [H, H]], dtype=np.float32)


def sig(t: float) -> float:
    """softmax over two scores [a, b] gives 1 / (1 + e^-(a-b)) to the first."""
    return 1.0 / (1.0 + math.exp(-t))


def test_hand_computed_relations_one_query():
    """q = d0, k1 = 2, k2 = 2, T = 1.
    Stage 1: scores d0 1, d2 0.7071, d1 0 -> z = (d0, d2), p1 = sig(1 - 0.7071) = 0.5727 / 0.4273.
    z = d0: [d0; q] = (1, 0); others: d2 0.7071, d1 0 -> p2 = sig(0.7071) = 0.6698 / 0.3302.
    z = d2: [d2; q] = (1.7071, 0.7071) / 1.8478 = (0.9239, 0.3827); d0 0.9239, d1 0.3827
            -> p2 = sig(0.5412) = 0.6321 / 0.3679."""
    q = np.array([[1.0, 0.0]], dtype=np.float32)
    R = accumulate_dense(DOCS, q, EdrmqParams(k1=2, k2=2, temperature=1.0)).matrix().toarray()
    p1 = sig(1 - H)
    c = (1 + H) / math.sqrt((1 + H) ** 2 + H ** 2)
    s = H / math.sqrt((1 + H) ** 2 + H ** 2)
    expected = np.zeros((3, 3))
    expected[0, 2] = p1 * sig(H)
    expected[0, 1] = p1 * (1 - sig(H))
    expected[2, 0] = (1 - p1) * sig(c - s)
    expected[2, 1] = (1 - p1) * (1 - sig(c - s))
    np.testing.assert_allclose(R, expected, atol=1e-6)
    assert R[0, 2] == pytest.approx(0.3836, abs=1e-4) and R[2, 0] == pytest.approx(0.2701, abs=1e-4)
    assert R.sum() == pytest.approx(1.0) and np.all(np.diag(R) == 0)  # z_i never relates to itself


def test_average_over_queries_is_eq6():
    """Two queries: R is the mean of their single-query matrices (uniform p(x))."""
    q1 = np.array([[1.0, 0.0]], dtype=np.float32)
    q2 = np.array([[0.0, 1.0]], dtype=np.float32)
    p = EdrmqParams(k1=2, k2=1, temperature=1.0)
    r1 = accumulate_dense(DOCS, q1, p).matrix().toarray()
    r2 = accumulate_dense(DOCS, q2, p).matrix().toarray()
    both = accumulate_dense(DOCS, np.vstack([q1, q2]), p)
    assert both.n_queries == 2
    np.testing.assert_allclose(both.matrix().toarray(), (r1 + r2) / 2, atol=1e-9)
    # k2 = 1: the whole p1 mass of each z_i goes to its single second-stage document
    assert r1[0, 2] == pytest.approx(sig(1 - H), abs=1e-6) and r1[2, 0] == pytest.approx(1 - sig(1 - H), abs=1e-6)


def test_incremental_equals_batch_and_documents_can_be_appended():
    rng = np.random.default_rng(3)
    D = normalize_rows(rng.normal(size=(60, 16)))
    Q = normalize_rows(D[rng.integers(0, 60, 90)] + 0.3 * rng.normal(size=(90, 16)))
    p = EdrmqParams(batch_size=16)
    batch = accumulate_dense(D, Q, p)
    inc = accumulate_dense(D, Q[:37], p)
    inc = accumulate_dense(D, Q[37:52], p, acc=inc)
    inc = accumulate_dense(D, Q[52:], p, acc=inc)
    assert inc.n_queries == batch.n_queries == 90
    np.testing.assert_allclose(inc.matrix().toarray(), batch.matrix().toarray(), atol=1e-7)


def test_batch_size_does_not_change_the_result():
    rng = np.random.default_rng(5)
    D = normalize_rows(rng.normal(size=(40, 8)))
    Q = normalize_rows(rng.normal(size=(33, 8)))
    a = accumulate_dense(D, Q, EdrmqParams(batch_size=1)).matrix().toarray()
    b = accumulate_dense(D, Q, EdrmqParams(batch_size=512)).matrix().toarray()
    np.testing.assert_allclose(a, b, atol=1e-7)  # float32 BLAS blocking differs by batch size


def test_top_k_and_softmax_helpers():
    s = np.array([[0.1, 0.9, 0.5, 0.9], [1.0, 0.2, 0.0, 0.3]], dtype=np.float32)
    idx, val = top_k_rows(s, 2)
    assert idx.tolist() == [[1, 3], [0, 3]]  # best first, equal scores by column
    np.testing.assert_allclose(val, [[0.9, 0.9], [1.0, 0.3]])
    np.testing.assert_allclose(softmax_rows(np.array([[0.0, 0.0]]), 1.0), [[0.5, 0.5]])
    with pytest.raises(ValueError):
        softmax_rows(np.zeros((1, 2)), 0.0)
    rows, cols, vals = dense_batch(DOCS[:1], DOCS[:1])  # one document: no pair can exist
    assert rows.size == cols.size == vals.size == 0


def test_document_vector_is_the_normalised_mean():
    v = document_vector(np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32))
    np.testing.assert_allclose(v, [H, H], atol=1e-6)
    assert document_vector(np.zeros((0, 3), dtype=np.float32)).shape == (3,)


def test_bm25_variant_relates_documents_sharing_a_topic():
    from spar_desktop.core.retrieval.bm25_index import BM25Index

    texts = ["rocket launch orbit fuel", "orbit of the rocket stage", "bread oven flour yeast",
             "flour and yeast for bread", "engine oil brakes car"]
    index = BM25Index().build(texts)
    acc = accumulate_bm25(index, texts, ["rocket orbit", "bread yeast", "zzz unknown"], EdrmqParams(k1=2, k2=1))
    R = acc.matrix().toarray()
    assert acc.n_queries == 3  # the unmatched query counts in N but adds nothing
    # each matched query puts its whole mass (1/3 after averaging) on its topic's pair
    assert R[0, 1] + R[1, 0] == pytest.approx(1 / 3) and R[2, 3] + R[3, 2] == pytest.approx(1 / 3)
    assert R.sum() == pytest.approx(2 / 3)


def test_cancel_stops_between_batches():
    rng = np.random.default_rng(0)
    D = normalize_rows(rng.normal(size=(20, 4)))
    token = CancelToken()
    seen = []

    def progress(p):
        seen.append(p.done)
        token.cancel()

    acc = RelationAccumulator(20)
    with pytest.raises(Cancelled):
        accumulate_dense(D, D, EdrmqParams(batch_size=5), acc, progress, token)
    assert acc.n_queries == 5 and seen == [5]  # exactly one whole batch was kept


@pytest.mark.parametrize("m, exclude_self", [(32, True), (2, True), (8, False), (100, True)])
def test_neighbour_pruned_second_stage_equals_the_full_scan(m, exclude_self):
    """Candidates from neighbour lists + the Fagin bound give the full scan's result; m = 2 makes
    the bound fail often (exercising the fallback); m = 100 ≥ n - 1 covers the whole corpus."""
    from spar_desktop.core.relations.neighbors import doc_neighbors, second_stage

    rng = np.random.default_rng(11)
    centers = normalize_rows(rng.normal(size=(6, 24)))
    D = normalize_rows(centers[rng.integers(0, 6, 90)] + 0.7 * normalize_rows(rng.normal(size=(90, 24))))
    Q = normalize_rows(D[rng.integers(0, 90, 70)] + 0.5 * rng.normal(size=(70, 24)))
    p = EdrmqParams(batch_size=32, exclude_self=exclude_self)
    nb = doc_neighbors(D, m)
    full = accumulate_dense(D, Q, p, neighbors=None).matrix().toarray()
    pruned = accumulate_dense(D, Q, p, neighbors=nb).matrix().toarray()
    np.testing.assert_allclose(pruned, full, atol=1e-6)
    if m == 2:
        s1 = Q @ D.T
        qtop, qval = top_k_rows(s1, 5)
        assert second_stage(D, Q, s1, qtop, qtop, qval, nb, 5, exclude_self)[2] > 0  # fallback used
    auto = accumulate_dense(D, Q, p).matrix().toarray()  # 'auto': 5·70 ≥ 2·90 → neighbours on
    np.testing.assert_allclose(auto, full, atol=1e-6)

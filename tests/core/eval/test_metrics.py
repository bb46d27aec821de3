import math

import pytest

from spar_desktop.core.eval.metrics import (
    bootstrap_ci,
    evaluate,
    hits_at_k,
    mrr_at_k,
    ndcg_at_k,
    percentile,
    recall_at_k,
)


def test_ndcg_hand_computed_graded():
    qrels = {"d1": 2, "d2": 1, "d3": 1, "d9": 0}
    ranking = ["d3", "x", "d1", "d9", "d2"]
    # DCG@5  = 1/log2(2) + 0 + 2/log2(4) + 0 + 1/log2(6)
    dcg = 1.0 + 2 / 2 + 1 / math.log2(6)
    # IDCG@5 = 2/log2(2) + 1/log2(3) + 1/log2(4)
    idcg = 2.0 + 1 / math.log2(3) + 0.5
    assert ndcg_at_k(ranking, qrels, 5) == pytest.approx(dcg / idcg)
    assert ndcg_at_k(ranking, qrels, 5) == pytest.approx(0.7623, abs=1e-4)
    # cut at 2: DCG = 1; IDCG = 2 + 1/log2(3)
    assert ndcg_at_k(ranking, qrels, 2) == pytest.approx(1 / (2 + 1 / math.log2(3)))
    assert ndcg_at_k(["d1", "d2", "d3"], qrels, 10) == pytest.approx(1.0)
    assert ndcg_at_k([], qrels, 10) == 0.0
    assert ndcg_at_k(["a"], {"a": 0}, 10) == 0.0


def test_recall_mrr_hits():
    qrels = {"a": 1, "b": 2, "c": 0}
    ranking = ["c", "x", "b", "y", "a"]
    assert recall_at_k(ranking, qrels, 3) == 0.5
    assert recall_at_k(ranking, qrels, 5) == 1.0
    assert mrr_at_k(ranking, qrels, 10) == pytest.approx(1 / 3)
    assert mrr_at_k(ranking, qrels, 2) == 0.0
    assert hits_at_k(ranking, qrels, 2) == 0.0 and hits_at_k(ranking, qrels, 3) == 1.0


def test_evaluate_averages_over_all_judged_queries():
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": ["a", "z"]}  # q2 returned nothing: it counts as 0, it is not dropped
    scores = evaluate(run, qrels, ks=(1, 10))
    assert scores["ndcg@10"] == 0.5 and scores["hits@1"] == 0.5 and scores["recall@10"] == 0.5


def test_helpers():
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile([5], 95) == 5
    lo, hi = bootstrap_ci([0.0, 1.0] * 50)
    assert lo < 0.5 < hi
    assert bootstrap_ci([0.3] * 10) == pytest.approx((0.3, 0.3))

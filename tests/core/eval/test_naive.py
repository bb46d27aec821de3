"""The naive-fusion baseline (issue 20) and paired comparisons, on a small BEIR folder."""

import argparse
import json

import numpy as np
import pytest

from spar_desktop.core.eval import metrics as m
from spar_desktop.core.eval.beir import load_beir
from spar_desktop.core.eval.naive import NAIVE_WEIGHT, WHOLE_DOC_CONFIG, NaiveFusion, evaluate_naive, minmax
from spar_desktop.core.eval.runner import build_searcher, evaluate_searcher

DOCS = [
    ("d1", "Aspirin and stroke", "Low-dose aspirin reduced the risk of a first stroke in older adults."),
    ("d2", "Statins", "Statin therapy lowers LDL cholesterol and cardiovascular events."),
    ("d3", "Vitamin D", "Vitamin D supplements did not prevent fractures in this trial."),
    ("d4", "Sleep", "Short sleep duration is associated with obesity in children."),
    ("d5", "Coffee", "Coffee drinking was linked to a lower risk of liver disease."),
    ("d6", "Exercise", "Regular exercise improves insulin sensitivity in adults with diabetes."),
]
QUERIES = [("q1", "does aspirin prevent strokes", "d1"), ("q2", "cholesterol lowering drugs", "d2"),
           ("q3", "children sleeping too little get fat", "d4"), ("q4", "physical activity and diabetes", "d6")]


@pytest.fixture(scope="module")
def beir(tmp_path_factory):
    root = tmp_path_factory.mktemp("beir") / "tiny"
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text("\n".join(json.dumps({"_id": i, "title": t, "text": x}) for i, t, x in DOCS))
    (root / "queries.jsonl").write_text("\n".join(json.dumps({"_id": q, "text": t}) for q, t, _ in QUERIES))
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" +
                                             "\n".join(f"{q}\t{d}\t1" for q, _, d in QUERIES) + "\n")
    return root


def test_naive_fusion_is_minmax_average_of_whole_document_scores(beir, tmp_path, encoder):
    ds = load_beir(beir, "test")
    naive = NaiveFusion.build(ds, tmp_path, encoder)
    assert naive.weight == NAIVE_WEIGHT == 0.5 and naive.doc_vectors.shape == (len(DOCS), encoder.dim)
    # One vector per whole document (title + text), what the encoder gives for that text.
    whole = encoder.encode([f"{t}\n\n{x}" for _, t, x in DOCS])
    assert np.allclose(naive.doc_vectors, whole, atol=1e-5)
    q = "does aspirin prevent strokes"
    bm25, dense = naive.bm25_scores(q), naive.dense_scores(q)
    assert bm25[0] > 0 and bm25[1] == 0  # bm25s without stemming: 'strokes' does not match 'stroke'
    assert np.allclose(naive.scores(q), 0.5 * minmax(dense) + 0.5 * minmax(bm25))
    assert naive.rank(q, 3)[0] == "d1" and len(naive.rank(q, 3)) == 3
    # Vectors are cached under their own chunker key: a second build embeds nothing.
    before = encoder.texts_encoded
    NaiveFusion.build(ds, tmp_path, encoder)
    assert encoder.texts_encoded == before and "whole=1" in WHOLE_DOC_CONFIG.cache_key


def test_naive_reports_and_paired_differences(beir, tmp_path, encoder):
    ds = load_beir(beir, "test")
    fused, built = evaluate_naive(ds, tmp_path, encoder, method="hybrid", k=5)
    assert fused.method == "naive-fusion" and fused.alpha == 0.5 and fused.queries == len(QUERIES)
    assert set(fused.per_query_ndcg) == {q for q, _, _ in QUERIES}
    bm25, _ = evaluate_naive(ds, tmp_path, encoder, method="bm25", k=5, built=built)
    assert bm25.method == "naive-bm25" and bm25.alpha is None
    searcher, info = build_searcher(ds, tmp_path, encoder=encoder)
    ours = evaluate_searcher(searcher, ds, info, k=5)
    assert ours.metrics["ndcg@5"] >= 0.5
    qs = list(ours.per_query_ndcg)
    diff, lo, hi = m.paired_bootstrap([ours.per_query_ndcg[q] for q in qs], [fused.per_query_ndcg[q] for q in qs])
    assert lo <= diff <= hi
    assert m.paired_bootstrap([1.0, 0.5], [1.0, 0.5]) == (0.0, 0.0, 0.0)
    with pytest.raises(ValueError):
        m.paired_bootstrap([1.0], [1.0, 0.0])


def test_eval_command_runs_the_naive_baseline(beir, tmp_path, capsys, encoder):
    from spar_desktop.commands import eval_cmd

    parser = argparse.ArgumentParser(prog="spar")
    parser.add_argument("--data-dir")
    parser.add_argument("--database-url")
    eval_cmd.register(parser.add_subparsers(dest="command"))
    out = tmp_path / "naive.json"
    args = parser.parse_args(["--data-dir", str(tmp_path / "data"), "eval", "--beir", str(beir), "--split", "test",
                              "--method", "naive-fusion", "--device", "cpu", "--json", str(out)])
    assert args.func(args) == 0
    printed = capsys.readouterr().out
    assert "naive-fusion (min-max, weight 0.50)" in printed and "nDCG@10" in printed
    report = json.loads(out.read_text())
    assert report["method"] == "naive-fusion" and report["queries"] == len(QUERIES)
    args = parser.parse_args(["--data-dir", str(tmp_path / "data"), "eval", "--beir", str(beir), "--split", "test",
                              "--method", "hybrid", "--keyword-unit", "chunk", "--device", "cpu", "--json", "-"])
    assert args.func(args) == 0
    assert json.loads(capsys.readouterr().out)["method"] == "hybrid"

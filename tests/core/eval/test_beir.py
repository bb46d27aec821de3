import json

import pytest

from spar_desktop.core.eval.beir import BeirError, load_beir


def write_beir(root, docs, queries, qrels_lines, split="test"):
    root.mkdir(parents=True, exist_ok=True)
    (root / "corpus.jsonl").write_text("\n".join(json.dumps(d) for d in docs) + "\n", encoding="utf-8")
    (root / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in queries) + "\n", encoding="utf-8")
    (root / "qrels").mkdir(exist_ok=True)
    (root / "qrels" / f"{split}.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{a}\t{b}\t{c}\n" for a, b, c in qrels_lines), encoding="utf-8"
    )
    return root


def test_reads_collection_and_skips_unknown_ids(tmp_path):
    root = write_beir(
        tmp_path / "mini",
        [{"_id": "d1", "title": "Cats", "text": "Cats purr."}, {"_id": 2, "title": "", "text": "Dogs bark."}],
        [{"_id": "q1", "text": "purring"}, {"_id": "q2", "text": "barking"}, {"_id": "q3", "text": "unjudged"}],
        [("q1", "d1", 1), ("q1", "missing-doc", 1), ("q2", "2", 2), ("q-unknown", "d1", 1)],
    )
    ds = load_beir(root, "test")
    assert ds.name == "mini" and set(ds.corpus) == {"d1", "2"}
    assert ds.corpus["d1"].full_text == "Cats\n\nCats purr."
    assert ds.corpus["2"].full_text == "Dogs bark."
    assert ds.queries == {"q1": "purring", "q2": "barking"}  # only judged queries
    assert ds.qrels == {"q1": {"d1": 1}, "q2": {"2": 2}}
    assert (ds.skipped_unknown_docs, ds.skipped_unknown_queries) == (1, 1)
    assert len(ds.warnings) == 2
    assert list(ds.limit_queries(1).queries) == ["q1"]


def test_clear_errors(tmp_path):
    with pytest.raises(BeirError, match="not a folder"):
        load_beir(tmp_path / "nope")
    root = write_beir(tmp_path / "x", [{"_id": "d1", "text": "t"}], [{"_id": "q1", "text": "t"}],
                      [("q1", "d1", 1)], split="dev")
    with pytest.raises(BeirError, match="available splits: dev"):
        load_beir(root, "test")
    (root / "queries.jsonl").unlink()
    with pytest.raises(BeirError, match="queries.jsonl is missing"):
        load_beir(root, "dev")
    (root / "queries.jsonl").write_text('{"_id": "q1", "text": "t"}\n{broken\n')
    with pytest.raises(BeirError, match="queries.jsonl:2"):
        load_beir(root, "dev")
    (root / "queries.jsonl").write_text('{"_id": "q1", "text": "t"}\n')
    (root / "qrels" / "dev.tsv").write_text("query-id\tcorpus-id\tscore\nq1 d1 1\n")
    with pytest.raises(BeirError, match="dev.tsv:2"):
        load_beir(root, "dev")
    (root / "qrels" / "dev.tsv").write_text("query-id\tcorpus-id\tscore\nq1\tzzz\t1\n")
    with pytest.raises(BeirError, match="judges no query"):
        load_beir(root, "dev")

"""`spar eval --erm-train / --alpha learned / --rerank conditional` and `spar memory stats|reset`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from spar_desktop.cli import main
from tests.support.corpora import shared_data
from tests.support.fake_ollama import FakeOllama

SCIFACT = shared_data("scifact")
needs_data = pytest.mark.skipif(not (SCIFACT / "corpus.jsonl").is_file(), reason="shared eval data not present")


@pytest.fixture(scope="module")
def mini_beir(tmp_path_factory) -> Path:
    """16 SciFact claims, their abstracts and 10 others."""
    root = tmp_path_factory.mktemp("beir") / "scifact-mini"
    (root / "qrels").mkdir(parents=True)
    lines = (SCIFACT / "qrels" / "train.tsv").read_text(encoding="utf-8").splitlines()
    header, rows = lines[0], [line.split("\t") for line in lines[1:]]
    queries = list(dict.fromkeys(r[0] for r in rows))[:20]
    keep = [r for r in rows if r[0] in queries]
    wanted = {r[1] for r in keep}
    docs = []
    with open(SCIFACT / "corpus.jsonl", encoding="utf-8") as fh:
        for line in fh:
            if json.loads(line)["_id"] in wanted or len(docs) < 10:
                docs.append(line.strip())
    (root / "corpus.jsonl").write_text("\n".join(docs) + "\n", encoding="utf-8")
    with open(SCIFACT / "queries.jsonl", encoding="utf-8") as fh:
        (root / "queries.jsonl").write_text("".join(line for line in fh if json.loads(line)["_id"] in queries))
    (root / "qrels" / "train.tsv").write_text("\n".join([header] + ["\t".join(r) for r in keep]) + "\n")
    return root


@needs_data
def test_eval_learning_modes_from_the_cli(mini_beir, tmp_path, capsys, monkeypatch, encoder):
    data = tmp_path / "data"
    assert main(["--data-dir", str(data), "eval", "--beir", str(mini_beir), "--rerank", "conditional"]) == 1
    out = tmp_path / "erm.json"
    server = FakeOllama().start()
    try:
        monkeypatch.setenv("OLLAMA_HOST", server.url)
        server.set(reply='{"ranking": [2, 1]}')
        code = main(["--data-dir", str(data), "eval", "--beir", str(mini_beir), "--split", "train",
                     "--erm-train", "train", "--erm-split-fraction", "0.5", "--seeds", "2", "--alpha", "learned",
                     "--rerank", "conditional", "--tau", "0.95", "--json", str(out)])
    finally:
        server.stop()
    assert code == 0
    printed = capsys.readouterr().out
    assert "ERM hybrid" in printed and "alpha: fixed" in printed and "rerank: tau 0.950" in printed
    report = json.loads(out.read_text())
    erm = report["erm"]["methods"]["hybrid"]
    assert report["splits"] == 2 and len(erm["runs"]) == 2 and erm["runs"][0]["test"] == 10
    assert 0 <= erm["summary"]["ndcg@10"]["erm"] <= 1 and erm["runs"][0]["train_stats"]["gated"] > 0
    assert report["alpha"]["summary"]["learned_ndcg@10"] > 0
    rr = report["rerank"]
    assert rr["tau"] == 0.95 and rr["stats"]["queries"] == 10
    assert rr["stats"]["reranked"] >= 1 and rr["stats"]["fell_back"] <= rr["stats"]["reranked"]


def test_memory_stats_and_reset_commands(ws, capsys):
    from spar_desktop.core.memory import ERMConfig
    from spar_desktop.core.memory.feedback import record_feedback

    mgr, _ = ws
    data = str(mgr.library.settings.data_dir)
    hit = mgr.search("ops", "yaw motor overheated").hits[0]
    record_feedback(mgr, "ops", "why did the turbine stop", [f"{hit.file_id}#{hit.chunk_id}"], True,
                    config=ERMConfig(batch_size=1, max_batches_per_round=1))
    assert main(["--data-dir", data, "memory", "stats", "ops", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["evolved_keys"] == 1
    assert main(["--data-dir", data, "memory", "reset", "ops"]) == 0
    assert "original keys" in capsys.readouterr().out
    assert main(["--data-dir", data, "memory", "stats", "ops"]) == 0
    assert "0 evolved keys" in capsys.readouterr().out
    assert main(["--data-dir", data, "memory", "stats", "nope"]) == 1

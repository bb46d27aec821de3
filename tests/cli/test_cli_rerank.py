"""Conditional reranking as a user meets it on the command line: `spar ws search` asks Ollama (the
scripted server, real client) only when the search is unsure, says so on each hit, keeps the fused
order with the reason when the model misbehaves, and `spar eval --calibrate-rerank` writes the tau
that search then reads; `spar eval --rerank ollama` reports what the same code does to the metrics."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from spar_desktop import cli
from spar_desktop.core.retrieval.conditional_rerank import DEFAULT_TAU, load_calibration
from tests.support.fake_ollama import FakeOllama
from tests.support.servers import free_port

UNSURE = "why did the machine stop"  # no keyword matches: only the dense retriever speaks, top score 0.8
SURE = "gearbox oil"  # both retrievers put gearbox.md first: top score 1.0


def spar(capsys, data: Path, *args: str) -> tuple[int, str, str]:
    code = cli.main(["--data-dir", str(data), *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def fake(monkeypatch):
    server = FakeOllama().start()
    monkeypatch.setenv("OLLAMA_HOST", server.url)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    share, data = tmp_path_factory.mktemp("share"), tmp_path_factory.mktemp("data")
    for rel, text in {"Operations/gearbox.md": "Gearbox failure at Site B: oil contamination of the bearing.",
                      "Operations/blade.md": "Blade crack found during inspection at Site A; resin repair planned.",
                      "Operations/trip.md": "Vibration alarms preceded the turbine trip at Site C; the yaw motor "
                                            "overheated."}.items():
        (share / rel).parent.mkdir(parents=True, exist_ok=True)
        (share / rel).write_text(text, encoding="utf-8")
    assert cli.main(["--data-dir", str(data), "index", str(share), "--quiet"]) == 0
    assert cli.main(["--data-dir", str(data), "ws", "create", "ops", "--tag", "Operations", "--build"]) == 0
    return data


def search(capsys, data: Path, query: str, *extra: str) -> dict:
    code, out, err = spar(capsys, data, "ws", "search", "ops", query, "--json", *extra)
    assert code == 0, err
    return json.loads(out)


def test_an_unsure_search_is_reranked_and_says_by_which_model(built, capsys, fake):
    fused = search(capsys, built, UNSURE, "--no-rerank")
    assert fused["rerank"] is None and not fake.calls("/api/generate")
    fake.set(reply='{"ranking": [3, 1, 2]}')
    res = search(capsys, built, UNSURE)
    assert res["rerank"]["reranked"] and res["rerank"]["s_max"] < DEFAULT_TAU
    assert [h["path"] for h in res["hits"]] == [fused["hits"][i]["path"] for i in (2, 0, 1)]
    assert [h["rank"] for h in res["hits"]] == [1, 2, 3]
    assert all(h["reranked_by"] == "llama3.2" and h["rerank_ms"] > 0 for h in res["hits"])
    assert len(fake.calls("/api/generate")) == 1
    code, out, err = spar(capsys, built, "ws", "search", "ops", UNSURE)  # the text output says it too
    assert "reranked by llama3.2 in" in err


def test_a_confident_search_never_asks_the_model(built, capsys, fake):
    fake.set(reply='{"ranking": [3, 2, 1]}')
    res = search(capsys, built, SURE)
    assert res["rerank"]["s_max"] >= DEFAULT_TAU and not res["rerank"]["called"]
    assert res["hits"][0]["path"].endswith("gearbox.md") and res["hits"][0]["reranked_by"] is None
    assert fake.calls("/api/generate") == []


def test_a_hostile_reply_keeps_the_fused_order_with_the_reason(built, capsys, fake):
    fused = search(capsys, built, UNSURE, "--no-rerank")
    fake.set(reply="The third passage, clearly!")
    res = search(capsys, built, UNSURE)
    assert [h["path"] for h in res["hits"]] == [h["path"] for h in fused["hits"]]
    assert not res["rerank"]["reranked"] and "did not parse" in res["rerank"]["reason"]
    assert all(h["reranked_by"] is None for h in res["hits"])


def test_no_server_means_no_rerank(built, capsys, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{free_port()}")
    res = search(capsys, built, UNSURE)
    assert not res["rerank"]["reranked"] and not res["rerank"]["called"] and res["rerank"]["latency_ms"] == 0
    assert "llama3.2 cannot be reached" in res["rerank"]["reason"]
    assert all(h["reranked_by"] is None for h in res["hits"])


def write_beir(root: Path, n: int = 40) -> Path:
    """n one-paragraph documents, each the answer to one query by its unusual code word."""
    (root / "qrels").mkdir(parents=True)
    words = [f"{a}{b}" for a in ("vex", "tor", "plim", "quad", "zen") for b in ("ar", "ol", "um", "ix", "eth", "ond",
                                                                               "ash", "ur")][:n]
    with open(root / "corpus.jsonl", "w", encoding="utf-8") as fh:
        for i, w in enumerate(words):
            fh.write(json.dumps({"_id": f"d{i}", "title": f"Unit {w}",
                                 "text": f"The {w} unit at site {i} was inspected and its {w} seal replaced."}) + "\n")
    with open(root / "queries.jsonl", "w", encoding="utf-8") as fh:
        for i, w in enumerate(words):
            fh.write(json.dumps({"_id": f"q{i}", "text": f"{w} seal"}) + "\n")
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n"
                                             + "".join(f"q{i}\td{i}\t1\n" for i in range(n)))
    return root


def test_calibration_is_written_read_by_search_and_used_by_eval(built, tmp_path, capsys, fake):
    beir = write_beir(tmp_path / "beir")
    data = tmp_path / "eval-data"
    code, out, err = spar(capsys, data, "eval", "--beir", str(beir), "--calibrate-rerank", "--json", "-")
    assert code == 0, err
    cal = json.loads(out)["calibration"]
    assert cal["queries"] == 40 and cal["skipped"] >= 30 and cal["precision_lower"] >= 0.9
    stored = load_calibration(data / "rerank.json")
    assert stored.tau == cal["tau"] and stored.source == "calibrated" and 0 < stored.tau <= 1

    # 40/40 top-5 successes bound precision at 0.912: no tau reaches 0.99, so every query is reranked.
    code, out, err = spar(capsys, data, "eval", "--beir", str(beir), "--calibrate-rerank", "--tau-beta", "0.99",
                          "--json", "-")
    assert code == 0 and json.loads(out)["calibration"]["tau"] is None
    fake.set(reply="[2, 1]")  # the model swaps the top two: the right document drops to second
    code, out, err = spar(capsys, data, "eval", "--beir", str(beir), "--rerank", "ollama", "--json", "-")
    assert code == 0, err
    r = json.loads(out)["rerank"]
    assert r["tau"] is None and r["model"] == "llama3.2" and r["stats"]["reranked"] == 40
    assert r["stats"]["fell_back"] == 0 and len(fake.calls("/api/generate")) == 40
    assert r["without"]["ndcg@1"] > r["with"]["ndcg@1"]

    # The search reads the data dir's tau: 0 means never unsure.
    (built / "rerank.json").write_text(json.dumps({"format": "spar-rerank-tau", "version": 1, "tau": 0.0}))
    try:
        res = search(capsys, built, UNSURE)
        assert res["rerank"]["tau"] == 0.0 and not res["rerank"]["called"]
    finally:
        (built / "rerank.json").unlink()

"""`spar eval --sessions` (session coverage@k with bootstrap CIs, vanilla vs cluster expansion) on a
small BEIR folder, and generated questions from a (scripted, real-HTTP) Ollama server."""

from __future__ import annotations

import json
from pathlib import Path

from spar_desktop.core.relations.questions import ollama_question_fn, parse_questions
from spar_desktop.core.relations.synthetic import synthetic_queries
from tests.core.relations.test_cli import TOPICS, relations_command, spar  # noqa: F401 (autouse fixture)
from tests.support.fake_ollama import fake_ollama_server


def beir_folder(root: Path) -> Path:
    """Three topics × 4 documents; one query per topic judged relevant to 3 of its documents."""
    root.mkdir()
    docs, queries, qrels = [], [], ["query-id\tcorpus-id\tscore"]
    for t, (topic, text) in enumerate(TOPICS.items()):
        for i in range(1, 5):
            docs.append({"_id": f"{topic}{i}", "title": f"{topic} note {i}", "text": text.format(i=i)})
        queries.append({"_id": f"q{t}", "text": text.format(i=9).split(".")[0]})
        qrels += [f"q{t}\t{topic}{i}\t1" for i in range(1, 4)]
    (root / "corpus.jsonl").write_text("\n".join(json.dumps(d) for d in docs), encoding="utf-8")
    (root / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in queries), encoding="utf-8")
    (root / "qrels").mkdir()
    (root / "qrels" / "test.tsv").write_text("\n".join(qrels), encoding="utf-8")
    return root


def test_spar_eval_sessions_reports_coverage_with_cis(tmp_path, capsys):
    folder = beir_folder(tmp_path / "beir")
    code, out, err = spar(capsys, tmp_path / "data", "eval", "--beir", str(folder), "--sessions", "--json", "-")
    assert code == 0, err
    report = json.loads(out)
    assert report["sessions"] == 3 and report["k"] == 8 and report["baseline"] == "vanilla"
    for name in ("vanilla", "expand", "boost"):
        s = report["systems"][name]
        lo, hi = s["coverage_ci95"]
        assert 0.0 <= lo <= s["coverage"] <= hi <= 1.0
        assert set(s["calls"]) == {"tau=0.5", "tau=0.7", "tau=0.9"}
    assert report["systems"]["expand"]["coverage_delta_ci95"] is not None
    code, out, _ = spar(capsys, tmp_path / "data", "eval", "--beir", str(folder), "--sessions", "--session-k", "4")
    assert code == 0 and "coverage@4" in out and "expand" in out


def test_parse_questions_accepts_the_shapes_models_return():
    assert parse_questions('{"questions": ["What fuel does the rocket use?", "x"]}') == ["What fuel does the rocket use?"]
    assert parse_questions('["Who checks the gearbox oil?"]') == ["Who checks the gearbox oil?"]
    assert parse_questions("1. How hot is the oven?\n- Which flour is used?", 1) == ["How hot is the oven?"]


def test_ollama_questions_feed_synthetic_queries(tmp_path):
    from spar_desktop.core.config import Settings

    with fake_ollama_server() as server:
        server.set(reply='{"questions": ["When does the rocket reach the station?", "How much thrust is needed?"]}')
        fn = ollama_question_fn(Settings(data_dir=tmp_path, ollama_host=server.url, ollama_model="qwen2.5:0.5b"))
        assert fn is not None
        qs = synthetic_queries(["Space 1"], [TOPICS["Space"].format(i=1)], question_fn=fn)
        asked = server.calls("/api/generate")
    assert [q.text for q in qs if q.kind == "question"] == ["When does the rocket reach the station?",
                                                           "How much thrust is needed?"]
    assert len(asked) == 1 and "Orbit and launch" in asked[0].body["prompt"]
    # nothing listening: no hook, and the build goes on without questions
    assert ollama_question_fn(Settings(data_dir=tmp_path, ollama_host="127.0.0.1:9")) is None


def test_workspace_search_with_cluster_expansion(tmp_path, capsys):
    from tests.core.relations.test_cli import share

    root, data = share(tmp_path), tmp_path / "data"
    assert spar(capsys, data, "index", str(root), "--quiet")[0] == 0
    assert spar(capsys, data, "ws", "create", "mix", "--tag", "Space|Cars", "--build", "--json")[0] == 0
    code, _, err = spar(capsys, data, "relations", "search", "mix", "rocket launch")
    assert code == 1 and "--method cooc" in err  # no co-occurrence build yet: says what to run
    code, out, _ = spar(capsys, data, "relations", "build", "--workspace", "mix", "--method", "cooc", "--json")
    assert code == 0 and json.loads(out)["documents"] == 8
    for variant in ("expand", "boost", "vanilla"):
        code, out, err = spar(capsys, data, "relations", "search", "mix", "rocket launch to the station",
                              "--variant", variant, "--k", "4", "--k-v", "2", "--json")
        assert code == 0, err
        hits = json.loads(out)["hits"]
        assert len(hits) == 4 and len({h["file_id"] for h in hits}) == 4
        assert all("/Space/" in h["path"] for h in hits[:2])  # the vanilla top stays first
        assert variant != "vanilla" or not any(h["from_cluster"] for h in hits)
    code, out, _ = spar(capsys, data, "relations", "search", "mix", "gearbox oil")
    assert code == 0 and "cluster" in out

"""Chunking choices from the command line (issue 32): `spar ws create --chunking`, contextual
enhancement after `spar ws build` (killed mid-way, then `spar ws enhance` asks only for the rest),
contextual without a model (plain passages, enhancement pending), and `spar eval --chunking`.
The language model is the project's Ollama-protocol test server; a handful of small files."""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from spar_desktop.cli import main
from tests.support import kill_trials as kt
from tests.support.fake_ollama import FakeOllama

TEXTS = {
    "gearbox": "The gearbox bearing failed after oil contamination. Vibration alarms came a week before.",
    "budget": "The capital budget is 1.2 million pounds. A contingency of fifty thousand was approved.",
    "blade": "Cracks were found on blade two. Resin filling repairs are planned for May.",
    "safety": "Working at height needs a harness, a rescue plan and two trained climbers.",
}


def write_share(root: Path, repeat: int = 6) -> Path:
    root.mkdir(parents=True)
    for name, text in TEXTS.items():
        (root / f"{name}.md").write_text(f"# {name.title()}\n\n" + " ".join([text] * repeat), encoding="utf-8")
    return root


def spar(capsys, data: Path, *args: str) -> tuple[int, str, str]:
    code = main(["--data-dir", str(data), *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def fake():
    server = FakeOllama(models=("llama3.2:latest",)).start()
    server.set(reply_fn=lambda body: "This passage is from a wind farm maintenance file.")
    yield server
    server.stop()


def test_chunking_is_chosen_at_create_and_listed(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:9")  # nothing listens: no model
    data = tmp_path / "data"
    assert spar(capsys, data, "index", str(write_share(tmp_path / "share", repeat=1)), "--quiet")[0] == 0
    code, out, _ = spar(capsys, data, "ws", "create", "win", "--all-files", "--chunking", "fixed")
    assert code == 0 and "fixed chunking" in out
    code, out, err = spar(capsys, data, "ws", "create", "ctx", "--all-files", "--chunking", "contextual", "--build")
    # No model: built with plain passages, searchable, and the user hears enhancement is pending.
    assert code == 0 and "4/4 files ready" in out
    assert "contextual enhancement pending" in err and "no Ollama server" in err
    code, out, _ = spar(capsys, data, "ws", "search", "ctx", "gearbox oil", "--json")
    assert code == 0 and json.loads(out)["hits"][0]["path"].endswith("gearbox.md")
    code, out, _ = spar(capsys, data, "ws", "list", "--json")
    listed = {w["name"]: w for w in json.loads(out)}
    assert listed["win"]["chunking"] == "fixed" and "enhancement" not in listed["win"]
    assert listed["ctx"]["chunking"] == "contextual"
    assert listed["ctx"]["enhancement"]["enhanced"] == 0 and listed["ctx"]["enhancement"]["pending"]
    assert listed["ctx"]["enhancement"]["total"] == listed["ctx"]["chunks"] > 0
    code, out, _ = spar(capsys, data, "ws", "status", "ctx")
    assert f"contextual: 0/{listed['ctx']['chunks']} passages enhanced (enhancement pending)" in out
    code, _, err = spar(capsys, data, "ws", "enhance", "ctx")
    assert code == 1 and "no Ollama server" in err


def test_unknown_chunking_is_an_argument_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--data-dir", str(tmp_path), "ws", "create", "bad", "--all-files", "--chunking", "pages"])
    assert exc.value.code == 2 and "invalid choice" in capsys.readouterr().err


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")
def test_enhancement_killed_mid_way_resumes_asking_only_the_remaining_passages(tmp_path, fake):
    data, share = tmp_path / "data", write_share(tmp_path / "share", repeat=16)  # a few passages each
    env = {**kt.child_env(tmp_path / "model-cache"), "OLLAMA_HOST": fake.url}
    for cmd in (kt.spar_cmd(data, "index", str(share), "--quiet"),
                kt.spar_cmd(data, "ws", "create", "ctx", "--all-files", "--chunking", "contextual")):
        r = kt.run(cmd, env)
        assert r.returncode == 0, r.stderr
    fake.set(reply_fn=lambda body: "This passage is from a wind farm maintenance file.", delay=0.2)
    # The build (plain passages), then its enhancement: killed once a few passages were asked.
    proc = subprocess.Popen(kt.spar_cmd(data, "ws", "build", "ctx"), env=env, cwd=kt.ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 300
        while len(fake.calls("/api/generate")) < 3 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proc.poll() is None, "the build finished before it could be killed"
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait()
    asked_before = len(fake.calls("/api/generate"))
    r = kt.run(kt.spar_cmd(data, "ws", "status", "ctx", "--json"), env)
    status = json.loads(r.stdout)["enhancement"]
    kept = status["enhanced"]
    assert asked_before - 1 <= kept <= asked_before  # at most the reply in flight was lost
    assert 0 < kept < status["total"]

    fake.set(reply_fn=lambda body: "This passage is from a wind farm maintenance file.")
    r = kt.run(kt.spar_cmd(data, "ws", "enhance", "ctx", "--json"), env)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["asked"] == status["total"] - kept == len(fake.calls("/api/generate")) - asked_before
    assert report["enhancement"] == {"total": status["total"], "enhanced": status["total"],
                                     "model": "llama3.2", "pending": False}
    assert report["swapped"] and kt.integrity_problems(data) == []
    r = kt.run(kt.spar_cmd(data, "ws", "search", "ctx", "blade cracks resin", "--json"), env)
    assert json.loads(r.stdout)["hits"][0]["path"].endswith("blade.md")
    r = kt.run(kt.spar_cmd(data, "ws", "list"), env)
    assert f"contextual: {status['total']}/{status['total']} passages enhanced" in r.stdout


def write_beir(root: Path) -> Path:
    (root / "qrels").mkdir(parents=True)
    corpus = [{"_id": name, "title": name.title(), "text": " ".join([text] * 3)} for name, text in TEXTS.items()]
    (root / "corpus.jsonl").write_text("\n".join(json.dumps(d) for d in corpus) + "\n", encoding="utf-8")
    queries = [{"_id": "q1", "text": "why did the gearbox fail"}, {"_id": "q2", "text": "blade crack repair"}]
    (root / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in queries) + "\n", encoding="utf-8")
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\tgearbox\t1\nq2\tblade\t1\n")
    return root


def run_eval(argv: list[str]) -> int:
    from spar_desktop.commands import eval_cmd

    parser = argparse.ArgumentParser(prog="spar")
    parser.add_argument("--data-dir")
    parser.add_argument("--database-url")
    eval_cmd.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    return args.func(args)


def test_eval_measures_each_chunking(tmp_path, capsys, monkeypatch, fake):
    from spar_desktop.commands.common import CommandError

    beir, data = write_beir(tmp_path / "beir"), tmp_path / "data"
    reports = {}
    monkeypatch.setenv("OLLAMA_HOST", fake.url)
    for chunking in ("hierarchical", "fixed", "contextual"):
        assert run_eval(["--data-dir", str(data), "eval", "--beir", str(beir), "--chunking", chunking,
                         "--json", "-"]) == 0
        reports[chunking] = json.loads(capsys.readouterr().out)
    keys = {c: r["index"]["chunker"] for c, r in reports.items()}
    assert keys["hierarchical"] == "hierarchical-c200-p800-o30"
    assert keys["fixed"].startswith("fixed-") and "ctx" in keys["contextual"]
    # Contextual asked the model once per searched passage.
    assert len(fake.calls("/api/generate")) == reports["contextual"]["index"]["chunks"] > 0
    assert all(r["metrics"]["mrr@10"] == 1.0 for r in reports.values())  # each query finds its file first

    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:9")
    with pytest.raises(CommandError, match="needs the language model"):
        run_eval(["--data-dir", str(data), "eval", "--beir", str(beir), "--chunking", "contextual"])

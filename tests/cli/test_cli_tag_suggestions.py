"""`spar tags suggest` and `spar tags review` as a user runs them on a small real share."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from spar_desktop.cli import main
from tests.core.tagging.conftest import NOTES, RIGHT_FOLDER, write_share
from tests.support.fake_ollama import FakeOllama
from tests.support.servers import free_port

EVIL = "budget\x1b[31mred\x07.md"  # a file name with terminal control characters


def spar(capsys, data_dir: Path, *args: str) -> tuple[int, str, str]:
    code = main(["--data-dir", str(data_dir), *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def indexed(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{free_port()}")  # nothing listens there
    share = write_share(tmp_path / "share")
    (share / EVIL).write_text("Spending report: the budget was exceeded and costs must be cut.", encoding="utf-8")
    data = tmp_path / "data"
    code, out, _ = spar(capsys, data, "index", str(share), "--quiet")
    assert code == 0, out
    return data, share


def review_json(capsys, data: Path, *args: str) -> dict:
    code, out, _ = spar(capsys, data, "tags", "review", "--json", *args)
    assert code == 0, out
    return json.loads(out)


def test_suggest_then_review_accept_and_reject(indexed, capsys):
    data, share = indexed
    code, out, err = spar(capsys, data, "tags", "suggest")
    assert code == 0, err
    assert f"{len(NOTES) + 1} summarised" in out
    assert "LLM step skipped: no Ollama server" in out
    assert "waiting for review: spar tags review" in out

    code, out, _ = spar(capsys, data, "tags", "suggest", "--json")
    again = json.loads(out)
    assert again["summaries"]["summarized"] == 0 and again["suggestions"]["files"] == 0 and not again["llm"]

    queue = review_json(capsys, data)
    by_name = {Path(x["path"]).name: x for x in queue["suggestions"]}
    for name, folder in RIGHT_FOLDER.items():
        assert by_name[name]["tag"] == folder
    oil, spending = by_name["oil-change.md"], by_name["spending.md"]

    code, out, _ = spar(capsys, data, "tags", "review", "--accept", oil["id"])
    assert "accepted 1 suggestions" in out
    code, out, _ = spar(capsys, data, "files", "--tag", "Turbines", "--json")
    assert str(share / "oil-change.md") in {r["path"] for r in json.loads(out)}

    code, out, _ = spar(capsys, data, "tags", "review", "--reject", spending["id"])
    assert "rejected 1 suggestions" in out
    spar(capsys, data, "tags", "suggest", "--redo", "--no-llm")
    ids = {x["id"] for x in review_json(capsys, data)["suggestions"]}
    assert spending["id"] not in ids and oil["id"] not in ids

    code, _, err = spar(capsys, data, "tags", "review", "--accept", "nonsense")
    assert code != 0 and "FILE_ID:TAG_ID" in err


def test_filters_and_bulk_accept(indexed, capsys):
    data, share = indexed
    spar(capsys, data, "tags", "suggest", "--no-llm")
    finance = review_json(capsys, data, "--tag", "Finance")["suggestions"]
    assert finance and {x["tag"] for x in finance} == {"Finance"}
    mine = review_json(capsys, data, "--file", str(share / "oil-change.md"))["suggestions"]
    assert mine and {Path(x["path"]).name for x in mine} == {"oil-change.md"}
    code, out, _ = spar(capsys, data, "tags", "review", "--tag", "Finance", "--accept-above", "0")
    assert f"accepted {len(finance)} suggestions" in out
    assert review_json(capsys, data, "--tag", "Finance")["pending"] == 0
    code, out, _ = spar(capsys, data, "tags", "review", "--reject")  # no ids: everything listed
    assert review_json(capsys, data)["pending"] == 0
    code, out, _ = spar(capsys, data, "tags", "review")
    assert "no suggestions waiting for review" in out


def test_names_are_printed_safely(indexed, capsys):
    data, _ = indexed
    spar(capsys, data, "tags", "suggest", "--no-llm")
    code, out, _ = spar(capsys, data, "tags", "review")
    assert code == 0 and "budget" in out and "\\x1b" in out
    assert "\x1b" not in out and "\x07" not in out


def test_suggest_with_an_ollama_server(indexed, capsys, monkeypatch):
    data, _ = indexed
    server = FakeOllama().start()
    try:
        monkeypatch.setenv("OLLAMA_HOST", server.url)
        server.set(reply=json.dumps({"tags": ["Finance"]}))
        code, out, err = spar(capsys, data, "tags", "suggest", "--llm", "--json")
        assert code == 0, err
        report = json.loads(out)
        assert report["llm"] and report["suggestions"]["llm_files"] >= 2
        assert server.calls("/api/generate")
        sources = {x["source"] for x in review_json(capsys, data, "--tag", "Finance")["suggestions"]}
        assert "llm" in sources
    finally:
        server.stop()

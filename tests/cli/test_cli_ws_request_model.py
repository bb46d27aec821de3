"""`spar ws create --prompt` with Ollama answering (the scripted server named by OLLAMA_HOST): the
model's date constraint applied and labelled in `ws create` and `ws explain`, dropped again with
--drop-constraint, and skipped with --rules-only or when the setting is off."""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path

import pytest

from spar_desktop.cli import main
from tests.support.fake_ollama import FakeOllama

REQUEST = "What did the board decide in May 2019?"
READING = {"keywords": ["board"], "since": "2019-05-01", "until": "2019-05-31", "types": [], "people": [], "folders": []}


def spar(capsys, data: Path, *args: str) -> tuple[int, str, str]:
    code = main(["--data-dir", str(data), *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def indexed(tmp_path, capsys, monkeypatch):
    share, data = tmp_path / "share", tmp_path / "data"
    for name, when in (("minutes-may.md", datetime(2019, 5, 20)), ("minutes-sept.md", datetime(2019, 9, 12))):
        path = share / "Board" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"The board decided things ({name}).", encoding="utf-8")
        os.utime(path, (when.timestamp(), when.timestamp()))
    assert spar(capsys, data, "index", str(share), "--quiet")[0] == 0
    server = FakeOllama().start()
    monkeypatch.setenv("OLLAMA_HOST", server.url)
    server.set(reply=json.dumps(READING))
    yield data, server
    server.stop()


def test_create_with_the_models_reading_explain_and_drop(indexed, capsys):
    data, server = indexed
    code, out, err = spar(capsys, data, "ws", "create", "may", "--prompt", REQUEST, "--match", "all")
    assert code == 0, err
    assert "(1 files admitted)" in out and "dates: 2019-05-01 to 2019-05-31 (model)" in out
    assert "dated 2019-05-01 to 2019-05-31 (model)" in out and "the model read the request too" in out
    assert REQUEST in server.calls("/api/generate")[-1].body["prompt"]
    code, out, _ = spar(capsys, data, "ws", "explain", "may")
    assert code == 0 and "dates: 2019-05-01 to 2019-05-31 (model)" in out
    code, out, _ = spar(capsys, data, "ws", "explain", "may", "--json")
    assert ["dates", "2019-05-01..2019-05-31", "model"] in json.loads(out)["filter"]["sources"]

    code, out, err = spar(capsys, data, "ws", "create", "all-may", "--prompt", REQUEST, "--match", "all",
                          "--drop-constraint", "dates")
    assert code == 0, err
    assert "(2 files admitted)" in out and "dates:" not in out
    assert "you dropped dates '2019-05-01..2019-05-31' (from the model)" in out
    code, _, err = spar(capsys, data, "ws", "create", "bad", "--prompt", REQUEST, "--drop-constraint", "type:pdf")
    assert code == 1 and "has no constraint 'type:pdf'" in err and "dates:2019-05-01..2019-05-31" in err


def test_rules_only_and_a_broken_reply_read_the_request_as_before(indexed, capsys):
    data, server = indexed
    code, out, err = spar(capsys, data, "ws", "create", "rules", "--prompt", REQUEST, "--match", "all", "--rules-only")
    assert code == 0, err
    assert not server.calls("/api/generate") and "(model)" not in out and "(rules)" not in out
    assert "reads as part of the topic" in out and "(2 files admitted)" in out

    server.set(reply="not json at all")
    code, out, err = spar(capsys, data, "ws", "create", "broken", "--prompt", REQUEST, "--match", "all")
    assert code == 0, err
    assert "the model's reading was not used: the reply is not JSON; the rules alone read the request" in out
    assert "(2 files admitted)" in out

    (data / "settings.json").write_text(json.dumps({"request_llm": False}), encoding="utf-8")
    calls = len(server.calls("/api/generate"))
    code, out, err = spar(capsys, data, "ws", "create", "off", "--prompt", REQUEST, "--match", "all")
    assert code == 0, err
    assert len(server.calls("/api/generate")) == calls and "model" not in out

"""`spar tags induce` / `spar tags proposal` end to end: a real share, index, encoder and a
scripted Ollama on loopback."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import spar_desktop.cli as cli
from spar_desktop.commands import tag_hierarchy_cmd
from tests.core.tagging.test_hierarchy_corpus import hand_written_corpus, write_notes
from tests.support.fake_ollama import FakeOllama
from tests.support.servers import free_port


@pytest.fixture(autouse=True)
def with_subcommands(monkeypatch):
    """Register `induce`/`proposal` under `spar tags` unless tags_cmd already does."""
    build = cli.build_parser

    def build_parser():
        parser = build()
        tags = parser._subparsers._group_actions[0].choices["tags"]
        tsub = tags._subparsers._group_actions[0]
        if "induce" not in tsub.choices:
            tag_hierarchy_cmd.register(tsub)
        return parser

    monkeypatch.setattr(cli, "build_parser", build_parser)


def spar(capsys, data: Path, *args: str) -> tuple[int, str, str]:
    code = cli.main(["--data-dir", str(data), *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def share(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("topics") / "notes"
    write_notes(root, hand_written_corpus()[0])
    return root


@pytest.fixture
def data(tmp_path, share, capsys) -> Path:
    data = tmp_path / "data"
    code, out, _ = spar(capsys, data, "index", str(share), "--quiet")
    assert code == 0, out
    return data


def test_induce_edit_accept_and_discard(data, capsys):
    code, _, err = spar(capsys, data, "tags", "proposal")
    assert code == 1 and "spar tags induce" in err

    code, out, _ = spar(capsys, data, "tags", "induce")
    assert code == 0, out
    assert "topics for 48 files (named by key phrases)" in out
    assert re.search(r"^1  .+  \(\d+ files\)  — ", out, re.M) and "├──" in out
    assert "nothing is tagged yet" in out
    assert (data / "tagging" / "topic_proposal.json").exists()

    code, out, _ = spar(capsys, data, "tags", "proposal", "--json")
    proposal = json.loads(out)
    assert proposal["format"] == "spar-topic-proposal" and proposal["file_count"] == 48
    first = proposal["nodes"][0]
    sub = first["children"][0]

    code, out, _ = spar(capsys, data, "tags", "proposal", "rename", "1", "Renamed topic")
    assert code == 0 and "1  Renamed topic  (" in out
    code, _, err = spar(capsys, data, "tags", "proposal", "rename", "1", "bad\x1b[2Jname")
    assert code == 1 and "\x1b" not in err and "control" in err
    code, out, _ = spar(capsys, data, "tags", "proposal", "remove", sub["id"])
    assert code == 0 and f"{sub['id']}  {sub['name']}  (" not in out
    code, _, err = spar(capsys, data, "tags", "proposal", "remove")
    assert code == 1 and "takes 1 operand" in err

    code, out, _ = spar(capsys, data, "tags", "proposal", "accept")
    assert code == 0 and "topic tags created" in out and "48 file assignments" in out
    code, out, _ = spar(capsys, data, "tags", "--source", "auto", "--json")
    tree = {n["value"]: n for n in json.loads(out)}
    assert tree["Renamed topic"]["files"] == first["files"].__len__() + sum(len(c["files"]) for c in first["children"])
    assert sum(n["files"] for n in tree.values()) == 48
    code, out, _ = spar(capsys, data, "tags", "proposal", "accept", "--json")
    again = json.loads(out)
    assert again["tags_created"] == 0 and again["assigned"] == 0

    code, out, _ = spar(capsys, data, "tags", "proposal")
    assert "accepted" in out
    code, out, _ = spar(capsys, data, "tags", "proposal", "discard")
    assert code == 0 and not (data / "tagging" / "topic_proposal.json").exists()


def test_induce_names_topics_with_ollama_and_falls_back_without_it(data, capsys, monkeypatch):
    fake = FakeOllama().start()
    try:
        fake.set(reply_fn=lambda body: "Topic: " + re.search(r"^- (.+)$", body["prompt"], re.M)[1].title() + " Notes")
        monkeypatch.setenv("OLLAMA_HOST", fake.url)
        code, out, err = spar(capsys, data, "tags", "induce", "--llm", "--features", "phrases")
        assert code == 0, err
        assert "(named by the Ollama model)" in out
        assert fake.calls("/api/generate")
        names = [n["name"] for top in json.loads(spar(capsys, data, "tags", "proposal", "--json")[1])["nodes"]
                 for n in [top, *top["children"]]]
        assert all(n.endswith("Notes") and not n.startswith("Topic") for n in names)
    finally:
        fake.stop()

    monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{free_port()}")
    code, out, err = spar(capsys, data, "tags", "induce", "--llm", "--json")
    assert code == 0 and "naming topics from their key phrases" in err
    assert json.loads(out)["named_by"] == "phrases"


def test_induce_on_an_empty_index_says_what_to_do(tmp_path, capsys):
    code, _, err = spar(capsys, tmp_path / "data", "tags", "induce")
    assert code == 1 and "spar index FOLDER" in err

"""`spar tags group` end to end: a real index and taxonomy, a scripted Ollama on loopback, and
the label clustering without one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import spar_desktop.cli as cli
from tests.support.fake_ollama import FakeOllama
from tests.support.servers import free_port

TERMS = ["Pumps", "Valves", "Seals", "Invoices", "Receipts", "Payments"]
REPLY = json.dumps({"groups": [{"name": "Mechanical", "tags": ["Pumps", "Valves", "Seals"]},
                               {"name": "Money", "tags": ["Invoices", "Receipts", "Payments"]}]})


def spar(capsys, data: Path, *args: str) -> tuple[int, str, str]:
    code = cli.main(["--data-dir", str(data), *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def data(tmp_path, capsys) -> Path:
    share = tmp_path / "share"
    share.mkdir()
    (share / "pump.txt").write_text("The feed pump was overhauled.", encoding="utf-8")
    (share / "invoice.txt").write_text("Invoice 42 is due.", encoding="utf-8")
    tax = tmp_path / "tax.json"
    tax.write_text(json.dumps({"Equipment": {t: {} for t in TERMS}}), encoding="utf-8")
    data = tmp_path / "data"
    assert spar(capsys, data, "index", str(share), "--quiet")[0] == 0
    assert spar(capsys, data, "tags", "import", str(tax))[0] == 0
    assert spar(capsys, data, "tags", "tag", "Pumps", str(share / "pump.txt"))[0] == 0
    return data


def tree(capsys, data: Path) -> dict:
    code, out, _ = spar(capsys, data, "tags", "--source", "taxonomy", "--json")
    assert code == 0
    return next(n for n in json.loads(out) if n["value"] == "Equipment")


def test_group_with_the_model_edit_and_accept(data, capsys, monkeypatch):
    fake = FakeOllama().start()
    try:
        fake.set(reply=REPLY)
        monkeypatch.setenv("OLLAMA_HOST", fake.url)
        code, out, err = spar(capsys, data, "tags", "group", "--parent", "Equipment")
        assert code == 0, err
        assert fake.calls("/api/generate")
    finally:
        fake.stop()
    assert "2 groups for 6 tags under Equipment (grouped by the Ollama model)" in out
    assert "Mechanical" in out and "nothing changed yet" in out
    assert {c["value"] for c in tree(capsys, data)["children"]} == set(TERMS)  # a proposal only

    code, out, _ = spar(capsys, data, "tags", "group", "--rename", "Money", "Finance", "--move", "Seals", "-")
    assert code == 0 and "Finance" in out and "not grouped: Seals" in out
    code, out, err = spar(capsys, data, "tags", "group", "--rename", "9", "X")
    assert code == 1 and "no group" in err

    code, out, _ = spar(capsys, data, "tags", "group", "--accept", "--json")
    assert code == 0
    result = json.loads(out)
    assert result["report"]["tags_moved"] == 5 and result["accepted_at"]
    equipment = tree(capsys, data)
    kids = {c["value"]: c for c in equipment["children"]}
    assert set(kids) == {"Mechanical", "Finance", "Seals"}
    assert {c["value"] for c in kids["Mechanical"]["children"]} == {"Pumps", "Valves"}
    assert kids["Mechanical"]["files"] == 1  # the pump file is still tagged Pumps, now under Mechanical

    code, out, _ = spar(capsys, data, "tags", "group", "--discard")
    assert code == 0 and "discarded" in out
    code, _, err = spar(capsys, data, "tags", "group")
    assert code == 1 and "no grouping proposal" in err


def test_group_without_a_model_clusters_and_accepts_at_once(data, capsys, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", f"http://127.0.0.1:{free_port()}")
    code, out, err = spar(capsys, data, "tags", "group", "Pumps", "Valves", "Seals", "Invoices", "Receipts",
                          "Payments", "--llm", "--accept")
    assert code == 0, err
    assert "grouping the tags by label similarity" in err and "(grouped by label similarity" in out
    assert "tags moved under them" in out
    groups = tree(capsys, data)["children"]
    assert sorted(sorted(c["value"] for c in g["children"]) for g in groups) == \
        [["Invoices", "Payments", "Receipts"], ["Pumps", "Seals", "Valves"]]


def test_tags_that_are_not_siblings_are_refused(data, capsys):
    code, _, err = spar(capsys, data, "tags", "group", "Pumps", "Valves", "Equipment", "--no-llm")
    assert code == 1 and "not siblings" in err

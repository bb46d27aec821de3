"""The `spar` CLI as a user runs it: index, files, tags, status, with real folder trees."""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path

import pytest

from spar_desktop.cli import main
from tests.support.corpora import DATA, write_newsgroups_tree


def spar(capsys, data_dir: Path, *args: str) -> tuple[int, str, str]:
    code = main(["--data-dir", str(data_dir), *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def newsgroups(tmp_path_factory):
    if not (DATA / "newsgroups20" / "corpus.jsonl").exists():
        pytest.skip("shared newsgroups20 data not present")
    root = tmp_path_factory.mktemp("ng") / "newsgroups"
    count = write_newsgroups_tree(root)
    return root, count


def test_newsgroups_tree_index_tags_and_filtered_files(newsgroups, tmp_path, capsys):
    root, count = newsgroups
    data = tmp_path / "data"
    code, out, _ = spar(capsys, data, "index", str(root), "--quiet")
    assert code == 0, out
    assert f"{count} new" in out

    code, out, _ = spar(capsys, data, "tags", "--source", "path")
    assert code == 0
    assert "comp  (" in out and "hardware" in out

    code, out, _ = spar(capsys, data, "files", "--tag", "comp/sys", "--since", "1993-04-01", "--json")
    assert code == 0
    got = {Path(r["path"]).relative_to(root).as_posix() for r in json.loads(out)}
    expected = set()
    with open(DATA / "newsgroups20" / "corpus.jsonl", encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            meta = rec["metadata"]
            when = datetime.fromtimestamp(datetime.fromisoformat(meta["date"]).timestamp()) if meta.get("date") else datetime.now()
            if meta["category_path"][:2] == ["comp", "sys"] and when >= datetime(1993, 4, 1):
                expected.add("/".join(meta["category_path"]) + "/" + rec["_id"].rsplit("/", 1)[1] + ".txt")
    assert got == expected and len(expected) == 1168  # every comp/sys post is from April 1993 on

    code, out, _ = spar(capsys, data, "index", str(root), "--quiet")
    assert f"0 new, 0 changed, {count} unchanged, 0 missing" in out

    code, out, _ = spar(capsys, data, "status")
    assert f"files:     {count}" in out


def test_cli_errors_are_clear_and_nonzero(tmp_path, capsys):
    data = tmp_path / "data"
    code, _, err = spar(capsys, data, "files", "--tag", "no-such-tag")
    assert code == 1 and "unknown tag: no-such-tag" in err
    code, out, _ = spar(capsys, data, "index", str(tmp_path / "absent"), "--quiet")
    assert code == 1 and "folder not found" in out
    code, _, err = spar(capsys, data, "index")
    assert code == 1 and "no folders added yet" in err
    with pytest.raises(SystemExit):
        main(["--data-dir", str(data), "files", "--since", "May"])
    assert "is not a date" in capsys.readouterr().err


def test_taxonomy_and_tagging_commands(tmp_path, capsys):
    share, data = tmp_path / "share", tmp_path / "data"
    (share / "Finance").mkdir(parents=True)
    (share / "Finance" / "budget.md").write_text("# Budget 2023", encoding="utf-8")
    (share / "notes.txt").write_text("notes", encoding="utf-8")
    tax = tmp_path / "tax.json"
    tax.write_text(json.dumps([{"name": "Money", "children": [{"name": "Budget"}]}]), encoding="utf-8")
    assign = tmp_path / "assign.csv"
    assign.write_text("path,tag\nFinance/budget.md,Budget\nghost.md,Budget\n", encoding="utf-8")

    assert spar(capsys, data, "index", str(share), "--quiet")[0] == 0
    code, out, _ = spar(capsys, data, "tags", "import", str(tax))
    assert code == 0 and "2 tags created" in out
    code, out, _ = spar(capsys, data, "tags", "assign", str(assign))
    assert code == 0 and "not in the index: ghost.md" in out
    code, out, _ = spar(capsys, data, "files", "--tag", "Money", "--json")
    assert [Path(r["path"]).name for r in json.loads(out)] == ["budget.md"]
    code, out, _ = spar(capsys, data, "tags", "tag", "urgent", str(share / "notes.txt"))
    assert code == 0 and "tagged 1 files" in out
    code, out, _ = spar(capsys, data, "files", "--tag", "urgent", "--json")
    assert [Path(r["path"]).name for r in json.loads(out)] == ["notes.txt"]
    code, out, _ = spar(capsys, data, "tags", "untag", "urgent", str(share / "notes.txt"))
    assert code == 0 and "removed urgent from 1 files" in out
    out_file = tmp_path / "export.json"
    assert spar(capsys, data, "tags", "export", str(out_file))[0] == 0
    names = [n["name"] for n in json.loads(out_file.read_text())]
    assert "Money" in names and "urgent" in names


def test_spar_tags_counts_from_the_stored_rows_and_after_tag_and_untag(tmp_path, capsys):
    """`spar tags` reads the counts the scan stored; `spar tags tag/untag` keeps them exact."""
    from spar_desktop.core.config import load_settings
    from spar_desktop.core.library import count_store
    from spar_desktop.core.library.database import Library
    from tests.core.library.test_tag_counts import reference_counts

    share, data = tmp_path / "share", tmp_path / "data"
    for i, folder in enumerate(("Finance/2023", "Finance/2023", "Finance", "HR", "HR/People")):
        (share / folder).mkdir(parents=True, exist_ok=True)
        (share / folder / f"f{i}.txt").write_text(f"file {i}", encoding="utf-8")
    assert spar(capsys, data, "index", str(share), "--quiet")[0] == 0
    assert spar(capsys, data, "tags", "tag", "urgent", str(share / "HR" / "f3.txt"), str(share / "Finance" / "f2.txt"))[0] == 0
    assert spar(capsys, data, "tags", "untag", "urgent", str(share / "Finance" / "f2.txt"))[0] == 0

    def flat(nodes: list) -> dict[str, int]:
        return {k: v for n in nodes for k, v in ({n["key"]: n["files"]} | flat(n.get("children", []))).items()}

    code, out, _ = spar(capsys, data, "tags", "--json")
    shown = flat(json.loads(out))
    assert shown["Finance"] == 3 and shown["Finance/2023"] == 2 and shown["HR"] == 2 and shown["user:urgent"] == 1
    lib = Library.open(load_settings(data))
    with lib.session() as s:
        stored = count_store.stored(s)
        assert stored is not None and stored[0] == reference_counts(s)
    lib.close()


ENGINE = ("torch", "transformers", "sentence_transformers", "onnxruntime", "tokenizers", "chromadb")


def test_library_commands_start_without_the_search_engine(tmp_path):
    """`spar index/status/files/tags` answer in a fraction of a second: they must never pay for
    the encoder or the vector store (a fresh interpreter: imports are process-wide)."""
    import subprocess
    import sys

    share = tmp_path / "share"
    share.mkdir()
    (share / "note.md").write_text("# A note\n\nabout turbines", encoding="utf-8")
    script = (
        "import sys\n"
        "from spar_desktop.cli import main\n"
        "code = main(sys.argv[1:])\n"
        f"print('ENGINE', sorted(m for m in {ENGINE!r} if m in sys.modules))\n"
        "sys.exit(code)\n"
    )
    data = str(tmp_path / "data")
    for args in (["index", str(share)], ["status"], ["files"], ["tags"]):
        done = subprocess.run([sys.executable, "-c", script, "--data-dir", data, *args], capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert "ENGINE []" in done.stdout, (args, done.stdout)

"""`spar ws` with ranked admission (issue 16): the ranking step in the funnel, the budget the user
moves (`--budget`, `spar ws edit`), and tag suggestions counted only with `--include-suggested`."""

from __future__ import annotations

import json
from pathlib import Path

from spar_desktop.cli import main


def spar(capsys, data: Path, *args: str) -> tuple[int, str, str]:
    code = main(["--data-dir", str(data), *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_ranked_create_budget_edit_and_suggestions(tmp_path, capsys):
    from spar_desktop.core.config import load_settings
    from spar_desktop.core.library.database import Library
    from spar_desktop.core.library.models import File, Tag, TagSource
    from spar_desktop.core.library.tags import tag_files
    from spar_desktop.core.library.taxonomy import assign_from_csv, import_taxonomy

    share, data = tmp_path / "share", tmp_path / "data"
    share.mkdir()
    files = {"no-tower.md": "Gearbox,Blade", "no-blade.md": "Gearbox,Tower", "gearbox.md": "Gearbox", "hr.md": ""}
    for name in files:
        (share / name).write_text(f"inspection notes {name}", encoding="utf-8")
    assert spar(capsys, data, "index", str(share), "--quiet")[0] == 0
    tax, assign = tmp_path / "tax.json", tmp_path / "assign.csv"
    tax.write_text(json.dumps([{"name": n} for n in ("Gearbox", "Blade", "Tower")]), encoding="utf-8")
    assign.write_text("".join(f"{n},{t}\n" for n, t in files.items() if t), encoding="utf-8")
    lib = Library.open(load_settings(data))
    with lib.session() as s:
        import_taxonomy(s, tax)
        assign_from_csv(s, assign, str(share))
        tower = s.query(Tag.id).filter(Tag.value == "Tower").scalar()
        hr = s.query(File.id).filter(File.name == "hr.md").scalar()
        tag_files(s, [hr], tower, TagSource.AUTO, score=0.5, confirmed=False)  # nobody reviewed it
    lib.close()

    request = "gearbox, blade and tower inspections"
    code, out, _ = spar(capsys, data, "ws", "create", "ranked", "--prompt", request, "--budget", "2")
    assert code == 0 and "(2 files admitted)" in out and "ranked: top 2 of 3 candidates (score ≥ " in out
    assert "hr.md" not in out  # its only tag is an unconfirmed suggestion
    code, out, _ = spar(capsys, data, "ws", "files", "ranked")
    assert [Path(line.split()[-1]).name for line in out.splitlines()] == ["no-blade.md", "no-tower.md"]

    code, out, _ = spar(capsys, data, "ws", "edit", "ranked", "--budget", "10", "--include-suggested")
    assert code == 0 and "4 files admitted" in out and "ranked: top 4 of 4 candidates" in out
    assert "1 admitted only through unconfirmed tag suggestions" in out and "hr.md" in out
    code, out, _ = spar(capsys, data, "ws", "explain", "ranked", "--json")
    exp = json.loads(out)
    assert exp["admitted"] == 4 and exp["filter"]["budget"] == 10 and exp["filter"]["include_unconfirmed"]
    assert exp["funnel"][-1]["label"].startswith("ranked: top 4 of 4") and exp["ranking"]["candidates"] == 4
    assert [Path(p).name for p in exp["suggested_only"]] == ["hr.md"]
    code, out, _ = spar(capsys, data, "ws", "edit", "ranked", "--exclude-suggested")
    assert code == 0 and "3 files admitted" in out and "unconfirmed" not in out

    # All-or-nothing workspaces have no budget to move.
    assert spar(capsys, data, "ws", "create", "every", "--prompt", request, "--match", "all")[0] == 0
    code, _, err = spar(capsys, data, "ws", "edit", "every", "--budget", "5")
    assert code == 1 and "not ranked" in err

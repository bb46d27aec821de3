"""`spar ws` end to end as a user runs it: index → create from a request → explain → build →
search (cited chunks) → archive → reactivate (nothing re-embedded) → export → import."""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path

from spar_desktop.cli import main


def spar(capsys, data: Path, *args: str) -> tuple[int, str, str]:
    code = main(["--data-dir", str(data), *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_workspace_commands(tmp_path, capsys):
    share, data = tmp_path / "share", tmp_path / "data"
    notes = {
        "Operations/Incident-Reports/2023/gearbox.md": ("Gearbox failure at Site B: oil contamination of the bearing.", 2023),
        "Operations/Incident-Reports/2022/blade.md": ("Blade crack found during inspection at Site A.", 2022),
        "Finance/Budgets/2023/falcon.md": ("Falcon project budget: 1.25 million pounds for 2023.", 2023),
    }
    for rel, (text, year) in notes.items():
        p = share / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
        ts = datetime(year, 5, 1).timestamp()
        os.utime(p, (ts, ts))
    assert spar(capsys, data, "index", str(share), "--quiet")[0] == 0

    code, out, _ = spar(capsys, data, "ws", "create", "incidents", "--prompt", "incident reports from 2023")
    assert code == 0 and "1 files admitted" in out and "Incident-Reports" in out
    code, out, _ = spar(capsys, data, "ws", "explain", "incidents", "--json")
    funnel = [s["admitted"] for s in json.loads(out)["funnel"]]
    assert funnel == [3, 2, 1]

    code, out, _ = spar(capsys, data, "ws", "build", "incidents", "--json")
    built = json.loads(out)
    assert code == 0 and built["ready"] == 1 and built["embedded_chunks"] >= 1
    code, out, _ = spar(capsys, data, "ws", "search", "incidents", "why did the gearbox fail", "--json")
    [hit] = json.loads(out)["hits"]
    assert hit["path"].endswith("gearbox.md") and hit["page_start"] == 1 and "oil contamination" in hit["text"]

    assert spar(capsys, data, "ws", "archive", "incidents")[0] == 0
    code, _, err = spar(capsys, data, "ws", "search", "incidents", "gearbox")
    assert code == 1 and "archived" in err
    code, out, _ = spar(capsys, data, "ws", "reactivate", "incidents", "--json")
    assert json.loads(out)["embedded_chunks"] == 0  # rebuilt from the cache

    out_file = tmp_path / "incidents.sparws"
    assert spar(capsys, data, "ws", "export", "incidents", str(out_file))[0] == 0
    code, out, _ = spar(capsys, data, "ws", "import", str(out_file), "--name", "copy")
    assert code == 0 and "1/1 files found" in out
    code, out, _ = spar(capsys, data, "ws", "list")
    assert "incidents" in out and "copy" in out

    code, _, err = spar(capsys, data, "ws", "search", "nope", "x")
    assert code == 1 and "no workspace named 'nope'" in err
    code, _, err = spar(capsys, data, "ws", "create", "empty")
    assert code == 1 and "give a request" in err
    bad = tmp_path / "bad.sparws"
    bad.write_bytes(b"not a zip")
    code, _, err = spar(capsys, data, "ws", "import", str(bad))
    assert code == 1 and "not a valid zip" in err


def test_create_admits_files_lacking_one_group_when_none_has_all_unless_every_group_is_asked_for(tmp_path, capsys):
    from spar_desktop.core.config import load_settings
    from spar_desktop.core.library.database import Library
    from spar_desktop.core.library.taxonomy import assign_from_csv, import_taxonomy

    share, data = tmp_path / "share", tmp_path / "data"
    share.mkdir()
    files = {"no-tower.md": "Gearbox,Blade", "no-blade.md": "Gearbox,Tower", "gearbox.md": "Gearbox"}
    for name in files:
        (share / name).write_text(f"inspection notes {name}", encoding="utf-8")
    assert spar(capsys, data, "index", str(share), "--quiet")[0] == 0
    tax, assign = tmp_path / "tax.json", tmp_path / "assign.csv"
    tax.write_text(json.dumps([{"name": n} for n in ("Gearbox", "Blade", "Tower")]), encoding="utf-8")
    assign.write_text("".join(f"{n},{t}\n" for n, t in files.items()), encoding="utf-8")
    lib = Library.open(load_settings(data))
    with lib.session() as s:
        import_taxonomy(s, tax)
        assign_from_csv(s, assign, str(share))
    lib.close()

    request = "gearbox, blade and tower inspections"
    code, out, _ = spar(capsys, data, "ws", "create", "most", "--prompt", request, "--match", "most")
    assert code == 0 and "2 files admitted" in out and "may lack 1 of the 3 groups" in out
    code, out, _ = spar(capsys, data, "ws", "create", "every", "--prompt", request, "--match", "all")
    assert code == 0 and "0 files admitted" in out and "may lack" not in out and "Nothing matches" in out


def test_a_request_that_matches_no_tag_is_refused_with_the_choices_unless_all_files(tmp_path, capsys):
    """Issue 14.2: 'quarterly tax returns for Mars base' used to make a workspace of every file."""
    share, data = tmp_path / "share", tmp_path / "data"
    for rel in ("Finance/Budgets/budget.md", "Operations/Incidents/gearbox.md", "HR/policy.md"):
        (share / rel).parent.mkdir(parents=True, exist_ok=True)
        (share / rel).write_text(f"notes for {rel}", encoding="utf-8")
    assert spar(capsys, data, "index", str(share), "--quiet")[0] == 0

    code, out, err = spar(capsys, data, "ws", "create", "tax", "--prompt", "quarterly tax returns for Mars base")
    assert code == 1 and "created" not in out
    assert "'quarterly tax returns'" in err and "'Mars base'" in err
    assert "--tag" in err and "--all-files" in err and "spar tags" in err
    code, out, _ = spar(capsys, data, "ws", "list")
    assert "tax" not in out  # nothing was created

    # A tag chosen beside the unmatched words scopes the workspace: they stay shown as unmatched.
    code, out, _ = spar(capsys, data, "ws", "create", "tax", "--prompt", "quarterly tax returns", "--tag", "Finance")
    assert code == 0 and "(1 files admitted)" in out and "'quarterly tax returns' → no tag matched" in out
    code, out, _ = spar(capsys, data, "ws", "create", "mars", "--prompt", "Mars base", "--all-files")
    assert code == 0 and "(3 files admitted)" in out and "whole index" in out


def test_ws_files_before_a_build_lists_the_admitted_files(tmp_path, capsys):
    """Issue 14.12: `spar ws files NAME` printed nothing before the first build."""
    share, data = tmp_path / "share", tmp_path / "data"
    for rel in ("Operations/gearbox.md", "Operations/blade.md", "Finance/budget.md"):
        (share / rel).parent.mkdir(parents=True, exist_ok=True)
        (share / rel).write_text(f"notes {rel}", encoding="utf-8")
    assert spar(capsys, data, "index", str(share), "--quiet")[0] == 0
    assert spar(capsys, data, "ws", "create", "ops", "--tag", "Operations")[0] == 0
    code, out, err = spar(capsys, data, "ws", "files", "ops")
    assert code == 0
    rows = [line for line in out.splitlines() if line.strip()]
    assert len(rows) == 2 and all(line.startswith("not built yet") for line in rows)
    assert rows[0].endswith("blade.md") and rows[1].endswith("gearbox.md")
    assert 'spar ws build "ops"' in err
    code, out, _ = spar(capsys, data, "ws", "files", "ops", "--json")
    assert [(Path(r["path"]).name, r["state"]) for r in json.loads(out)] == \
        [("blade.md", "not built yet"), ("gearbox.md", "not built yet")]

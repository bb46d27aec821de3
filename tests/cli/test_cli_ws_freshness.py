"""A built workspace follows its files (issue 28), through the real CLI as a user runs it: edit,
add, delete, re-tag and a date moved into range are all seen by `spar ws status`; `spar ws build`
updates only what changed and ends where a fresh build of the same request ends."""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path

from spar_desktop.cli import main

# Long enough for several passages, so an appended sentence changes only the last one.
LONG = " ".join(f"Section {i}: the pump station at site {i} reported pressure readings within limits, "
                f"and the maintenance crew replaced gasket number {i * 7} during the scheduled visit."
                for i in range(60))
EDIT = " A zeppelin-shaped bracket was found cracked behind the valve."


def spar(capsys, data: Path, *args: str) -> tuple[int, str, str]:
    code = main(["--data-dir", str(data), *args])
    out, err = capsys.readouterr()
    return code, out, err


def write(path: Path, text: str, year: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    ts = datetime(year, 5, 1).timestamp()
    os.utime(path, (ts, ts))


def status(capsys, data: Path, name: str) -> dict:
    code, out, _ = spar(capsys, data, "ws", "status", name, "--json")
    assert code == 0
    return json.loads(out)


def workspace_chunks(data: Path, name: str) -> tuple[list[str], dict[str, list[float]]]:
    """(the saved searcher's chunk keys, id → vector in the workspace's Chroma collection)."""
    from spar_desktop.core.config import load_settings
    from spar_desktop.core.library.database import Library
    from spar_desktop.core.retrieval.vector_store import ChromaCollection
    from spar_desktop.core.workspaces.manager import Workspaces

    mgr = Workspaces(Library.open(load_settings(data)))
    try:
        _, searcher, notes = mgr.searcher(name)
        assert notes == ()  # opened from its saved state: nothing rebuilt behind the test's back
        info = mgr.get(name)
        got = ChromaCollection(mgr.engine.chroma, info.collection, info.model_id)._col.get(include=["embeddings"])
        return list(searcher.keys), {i: [round(float(x), 5) for x in v] for i, v in zip(got["ids"], got["embeddings"])}
    finally:
        mgr.engine.close()


def test_a_workspace_sees_every_kind_of_change_and_updates_to_what_a_fresh_build_gives(tmp_path, capsys):
    share, data = tmp_path / "share", tmp_path / "data"
    reports = share / "Reports"
    write(reports / "pumps.md", LONG, 2023)
    write(reports / "gearbox.md", "Gearbox failure at Site B: oil contamination of the bearing.", 2023)
    write(reports / "blade.md", "Blade crack found during inspection at Site A.", 2024)
    write(reports / "old-audit.md", "Audit of the transformer yard: corrosion on the fence posts.", 2021)
    write(share / "Other" / "budget.md", "Falcon project budget: 1.25 million pounds.", 2023)
    write(share / "Other" / "memo.md", "Memo: the quasar telescope grant is renewed for the observatory.", 2024)
    assert spar(capsys, data, "index", str(share), "--quiet")[0] == 0
    assert spar(capsys, data, "tags", "tag", "urgent", str(share / "Other" / "budget.md"))[0] == 0

    for name in ("live", "fresh"):
        code, out, err = spar(capsys, data, "ws", "create", name, "--tag", "Reports|urgent", "--since", "2023-01-01")
        assert code == 0, err
    code, out, err = spar(capsys, data, "ws", "build", "live", "--json")
    assert code == 0, err
    assert json.loads(out)["ready"] == 4  # pumps, gearbox, blade, budget (the audit is dated 2021)
    assert status(capsys, data, "live") == {"name": "live", "status": "active", "stale": False,
                                            "changed": [], "new": [], "removed": []}

    # The share moves on: an edit, a new file, a deletion, a re-tag and a date moved into range.
    with open(reports / "pumps.md", "a", encoding="utf-8") as f:
        f.write(EDIT)
    write(reports / "turbine.md", "Turbine nacelle inspection: the yaw motor hums at low speed.", 2025)
    (reports / "blade.md").unlink()
    ts = datetime(2024, 3, 1).timestamp()
    os.utime(reports / "old-audit.md", (ts, ts))
    code, out, _ = spar(capsys, data, "index", str(share))
    assert code == 0 and "1 new" in out and "1 missing" in out
    assert "workspace 'live' is out of date (1 changed, 2 new, 1 removed)" in out  # the re-tag comes next
    assert spar(capsys, data, "tags", "tag", "urgent", str(share / "Other" / "memo.md"))[0] == 0

    st = status(capsys, data, "live")
    assert st["stale"] is True
    assert st["changed"] == [str(reports / "pumps.md")]
    assert st["new"] == sorted([str(reports / "turbine.md"), str(reports / "old-audit.md"), str(share / "Other" / "memo.md")])
    assert st["removed"] == [str(reports / "blade.md")]
    code, out, _ = spar(capsys, data, "ws", "list")
    assert "out of date (1 changed, 3 new, 1 removed)" in out
    code, out, _ = spar(capsys, data, "ws", "status", "live")
    assert "out of date" in out and "changed  " + str(reports / "pumps.md") in out

    # Searching the stale workspace says so, and marks the hit from the edited file.
    code, out, err = spar(capsys, data, "ws", "search", "live", "pressure readings gasket")
    assert code == 0 and "warning: 'live' is out of date" in err and "[file changed since the build" in out
    code, out, _ = spar(capsys, data, "ws", "search", "live", "zeppelin bracket cracked", "--json")
    res = json.loads(out)
    assert res["stale"] is True and not any("zeppelin" in h["text"] for h in res["hits"])

    # The update reads only the edited and new files and embeds only passages whose text is new.
    code, out, _ = spar(capsys, data, "ws", "files", "live", "--json")
    pumps_before = next(r["chunks"] for r in json.loads(out) if r["path"].endswith("pumps.md"))
    assert pumps_before >= 3
    code, out, err = spar(capsys, data, "ws", "build", "live", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert (report["changed_files"], report["new_files"], report["removed_files"]) == (1, 3, 1)
    assert report["read_documents"] == 4 and report["ready"] == 6
    code, out, _ = spar(capsys, data, "ws", "files", "live", "--json")
    per_file = {Path(r["path"]).name: r["chunks"] for r in json.loads(out)}
    new_files_chunks = per_file["turbine.md"] + per_file["old-audit.md"] + per_file["memo.md"]
    # Of the edited file only its last passage changed: every earlier passage's vector is reused.
    assert per_file["pumps.md"] >= pumps_before
    assert report["embedded_chunks"] == new_files_chunks + (per_file["pumps.md"] - pumps_before + 1)
    assert report["removed_vectors"] == 1  # blade's passage
    assert report["rewritten_vectors"] >= 1  # pumps' last passage: the same id, a new vector

    assert status(capsys, data, "live")["stale"] is False
    code, out, _ = spar(capsys, data, "ws", "search", "live", "zeppelin bracket cracked", "--json")
    res = json.loads(out)
    assert res["stale"] is False and res["hits"][0]["path"].endswith("pumps.md") and "zeppelin" in res["hits"][0]["text"]
    code, out, _ = spar(capsys, data, "ws", "search", "live", "yaw motor of the turbine nacelle", "--json")
    assert json.loads(out)["hits"][0]["path"].endswith("turbine.md")

    # The same request built fresh: the same chunks, the same vectors' ids and the same hits.
    code, out, err = spar(capsys, data, "ws", "build", "fresh", "--json")
    assert code == 0 and json.loads(out)["embedded_chunks"] == 0, err  # everything came from the cache
    live_keys, live_vectors = workspace_chunks(data, "live")
    fresh_keys, fresh_vectors = workspace_chunks(data, "fresh")
    assert sorted(live_keys) == sorted(fresh_keys) and set(live_vectors) == set(live_keys)
    assert live_vectors == fresh_vectors  # the edited file's last passage carries its new vector
    queries = ["pump station pressure", "gasket replaced", "oil contamination bearing", "blade crack inspection",
               "corrosion fence posts", "transformer yard audit", "Falcon budget", "million pounds",
               "quasar telescope grant", "observatory", "yaw motor", "turbine nacelle", "zeppelin bracket",
               "valve", "maintenance crew visit", "site 12", "scheduled visit", "hums at low speed",
               "renewed grant", "Site B gearbox"]
    for q in queries:
        hits = []
        for name in ("live", "fresh"):
            code, out, _ = spar(capsys, data, "ws", "search", name, q, "--json")
            hits.append([(h["path"], h["chunk_id"], round(h["score"], 6)) for h in json.loads(out)["hits"]])
        assert hits[0] == hits[1], q
        assert not any(p.endswith("blade.md") for p, _, _ in hits[0])


def test_an_open_ended_request_admits_files_dated_after_it_was_made(tmp_path, capsys):
    share, data = tmp_path / "share", tmp_path / "data"
    write(share / "Notes" / "early.md", "Inspection notes for the substation roof.", 2023)
    assert spar(capsys, data, "index", str(share), "--quiet")[0] == 0
    assert spar(capsys, data, "ws", "create", "latest", "--prompt", "inspection notes since 2023")[0] == 0
    assert spar(capsys, data, "ws", "build", "latest")[0] == 0
    write(share / "Notes" / "later.md", "Inspection notes: the substation roof was repaired.", 2026)
    assert spar(capsys, data, "index", str(share), "--quiet")[0] == 0
    assert status(capsys, data, "latest")["new"] == [str(share / "Notes" / "later.md")]
    code, out, err = spar(capsys, data, "ws", "search", "latest", "roof repaired", "--update", "--json")
    assert code == 0 and json.loads(out)["stale"] is False
    assert json.loads(out)["hits"][0]["path"].endswith("later.md")

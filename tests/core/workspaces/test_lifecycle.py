"""Workspace lifecycle on real components: SQLite index, real encoder, Chroma in-process (the CLI) and
in the helper process the desktop app runs it in."""

from __future__ import annotations

import json
import os
import shutil
import signal
import zipfile
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

import pymupdf
import pytest

from spar_desktop.core.config import load_settings
from spar_desktop.core.embedding.encoder import get_encoder
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.scanner import Scanner
from spar_desktop.core.progress import CancelToken
from spar_desktop.core.workspaces.engine import Engine
from spar_desktop.core.workspaces.errors import WorkspaceError
from spar_desktop.core.workspaces.manager import Workspaces
from spar_desktop.core.workspaces.models import WorkspaceFileState, WorkspaceStatus
from spar_desktop.core.workspaces.selection import WorkspaceFilter
from spar_desktop.core.workspaces.sparws import SparwsError, export_workspace, import_workspace

TOPICS = {
    "gearbox": "The gearbox bearing failed after oil contamination; vibration alarms preceded the failure.",
    "blade": "A leading edge erosion survey found cracks on blade two; repair by resin filling is planned.",
    "budget": "The capital budget for the year is 1.2 million pounds, with a contingency of fifty thousand.",
    "policy": "Working at height requires a harness, a rescue plan and two trained climbers at all times.",
}


def make_share(root: Path) -> None:
    for dept, topic in (("Operations", "gearbox"), ("Operations", "blade"), ("Finance", "budget"), ("HR", "policy")):
        folder = root / dept / "2023"
        folder.mkdir(parents=True, exist_ok=True)
        for i in range(3):
            (folder / f"{topic}-{i}.md").write_text(f"# {topic.title()} note {i}\n\n{TOPICS[topic]} Note number {i}.",
                                                   encoding="utf-8")
    doc = pymupdf.open()
    filler = " ".join(f"Site {i} produced energy within the expected range this month." for i in range(40))
    doc.new_page().insert_textbox(pymupdf.Rect(50, 50, 550, 800), "Operations overview. " + filler, fontsize=7)
    doc.new_page().insert_textbox(pymupdf.Rect(50, 50, 550, 800),
                                  "Gearbox oil contamination root cause is on page two. " + filler, fontsize=7)
    doc.save(root / "Operations" / "2023" / "overview.pdf")
    (root / "Operations" / "2023" / "empty.md").write_bytes(b"")


def open_share(tmp_path: Path, chroma_process: bool):
    share = tmp_path / "share"
    make_share(share)
    settings = replace(load_settings(tmp_path / "data"), chroma_process=chroma_process)
    lib = Library.open(settings)
    Scanner(lib).scan([str(share)])
    mgr = Workspaces(lib, Engine(settings, get_encoder("cpu")))
    yield mgr, share, tmp_path
    mgr.engine.close()
    lib.close()


@pytest.fixture
def env(tmp_path):
    """As the CLI runs: Chroma in-process."""
    yield from open_share(tmp_path, chroma_process=False)


@pytest.fixture
def app_env(tmp_path):
    """As the desktop app runs: Chroma hosted in its helper process."""
    yield from open_share(tmp_path, chroma_process=True)


def paths(results) -> list[str]:
    return [Path(h.path).name for h in results.hits]


def test_create_build_search_archive_reactivate(env):
    mgr, share, _ = env
    info, exp = mgr.create("ops", tags=["Operations"])
    assert info.status == WorkspaceStatus.DRAFT and exp.admitted == 8
    report = mgr.build("ops")
    assert report.ready == 7 and report.embedded_chunks > 0
    assert [(Path(p).name, st) for p, st, _ in report.problems] == [("empty.md", WorkspaceFileState.NO_TEXT)]
    res = mgr.search("ops", "oil contamination root cause", k=5)
    assert paths(res)[0] in ("overview.pdf", "gearbox-0.md", "gearbox-1.md", "gearbox-2.md")
    pdf_hit = next(h for h in res.hits if h.path.endswith("overview.pdf"))
    assert pdf_hit.page_start == 2 and "root cause" in pdf_hit.text  # the cited page, not just the file
    assert all("budget" not in p for p in paths(res))  # scoped: Finance files are not in this workspace

    mgr.archive("ops")
    assert mgr.get("ops").status == WorkspaceStatus.ARCHIVED
    with pytest.raises(WorkspaceError, match="archived"):
        mgr.search("ops", "gearbox")
    again = mgr.reactivate("ops")
    assert again.embedded_chunks == 0 and again.reused_documents == 7  # nothing re-embedded
    assert paths(mgr.search("ops", "oil contamination root cause", k=5)) == paths(res)


def test_update_adds_and_removes_only_the_difference(env):
    mgr, share, _ = env
    mgr.create("budget", tags=["Finance"])
    first = mgr.build("budget")
    (share / "Finance" / "2023" / "budget-0.md").unlink()
    (share / "Finance" / "2023" / "forecast.md").write_text("Forecast: spend will exceed the budget.", encoding="utf-8")
    Scanner(mgr.library).scan([str(share)])
    update = mgr.build("budget")
    assert update.ready == 3 and update.removed_vectors == first.chunks // 3 and update.added_vectors >= 1
    assert update.embedded_chunks == update.added_vectors  # only the new file was embedded
    assert "forecast.md" in paths(mgr.search("budget", "spend exceed forecast", k=3))


def test_cancel_keeps_cached_work(env):
    mgr, _, _ = env
    mgr.create("all", tags=["Operations|Finance|HR"])
    cancel = CancelToken()
    cancel.cancel()
    report = mgr.build("all", cancel=cancel)
    assert report.cancelled and mgr.get("all").status == WorkspaceStatus.DRAFT
    assert "cancelled" in mgr.get("all").last_error
    assert mgr.build("all").ready == 13


def test_vanished_files_deleted_tags_and_broken_vector_store(env):
    mgr, share, tmp = env
    mgr.create("hr", tags=["HR"])
    mgr.build("hr")
    # The Chroma directory is deleted behind the app's back: detected and rebuilt from cache.
    mgr.engine._client = None
    shutil.rmtree(tmp / "data" / "chroma")
    mgr.searchers.clear()
    res = mgr.search("hr", "harness rescue plan")
    assert paths(res) and paths(res)[0].startswith("policy")
    # A file goes missing: the hit says so; the next update lists it as missing.
    (share / "HR" / "2023" / "policy-0.md").unlink()
    Scanner(mgr.library).scan([str(share)])
    rep = mgr.build("hr")
    assert rep.ready == 2
    # The tag the filter uses is deleted: the filter says so instead of failing.
    from spar_desktop.core.library.models import Tag
    from sqlalchemy import select

    with mgr.library.session() as s:
        s.delete(s.scalar(select(Tag).where(Tag.key == "HR")))
    flt = mgr.current_filter("hr")
    assert any("deleted" in p for p in flt.problems) and flt.groups == ()


def test_corrupted_vector_store_is_set_aside(env):
    mgr, _, tmp = env
    mgr.create("fin", tags=["Finance"])
    mgr.build("fin")
    mgr.engine._client = None
    mgr.searchers.clear()
    for f in (tmp / "data" / "chroma").glob("*.sqlite3"):
        f.write_bytes(b"this is not a database" * 100)
    # A CLI search runs on the searcher the build saved and does not need the store...
    res = mgr.search("fin", "capital budget contingency")
    assert paths(res)[0].startswith("budget")
    # ...the next build opens it, sets the damaged store aside and refills it from the cache.
    report = mgr.build("fin")
    assert report.embedded_chunks == 0
    assert list((tmp / "data").glob("chroma.broken-*"))  # set aside inside the data dir, not deleted
    assert paths(mgr.search("fin", "capital budget contingency"))[0].startswith("budget")


def test_idle_workspaces_are_archived(env):
    mgr, _, _ = env
    mgr.create("old", tags=["Finance"])
    mgr.build("old")
    assert mgr.archive_idle(days=30, now=datetime.now() + timedelta(days=31)) == ["old"]
    assert mgr.get("old").status == WorkspaceStatus.ARCHIVED


def test_export_import_roundtrip_and_bad_files(env):
    mgr, _, tmp = env
    mgr.create("shared", tags=["Finance"])
    mgr.build("shared")
    mgr.search("shared", "budget")
    out = export_workspace(mgr, "shared", tmp / "shared.sparws")
    report = import_workspace(mgr, out)
    assert report.name == "shared (2)" and report.matched_by_hash == 3 and report.queries == 1
    assert mgr.build("shared (2)").ready == 3 and mgr.build("shared (2)").embedded_chunks == 0
    mgr.create("windows", tags=["Finance"], chunking="fixed")  # the passage chunking travels too
    assert import_workspace(mgr, export_workspace(mgr, "windows", tmp / "w.sparws")).name == "windows (2)"
    assert mgr.get("windows (2)").chunking == "fixed" and mgr.get("shared (2)").chunking == "hierarchical"

    def bad(name: str, members: dict[str, bytes]) -> Path:
        p = tmp / name
        with zipfile.ZipFile(p, "w") as zf:
            for n, data in members.items():
                zf.writestr(n, data)
        return p

    manifest = json.loads(zipfile.ZipFile(out).read("manifest.json"))
    cases = {
        "traversal": (bad("t.sparws", {"../evil.json": b"{}", "manifest.json": b"{}"}), "unsafe path"),
        "extra": (bad("x.sparws", {"manifest.json": json.dumps(manifest).encode(), "run.sh": b"rm -rf /"}), "unexpected member"),
        "future": (bad("v.sparws", {"manifest.json": json.dumps(dict(manifest, version=99)).encode()}), "newer"),
        "json": (bad("j.sparws", {"manifest.json": b"{not json"}), "not valid JSON"),
        "fields": (bad("f.sparws", {"manifest.json": json.dumps(dict(manifest, files="nope")).encode()}), "file list"),
        "chunking": (bad("c.sparws", {"manifest.json": json.dumps(dict(manifest, chunking="x" * 500)).encode()}),
                     "chunking"),
    }
    truncated = tmp / "cut.sparws"
    truncated.write_bytes(out.read_bytes()[: out.stat().st_size // 2])
    cases["truncated"] = (truncated, "not a valid zip")
    before = {w.name for w in mgr.list()}
    for label, (path, message) in cases.items():
        with pytest.raises(SparwsError, match=message):
            import_workspace(mgr, path)
    assert {w.name for w in mgr.list()} == before  # nothing half-imported
    assert not (tmp.parent / "evil.json").exists()


def test_create_from_an_edited_filter_keeps_it_exactly(env):
    mgr, _, _ = env
    edited = replace(mgr.filter_for(tags=["Operations"]), formats=("pdf",), request="ops pdfs")
    info, exp = mgr.create("edited", filter=edited)
    assert info.filter == edited and exp.admitted == 1  # overview.pdf, nothing re-parsed or re-matched
    # What create returns (the filter it stored, not read back) is what any later read gives.
    listed = {w.name: w for w in mgr.list()}["edited"]
    assert listed.request == "ops pdfs"  # read from the saved JSON: the list makes no filter
    assert mgr.get("edited") == info and listed == info and listed.filter == edited
    with pytest.raises(WorkspaceError, match="choose at least one"):
        mgr.create("nothing", filter=WorkspaceFilter(request="anything"))


def test_search_survives_the_vector_store_process_dying_and_its_files_vanishing(app_env):
    mgr, _, tmp = app_env
    mgr.create("hr", tags=["HR"])
    mgr.build("hr")
    assert paths(mgr.search("hr", "harness rescue plan"))[0].startswith("policy")
    os.kill(mgr.engine.chroma.pid, signal.SIGKILL)  # e.g. a crash in Chroma's native code
    assert paths(mgr.search("hr", "harness rescue plan"))[0].startswith("policy")
    shutil.rmtree(tmp / "data" / "chroma")  # then its files vanish behind the app's back
    assert paths(mgr.search("hr", "harness rescue plan"))[0].startswith("policy")
    mgr.searchers.clear()  # and the app starts again: the workspace is rebuilt from cached embeddings
    mgr.engine.reopen_chroma()
    assert paths(mgr.search("hr", "harness rescue plan"))[0].startswith("policy")
    mgr.engine.chroma.shutdown()  # the helper goes away under a searcher that still holds its collection
    res = mgr.search("hr", "harness rescue plan")
    assert paths(res)[0].startswith("policy")
    assert any("rebuilt from cached embeddings" in n for n in res.notes)


def test_a_corrupted_store_is_set_aside_by_the_app_too(app_env):
    mgr, _, tmp = app_env
    mgr.create("fin", tags=["Finance"])
    mgr.build("fin")
    mgr.engine._drop_client()  # the app closes; its helper process lets go of the files
    mgr.searchers.clear()
    for f in (tmp / "data" / "chroma").glob("*.sqlite3"):
        f.write_bytes(b"this is not a database" * 100)
    res = mgr.search("fin", "capital budget contingency")  # the next start opens a damaged store
    assert paths(res)[0].startswith("budget")
    assert list((tmp / "data").glob("chroma.broken-*"))

"""One file's text must never fail a whole build or a search (issue 17): a JSON file holding a
lone surrogate escape, and a query with an undecodable byte."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from spar_desktop.core.config import load_settings
from spar_desktop.core.embedding.encoder import get_encoder
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.scanner import Scanner
from spar_desktop.core.workspaces.engine import Engine
from spar_desktop.core.workspaces.manager import Workspaces
from spar_desktop.core.workspaces.models import WorkspaceFileState


def test_a_lone_surrogate_in_a_file_or_a_query_does_not_fail_the_build_or_the_search(tmp_path):
    share = tmp_path / "share"
    share.mkdir()
    (share / "turbine.md").write_text("Turbine blade inspection found leading edge erosion.", encoding="utf-8")
    (share / "odd.json").write_text('{"note": "\\ud800 half a character, then gearbox oil"}', encoding="utf-8")
    settings = replace(load_settings(tmp_path / "data"), chroma_process=False)
    lib = Library.open(settings)
    try:
        Scanner(lib).scan([str(share)])
        mgr = Workspaces(lib, Engine(settings, get_encoder("cpu")))
        try:
            mgr.create("all", types=["md", "json"])
            report = mgr.build("all")
            states = {Path(p).name: st for p, st, _ in report.problems}
            assert report.ready >= 1 and states.get("turbine.md") is None
            assert states.get("odd.json", WorkspaceFileState.READY) in (WorkspaceFileState.READY,
                                                                        WorkspaceFileState.FAILED)
            hits = mgr.search("all", "blade erosion \udcff", k=3).hits
            assert Path(hits[0].path).name == "turbine.md"
        finally:
            mgr.engine.close()
    finally:
        lib.close()

"""A small real workspace (SQLite index, packaged encoder, in-process Chroma) per test."""

from __future__ import annotations

from pathlib import Path

import pytest

NOTES = {
    "Operations/2023/gearbox.md": "# Gearbox report\n\nThe gearbox bearing failed after oil contamination. "
                                  "Vibration alarms preceded the failure by two weeks. The oil filter was clogged.",
    "Operations/2023/blade.md": "# Blade survey\n\nA leading edge erosion survey found cracks on blade two. "
                               "Repair by resin filling is planned for spring.",
    "Operations/2023/yaw.md": "# Yaw system\n\nTurbine seven tripped because the yaw motor overheated. "
                             "The yaw brake pads were worn and replaced.",
    "Operations/2023/grid.md": "# Grid event\n\nA voltage dip on the grid made three turbines disconnect. "
                              "The converter fault ride-through setting was too strict.",
    "Finance/2023/budget.md": "# Budget\n\nThe capital budget for the year is 1.2 million pounds.",
}


def make_share(root: Path) -> None:
    for rel, text in NOTES.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")


@pytest.fixture(scope="session")
def encoder():
    from spar_desktop.core.embedding.encoder import get_encoder

    return get_encoder("cpu")


@pytest.fixture
def ws(tmp_path, encoder):
    """(manager, share): workspace 'ops' over the Operations notes, built."""
    from spar_desktop.core.config import load_settings
    from spar_desktop.core.library.database import Library
    from spar_desktop.core.library.scanner import Scanner
    from spar_desktop.core.workspaces.engine import Engine
    from spar_desktop.core.workspaces.manager import Workspaces

    share = tmp_path / "share"
    make_share(share)
    settings = load_settings(tmp_path / "data")
    lib = Library.open(settings)
    Scanner(lib).scan([str(share)])
    mgr = Workspaces(lib, Engine(settings, encoder))
    mgr.create("ops", tags=["Operations"])
    assert mgr.build("ops").ready == 4
    yield mgr, share
    mgr.engine.close()
    lib.close()

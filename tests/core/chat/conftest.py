"""Fixtures for chat: the scripted Ollama server, and one real workspace built once per session
(real SQLite index, real encoder, in-process Chroma) that every answer test asks questions in."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from spar_desktop.core.llm.client import Ollama
from tests.support.fake_ollama import FakeOllama
from tests.support.servers import free_port

NOTES = {
    "Operations/2023/gearbox.md": "# Gearbox report\n\nThe gearbox bearing failed after oil contamination; "
                                  "vibration alarms preceded the failure by two weeks.",
    "Operations/2023/blade.md": "# Blade survey\n\nA leading edge erosion survey found cracks on blade two; "
                               "repair by resin filling is planned for spring.",
    "Finance/2023/budget.md": "# Budget\n\nThe capital budget for the year is 1.2 million pounds.",
}


def make_share(root: Path) -> None:
    for rel, text in NOTES.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    doc = pymupdf.open()
    filler = " ".join(f"Site {i} produced energy within the expected range this month." for i in range(40))
    doc.new_page().insert_textbox(pymupdf.Rect(50, 50, 550, 800), "Operations overview. " + filler, fontsize=7)
    doc.new_page().insert_textbox(pymupdf.Rect(50, 50, 550, 800),
                                  "Turbine seven tripped because the yaw motor overheated. " + filler, fontsize=7)
    doc.save(root / "Operations" / "2023" / "overview.pdf")


@pytest.fixture(scope="session")
def workspace_env(tmp_path_factory):
    """(manager, data_dir): workspace 'ops' (Operations files) built and searchable."""
    from spar_desktop.core.config import load_settings
    from spar_desktop.core.embedding.encoder import get_encoder
    from spar_desktop.core.library.database import Library
    from spar_desktop.core.library.scanner import Scanner
    from spar_desktop.core.workspaces.engine import Engine
    from spar_desktop.core.workspaces.manager import Workspaces

    tmp = tmp_path_factory.mktemp("chat")
    make_share(tmp / "share")
    settings = load_settings(tmp / "data")
    lib = Library.open(settings)
    Scanner(lib).scan([str(tmp / "share")])
    mgr = Workspaces(lib, Engine(settings, get_encoder("cpu")))
    mgr.create("ops", tags=["Operations"])
    assert mgr.build("ops").ready == 3
    yield mgr, tmp
    mgr.engine.close()
    lib.close()


@pytest.fixture
def fake_ollama():
    server = FakeOllama().start()
    yield server
    server.stop()


@pytest.fixture
def fast_ollama(fake_ollama) -> Ollama:
    """The service pointed at the fake, with test-sized timeouts."""
    return Ollama(fake_ollama.url, "llama3.2", stall_timeout=0.5, first_token_timeout=1.5, request_timeout=1.0)


@pytest.fixture
def dead_host() -> str:
    """A loopback URL where nothing listens (connection refused at once)."""
    return f"http://127.0.0.1:{free_port()}"

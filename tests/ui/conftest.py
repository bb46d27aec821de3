"""Fixtures for the UI tests: a fresh data dir, library and main window per test (offscreen)."""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

import pytest

from spar_desktop.core.config import Settings, load_settings
from spar_desktop.core.library.database import Library

UI_TIMEOUT_MS = 30_000


def app_like_settings(data_dir: Path) -> Settings:
    """Settings as spar-desktop makes them (load_settings(app=True): Chroma in its helper process),
    from the built-in preferences: a developer's settings or variables never reach a test."""
    # Tag suggestions after every scan would run beside each test's own work; test_tag_review turns
    # them on itself.
    return load_settings(data_dir, app=True, preferences=False, auto_tagging=False)


@pytest.fixture
def settings(tmp_path: Path):
    from spar_desktop.core.workspaces.engine import release_engine

    settings = app_like_settings(tmp_path / "data")
    yield settings
    release_engine(settings)  # stops the test's vector-store helper, if it started one


@pytest.fixture
def library(settings: Settings):
    lib = Library.open(settings)
    yield lib
    lib.close()


@pytest.fixture
def make_window(qtbot, settings, library):
    """Factory: a MainWindow on the test's library (folder watching off unless asked)."""
    from spar_desktop.ui.main_window import MainWindow

    windows = []

    def make(watch: bool = False, debounce_ms: int = 2000):
        window = MainWindow(settings, library, watch=watch, interactive=False, debounce_ms=debounce_ms)
        qtbot.addWidget(window)
        window.show()
        windows.append(window)
        qtbot.waitUntil(window.runner.is_idle, timeout=UI_TIMEOUT_MS)
        return window

    yield make
    for w in windows:
        w.close()


@pytest.fixture
def window(make_window):
    return make_window()


@pytest.fixture
def window_on(qtbot):
    """Factory: a MainWindow on its own library for given settings; at teardown the window, its
    library and its vector-store helper process are closed."""
    from spar_desktop.core.workspaces.engine import release_engine
    from spar_desktop.ui.main_window import MainWindow

    opened = []

    def open_window(settings: Settings):
        lib = Library.open(settings)
        window = MainWindow(settings, lib, watch=False, interactive=False)
        opened.append((window, lib))
        qtbot.addWidget(window)
        window.show()
        return window

    yield open_window
    for window, lib in opened:
        window.close()
        lib.close()
        release_engine(window.settings)


def set_mtime(path: Path, year: int, month: int = 6, day: int = 15) -> None:
    ts = datetime(year, month, day, 12).timestamp()
    os.utime(path, (ts, ts))


def write_pdf(path: Path, pages: list[str]) -> Path:
    """A real multi-page PDF with the given text per page (pymupdf)."""
    import pymupdf

    doc = pymupdf.open()
    for text in pages:
        page = doc.new_page()
        page.insert_textbox(pymupdf.Rect(72, 72, 540, 770), text, fontsize=12)
    doc.set_metadata({"title": path.stem, "author": "Test Author"})
    path.parent.mkdir(parents=True, exist_ok=True)
    doc.save(str(path))
    doc.close()
    return path


@pytest.fixture
def small_tree(tmp_path: Path) -> Path:
    """Finance (3 files: 2 from 2020, 1 from 2021) and HR (2 files: 2020, 2021), plus a PDF."""
    root = tmp_path / "share"
    files = {
        "Finance/budget-2020.txt": ("Budget for 2020. Travel costs are capped.", 2020),
        "Finance/forecast.md": ("# Forecast\n\nRevenue grows.", 2020),
        "Finance/Reports/q1-2021.txt": ("Quarter one report for 2021.", 2021),
        "HR/policy.md": ("# Leave policy\n\nTwenty five days.", 2020),
        "HR/handbook.txt": ("Employee handbook 2021 edition.", 2021),
    }
    for rel, (text, year) in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
        set_mtime(p, year)
    return root


def file_count(library: Library) -> int:
    from sqlalchemy import func, select

    from spar_desktop.core.library.models import File

    with library.session() as s:
        return s.scalar(select(func.count(File.id))) or 0


@pytest.fixture
def aloop(qapp, qtbot):
    """The app's qasync loop on pytest-qt's QApplication (as ``spar-desktop`` runs it): coroutines
    advance whenever Qt processes events, i.e. inside qtbot.waitUntil / waitSignal."""
    import asyncio
    import gc

    import qasync

    from spar_desktop.ui.base.aio import install_asyncgen_hooks

    loop = qasync.QEventLoop(qapp, already_running=True)
    asyncio.set_event_loop(loop)
    restore_hooks = install_asyncgen_hooks(loop)
    yield loop
    for task in asyncio.all_tasks(loop):
        task.cancel()
    # Finalize abandoned async generators (httpx streams) while the loop still runs, as
    # asyncio.run does: their aclose() runs as tasks that must finish before the loop closes.
    gc.collect()
    closing = asyncio.ensure_future(loop.shutdown_asyncgens())
    qtbot.waitUntil(lambda: closing.done() and all(t.done() for t in asyncio.all_tasks(loop)), timeout=UI_TIMEOUT_MS)
    # Then stop it, so later tests (and asyncio.run in core tests) start clean.
    restore_hooks()
    asyncio.events._set_running_loop(None)
    loop._QEventLoop__is_running = False  # qasync's flag for already_running loops
    loop.close()  # also stops its executor threads (asyncio.to_thread runs on QThreads)
    asyncio.set_event_loop(None)


def write_workspace_share(root: Path) -> Path:
    """Incident reports in two departments (two tags named 'Incident-Reports'), one from 2022,
    and a budget: 'incident reports from 2023' admits three files, two without the Safety tag.
    The PDF's root cause is on page 2."""
    files = {
        "Operations/Incident-Reports/2023/IR-blade-survey.md": (
            "# Blade survey\n\nA leading edge erosion survey found cracks on blade two; repair by resin "
            "filling is planned for spring.", 2023),
        "Operations/Incident-Reports/2022/IR-old-ladder.md": (
            "# Ladder incident\n\nA technician slipped on a wet ladder rung; no injury.", 2022),
        "Safety/Incident-Reports/IR-lanyard.md": (
            "# Damaged lanyard\n\nA fall arrest lanyard was found frayed during the pre-climb check.", 2023),
        "Finance/2023/budget.md": ("# Budget\n\nThe capital budget for the year is 1.2 million pounds.", 2023),
    }
    for rel, (text, year) in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
        set_mtime(p, year)
    filler = " ".join(f"Site {i} produced energy within the expected range that month." for i in range(18))
    pdf = write_pdf(root / "Operations/Incident-Reports/2023/IR-gearbox-failure.pdf", [
        "Incident report IR-2023-007. Gearbox failure on turbine CM-T04 in March 2023. The turbine was "
        "stopped by the condition monitoring alarm and inspected by the site team. " + filler,
        filler + " Root cause. The gearbox bearing failed after water contamination of the gearbox oil, which "
        "entered through a saturated desiccant breather that was not replaced at the September service.",
    ])
    set_mtime(pdf, 2023)
    return root


def build_ops_workspace(tmp: Path) -> Settings:
    """A data dir holding workspace 'ops' (the Operations folder of ``write_workspace_share``), built."""
    from spar_desktop.core.embedding.encoder import get_encoder
    from spar_desktop.core.library.scanner import Scanner
    from spar_desktop.core.workspaces.engine import engine_for, release_engine
    from spar_desktop.core.workspaces.manager import Workspaces

    share = write_workspace_share(tmp / "share")
    settings = app_like_settings(tmp / "data")
    lib = Library.open(settings)
    try:
        Scanner(lib).scan([str(share)])
        mgr = Workspaces(lib, engine_for(settings, get_encoder("cpu")))
        mgr.create("ops", tags=["Operations"])
        assert mgr.build("ops").ready == 3
    finally:
        lib.close()
        release_engine(settings)  # the data dir is left closed, ready to be copied or reopened
    return settings


@pytest.fixture
def fake():
    """A loopback server speaking the subset of Ollama's API the app uses."""
    from tests.support.fake_ollama import FakeOllama

    server = FakeOllama().start()
    yield server
    server.stop()


# -- a small share of three topics, four files each (the relation graph's tests) -----------------
BUILD_TIMEOUT_MS = 180_000  # the first EDR-MQ build in a process loads the encoder
TOPICS = {
    "Space": "Orbit and launch of the rocket {i} to the space station. The astronauts planned the mission, the fuel "
             "and the thrust of the {i}th stage.",
    "Cooking": "Recipe {i}: bake the bread dough with flour, yeast and butter in a hot oven until the crust is golden.",
    "Cars": "The car engine {i} needs oil, new brakes and tyres; the mechanic checks the gearbox and the clutch.",
}


def write_topic_share(root: Path, topics: dict[str, str] = TOPICS) -> Path:
    """One folder per topic holding four text files, ``<topic>1.txt`` … ``<topic>4.txt``."""
    for folder, text in topics.items():
        (root / folder).mkdir(parents=True)
        for i in range(1, 5):
            (root / folder / f"{folder.lower()}{i}.txt").write_text(text.format(i=i), encoding="utf-8")
    return root


@pytest.fixture
def indexed_window(qtbot, make_window, tmp_path: Path):
    """A window whose index holds the 12 files of ``write_topic_share``."""
    root = write_topic_share(tmp_path / "share")
    window = make_window()
    window.controller.index_paths([str(root)])
    qtbot.waitUntil(lambda: window.file_panel.model.total == 12 and window.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    return window


def wait_graph(qtbot, w, method: str, timeout: int = UI_TIMEOUT_MS) -> None:
    """Until the Relations tab shows a ``method`` graph and no graph task runs."""
    qtbot.waitUntil(lambda: w.relations.view.payload is not None and w.relations.view.payload.method == method
                    and not w.runner.is_running("relations-graph"), timeout=timeout)

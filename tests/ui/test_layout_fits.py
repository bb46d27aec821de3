"""Nothing cut: the real main window at 1280x800 and 1920x1080 (and, in a process of its own,
at 150% scale), in the library view and in the workspace view with search results and a cited
answer. Every visible button lies inside its parent and is not cut by a panel; a one-line text
that does not fit is elided with the full text as tooltip; counts in the tag tree fit their
column; long file names are cut in the middle with the full path on hover. The checks themselves
are in tests/ui/layout_checks.py; the first test shows they do catch a cut button, label and count."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtWidgets import QPushButton, QTreeWidget, QTreeWidgetItem, QWidget

from spar_desktop.core.config import Settings
from spar_desktop.core.library.database import Library
from spar_desktop.ui.base.elided_label import ElidedLabel
from tests.ui.conftest import UI_TIMEOUT_MS, app_like_settings, write_workspace_share
from tests.ui.layout_checks import clipped_buttons, cut_labels, cut_numbers, problems

LONG_NAME = "IR-2023-011-gearbox-oil-water-contamination-root-cause-analysis-site-CM-T04-final-v3.md"
SIZES = ((1280, 800), (1920, 1080))


def test_the_checks_catch_a_cut_button_an_unexplained_elision_and_a_cut_count(qtbot):
    top = QWidget()
    qtbot.addWidget(top)
    top.resize(300, 200)
    holder = QWidget(top)
    holder.setGeometry(0, 0, 120, 40)
    cut = QPushButton("Reset learning", holder)
    cut.setGeometry(80, 0, 100, 30)  # 60 px of it past its parent's right edge
    label = ElidedLabel("a very long request that will never fit in eighty pixels", top)
    label.setGeometry(0, 50, 80, 20)
    tree = QTreeWidget(top)
    tree.setColumnCount(2)
    tree.setGeometry(0, 80, 250, 100)
    tree.header().setStretchLastSection(False)
    tree.header().resizeSection(1, 20)
    tree.addTopLevelItem(QTreeWidgetItem(["Folders", "100,000"]))
    top.show()
    qtbot.waitExposed(top)
    assert any("Reset learning" in p for p in clipped_buttons(top))
    assert any("ElidedLabel" in p for p in cut_labels(top))
    label.setToolTip(label.text())  # elided with the whole text on hover: fine
    assert not cut_labels(top)
    assert any("100,000" in p for p in cut_numbers(top))


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Settings:
    """A built workspace over incident reports, one of them with a very long file name."""
    from spar_desktop.core.embedding.encoder import get_encoder
    from spar_desktop.core.library.scanner import Scanner
    from spar_desktop.core.workspaces.engine import engine_for, release_engine
    from spar_desktop.core.workspaces.manager import Workspaces

    tmp = tmp_path_factory.mktemp("layout")
    share = write_workspace_share(tmp / "share")
    (share / "Operations/Incident-Reports/2023" / LONG_NAME).write_text(
        "# Gearbox oil\n\nWater contamination of the gearbox oil came through a saturated desiccant breather. "
        "The gearbox bearing failed; the breather was not replaced at the September service.", encoding="utf-8")
    settings = app_like_settings(tmp / "data")
    lib = Library.open(settings)
    try:
        Scanner(lib).scan([str(share)])
        mgr = Workspaces(lib, engine_for(settings, get_encoder("cpu")))
        mgr.create("Gearbox incidents at the northern wind farm sites", tags=["Operations"])
        assert mgr.build("Gearbox incidents at the northern wind farm sites").ready == 4
    finally:
        lib.close()
        release_engine(settings)
    return settings


def settle(qtbot, w, size: tuple[int, int]) -> None:
    for _ in range(2):  # a dock shown by the view switch takes its width on the second pass
        w.resize(*size)
        qtbot.wait(60)


def big_tag_counts(w) -> None:
    """The tag tree as a 100,000-file share shows it (counts are only numbers to the panel)."""
    from spar_desktop.core.library.overview import TagSnapshot

    model = w.tag_panel.model
    infos = {i: replace(info, file_count=info.file_count * 25_000) for i, info in model.infos.items()}
    roots = tuple(replace(r, files=r.files * 25_000, tag_files={k: v * 25_000 for k, v in r.tag_files.items()})
                  for r in model.roots)
    w.tag_panel.set_snapshot(TagSnapshot(infos, roots))
    assert max(info.file_count for info in model.infos.values()) >= 100_000


def test_the_window_cuts_nothing_at_1280x800_and_1920x1080(qtbot, aloop, built, tmp_path, window_on, fake):
    import shutil

    fake.set(reply="The bearing failed after water contamination of the gearbox oil [1] through the breather [2].")
    data = tmp_path / "data"
    shutil.copytree(built.data_dir, data)
    w = window_on(replace(built, data_dir=data, ollama_host=fake.url))
    qtbot.waitUntil(lambda: w.workspaces.current is not None and w.chat.session is not None
                    and w.chat.server_ok is True and w.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    big_tag_counts(w)
    # The workspace view: a search with results, then a cited answer beside them.
    w.focus_workspace_search()
    assert w.tabs.currentWidget() is w.workspace_view and w.workspace_panel.search_box.hasFocus()
    w.workspace_panel.search_box.setText("gearbox oil water contamination")
    with qtbot.waitSignal(w.workspaces.search_finished, timeout=UI_TIMEOUT_MS):
        w.workspace_panel.search_box.returnPressed.emit()
    w.workspace_panel.results.setCurrentRow(0)
    w.chat_features.focus_chat()
    assert w.chat_pane.ask("Why did the gearbox bearing fail?")
    qtbot.waitUntil(lambda: not w.chat.answering, timeout=UI_TIMEOUT_MS)
    chips = w.chat_pane.messages.bubbles[-1].chip_buttons()
    assert chips
    long_chips = [c for c in chips if LONG_NAME in c.toolTip()]
    assert long_chips, [c.text() for c in chips]
    for chip in long_chips:  # cut in the middle: both ends readable, the whole path on hover
        assert "…" in chip.text() and chip.text().split("…")[1].split(" ·")[0] in LONG_NAME
    found = {}
    for size in SIZES:
        for view in ("library", "workspace"):
            getattr(w.views, f"show_{view}")()
            settle(qtbot, w, size)
            found[f"{size[0]}x{size[1]} {view}"] = problems(w)
        w.overview_action.trigger()  # the charts' titles
        settle(qtbot, w, size)
        found[f"{size[0]}x{size[1]} overview"] = problems(w)
    assert found == {k: [] for k in found} and len(found) == 6


def test_the_window_cuts_nothing_at_150_percent(tmp_path):
    """QT_SCALE_FACTOR=1.5 applies to a whole process: the check runs in one of its own, at the
    logical sizes of 1280x800 and 1920x1080 screens."""
    env = dict(os.environ, QT_SCALE_FACTOR="1.5", QT_QPA_PLATFORM="offscreen")
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-m", "tests.ui.layout_checks", "853x533", "1280x720"], cwd=root, env=env,
                         capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["scale"] == 1.5
    assert report["problems"] == {k: [] for k in report["problems"]} and len(report["problems"]) == 4

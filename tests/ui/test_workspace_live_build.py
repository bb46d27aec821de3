"""A workspace searched while its first build runs (issue 30): the search box is usable during the
build, hits come back from the build's snapshot, and the panel says how much meaning search covers."""

from __future__ import annotations

import threading

import pytest

from spar_desktop.core.embedding import pipeline
from spar_desktop.core.workspaces import builder
from spar_desktop.core.workspaces.selection import WorkspaceFilter
from tests.ui.conftest import UI_TIMEOUT_MS, write_workspace_share

BUILD_TIMEOUT_MS = 180_000  # the first build in a process loads the encoder


@pytest.fixture
def held_build(monkeypatch):
    """The build embeds two passages per commit and waits after its first commit until released:
    'during the build' for as long as the test needs."""
    first_commit, release = threading.Event(), threading.Event()
    real = pipeline.embed_documents

    def embed(*args, **kw):
        ready = kw["on_documents_ready"]

        def hooked(docs):
            ready(docs)
            if not first_commit.is_set():
                first_commit.set()
                release.wait(120)
        return real(*args, **{**kw, "on_documents_ready": hooked, "commit_texts": 2, "flush_texts": 4})

    monkeypatch.setattr(builder, "embed_documents", embed)
    monkeypatch.setattr("spar_desktop.core.workspaces.live_build.PUBLISH_SECONDS", 0.0)
    yield first_commit, release
    release.set()


def test_search_during_a_first_build_gets_hits_with_partial_coverage(qtbot, make_window, tmp_path, held_build):
    first_commit, release = held_build
    w = make_window()
    w.controller.index_paths([str(write_workspace_share(tmp_path / "share"))])
    qtbot.waitUntil(lambda: w.file_panel.model.total == 5 and w.runner.is_idle(), timeout=UI_TIMEOUT_MS)
    w.workspaces.service.manager.create("Everything", filter=WorkspaceFilter(all_files=True))
    w.workspaces.select_later("Everything")
    qtbot.waitUntil(lambda: w.workspaces.current is not None and w.workspaces.current.name == "Everything",
                    timeout=UI_TIMEOUT_MS)
    panel = w.workspace_panel
    assert not panel.search_box.isEnabled()  # never built, not building

    panel.build_button.click()
    qtbot.waitUntil(first_commit.is_set, timeout=BUILD_TIMEOUT_MS)
    assert w.workspaces.is_building("Everything") and panel.search_box.isEnabled()
    qtbot.waitUntil(lambda: "meaning search covers" in panel.progress_label.text(), timeout=UI_TIMEOUT_MS)

    panel.search_box.setText("gearbox oil water contamination")
    with qtbot.waitSignal(w.workspaces.search_finished, timeout=UI_TIMEOUT_MS) as done:
        panel.search_box.returnPressed.emit()
    results = done.args[0]
    assert results.building and 0 < results.dense_coverage < 1
    assert panel.results.count() > 0 and panel.hit(0).path.endswith("IR-gearbox-failure.pdf")
    assert "searching while building: meaning search covers" in panel.results_label.text()

    release.set()
    qtbot.waitUntil(lambda: not w.workspaces.is_building("Everything")
                    and w.workspaces.row("Everything").status == "active", timeout=BUILD_TIMEOUT_MS)
    with qtbot.waitSignal(w.workspaces.search_finished, timeout=UI_TIMEOUT_MS) as done:
        panel.search_box.returnPressed.emit()
    assert not done.args[0].building and done.args[0].dense_coverage == 1.0
    assert "searching while building" not in panel.results_label.text()

"""Conditional reranking in the app's workspace search: the fused results appear at once, the
model's order replaces them in place when it answers (never on the UI thread: the model is held
back here until the test has seen the first list), each hit then says "reranked by <model>" and the
label gives the latency; a newer search drops a pending rerank."""

from __future__ import annotations

import json
import threading
from dataclasses import replace

import pytest

from spar_desktop.core.retrieval.conditional_rerank import FORMAT, VERSION
from spar_desktop.ui.workspaces.search_results import HIT_ROLE, hit_html, hit_tooltip
from tests.ui.conftest import UI_TIMEOUT_MS, build_ops_workspace

QUERY = "water contamination of the gearbox oil"


@pytest.fixture(scope="module")
def ops_settings(tmp_path_factory):
    settings = build_ops_workspace(tmp_path_factory.mktemp("rerank-ui"))
    # A calibration where no tau qualified: every search counts as unsure, so the model is always asked.
    settings.layout.rerank_calibration.write_text(json.dumps({"format": FORMAT, "version": VERSION, "tau": None}))
    return settings


@pytest.fixture
def gate():
    opened = threading.Event()
    yield opened
    opened.set()  # never leave the fake's handler thread waiting


def paths(panel) -> list[str]:
    return [panel.results.item(i).data(HIT_ROLE).path for i in range(panel.results.count())]


def open_ops(qtbot, window_on, settings):
    w = window_on(settings)
    qtbot.waitUntil(lambda: w.workspaces.current is not None and w.workspace_panel.search_box.isEnabled(),
                    timeout=UI_TIMEOUT_MS)
    return w, w.workspace_panel


def test_results_show_first_then_the_reranked_order_replaces_them(qtbot, window_on, ops_settings, fake, gate):
    def held_back(body: dict) -> str:  # the slow model: answers when the test opens the gate
        gate.wait(UI_TIMEOUT_MS / 1000)
        return '{"ranking": [3, 2, 1]}'

    fake.set(reply_fn=held_back)
    w, panel = open_ops(qtbot, window_on, replace(ops_settings, ollama_host=fake.url))
    panel.search_box.setText(QUERY)
    with qtbot.waitSignal(w.workspaces.search_finished, timeout=UI_TIMEOUT_MS):
        panel.search_box.returnPressed.emit()
    fused = paths(panel)
    assert len(fused) >= 3 and "reranked" not in panel.results_label.text()
    assert all(panel.results.item(i).data(HIT_ROLE).reranked_by is None for i in range(len(fused)))
    qtbot.waitUntil(lambda: len(fake.calls("/api/generate")) == 1, timeout=UI_TIMEOUT_MS)
    assert paths(panel) == fused and panel.reranking.running  # the model is thinking; the list is usable

    with qtbot.waitSignal(panel.reranking.replaced, timeout=UI_TIMEOUT_MS):
        gate.set()
    assert paths(panel) == [fused[2], fused[1], fused[0], *fused[3:]]  # replaced in place, same list
    top = panel.results.item(0).data(HIT_ROLE)
    assert top.rank == 1 and top.reranked_by == "llama3.2" and top.rerank_ms > 0
    assert "reranked by llama3.2" in hit_html(top, "x") and "Reranked by llama3.2" in hit_tooltip(top)
    assert "reranked by llama3.2 in" in panel.results_label.text() and " ms" in panel.results_label.text()
    assert w.workspaces.last_results.hits[0].reranked_by == "llama3.2"  # feedback refers to what is shown


def test_a_newer_search_drops_the_pending_rerank(qtbot, window_on, ops_settings, fake, gate):
    def held_back(body: dict) -> str:
        gate.wait(UI_TIMEOUT_MS / 1000)
        return '{"ranking": [3, 2, 1]}'

    fake.set(reply_fn=held_back)
    w, panel = open_ops(qtbot, window_on, replace(ops_settings, ollama_host=fake.url))
    w.workspaces.search(QUERY)
    qtbot.waitUntil(lambda: len(fake.calls("/api/generate")) == 1, timeout=UI_TIMEOUT_MS)
    replaced = []
    panel.reranking.replaced.connect(replaced.append)
    fake.set(reply="not a ranking")  # the second search's rerank falls back: its list keeps the fused order
    with qtbot.waitSignal(w.workspaces.search_finished, timeout=UI_TIMEOUT_MS):
        w.workspaces.search("blade cracks resin")
    gate.set()
    qtbot.waitUntil(lambda: len(replaced) == 1, timeout=UI_TIMEOUT_MS)
    assert replaced[0].query == "blade cracks resin" and not replaced[0].rerank.reranked
    assert "did not parse" in panel.results_label.text()
    assert all(panel.results.item(i).data(HIT_ROLE).reranked_by is None for i in range(panel.results.count()))


def test_reranking_off_or_no_server_leaves_the_fused_order(qtbot, window_on, ops_settings, fake):
    fake.set(reply='{"ranking": [3, 2, 1]}')
    w, panel = open_ops(qtbot, window_on, replace(ops_settings, ollama_host=fake.url, rerank_results=False))
    with qtbot.waitSignal(w.workspaces.search_finished, timeout=UI_TIMEOUT_MS):
        w.workspaces.search(QUERY)
    qtbot.waitUntil(w.runner.is_idle, timeout=UI_TIMEOUT_MS)
    assert not panel.reranking.running and fake.calls("/api/generate") == []
    assert "reranked" not in panel.results_label.text()

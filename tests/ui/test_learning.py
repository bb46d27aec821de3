"""Evolving keys from the app: opened search results and a rated, cited answer feed the memory
through the task runner; the workspace panel's Learning line shows the evolved keys; Reset
learning puts the original results back exactly. One workspace is built once for the module and
copied per test (each test learns on its own copy)."""

from __future__ import annotations

import shutil
from dataclasses import replace

import pytest

from spar_desktop.core.config import Settings
from spar_desktop.core.memory import ERMConfig
from tests.ui.conftest import UI_TIMEOUT_MS, build_ops_workspace

# Two successful queries close a batch, and one batch closes a round: keys evolve on the 2nd.
TWO = ERMConfig(batch_size=2, max_batches_per_round=1)
QUERY = "why did the turbine stop"


@pytest.fixture(scope="module")
def built_data(tmp_path_factory) -> Settings:
    return build_ops_workspace(tmp_path_factory.mktemp("learning-ui"))


@pytest.fixture
def learning_window(qtbot, built_data, tmp_path, window_on):
    """Factory: a MainWindow on a fresh copy of the built data, 'ops' selected, stats shown."""

    def make(host: str = "http://127.0.0.1:9"):
        data = tmp_path / "data"
        shutil.copytree(built_data.data_dir, data)
        window = window_on(replace(built_data, data_dir=data, ollama_host=host))
        window.workspaces.erm_config = TWO
        panel = window.workspace_panel
        qtbot.waitUntil(lambda: window.workspaces.current is not None and panel.learning_box.isVisible(),
                        timeout=UI_TIMEOUT_MS)
        assert panel.learning_label.text().startswith("Learning: nothing yet")
        assert not panel.reset_learning_button.isVisible()
        return window

    return make


def search(qtbot, w, query: str) -> list[tuple[int, str, float]]:
    panel = w.workspace_panel
    panel.search_box.setText(query)
    with qtbot.waitSignal(w.workspaces.search_finished, timeout=UI_TIMEOUT_MS) as done:
        panel.search_box.returnPressed.emit()
    return [(h.file_id, h.chunk_id, h.score) for h in done.args[0].hits]


def stats(w):
    return w.workspace_panel._learning


def test_opened_results_evolve_keys_and_reset_restores_the_original_results(qtbot, learning_window):
    w = learning_window()
    panel = w.workspace_panel
    original = search(qtbot, w, QUERY)
    assert original

    # Opening a result confirms its passage for the query: one waiting, keys unchanged yet.
    panel.results.itemActivated.emit(panel.results.item(0))
    qtbot.waitUntil(lambda: stats(w).pending == 1, timeout=UI_TIMEOUT_MS)
    assert panel.learning_label.text() == "Learning: 1 helpful answer so far; 1 more before results change"
    panel.results.itemActivated.emit(panel.results.item(0))  # the same hit again counts once
    assert search(qtbot, w, QUERY) == original

    # A second confirmed query closes the round: the Learning line shows evolved keys.
    search(qtbot, w, "gearbox oil contamination")
    panel.results.itemActivated.emit(panel.results.item(0))
    qtbot.waitUntil(lambda: stats(w).evolved_keys > 0, timeout=UI_TIMEOUT_MS)
    s = stats(w)
    assert s.accepted == 2 and s.pending == 0 and s.rounds >= 1
    assert panel.learning_label.text() == f"Learning: 2 helpful answers changed the ranking of {s.evolved_keys} passage" \
        + ("" if s.evolved_keys == 1 else "s")
    assert panel.reset_learning_button.isVisible() and panel.reset_learning_button.isEnabled()
    assert "learned from your feedback" in w.statusBar().currentMessage()
    assert search(qtbot, w, QUERY) != original  # the evolved keys score differently

    # Reset (no confirm dialog in a non-interactive window): the original results, exactly.
    panel.reset_learning_button.click()
    qtbot.waitUntil(lambda: stats(w).evolved_keys == 0 and stats(w).accepted == 0, timeout=UI_TIMEOUT_MS)
    assert panel.learning_label.text().startswith("Learning: nothing yet")
    assert not panel.reset_learning_button.isVisible()
    assert search(qtbot, w, QUERY) == original


def test_a_cited_answer_opened_and_rated_good_evolves_keys(qtbot, aloop, learning_window, fake):
    fake.set(reply="The bearing failed after water contamination of the gearbox oil [1].")
    w = learning_window(fake.url)
    qtbot.waitUntil(lambda: w.chat.session is not None and w.chat.server_ok is True, timeout=UI_TIMEOUT_MS)
    w.chat_features.focus_chat()  # the chat sits in the workspace view
    assert w.chat_pane.ask("Why did the gearbox bearing fail?")
    qtbot.waitUntil(lambda: not w.chat.answering, timeout=UI_TIMEOUT_MS)
    bubble = w.chat_pane.messages.bubbles[-1]
    assert bubble.message_id is not None and bubble.chip_buttons()

    # Opening the cited passage counts as success for its chunk (one waiting) ...
    bubble.chip_buttons()[0].click()
    qtbot.waitUntil(lambda: stats(w).pending == 1, timeout=UI_TIMEOUT_MS)
    # Ollama was asked for expansion units (before the workspace lock); its reply is not the JSON
    # asked for, so local feedback stood in and the feedback still counted.
    assert any("Why did the gearbox bearing fail?" in str(r.body) for r in fake.calls("/api/generate"))
    # ... and the thumbs-up confirms the answer: the round closes and keys evolve.
    bubble.up_button.click()
    qtbot.waitUntil(lambda: stats(w).evolved_keys > 0, timeout=UI_TIMEOUT_MS)
    assert stats(w).accepted == 2
    assert w.workspace_panel.learning_label.text().startswith("Learning: 2 helpful answers changed the ranking of")

    # A thumbs-down is recorded as a failure: nothing is learned, nothing crashes.
    bubble.down_button.click()
    qtbot.waitUntil(lambda: stats(w).ignored == 1, timeout=UI_TIMEOUT_MS)
    assert stats(w).accepted == 2

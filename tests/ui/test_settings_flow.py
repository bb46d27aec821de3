"""One settings flow: a saved change reaches every holder without a restart. Chat's next request
goes to the Ollama host (and model) the settings name now, whether the change came through the
settings dialog or the window's settings were replaced another way; the library (scans, builds,
tag suggestions) gets the same values. Two scripted Ollama servers on loopback tell the hosts apart."""

from __future__ import annotations

from dataclasses import replace

import pytest
from PySide6.QtWidgets import QDialogButtonBox

from spar_desktop.core.config import Settings
from tests.support.fake_ollama import FakeOllama
from tests.ui.conftest import UI_TIMEOUT_MS, build_ops_workspace

QUESTION = "Why did the gearbox bearing fail?"


@pytest.fixture(scope="module")
def ops_settings(tmp_path_factory) -> Settings:
    """A data dir holding workspace 'ops' (the Operations folder), built."""
    return build_ops_workspace(tmp_path_factory.mktemp("settings-flow"))


@pytest.fixture
def servers():
    first, second = FakeOllama().start(), FakeOllama(models=("llama3.2:latest", "qwen2.5:0.5b")).start()
    first.set(reply="From the first server [1].")
    second.set(reply="From the second server [1].")
    yield first, second
    first.stop()
    second.stop()


def ready_window(qtbot, window_on, settings: Settings):
    window = window_on(settings)
    window.chat.watch_interval = 0.2
    qtbot.waitUntil(lambda: window.chat.session is not None and window.chat.workspace is not None
                    and window.chat.server_ok is not None, timeout=UI_TIMEOUT_MS)
    window.chat_features.focus_chat()  # the chat sits in the workspace view
    return window


def ask(qtbot, window) -> str:
    assert window.chat_pane.ask(QUESTION)
    qtbot.waitUntil(lambda: not window.chat.answering, timeout=UI_TIMEOUT_MS)
    return window.chat_pane.messages.bubbles[-1].raw_text


def test_a_host_saved_in_the_dialog_serves_the_next_chat_request(qtbot, aloop, window_on, ops_settings, servers):
    first, second = servers
    window = ready_window(qtbot, window_on, replace(ops_settings, ollama_host=first.url))
    assert window.chat.server_ok and ask(qtbot, window) == "From the first server [1]."
    asked_first = len(first.calls("/api/chat"))

    dialog = window.open_settings()
    dialog.ollama_host.setText(second.url.removeprefix("http://"))  # 'host:port', as OLLAMA_HOST users write it
    dialog.ollama_model.setCurrentText("qwen2.5:0.5b")
    dialog.buttons.button(QDialogButtonBox.StandardButton.Save).click()

    # Every holder has the new server, normalised once by Settings: the window, the library that
    # scans, builds and tag suggestions read, and chat (which reads the window's).
    assert window.settings.ollama_host == second.url
    assert window.library.settings.ollama_host == second.url
    assert window.chat.settings.ollama_host == second.url
    assert f"now using Ollama at {second.url}" in window.statusBar().currentMessage()
    qtbot.waitUntil(lambda: window.chat.server_ok is True, timeout=UI_TIMEOUT_MS)  # re-checked against the new host

    assert ask(qtbot, window) == "From the second server [1]."
    sent = second.calls("/api/chat")[-1].body
    assert sent["model"] == "qwen2.5:0.5b" and QUESTION in sent["messages"][-1]["content"]
    assert len(first.calls("/api/chat")) == asked_first  # nothing more went to the old host


def test_the_next_request_follows_the_settings_even_without_a_notification(qtbot, aloop, window_on, ops_settings,
                                                                           servers):
    first, second = servers
    window = ready_window(qtbot, window_on, replace(ops_settings, ollama_host=first.url))
    window.settings = replace(window.settings, ollama_host=second.url)  # no dialog, no apply_settings call
    assert ask(qtbot, window) == "From the second server [1]."
    assert second.calls("/api/chat") and not first.calls("/api/chat")

"""The chat tab on the app's qasync loop: answers stream token by token from the scripted Ollama
server, citation chips open the viewer at the cited page, no server means a banner and a
retrieval-only answer (and the watcher switches back when a server appears), and Stop keeps the
thread usable. One real workspace (index, encoder, Chroma) is built once for the module."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from spar_desktop.core.chat.threads import ThreadStore
from spar_desktop.core.config import Settings
from tests.support.fake_ollama import FakeOllama
from tests.support.servers import free_port
from tests.ui.conftest import UI_TIMEOUT_MS, build_ops_workspace

QUESTION = "Why did the gearbox bearing fail?"


@pytest.fixture(scope="module")
def chat_settings(tmp_path_factory) -> Settings:
    """A data dir holding workspace 'ops' (the Operations folder), built."""
    return build_ops_workspace(tmp_path_factory.mktemp("chat-ui"))


@pytest.fixture
def chat_window(qtbot, aloop, chat_settings, window_on):
    """Factory: a MainWindow on the 'ops' data dir talking to ``host``, with 'ops' selected."""

    def make(host: str):
        window = window_on(replace(chat_settings, ollama_host=host))
        window.chat.watch_interval = 0.2
        qtbot.waitUntil(lambda: window.chat.session is not None and window.chat.workspace is not None
                        and window.chat.server_ok is not None, timeout=UI_TIMEOUT_MS)
        assert window.chat.workspace.name == "ops"  # the only workspace is selected: chat is scoped to it
        window.chat_features.focus_chat()  # the chat sits in the workspace view
        return window

    return make


def wait_answer(qtbot, window):
    qtbot.waitUntil(lambda: not window.chat.answering, timeout=UI_TIMEOUT_MS)
    return window.chat_pane.messages.bubbles[-1]


def test_answer_streams_token_by_token_and_a_citation_opens_the_page(qtbot, chat_window, fake):
    fake.set(reply="The bearing failed after water contamination of the gearbox oil [1]. "
                   "The blade survey is unrelated [2]. See also [9].", delay=0.04)
    w = chat_window(fake.url)
    pane = w.chat_pane
    qtbot.waitUntil(lambda: pane.model_combo.count() == 2, timeout=UI_TIMEOUT_MS)  # the fake's two models
    assert pane.model_combo.currentData() == "llama3.2:latest" and not pane.banner.isVisible()
    assert pane.send_button.isEnabled() and pane.input.isEnabled()

    shown: list[str] = []  # what the bubble displayed each time a token arrived
    w.chat.token.connect(lambda _t: shown.append(pane.current.body.text()))
    assert pane.ask(QUESTION)
    assert pane.stop_button.isVisible() and not pane.send_button.isVisible()
    bubble = wait_answer(qtbot, w)
    # The text grew on screen while the answer streamed: several different partial renderings.
    partial = {t for t in shown if "water" in t and "See also" not in t}
    assert partial and len(set(shown)) >= 3
    assert bubble.raw_text.endswith("See also [9].") and pane.tokens_seen > 10
    assert "cite:1" in bubble.body.text()  # [n] marks are links too
    assert bubble.meta.text().startswith("llama3.2") and not pane.stop_button.isVisible()
    chips = bubble.chip_buttons()
    assert [c.text().split("]")[0] for c in chips] == ["[1", "[2", "[9"]
    assert chips[0].isEnabled() and not chips[2].isEnabled()  # [9] names no passage: flagged, opens nothing
    sent = fake.calls("/api/chat")[-1].body
    assert sent["model"] == "llama3.2:latest" and QUESTION in sent["messages"][-1]["content"]

    passage = next(p for p in bubble.passages if p.n == 1)
    assert Path(passage.path).name == "IR-gearbox-failure.pdf"
    with qtbot.waitSignal(w.viewer.page_shown, timeout=UI_TIMEOUT_MS) as shown:
        chips[0].click()
    assert shown.args == [passage.page_start] and w.viewer.path == passage.path
    assert w.tabs.currentWidget() is w.viewer and w.viewer.highlight_count >= 1

    bubble.up_button.click()
    store = ThreadStore(w.library)
    qtbot.waitUntil(lambda: store.message(bubble.message_id).opened == (1,)
                    and store.message(bubble.message_id).feedback is True, timeout=UI_TIMEOUT_MS)
    assert pane.thread_list.count() >= 1 and pane.thread_list.currentItem().text() == QUESTION


def test_no_server_shows_a_banner_and_retrieval_only_answers_until_one_appears(qtbot, chat_window):
    port = free_port()
    w = chat_window(f"http://127.0.0.1:{port}")
    pane = w.chat_pane
    qtbot.waitUntil(pane.banner.isVisible, timeout=UI_TIMEOUT_MS)
    assert f"127.0.0.1:{port}" in pane.banner_label.text() and "ollama serve" in pane.banner_label.text()
    assert "retrieval only" in pane.server_label.text() and w.chat.server_ok is False

    assert pane.ask(QUESTION)
    bubble = wait_answer(qtbot, w)
    assert bubble.meta.text().startswith("retrieval only") and "IR-gearbox-failure.pdf" in bubble.raw_text
    chips = [c for c in bubble.chip_buttons() if c.isEnabled()]
    assert chips and len(chips) == len(bubble.passages)
    passage = bubble.passages[0]
    with qtbot.waitSignal(w.viewer.page_shown, timeout=UI_TIMEOUT_MS) as shown:
        chips[0].click()
    assert shown.args == [passage.page_start] and w.viewer.path == passage.path
    pane.banner.hide()
    assert pane.ask("When was the blade survey?")  # the banner is given once, not per answer
    wait_answer(qtbot, w)
    assert not pane.banner.isVisible()

    server = FakeOllama(port=port).start()  # Ollama starts: the watcher switches chat back
    try:
        server.set(reply="It was water in the oil [1].")
        qtbot.waitUntil(lambda: w.chat.server_ok is True and pane.model_combo.count() == 2, timeout=UI_TIMEOUT_MS)
        assert "connected" in pane.server_label.text()
        assert pane.ask(QUESTION)
        bubble = wait_answer(qtbot, w)
        assert bubble.raw_text == "It was water in the oil [1]." and bubble.meta.text().startswith("llama3.2")
    finally:
        server.stop()


def test_the_banner_comes_back_when_the_server_goes_away_after_an_answer(qtbot, chat_window):
    port = free_port()
    w = chat_window(f"http://127.0.0.1:{port}")
    pane = w.chat_pane
    qtbot.waitUntil(pane.banner.isVisible, timeout=UI_TIMEOUT_MS)
    w.chat.watch_interval = 3600  # the watcher sleeps: the answer alone tells that the server is up
    server = FakeOllama(port=port).start()
    try:
        server.set(reply="It was water in the oil [1].")
        assert pane.ask(QUESTION)
        bubble = wait_answer(qtbot, w)
        assert bubble.raw_text == "It was water in the oil [1]."
        assert w.chat.server_ok is True and not pane.banner.isVisible()
    finally:
        server.stop()
    w.chat.watch_interval = 0.2  # its next check finds the server gone: say so again
    qtbot.waitUntil(pane.banner.isVisible, timeout=UI_TIMEOUT_MS)
    assert w.chat.server_ok is False and "retrieval only" in pane.server_label.text()


def test_stop_mid_stream_keeps_the_partial_answer_and_the_thread_usable(qtbot, chat_window, fake):
    fake.set(reply="word " * 300, delay=0.02)
    w = chat_window(fake.url)
    pane = w.chat_pane
    qtbot.waitUntil(lambda: w.chat.server_ok is True, timeout=UI_TIMEOUT_MS)
    before = w.chat.thread_id  # the module's earlier tests left threads; the newest is selected
    pane.new_button.click()
    qtbot.waitUntil(lambda: w.chat.thread_id not in (None, before), timeout=UI_TIMEOUT_MS)
    thread_id = w.chat.thread_id
    assert pane.ask(QUESTION)
    qtbot.waitUntil(lambda: pane.tokens_seen >= 3, timeout=UI_TIMEOUT_MS)
    pane.stop_button.click()
    bubble = wait_answer(qtbot, w)
    assert "Stopped" in bubble.note.text() and 0 < len(bubble.raw_text.split()) < 300
    assert pane.send_button.isVisible() and pane.send_button.isEnabled() and pane.thread_list.isEnabled()

    fake.set(reply="It was water in the oil [1].")
    assert pane.ask("So what caused it?")
    bubble = wait_answer(qtbot, w)
    assert bubble.raw_text == "It was water in the oil [1]." and not bubble.note.isVisible()
    msgs = ThreadStore(w.library).messages(thread_id)
    assert [(m.role, m.status) for m in msgs] == [("user", "ok"), ("assistant", "stopped"),
                                                  ("user", "ok"), ("assistant", "ok")]
    # Reloading the thread shows all four messages, the stopped one marked.
    w.chat.select_thread(None)
    w.chat.select_thread(thread_id)
    qtbot.waitUntil(lambda: len(pane.messages.bubbles) == 4, timeout=UI_TIMEOUT_MS)
    assert "Stopped" in pane.messages.bubbles[1].note.text()


def test_citation_marks_become_links_but_years_and_links_do_not():
    from spar_desktop.ui.chat.view import citation_links

    assert citation_links("Oil [1], alarms [2, 3] and [4-5].") == (
        "Oil [\\[1\\]](cite:1), alarms [\\[2\\]](cite:2)[\\[3\\]](cite:3) and [\\[4\\]](cite:4)[\\[5\\]](cite:5).")
    assert citation_links("In [2023] see [docs](http://x) and [12](cite:12)") == \
        "In [2023] see [docs](http://x) and [12](cite:12)"

"""The Ollama service against the scripted server, over real HTTP with the real client."""

from __future__ import annotations

import asyncio

import pytest

from spar_desktop.core.llm.client import ChatError, ErrorKind, Ollama
from spar_desktop.core.config import load_settings
from spar_desktop.core.progress import CancelToken
from tests.support.fake_ollama import FakeOllama

MESSAGES = [{"role": "user", "content": "hello"}]


def run(coro):
    return asyncio.run(coro)


def test_models_reachability_and_a_streamed_reply(fake_ollama, fast_ollama):
    models = run(fast_ollama.list_models())
    assert [m.name for m in models] == ["llama3.2:latest", "qwen2.5:0.5b"]
    assert models[0].family == "llama" and models[0].parameter_size == "3.2B"
    assert run(fast_ollama.is_reachable())
    fake_ollama.set(reply="Oil contamination caused it [1].")
    tokens: list[str] = []
    out = run(fast_ollama.stream_chat(MESSAGES, tokens.append))
    assert len(tokens) > 3 and "".join(tokens) == out.text == "Oil contamination caused it [1]."
    assert not out.stopped and out.first_token_ms is not None and out.stats["output_tokens"] == len(tokens)
    body = fake_ollama.calls("/api/chat")[-1].body
    assert body["model"] == "llama3.2" and body["stream"] is True and body["messages"] == MESSAGES
    assert body["options"]["num_ctx"] == 8192  # Ollama's small default window would cut passages off


def test_host_and_model_come_from_settings_and_ollama_host(tmp_path, monkeypatch):
    s = load_settings(tmp_path)
    o = Ollama.from_settings(s)
    assert (o.host, o.model) == ("http://127.0.0.1:11434", "llama3.2")
    monkeypatch.setenv("OLLAMA_HOST", "0.0.0.0:12345")  # as `ollama serve` users set it
    o = Ollama.from_settings(load_settings(tmp_path), model="qwen2.5:0.5b")
    assert (o.host, o.model) == ("http://127.0.0.1:12345", "qwen2.5:0.5b")


@pytest.mark.parametrize("failure, kind, text", [
    ("model-not-found", ErrorKind.MODEL, "ollama pull llama3.2"),
    ("server-error", ErrorKind.SERVER, "HTTP 500"),
    ("stream-error", ErrorKind.SERVER, "llama runner process has terminated"),
    ("stall", ErrorKind.TIMEOUT, "sent nothing for 0.5 s"),
    ("drop", ErrorKind.DROPPED, "lost mid-answer"),
    ("malformed", ErrorKind.PROTOCOL, "cannot read"),
])
def test_each_failure_is_one_clear_error_with_the_partial_text(fake_ollama, fast_ollama, failure, kind, text):
    fake_ollama.set(reply="one two three four five", failure=failure, after=2, stall=10)
    tokens: list[str] = []
    with pytest.raises(ChatError) as info:
        run(fast_ollama.stream_chat(MESSAGES, tokens.append))
    err = info.value
    assert err.kind == kind and text in str(err) and fake_ollama.url in str(err)
    assert "Traceback" not in str(err) and "httpx" not in str(err)
    mid_stream = failure in ("stream-error", "stall", "drop", "malformed")
    assert err.partial == ("one two" if mid_stream else "") == "".join(tokens)
    # The service is still usable afterwards.
    fake_ollama.set(reply="fine")
    assert run(fast_ollama.stream_chat(MESSAGES)).text == "fine"


def test_model_not_found_lists_the_installed_models(fake_ollama):
    o = Ollama(fake_ollama.url, "mistral")
    with pytest.raises(ChatError) as info:
        run(o.stream_chat(MESSAGES))
    assert "'mistral' is not installed" in str(info.value) and "llama3.2:latest, qwen2.5:0.5b" in str(info.value)


def test_unreachable_server_both_streaming_and_not(dead_host):
    o = Ollama(dead_host, "llama3.2")
    assert run(o.is_reachable()) is False
    for call in (o.stream_chat(MESSAGES), o.generate("x"), o.list_models()):
        with pytest.raises(ChatError) as info:
            run(call)
        assert info.value.kind == ErrorKind.UNREACHABLE
        assert "ollama serve" in str(info.value) and "ollama pull llama3.2" in str(info.value) and dead_host in str(info.value)


def test_stop_ends_generation_promptly_even_while_the_stream_is_silent(fake_ollama, fast_ollama):
    fake_ollama.set(reply="word " * 200, delay=0.01)
    cancel = CancelToken()
    got: list[str] = []

    def on_token(t: str) -> None:
        got.append(t)
        if len(got) == 5:
            cancel.cancel()

    out = run(fast_ollama.stream_chat(MESSAGES, on_token, cancel))
    assert out.stopped and out.text == "".join(got) and len(got) == 5
    # A stalled stream (no token arrives) still notices Stop, well before the stall timeout.
    fake_ollama.set(reply="a b c d", failure="stall", after=1, stall=10)
    slow = Ollama(fake_ollama.url, "llama3.2", stall_timeout=30)
    cancel = CancelToken()

    async def stop_soon() -> float:
        loop = asyncio.get_running_loop()
        t0: list[float] = []

        def on_token(_: str) -> None:  # Stop is pressed 0.3 s into the silence after the first token
            t0.append(loop.time())
            loop.call_later(0.3, cancel.cancel)

        out = await slow.stream_chat(MESSAGES, on_token, cancel)
        assert out.stopped and out.text == "a"
        return loop.time() - t0[0]

    assert run(stop_soon()) < 2


def test_first_token_may_take_longer_than_the_stall_timeout(fake_ollama):
    # A model loading from disk: the first chunk is late, then tokens flow quickly.
    fake_ollama.set(reply="loaded ok", failure="stall", after=0, stall=1.0)
    o = Ollama(fake_ollama.url, "llama3.2", stall_timeout=0.5, first_token_timeout=5)
    assert run(o.stream_chat(MESSAGES)).text == "loaded ok"


def test_watch_server_reports_changes(dead_host):
    port = int(dead_host.rsplit(":", 1)[1])
    o = Ollama(dead_host, "llama3.2")
    seen: list[bool] = []
    stop = CancelToken()

    async def scenario() -> None:
        watcher = asyncio.ensure_future(o.watch_server(seen.append, interval=0.1, stop=stop))
        await asyncio.sleep(0.3)
        server = FakeOllama(port=port).start()  # Ollama comes up
        try:
            for _ in range(50):
                if seen[-1:] == [True]:
                    break
                await asyncio.sleep(0.1)
        finally:
            server.stop()
        for _ in range(50):  # ... and goes away again
            if seen[-1:] == [False]:
                break
            await asyncio.sleep(0.1)
        stop.cancel()
        await asyncio.wait_for(watcher, 2)

    run(scenario())
    assert seen == [False, True, False]


def test_generate_non_streaming(fake_ollama, fast_ollama):
    fake_ollama.set(reply='{"keywords": ["a"]}')
    assert run(fast_ollama.generate("p", json_format=True)) == '{"keywords": ["a"]}'
    body = fake_ollama.calls("/api/generate")[-1].body
    assert body["stream"] is False and body["format"] == "json" and body["prompt"] == "p"
    fake_ollama.set(failure="malformed")
    with pytest.raises(ChatError) as info:
        run(fast_ollama.generate("p"))
    assert info.value.kind == ErrorKind.PROTOCOL

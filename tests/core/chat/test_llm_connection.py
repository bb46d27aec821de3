"""The one way SPAR gets a language model: a generate callable when Ollama answers, None and a
reason a user can read when it does not — and without a server, no client is even imported."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace

from spar_desktop.core.config import Settings
from spar_desktop.core.llm.connection import listening, ollama_generator
from tests.support.fake_ollama import FakeOllama


def _closed_port_url() -> str:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


def test_a_server_that_answers_gives_a_generate_callable(tmp_path):
    fake = FakeOllama().start()
    try:
        fake.set(reply="Mechanical")
        generate, why_not = ollama_generator(replace(Settings(data_dir=tmp_path), ollama_host=fake.url))
        assert why_not is None and generate is not None
        assert generate("name these: pumps, valves") == "Mechanical"
        assert listening(fake.url)
    finally:
        fake.stop()


def test_no_server_means_none_with_the_reason_and_no_client_loaded(tmp_path):
    url = _closed_port_url()
    code = ("import sys; from spar_desktop.core.config import Settings; "
            "from spar_desktop.core.llm.connection import ollama_generator; "
            f"g, why = ollama_generator(Settings(data_dir={str(tmp_path)!r}, ollama_host={url!r})); "
            "print(g is None, why, 'ollama' in sys.modules, 'httpx' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True).stdout
    assert out.split() == ["True", "no", "Ollama", "server", "at", url, "False", "False"]

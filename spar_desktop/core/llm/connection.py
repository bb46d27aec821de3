"""The one place the rest of SPAR gets a language model from: ``ollama_generator(settings)`` gives
a plain synchronous ``generate(prompt) -> reply`` when the configured Ollama server answers, or
None and the reason (shown to the user) when it does not. Tagging, workspaces, retrieval and the
CLI/UI take that callable, so only this package knows about the Ollama client.
"""

from __future__ import annotations

from typing import Callable, Optional

from spar_desktop.core.config import Settings
from spar_desktop.core.llm.client import Ollama
from spar_desktop.core.llm.helpers import run_sync

Generate = Callable[[str], str]


def ollama_generator(settings: Settings, json_format: bool = False,
                     timeout: Optional[float] = None) -> tuple[Optional[Generate], Optional[str]]:
    """(generate, None) when the settings' Ollama server answers, else (None, why not).
    ``timeout`` bounds each whole reply (seconds; the client's default otherwise)."""
    kw = {} if timeout is None else {"request_timeout": timeout}
    ollama = Ollama.from_settings(settings, **kw)
    try:
        reachable = run_sync(ollama.is_reachable())
    except Exception:  # noqa: BLE001 - any failure means "not reachable" here
        reachable = False
    if not reachable:
        return None, f"no Ollama server at {settings.ollama_host}"
    return (lambda prompt: run_sync(ollama.generate(prompt, json_format=json_format,
                                                   options={"temperature": 0}))), None

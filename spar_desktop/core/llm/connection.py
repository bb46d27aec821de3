"""The one place the rest of SPAR gets a language model from: ``ollama_generator(settings)`` gives
a plain synchronous ``generate(prompt) -> reply`` when the configured Ollama server answers, or
None and the reason (shown to the user) when it does not. Tagging, workspaces, retrieval and the
CLI/UI take that callable, so only this package knows about the Ollama client.

``listening(url)`` is the cheap first look (a bare TCP connect): without a server a caller pays
~0.1 ms instead of importing the client (ollama, httpx, pydantic: ~0.4 s) to hear "refused".
This module imports the client only once something listens.
"""

from __future__ import annotations

import socket
from typing import Any, Callable, Optional
from urllib.parse import urlparse

from spar_desktop.core.config import Settings

Generate = Callable[[str], str]
PROBE_TIMEOUT_S = 0.25  # a refused connection answers at once; a silent host gets this long


def listening(url: str, timeout: float = PROBE_TIMEOUT_S) -> bool:
    """Whether anything accepts connections at ``url``'s host and port."""
    u = urlparse(url)
    try:
        port = u.port or (443 if u.scheme == "https" else 80)
        socket.create_connection((u.hostname or "127.0.0.1", port), timeout).close()
        return True
    except (OSError, ValueError):
        return False


def reachable_ollama(settings: Settings, timeout: Optional[float] = None) -> tuple[Optional[Any], Optional[str]]:
    """(the settings' Ollama client, None) when its server answers, else (None, why not).
    ``timeout`` bounds each whole reply (seconds; the client's default otherwise)."""
    not_there = f"no Ollama server at {settings.ollama_host}"
    if not listening(settings.ollama_host):
        return None, not_there
    from spar_desktop.core.llm.client import Ollama  # deferred: see the module docstring
    from spar_desktop.core.llm.helpers import run_sync

    ollama = Ollama.from_settings(settings, **({} if timeout is None else {"request_timeout": timeout}))
    try:
        reachable = run_sync(ollama.is_reachable())
    except Exception:  # noqa: BLE001 - any failure means "not reachable" here
        reachable = False
    return (ollama, None) if reachable else (None, not_there)


def ollama_generator(settings: Settings, json_format: bool = False,
                     timeout: Optional[float] = None) -> tuple[Optional[Generate], Optional[str]]:
    """(generate, None) when the settings' Ollama server answers, else (None, why not)."""
    ollama, why_not = reachable_ollama(settings, timeout)
    if ollama is None:
        return None, why_not
    from spar_desktop.core.llm.helpers import run_sync

    return (lambda prompt: run_sync(ollama.generate(prompt, json_format=json_format,
                                                   options={"temperature": 0}))), None

"""The Ollama service behind chat and the LLM helpers: the official ``ollama.AsyncClient`` with
our timeouts, reachability, the local model list, token streaming with stop and stall detection,
and one error type whose message a user can act on.

Why our own stall timer instead of httpx's read timeout alone: the first token may legitimately
take minutes (the model is loading), later tokens should not; and a stalled stream must still
notice the user's Stop within a fraction of a second.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import logging
import ssl
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

import httpx
import ollama
from pydantic import ValidationError

from spar_desktop.core.config import DEFAULT_OLLAMA_HOST, DEFAULT_OLLAMA_MODEL, Settings
from spar_desktop.core.progress import CancelToken

log = logging.getLogger(__name__)

CONNECT_TIMEOUT = 3.0  # a local server answers in milliseconds; a remote one in well under 3 s
STALL_TIMEOUT = 60.0  # longest silence between two streamed chunks
FIRST_TOKEN_TIMEOUT = 300.0  # loading a large model from disk can take minutes
REQUEST_TIMEOUT = 120.0  # non-streaming calls (helpers): whole response
CONTEXT_TOKENS = 8192  # Ollama's default window (2-4k) would silently cut the passages off
_POLL = 0.05  # how often a waiting stream looks at the Stop flag


@functools.lru_cache(maxsize=1)
def _tls_context() -> ssl.SSLContext:
    """One verifying TLS context per process: httpx builds a new one (reading the whole CA bundle,
    ~0.3 s) for every client otherwise, and each call opens a client. Kept verifying because an
    http:// host may redirect to https://."""
    import certifi

    return ssl.create_default_context(cafile=certifi.where())


class ErrorKind:
    UNREACHABLE = "unreachable"  # nothing listening / connect timeout: retrieval-only mode
    MODEL = "model"  # the model is not installed
    SERVER = "server"  # HTTP 5xx or an error object inside the stream
    TIMEOUT = "timeout"  # the stream stalled
    DROPPED = "dropped"  # the connection closed mid-answer
    PROTOCOL = "protocol"  # a line that is not the JSON we expect


class ChatError(Exception):
    """A failure talking to Ollama; ``str()`` is the message for the user, ``partial`` the text
    streamed before it happened."""

    def __init__(self, message: str, kind: str, partial: str = "") -> None:
        super().__init__(message)
        self.kind = kind
        self.partial = partial


@dataclass(frozen=True)
class ModelInfo:
    name: str
    size: Optional[int] = None
    family: Optional[str] = None
    parameter_size: Optional[str] = None
    quantization: Optional[str] = None


@dataclass(frozen=True)
class StreamOutcome:
    text: str
    stopped: bool
    model: str
    first_token_ms: Optional[float]
    total_ms: float
    stats: dict = field(default_factory=dict)  # prompt/output tokens, load and eval ms


def start_hint(host: str, model: str) -> str:
    return (f"Ollama is not reachable at {host}. Start it with `ollama serve` (and `ollama pull {model}` "
            f"once), or set OLLAMA_HOST to where it runs. Answers are retrieval-only until then.")


class Ollama:
    """Host, model and timeouts; each call opens a short-lived AsyncClient so the service can be
    used from any event loop (qasync's, ``asyncio.run`` in the CLI, a helper thread's)."""

    def __init__(self, host: Optional[str] = None, model: Optional[str] = None, *,
                 connect_timeout: float = CONNECT_TIMEOUT, stall_timeout: float = STALL_TIMEOUT,
                 first_token_timeout: float = FIRST_TOKEN_TIMEOUT, request_timeout: float = REQUEST_TIMEOUT,
                 context_tokens: Optional[int] = CONTEXT_TOKENS) -> None:
        # A URL: Settings normalised it ('host[:port]' as OLLAMA_HOST users write it → http://host:port).
        self.host = (host or DEFAULT_OLLAMA_HOST).strip().rstrip("/")
        self.model = model or DEFAULT_OLLAMA_MODEL
        self.connect_timeout = connect_timeout
        self.stall_timeout = stall_timeout
        self.first_token_timeout = first_token_timeout
        self.request_timeout = request_timeout
        self.context_tokens = context_tokens

    @classmethod
    def from_settings(cls, settings: Optional[Settings], model: Optional[str] = None, **kw: Any) -> "Ollama":
        """Settings already applied OLLAMA_HOST (config.load_settings); ``model`` is e.g. --model."""
        if settings is None:
            return cls(model=model, **kw)
        return cls(settings.ollama_host, model or settings.ollama_model, **kw)

    @property
    def start_hint(self) -> str:
        return start_hint(self.host, self.model)

    def _client(self, read: Optional[float]) -> ollama.AsyncClient:
        timeout = httpx.Timeout(connect=self.connect_timeout, read=read, write=30.0, pool=self.connect_timeout)
        return ollama.AsyncClient(host=self.host, timeout=timeout, verify=_tls_context())

    # -- server ---------------------------------------------------------------------------
    async def list_models(self) -> list[ModelInfo]:
        async with self._client(read=10.0) as c:
            try:
                resp = await c.list()
            except Exception as exc:
                raise self.describe(exc) from None
        out = []
        for m in resp.models:
            d = m.details
            out.append(ModelInfo(m.model or "", int(m.size) if m.size is not None else None,
                                 d.family if d else None, d.parameter_size if d else None,
                                 d.quantization_level if d else None))
        return sorted(out, key=lambda x: x.name)

    async def is_reachable(self) -> bool:
        """Cheap check (GET /api/tags with the short connect timeout) the UI can poll."""
        try:
            await self.list_models()
            return True
        except ChatError:
            return False

    async def watch_server(self, on_change: Callable[[bool], Any], interval: float = 15.0,
                           stop: Optional[CancelToken] = None) -> None:
        """Re-check the server every ``interval`` s; call ``on_change(reachable)`` at the start and
        on every change, until ``stop`` is set or the task is cancelled."""
        last: Optional[bool] = None
        while not (stop and stop.cancelled):
            ok = await self.is_reachable()
            if ok != last:
                last = ok
                result = on_change(ok)
                if inspect.isawaitable(result):
                    await result
            waited = 0.0
            while waited < interval and not (stop and stop.cancelled):
                await asyncio.sleep(min(0.1, interval))
                waited += 0.1

    async def _installed_note(self) -> str:
        try:
            names = [m.name for m in await self.list_models()]
        except ChatError:
            return ""
        return f" Installed: {', '.join(names)}." if names else " No model is installed yet."

    # -- errors ---------------------------------------------------------------------------
    def describe(self, exc: BaseException, partial: str = "", model: Optional[str] = None) -> ChatError:
        """Any exception from the client or httpx → ChatError with a message that says what to do.
        Non-streaming calls raise ConnectionError for a refused connection; streaming calls raise
        httpx's errors directly: both land here."""
        model = model or self.model
        if isinstance(exc, ChatError):
            return exc
        if isinstance(exc, ollama.ResponseError):
            detail = str(exc.error).strip()
            if exc.status_code == 404 and "model" in detail.lower():
                return ChatError(f"The model '{model}' is not installed on {self.host}: run `ollama pull {model}` "
                                 f"or pick another model.", ErrorKind.MODEL, partial)
            where = f"HTTP {exc.status_code}" if exc.status_code and exc.status_code > 0 else "during the answer"
            return ChatError(f"Ollama at {self.host} reported an error ({where}): {detail}", ErrorKind.SERVER, partial)
        if isinstance(exc, (ConnectionError, httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)):
            return ChatError(self.start_hint, ErrorKind.UNREACHABLE, partial)
        if isinstance(exc, (httpx.ReadTimeout, TimeoutError, asyncio.TimeoutError)):
            return ChatError(f"Ollama at {self.host} stopped responding (no output for a while); "
                             f"it may be overloaded. Try again.", ErrorKind.TIMEOUT, partial)
        if isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError, httpx.NetworkError)):
            return ChatError(f"The connection to Ollama at {self.host} was lost mid-answer "
                             f"(did the server stop?). Try again.", ErrorKind.DROPPED, partial)
        if isinstance(exc, (json.JSONDecodeError, ValidationError, ValueError, KeyError, TypeError)):
            return ChatError(f"Ollama at {self.host} sent a response this app cannot read "
                             f"({type(exc).__name__}). Is OLLAMA_HOST really an Ollama server?",
                             ErrorKind.PROTOCOL, partial)
        if isinstance(exc, httpx.HTTPError):
            return ChatError(f"Network error talking to Ollama at {self.host}: {exc}", ErrorKind.DROPPED, partial)
        return ChatError(f"Unexpected error from Ollama at {self.host}: {type(exc).__name__}: {exc}",
                         ErrorKind.SERVER, partial)

    # -- streaming chat -----------------------------------------------------------------------
    async def stream_chat(self, messages: Sequence[dict], on_token: Optional[Callable[[str], Any]] = None,
                          cancel: Optional[CancelToken] = None, model: Optional[str] = None,
                          options: Optional[dict] = None) -> StreamOutcome:
        """Stream an answer, calling ``on_token(delta)`` for each piece of text.

        Returns when done or stopped (``cancel`` set: the partial text is returned, ``stopped``
        True). Raises ChatError (``partial`` = text so far) on any failure, including a stall.
        """
        model = model or self.model
        opts = dict(options or {})
        if self.context_tokens and "num_ctx" not in opts:
            opts["num_ctx"] = self.context_tokens
        t0 = time.perf_counter()
        parts: list[str] = []
        first: Optional[float] = None
        stats: dict = {}
        stopped = False
        # read=None: our own per-chunk timer below (first token vs. later tokens) is the limit.
        async with self._client(read=None) as c:
            stream = None
            pending: Optional[asyncio.Task] = None
            try:
                stream = await c.chat(model=model, messages=list(messages), stream=True, options=opts or None)
                it = stream.__aiter__()
                while True:
                    pending = asyncio.ensure_future(it.__anext__())
                    limit = self.first_token_timeout if first is None else self.stall_timeout
                    started = time.perf_counter()
                    while not pending.done():
                        await asyncio.wait({pending}, timeout=_POLL)
                        if pending.done():
                            break
                        if cancel is not None and cancel.cancelled:
                            stopped = True
                            break
                        if time.perf_counter() - started > limit:
                            raise ChatError(f"Ollama at {self.host} sent nothing for {limit:g} s; it may be "
                                            f"overloaded or stuck. Try again.", ErrorKind.TIMEOUT)
                    if stopped:
                        break
                    try:
                        part = pending.result()
                    except StopAsyncIteration:
                        break
                    finally:
                        pending = None
                    delta = (part.message.content or "") if part.message else ""
                    if delta:
                        if first is None:
                            first = (time.perf_counter() - t0) * 1000
                        parts.append(delta)
                        if on_token is not None:
                            on_token(delta)
                    if part.done:
                        stats = _stats(part)
                        break
                    if cancel is not None and cancel.cancelled:
                        stopped = True
                        break
            except ChatError as exc:
                exc.partial = "".join(parts)
                raise
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                err = self.describe(exc, "".join(parts), model)
                if err.kind == ErrorKind.MODEL:
                    err = ChatError(str(err) + await self._installed_note(), err.kind, err.partial)
                raise err from None
            finally:
                if pending is not None and not pending.done():
                    pending.cancel()  # closes the HTTP response: Ollama stops generating
                    await asyncio.gather(pending, return_exceptions=True)
                if stream is not None:
                    try:
                        await stream.aclose()
                    except Exception:  # already closed by the cancellation above
                        pass
        return StreamOutcome("".join(parts), stopped, model, first, (time.perf_counter() - t0) * 1000, stats)

    # -- one-shot completions (helpers) ---------------------------------------------------------
    async def generate(self, prompt: str, *, system: Optional[str] = None, json_format: bool = False,
                       model: Optional[str] = None, options: Optional[dict] = None) -> str:
        """Non-streaming /api/generate; raises ChatError."""
        model = model or self.model
        async with self._client(read=self.request_timeout) as c:
            try:
                resp = await asyncio.wait_for(
                    c.generate(model=model, prompt=prompt, system=system, stream=False,
                               format="json" if json_format else None, options=options),
                    self.request_timeout + self.connect_timeout)
            except Exception as exc:
                raise self.describe(exc, model=model) from None
        return resp.response or ""


def _stats(part: Any) -> dict:
    ns = 1e-6
    out = {"prompt_tokens": part.prompt_eval_count, "output_tokens": part.eval_count,
           "load_ms": part.load_duration * ns if part.load_duration else None,
           "eval_ms": part.eval_duration * ns if part.eval_duration else None,
           "server_total_ms": part.total_duration * ns if part.total_duration else None,
           "done_reason": part.done_reason}
    return {k: v for k, v in out.items() if v is not None}

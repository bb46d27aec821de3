"""A scripted Ollama server on loopback, speaking the subset of the API the app uses, so the real
``ollama`` client (and httpx under it) is exercised over real HTTP without an Ollama binary.

Endpoints: GET /api/version, GET /api/tags, POST /api/show, POST /api/chat and /api/generate
(streaming NDJSON over chunked transfer encoding, as Ollama sends it, or one JSON object when
``"stream": false``). Unknown models get Ollama's 404 error object.

Scripts (``Script``) set the reply text, its chunks, the delay between chunks and a failure mode:
  model-not-found  404 {"error": "model \"x\" not found, try pulling it first"}
  server-error     500 {"error": "llama runner process has terminated: ..."}
  stall            ``after`` chunks, then silence for ``stall`` seconds (released on stop())
  drop             ``after`` chunks, then the socket is closed mid-body
  malformed        ``after`` chunks, then a line that is not JSON
  stream-error     ``after`` chunks, then {"error": ...} inside the stream (HTTP 200)
``push(...)`` queues one-shot scripts consumed by the next chat/generate requests in order;
``set(...)`` changes the default. Every request is recorded in ``requests``.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Iterator, Optional

FAILURES = ("model-not-found", "server-error", "stall", "drop", "malformed", "stream-error")
DEFAULT_MODELS = ("llama3.2:latest", "qwen2.5:0.5b")


@dataclass
class Script:
    reply: str = "The answer is in the first passage [1]."
    chunks: Optional[list[str]] = None  # None: the reply split into word-sized tokens
    delay: float = 0.0  # seconds between chunks
    failure: Optional[str] = None
    after: int = 2  # chunks sent before a mid-stream failure
    stall: float = 30.0
    error: str = "llama runner process has terminated: exit status 2"
    reply_fn: Optional[Callable[[dict], str]] = None  # computes the reply from the request body

    def tokens(self, body: dict) -> list[str]:
        if self.chunks is not None:
            return list(self.chunks)
        text = self.reply_fn(body) if self.reply_fn else self.reply
        return re.findall(r"\s*\S+", text) or [""]


@dataclass
class Recorded:
    method: str
    path: str
    body: Any
    headers: dict = field(default_factory=dict)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")


class FakeOllama:
    def __init__(self, models: tuple[str, ...] = DEFAULT_MODELS, port: int = 0, version: str = "0.6.5") -> None:
        self.models = list(models)
        self.version = version
        self.script = Script()
        self.queue: list[Script] = []
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", port), self._handler_class())
        self._server.daemon_threads = True
        self._server.block_on_close = False
        self._thread: Optional[threading.Thread] = None

    # -- control ------------------------------------------------------------------------------
    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> "FakeOllama":
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()  # releases stalled streams
        self._server.shutdown()
        self._server.server_close()

    def set(self, **kw: Any) -> Script:
        self.script = replace(Script(), **kw)
        return self.script

    def push(self, **kw: Any) -> Script:
        s = replace(Script(), **kw)
        with self._lock:
            self.queue.append(s)
        return s

    def calls(self, path: str) -> list[Recorded]:
        return [r for r in self.requests if r.path == path]

    def _next_script(self) -> Script:
        with self._lock:
            return self.queue.pop(0) if self.queue else self.script

    def has_model(self, name: str) -> bool:
        return name in self.models or f"{name}:latest" in self.models

    # -- HTTP ---------------------------------------------------------------------------------
    def _handler_class(self) -> type:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # chunked streaming, like Ollama's Go server
            disable_nagle_algorithm = True  # each token leaves at once (no 200 ms delayed-ACK stalls)

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def _json(self, status: int, obj: Any) -> None:
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _chunk(self, data: bytes) -> None:
                self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()

            def _body(self) -> Any:
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n) if n else b""
                try:
                    return json.loads(raw) if raw else {}
                except json.JSONDecodeError:
                    return raw.decode("utf-8", "replace")

            def do_GET(self) -> None:
                fake.requests.append(Recorded("GET", self.path, None, dict(self.headers)))
                if self.path == "/api/version":
                    return self._json(200, {"version": fake.version})
                if self.path == "/api/tags":
                    return self._json(200, {"models": [_model_entry(m) for m in fake.models]})
                self._not_found()

            def do_HEAD(self) -> None:
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def _not_found(self) -> None:
                data = b"404 page not found"
                self.send_response(404)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                body = self._body()
                fake.requests.append(Recorded("POST", self.path, body, dict(self.headers)))
                if self.path not in ("/api/chat", "/api/generate", "/api/show"):
                    return self._not_found()
                model = body.get("model", "") if isinstance(body, dict) else ""
                if self.path == "/api/show":
                    if not fake.has_model(model):
                        return self._json(404, {"error": f"model '{model}' not found"})
                    return self._json(200, _show_entry(model))
                script = fake._next_script()
                if script.failure == "model-not-found" or not fake.has_model(model):
                    return self._json(404, {"error": f'model "{model}" not found, try pulling it first'})
                if script.failure == "server-error":
                    return self._json(500, {"error": script.error})
                try:
                    if body.get("stream", True):
                        self._stream(script, body, model)
                    else:
                        self._whole(script, body, model)
                except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, OSError):
                    self.close_connection = True  # the client went away (stop, timeout): fine

            def _part(self, chat: bool, model: str, text: str) -> dict:
                if chat:
                    return {"model": model, "created_at": _now(), "message": {"role": "assistant", "content": text},
                            "done": False}
                return {"model": model, "created_at": _now(), "response": text, "done": False}

            def _final(self, chat: bool, model: str, n_tokens: int, body: dict) -> dict:
                d = self._part(chat, model, "")
                prompt = json.dumps(body.get("messages") or body.get("prompt") or "")
                d.update(done=True, done_reason="stop", total_duration=123_000_000, load_duration=4_000_000,
                         prompt_eval_count=len(prompt) // 4, prompt_eval_duration=20_000_000,
                         eval_count=n_tokens, eval_duration=90_000_000)
                return d

            def _whole(self, script: Script, body: dict, model: str) -> None:
                chat = self.path == "/api/chat"
                tokens = script.tokens(body)
                if script.delay:
                    time.sleep(script.delay)
                if script.failure == "stall":
                    fake._stop.wait(script.stall)
                d = self._final(chat, model, len(tokens), body)
                if chat:
                    d["message"]["content"] = "".join(tokens)
                else:
                    d["response"] = "".join(tokens)
                if script.failure == "malformed":
                    data = b'{"model": "x", "response": '
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                self._json(200, d)

            def _stream(self, script: Script, body: dict, model: str) -> None:
                chat = self.path == "/api/chat"
                tokens = script.tokens(body)
                self.send_response(200)
                self.send_header("Content-Type", "application/x-ndjson")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for i, tok in enumerate(tokens):
                    if script.failure in ("stall", "drop", "malformed", "stream-error") and i == script.after:
                        if script.failure == "stall":
                            fake._stop.wait(script.stall)
                        elif script.failure == "drop":
                            self.wfile.flush()
                            self.connection.shutdown(socket.SHUT_RDWR)
                            self.close_connection = True
                            return
                        elif script.failure == "malformed":
                            self._chunk(b'{"model": "broken", "message": {"role": \n')
                            self._chunk(b"\n")
                        elif script.failure == "stream-error":
                            self._chunk(json.dumps({"error": script.error}).encode() + b"\n")
                            self.wfile.write(b"0\r\n\r\n")
                            return
                    if script.delay:
                        if fake._stop.wait(script.delay):
                            return
                    self._chunk(json.dumps(self._part(chat, model, tok)).encode() + b"\n")
                self._chunk(json.dumps(self._final(chat, model, len(tokens), body)).encode() + b"\n")
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()

        return Handler


def _model_entry(name: str) -> dict:
    family = name.split(":")[0].rstrip("0123456789.") or name
    return {"name": name, "model": name, "modified_at": "2025-01-15T10:00:00.000000+00:00", "size": 2_019_393_189,
            "digest": "a80c4f17acd55265feec403c7aef86be0c25983ab279d83f3bcd3abbcb5b8b72",
            "details": {"parent_model": "", "format": "gguf", "family": family, "families": [family],
                        "parameter_size": "3.2B", "quantization_level": "Q4_K_M"}}


def _show_entry(name: str) -> dict:
    return {"modelfile": f"FROM {name}\n", "parameters": "stop \"<|eot_id|>\"", "template": "{{ .Prompt }}",
            "details": _model_entry(name)["details"], "model_info": {"general.architecture": "llama",
                                                                      "llama.context_length": 131072},
            "capabilities": ["completion"], "modified_at": "2025-01-15T10:00:00.000000+00:00"}


@contextmanager
def fake_ollama_server(**kw: Any) -> Iterator[FakeOllama]:
    server = FakeOllama(**kw).start()
    try:
        yield server
    finally:
        server.stop()

"""Chroma's PersistentClient hosted in a helper process that the app owns.

In-process Chroma (1.x: a Rust core behind PyO3) holds the GIL for the whole of every call. On
this 2-core machine an upsert of 64 vectors held it for 35-120 ms, growing with the collection
(``benchmarks/chroma_gil.py``: a thread that wakes every millisecond waits exactly as long as each
call). Any Python on the UI thread (every slot, every item-model call) waits for it, so a
workspace build froze the window. Smaller batches do not help: a call still costs about 6 ms, a
build's writes took 4x longer at 8 vectors a call, and single calls of 0.2-0.9 s remained. In a
child process the same PersistentClient, on the same files, holds its own GIL; this process
only pickles arrays through a pipe (other threads waited 2-6 ms per call instead).

The desktop app uses the helper (``Settings.chroma_process``). The CLI and the library keep
Chroma in-process, so a one-shot command starts no second process. ``ChromaHostClient`` and
``HostedCollection`` implement the part of chromadb's client and collection API that SPAR
calls. Chroma's own errors come back as ``ChromaHostError``, with the original type's name.
"""

from __future__ import annotations

import atexit
import logging
import os
import pickle
import subprocess
import sys
import threading
import weakref
from pathlib import Path
from typing import Any, Optional

from spar_desktop.core.helper_process import helper_command, helper_env, receive, send

log = logging.getLogger(__name__)

START_TIMEOUT_S = 120.0  # a cold start imports chromadb (1-2 s; far longer on a loaded machine)
STOP_TIMEOUT_S = 10.0


class ChromaHostError(RuntimeError):
    """A call failed in the helper process, or the helper is gone."""

    def __init__(self, message: str, type_name: str = "") -> None:
        super().__init__(message)
        self.type_name = type_name


class ChromaHostClient:
    """A client whose Chroma runs in a child process; safe to share between threads (calls are
    serialised, as Chroma serialises writes anyway)."""

    def __init__(self, path: str | Path, start_timeout: float = START_TIMEOUT_S) -> None:
        self.path = str(path)
        self._start_timeout = start_timeout
        self._lock = threading.Lock()
        self._process: Optional[subprocess.Popen] = None
        self._closed = False
        self._start()
        # Stop the helper before the interpreter exits, so Chroma closes its files itself.
        atexit.register(_shutdown_ref, weakref.ref(self))

    # -- process lifecycle ---------------------------------------------------------------------
    def _start(self) -> None:
        # A plain child interpreter on pipes (helper_process.py says why not multiprocessing).
        env = helper_env(ANONYMIZED_TELEMETRY="False")
        flags = getattr(subprocess, "CREATE_NO_WINDOW", 0)  # Windows: no console window
        process = subprocess.Popen(helper_command(__name__, self.path), stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, env=env, creationflags=flags)
        self._process = process
        watchdog = threading.Timer(self._start_timeout, process.kill)  # a hung start ends in EOF below
        watchdog.daemon = True
        watchdog.start()
        try:
            self._reply()
        finally:
            watchdog.cancel()
        log.info("vector store process %s serves %s", process.pid, self.path)

    @property
    def pid(self) -> Optional[int]:
        return self._process.pid if self._process is not None else None

    def is_alive(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def shutdown(self) -> None:
        """Stop the helper after its current call (Chroma flushes and closes its files)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            process = self._process
            if process is None:
                return
            try:
                if process.poll() is None:
                    send(process.stdin, ("shutdown", (), {}))
                process.stdin.close()  # EOF: the helper stops even if it missed the message
            except (OSError, ValueError):
                pass
            try:
                process.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                log.warning("vector store process %s did not stop; killing it", process.pid)
                process.kill()
                process.wait()
            process.stdout.close()

    # -- calls ---------------------------------------------------------------------------------
    def _call(self, op: str, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            if self._closed:
                raise ChromaHostError("the vector store was closed")
            assert self._process is not None
            if self._process.poll() is not None:
                # A crash in Chroma's native code ends only the helper: start it again (the call
                # that met the crash has already reported it).
                log.warning("vector store process exited (code %s); starting it again", self._process.returncode)
                self._start()
            try:
                send(self._process.stdin, (op, args, kwargs))
            except (OSError, ValueError) as exc:
                self._process.wait(STOP_TIMEOUT_S)
                raise ChromaHostError(f"cannot reach the vector store process: {exc}") from exc
            return self._reply()

    def _reply(self) -> Any:
        assert self._process is not None
        try:
            status, *payload = receive(self._process.stdout)
        except (EOFError, OSError, pickle.UnpicklingError) as exc:
            self._process.kill()
            code = self._process.wait()
            raise ChromaHostError(
                f"the vector store process stopped unexpectedly (exit code {code}); it restarts on the next use"
            ) from exc
        if status == "ok":
            return payload[0]
        type_name, message = payload
        raise ChromaHostError(f"{type_name}: {message}", type_name)

    # -- the chromadb client API SPAR uses -----------------------------------------------------
    def heartbeat(self) -> int:
        return self._call("heartbeat")

    def list_collections(self) -> list[str]:
        return self._call("list_collections")

    def get_max_batch_size(self) -> int:
        return self._call("get_max_batch_size")

    def get_or_create_collection(self, name: str, embedding_function: Any = None,
                                 metadata: Optional[dict] = None, configuration: Optional[dict] = None) -> "HostedCollection":
        _no_embedding_function(embedding_function)
        return HostedCollection(self, *self._call("get_or_create_collection", name, metadata, configuration))

    def get_collection(self, name: str, embedding_function: Any = None) -> "HostedCollection":
        _no_embedding_function(embedding_function)
        return HostedCollection(self, *self._call("get_collection", name))

    def delete_collection(self, name: str) -> None:
        self._call("delete_collection", name)


class HostedCollection:
    """A collection in the helper process, by name (the helper keeps the live handle)."""

    def __init__(self, client: ChromaHostClient, name: str, metadata: Optional[dict]) -> None:
        self._client = client
        self.name = name
        self.metadata = metadata

    def count(self) -> int:
        return self._client._call("count", self.name)

    def get(self, **kwargs: Any) -> dict:
        return self._client._call("get", self.name, **kwargs)

    def upsert(self, **kwargs: Any) -> None:
        self._client._call("upsert", self.name, **kwargs)

    def delete(self, **kwargs: Any) -> None:
        self._client._call("delete", self.name, **kwargs)

    def query(self, **kwargs: Any) -> dict:
        return self._client._call("query", self.name, **kwargs)


def _no_embedding_function(embedding_function: Any) -> None:
    # SPAR always passes its own vectors; Chroma's default function would download a model.
    if embedding_function is not None:
        raise ValueError("the hosted vector store takes vectors, not an embedding function")


def _shutdown_ref(ref: "weakref.ref[ChromaHostClient]") -> None:
    client = ref()
    if client is not None:
        client.shutdown()


# -- the helper process ------------------------------------------------------------------------
def _serve(path: str) -> int:
    """Run in the child: open the PersistentClient and answer calls until told to stop or until
    stdin ends (the app exited or was killed: do not outlive it)."""
    channel_in = sys.stdin.buffer
    channel_out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # stray prints, even from native code, go to stderr
    try:
        import chromadb  # the helper process's one job: chromadb is imported here, never in the app
        from chromadb.config import Settings as ChromaSettings

        client = chromadb.PersistentClient(path=path, settings=ChromaSettings(anonymized_telemetry=False))
    except Exception as exc:  # noqa: BLE001 - a damaged store: the app sets it aside and retries
        send(channel_out, ("error", type(exc).__name__, str(exc)))
        return 1
    send(channel_out, ("ok", os.getpid()))
    handler = _Handler(client)
    while True:
        try:
            op, args, kwargs = receive(channel_in)
        except (EOFError, OSError):
            return 0
        if op == "shutdown":
            send(channel_out, ("ok", None))
            return 0
        try:
            reply = ("ok", handler.handle(op, args, kwargs))
        except Exception as exc:  # noqa: BLE001 - every Chroma error goes back to the caller
            reply = ("error", type(exc).__name__, str(exc))
        try:
            send(channel_out, reply)
        except (OSError, ValueError):
            return 0


class _Handler:
    def __init__(self, client: Any) -> None:
        self.client = client
        self.collections: dict[str, Any] = {}

    def collection(self, name: str) -> Any:
        col = self.collections.get(name)
        if col is None:
            col = self.collections[name] = self.client.get_collection(name, embedding_function=None)
        return col

    def handle(self, op: str, args: tuple, kwargs: dict) -> Any:
        if op == "heartbeat":
            return self.client.heartbeat()
        if op == "list_collections":
            return [c.name for c in self.client.list_collections()]
        if op == "get_max_batch_size":
            return self.client.get_max_batch_size()
        if op in ("get_or_create_collection", "get_collection"):
            name = args[0]
            if op == "get_collection":
                col = self.client.get_collection(name, embedding_function=None)
            else:
                metadata, configuration = args[1], args[2]
                col = self.client.get_or_create_collection(name, embedding_function=None, metadata=metadata,
                                                           configuration=configuration)
            self.collections[name] = col
            return col.name, col.metadata
        if op == "delete_collection":
            self.collections.pop(args[0], None)
            return self.client.delete_collection(args[0])
        if op in ("count", "get", "upsert", "delete", "query"):
            result = getattr(self.collection(args[0]), op)(**kwargs)
            return dict(result) if isinstance(result, dict) else result
        raise ValueError(f"unknown vector store call '{op}'")


if __name__ == "__main__":
    sys.exit(_serve(sys.argv[1]))

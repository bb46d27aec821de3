"""Chroma hosted in a helper process (the desktop app's vector store): the same answers as
in-process Chroma, and a helper that never outlives the app or takes it down when it crashes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import replace

import numpy as np
import pytest

from spar_desktop.core.config import Settings, load_settings
from spar_desktop.core.retrieval.chroma_host import ChromaHostClient, ChromaHostError
from spar_desktop.core.retrieval.vector_store import ChromaCollection, make_chroma_client
from tests.core.retrieval.test_vector_store import unit_vectors


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (exited, not yet reaped) counts as gone
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True


@pytest.fixture
def host(tmp_path):
    client = ChromaHostClient(tmp_path / "chroma")
    yield client
    client.shutdown()


def test_hosted_store_answers_exactly_like_the_in_process_store(tmp_path, host):
    local = make_chroma_client(load_settings(tmp_path / "local"))
    vecs, ids = unit_vectors(300), [f"d{i}#0" for i in range(300)]
    metas = [{"doc_id": f"d{i}", "chunk_id": "0"} for i in range(300)]
    for client in (local, host):
        ChromaCollection(client, "ws", "m").add(ids, vecs, metas)
    a, b = ChromaCollection(local, "ws", "m"), ChromaCollection(host, "ws", "m")
    for q in range(0, 300, 37):
        ids_a, sims_a = a.query(vecs[q], 20)
        ids_b, sims_b = b.query(vecs[q], 20)
        assert ids_a == ids_b and ids_b[0] == ids[q]
        np.testing.assert_array_equal(sims_a, sims_b)
    assert b.ids() == set(ids) and b.count() == 300
    assert b.query(vecs[0], 1000)[0][:1] == [ids[0]]  # k beyond the collection: what it has


def test_errors_in_the_helper_come_back_as_exceptions(host):
    col = ChromaCollection(host, "ws", "m")
    col.add(["a"], unit_vectors(1))
    with pytest.raises(ChromaHostError) as caught:
        col.add(["b"], unit_vectors(1, dim=8))  # another dimension: Chroma refuses
    assert caught.value.type_name and "dimension" in str(caught.value).lower()
    assert col.count() == 1  # the helper is still serving
    with pytest.raises(ValueError):
        host.get_or_create_collection("xyz", embedding_function=object())


def test_a_crashed_helper_is_restarted_with_the_data_it_had(host):
    col = ChromaCollection(host, "ws", "m")
    vecs = unit_vectors(50)
    col.add([f"k{i}" for i in range(50)], vecs)
    first = host.pid
    os.kill(first, signal.SIGKILL)  # e.g. a crash in Chroma's native code
    try:
        col.count()  # the call that meets the crash may report it...
    except ChromaHostError as exc:
        assert "stopped unexpectedly" in str(exc)
    # ...and the next starts a new helper on the same files; the app itself never went down.
    assert col.count() == 50 and host.pid != first
    assert col.query(vecs[7], 1)[0] == ["k7"]


def test_the_helper_never_outlives_the_app(tmp_path):
    """The app killed outright (no atexit, no shutdown): its helper sees the pipe close and exits."""
    script = (
        "import os, sys\n"
        "from spar_desktop.core.retrieval.chroma_host import ChromaHostClient\n"
        f"c = ChromaHostClient({str(tmp_path / 'chroma')!r})\n"
        "print(c.pid, flush=True)\n"
        "os.kill(os.getpid(), 9)\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    helper = int(proc.stdout.split()[0])
    deadline = time.monotonic() + 20
    while pid_alive(helper) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not pid_alive(helper)


def test_shutdown_stops_the_helper_and_later_calls_say_so(tmp_path):
    client = ChromaHostClient(tmp_path / "chroma")
    ChromaCollection(client, "ws", "m").add(["a"], unit_vectors(1))
    pid = client.pid
    client.shutdown()
    assert not client.is_alive() and not pid_alive(pid)
    with pytest.raises(ChromaHostError, match="closed"):
        client.heartbeat()
    again = ChromaHostClient(tmp_path / "chroma")  # what it wrote is on disk for the next start
    try:
        assert ChromaCollection(again, "ws", "m", create=False).count() == 1
    finally:
        again.shutdown()


def test_the_helper_is_the_apps_choice_and_never_saved(tmp_path, monkeypatch):
    monkeypatch.delenv("SPAR_CHROMA_PROCESS", raising=False)
    settings = load_settings(tmp_path)
    assert not settings.chroma_process  # CLI and library: Chroma in-process
    assert load_settings(tmp_path, app=True).chroma_process is True  # the desktop app
    load_settings(tmp_path, app=True).save()
    assert "chroma_process" not in (tmp_path / "settings.json").read_text()
    monkeypatch.setenv("SPAR_CHROMA_PROCESS", "0")
    assert load_settings(tmp_path, app=True).chroma_process is False
    monkeypatch.setenv("SPAR_CHROMA_PROCESS", "1")
    assert load_settings(tmp_path).chroma_process is True
    assert replace(Settings(data_dir=tmp_path), chroma_url="http://h:1", chroma_process=True).chroma_url


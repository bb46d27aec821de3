"""The local vector store is opened by one process at a time: the next one is told who holds it,
and never takes the held store for a damaged one (which would be set aside under its holder)."""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest

from spar_desktop.core import store_lock
from spar_desktop.core.config import load_settings
from spar_desktop.core.workspaces.engine import Engine, VectorStoreInUse
from spar_desktop.core.workspaces.errors import WorkspaceError

ROOT = Path(__file__).resolve().parents[3]
HOLDER = r"""
import sys, time
from spar_desktop.core import store_lock
from spar_desktop.core.config import load_settings
from spar_desktop.core.workspaces.engine import Engine
store_lock.set_program(sys.argv[2])
Engine(load_settings(sys.argv[1])).chroma  # Chroma in this process, as a CLI build opens it
print("holding", flush=True)
time.sleep(600)
"""
PROBE = r"""
import sys
from spar_desktop.core import store_lock
try:
    store_lock.acquire(sys.argv[1])
    print("free")
except store_lock.StoreInUseError:
    print("held")
"""


@contextmanager
def holding(data: Path, program: str):
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(data), program], cwd=ROOT, stdout=subprocess.PIPE,
                            text=True)
    try:
        assert proc.stdout.readline().strip() == "holding"
        yield proc
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()


def probe(store: Path) -> str:
    return subprocess.run([sys.executable, "-c", PROBE, str(store)], cwd=ROOT, capture_output=True, text=True,
                          check=True, timeout=60).stdout.strip()


def test_the_next_process_is_told_who_holds_the_store_and_nothing_is_set_aside(tmp_path):
    data = tmp_path / "data"
    with holding(data, "spar ws build big") as proc:
        for in_helper_process in (False, True):  # as the CLI opens it, and as the app does
            engine = Engine(replace(load_settings(data), chroma_process=in_helper_process))
            with pytest.raises(VectorStoreInUse) as refused:
                engine.chroma
            assert isinstance(refused.value, WorkspaceError)  # the CLI and the app show its message
            message = str(refused.value)
            assert f"in use by spar ws build big (pid {proc.pid}" in message
            assert str(data / "chroma") in message
            engine.close()
        assert not list(data.glob("chroma.broken-*"))  # a held store is not a damaged one
    # The holder is gone (killed): nothing stays locked behind it.
    engine = Engine(load_settings(data))
    engine.chroma
    assert store_lock.holder(data / "chroma")["pid"] == os.getpid()
    engine.close()
    assert store_lock.holder(data / "chroma") is None


def test_engines_of_one_process_share_the_lock_until_the_last_closes(tmp_path):
    settings = load_settings(tmp_path / "data")
    first, second = Engine(settings), Engine(settings)
    first.chroma
    second.chroma  # the same process: no conflict with itself
    first.close()
    assert probe(tmp_path / "data" / "chroma") == "held"
    second.close()
    assert probe(tmp_path / "data" / "chroma") == "free"


def test_a_store_set_aside_keeps_its_lock(tmp_path):
    data = tmp_path / "data"
    engine = Engine(load_settings(data))
    engine.chroma
    engine.reset_chroma()  # moves chroma/ aside: the lock beside it stays, and stays held
    assert probe(data / "chroma") == "held"
    engine.close()

"""A search loads, never builds: a finished build saves the workspace's searcher and a new process
(a fresh Workspaces on the same data dir) opens it and gets the very same hits and scores, without
calling the builder. A stale, damaged or half-written state is never used: the workspace is rebuilt
from the cache with a note, never a traceback."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from spar_desktop.core.config import load_settings
from spar_desktop.core.embedding.encoder import get_encoder
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.scanner import Scanner
from spar_desktop.core.memory.config import ERMConfig
from spar_desktop.core.memory.feedback import record_feedback, reset_memory
from spar_desktop.core.workspaces import builder
from spar_desktop.core.workspaces.engine import Engine
from spar_desktop.core.workspaces.errors import ModelChangedError, NeedsBuild
from spar_desktop.core.workspaces.manager import Workspaces
from spar_desktop.core.workspaces.searchers import POINTER
from tests.core.workspaces.test_lifecycle import make_share

QUERIES = ["oil contamination root cause", "blade erosion repair", "vibration alarms", "energy site range"]


@pytest.fixture
def data(tmp_path):
    encoder = get_encoder("cpu")
    share = tmp_path / "share"
    make_share(share)
    settings = replace(load_settings(tmp_path / "data"), chroma_process=False)
    lib = Library.open(settings)
    Scanner(lib).scan([str(share)])
    opened: list[Workspaces] = []

    def new_process() -> Workspaces:
        """What a new `spar` process has: nothing in memory, the same data dir."""
        mgr = Workspaces(lib, Engine(settings, encoder))
        opened.append(mgr)
        return mgr

    yield new_process, tmp_path
    for mgr in opened:
        mgr.engine.close()
    lib.close()


def results(mgr: Workspaces, name: str = "ops") -> list:
    out = []
    for q in QUERIES:
        for method in ("hybrid", "bm25", "dense"):
            res = mgr.search(name, q, k=6, method=method)
            out.append([(h.path, h.chunk_id, h.page_start, h.page_end, h.text, h.context,
                         (h.score, h.bm25_score, h.dense_score)) for h in res.hits])
    return out


def same(a: list, b: list) -> bool:
    """The same hits in the same order with the same scores up to float32 rounding: a new CLI
    process scores the dense side exactly over the saved matrix, the build's own process through
    Chroma's index (the same cosines, computed in another order)."""
    def close(x, y) -> bool:
        return (x is None) == (y is None) and (x is None or abs(x - y) < 1e-5)

    return len(a) == len(b) and all(
        len(ha) == len(hb) and all(x[:6] == y[:6] and all(close(u, v) for u, v in zip(x[6], y[6]))
                                   for x, y in zip(ha, hb))
        for ha, hb in zip(a, b))


def rows(mgr: Workspaces, name: str = "ops"):
    return mgr.get(name).built_at, [(f.file_id, f.state, f.chunks, f.content_hash) for f in mgr.files(name)]


def no_builds(monkeypatch) -> None:
    def refuse(*a, **k):
        raise AssertionError("a search must not build")

    monkeypatch.setattr(builder, "build_workspace", refuse)


def state_dir(tmp: Path, mgr: Workspaces, name: str = "ops") -> Path:
    root = tmp / "data" / "workspaces" / mgr.get(name).collection / "searcher"
    return root / (root / POINTER).read_text()


def test_a_new_process_opens_the_saved_searcher_with_identical_results(data, monkeypatch):
    new_process, tmp = data
    first = new_process()
    first.create("ops", tags=["Operations"])
    first.build("ops")
    expected, before = results(first), rows(first)

    no_builds(monkeypatch)
    fresh = new_process()
    assert fresh.searchers.cached(fresh.get("ops").id) is None
    res = fresh.search("ops", QUERIES[0])
    assert res.notes == ()
    assert same(results(fresh), expected)
    assert rows(fresh) == before  # file rows and built_at untouched: nothing was rebuilt
    searcher = fresh.searchers.cached(fresh.get("ops").id)
    assert type(searcher.original_vectors).__name__ == "memmap"


def test_stale_damaged_or_missing_states_rebuild_with_a_note(data, monkeypatch):
    new_process, tmp = data
    mgr = new_process()
    mgr.create("ops", tags=["Operations"])
    mgr.build("ops")
    expected = results(mgr)
    manifest_path = state_dir(tmp, mgr) / "manifest.json"
    manifest = json.loads(manifest_path.read_text())

    manifest_path.write_text(json.dumps(dict(manifest, version=99)))  # written by a newer version
    res = new_process().search("ops", QUERIES[0])
    assert any("v99" in n and "rebuilt" in n for n in res.notes)

    mgr = new_process()  # the rebuild saved a good state again
    vectors = state_dir(tmp, mgr) / "vectors.npy"
    vectors.write_bytes(vectors.read_bytes()[:100])  # damaged
    res = mgr.search("ops", QUERIES[0])
    assert any("rebuilt" in n for n in res.notes)
    assert same(results(new_process()), expected)

    mgr = new_process()
    (tmp / "data" / "workspaces" / mgr.get("ops").collection / "searcher" / POINTER).unlink()
    assert any("no saved search index" in n for n in mgr.search("ops", QUERIES[0]).notes)


def test_a_search_that_may_not_build_says_the_workspace_needs_one(data, monkeypatch):
    new_process, tmp = data
    mgr = new_process()
    mgr.create("ops", tags=["Operations"])
    mgr.build("ops")
    built_at = mgr.get("ops").built_at
    (tmp / "data" / "workspaces" / mgr.get("ops").collection / "searcher" / POINTER).unlink()
    no_builds(monkeypatch)
    fresh = new_process()
    with pytest.raises(NeedsBuild) as caught:
        fresh.search("ops", QUERIES[0], build_if_needed=False)
    assert "spar ws build \"ops\"" in str(caught.value) and "no saved search index" in str(caught.value)
    assert caught.value.why and not caught.value.store_failed
    assert fresh.get("ops").built_at == built_at  # nothing was built


def test_a_save_killed_midway_leaves_the_old_state_live(data, monkeypatch):
    new_process, tmp = data
    mgr = new_process()
    mgr.create("ops", tags=["Operations"])
    mgr.build("ops")
    expected = results(mgr)
    live = state_dir(tmp, mgr)
    # A save killed before its switch: a partial tmp-* directory and an unswitched pointer file.
    partial = live.parent / "tmp-123-dead"
    partial.mkdir()
    (partial / "keys.json").write_text("[")
    (live.parent / f"{POINTER}.123-dead").write_text("tmp-123-dead")
    no_builds(monkeypatch)
    assert same(results(new_process()), expected)


def test_archive_delete_and_model_change_invalidate(data, monkeypatch):
    new_process, tmp = data
    mgr = new_process()
    mgr.create("ops", tags=["Operations"])
    mgr.build("ops")
    folder = tmp / "data" / "workspaces" / mgr.get("ops").collection
    assert (folder / "searcher" / POINTER).exists()
    mgr.archive("ops")
    assert not folder.exists()
    mgr.reactivate("ops")
    assert (folder / "searcher" / POINTER).exists()
    rebuilt_at = mgr.get("ops").built_at
    mgr.build("ops")  # an update saves the new build's state; the old one is removed
    assert mgr.get("ops").built_at != rebuilt_at and len(list((folder / "searcher").glob("state-*"))) == 1

    other = new_process()
    real = other.engine.encoder

    class OtherModel:  # the same vectors under another model id: what a model upgrade looks like
        model_id = "another-model@1"

        def __getattr__(self, name):
            return getattr(real, name)

    other.engine._encoder = OtherModel()
    with pytest.raises(ModelChangedError):  # never searched with vectors of another model
        other.search("ops", QUERIES[0])

    mgr.delete("ops")
    assert not folder.exists()


def test_evolved_and_reset_keys_are_saved_for_the_next_process(data, monkeypatch):
    new_process, tmp = data
    mgr = new_process()
    mgr.create("ops", tags=["Operations"])
    mgr.build("ops")
    mgr.create("ops2", tags=["Operations"])  # shares every file with 'ops'
    mgr.build("ops2")
    original = results(mgr)
    mgr = new_process()  # feedback on a searcher opened from its saved state (memory-mapped keys)
    hit = mgr.search("ops", "oil contamination root cause", k=3).hits[0]
    out = record_feedback(mgr, "ops", "oil contamination root cause", [f"{hit.file_id}#{hit.chunk_id}"],
                          success=True, config=ERMConfig(batch_size=1, max_batches_per_round=1))
    assert out.accepted and out.evolved_keys
    evolved = results(mgr)
    assert evolved != original
    with monkeypatch.context() as m:
        no_builds(m)
        assert same(results(new_process()), evolved)  # the evolution rewrote the saved state
    # 'ops2' shares the evolved chunks: its saved state no longer matches the database's keys
    res = new_process().search("ops2", QUERIES[0])
    assert any("evolved keys changed" in n for n in res.notes)

    reset_memory(mgr, "ops")
    with monkeypatch.context() as m:
        no_builds(m)
        assert same(results(new_process()), original)

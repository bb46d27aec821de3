"""The encoder's graph built in a second process (graph_prebuild.py): the graph it leaves is the one
the encoder opens without building again, a second start while it runs starts nothing, and a build
that cannot happen there leaves the in-line build to the encoder, as before."""

from __future__ import annotations

import sys
from pathlib import Path

from spar_desktop.core.embedding import graph_prebuild
from spar_desktop.core.embedding.encoder import bundled_model
from spar_desktop.core.embedding.onnx_encoder import ensure_graph, graph_is_built

MODEL_DIR = Path(bundled_model()[0])


def test_a_graph_built_in_a_second_process_is_the_one_the_encoder_opens(tmp_path: Path):
    cache = tmp_path / "onnx"
    assert not graph_is_built(MODEL_DIR, cache, "fp32")
    assert graph_prebuild.start(MODEL_DIR, cache, "fp32")
    assert graph_prebuild.start(MODEL_DIR, cache, "fp32")  # under way: the same build, not a second one
    graph_prebuild.wait(cache, "fp32")
    assert graph_is_built(MODEL_DIR, cache, "fp32")
    built = {p.name: p.stat().st_mtime_ns for p in cache.iterdir()}
    graph, meta = ensure_graph(MODEL_DIR, cache, "fp32")
    assert graph.name in built and meta["variant"] == "fp32"
    assert {p.name: p.stat().st_mtime_ns for p in cache.iterdir()} == built  # opened, not built again
    assert not graph_prebuild.start(MODEL_DIR, cache, "fp32")  # built: nothing to start


def test_a_build_that_fails_there_is_left_to_the_caller(tmp_path: Path, caplog):
    not_a_model = tmp_path / "empty-model"
    not_a_model.mkdir()
    (not_a_model / "model.safetensors").write_bytes(b"not safetensors")
    cache = tmp_path / "onnx"
    assert graph_prebuild.start(not_a_model, cache, "fp32")
    with caplog.at_level("INFO", logger=graph_prebuild.__name__):
        graph_prebuild.wait(cache, "fp32")  # returns: the encoder builds in line and reports the error itself
    assert "building it in line" in caplog.text
    assert not graph_is_built(not_a_model, cache, "fp32")
    graph_prebuild.wait(cache, "fp32")  # nothing pending any more


def test_the_frozen_bundle_builds_in_line(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    assert not graph_prebuild.start(MODEL_DIR, tmp_path / "onnx", "fp32")
    assert not (tmp_path / "onnx").exists()


def test_the_apps_build_runs_niced_and_leaves_the_same_graph(tmp_path: Path):
    """The app's preload starts it at nice 10 (a process of its own: it holds no lock of the window's)."""
    import os
    import time

    import pytest

    if not Path("/proc/self/stat").exists():
        pytest.skip("reads the child's niceness from /proc")
    cache = tmp_path / "onnx"
    assert graph_prebuild.start(MODEL_DIR, cache, "fp32", nice=10)
    child = graph_prebuild._PENDING[(str(cache), "fp32")][0]
    base = os.getpriority(os.PRIO_PROCESS, 0)
    seen = set()
    while child.poll() is None:
        try:  # field 19 of /proc/PID/stat, after the command name in parentheses
            seen.add(int(Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[1].split()[16]))
        except (OSError, IndexError, ValueError):
            pass
        time.sleep(0.01)
    graph_prebuild.wait(cache, "fp32")
    assert min(base + 10, 19) in seen
    assert graph_is_built(MODEL_DIR, cache, "fp32")

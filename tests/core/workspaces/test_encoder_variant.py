"""A workspace's vectors come from one encoder variant on one kind of CPU: building it with another
(a settings change from fp32 to int8, or int8 on a machine with other integer kernels sharing the
data) refuses with both named, and a rebuild re-embeds; the two never mix in one collection."""

from __future__ import annotations

from dataclasses import replace

import pytest

from spar_desktop.core.config import load_settings
from spar_desktop.core.embedding.encoder import get_encoder
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.scanner import Scanner
from spar_desktop.core.retrieval.vector_store import ChromaCollection
from spar_desktop.core.workspaces.engine import Engine
from spar_desktop.core.workspaces.errors import ModelChangedError
from spar_desktop.core.workspaces.manager import Workspaces
from tests.core.workspaces.test_lifecycle import make_share


class OtherCpu:
    """The int8 encoder as another machine's: the same vectors under its CPU class (what a team's
    Chroma server filled from a VNNI server looks like to an AVX2 laptop)."""

    def __init__(self, real, cpu: str) -> None:
        self.real = real
        self.model_id = real.model_id.rsplit("@", 1)[0] + f"@{cpu}-000000"

    def __getattr__(self, name):
        return getattr(self.real, name)


@pytest.fixture
def data(tmp_path):
    make_share(tmp_path / "share")
    settings = replace(load_settings(tmp_path / "data"), chroma_process=False)
    lib = Library.open(settings)
    Scanner(lib).scan([str(tmp_path / "share")])
    engines: list[Engine] = []

    def process(encoder) -> Workspaces:
        for e in engines:  # one process at a time holds the local store
            e.close()
        engines.append(Engine(settings, encoder))
        return Workspaces(lib, engines[-1])

    yield process
    for e in engines:
        e.close()
    lib.close()


def test_switching_variant_or_cpu_refuses_then_rebuild_re_embeds(data):
    fp32, int8 = get_encoder("cpu", runtime="onnx"), get_encoder("cpu", runtime="onnx-int8")
    mgr = data(fp32)
    mgr.create("ops", tags=["Operations"])
    mgr.build("ops")

    mgr = data(int8)  # the user chose int8 in Settings
    before = int8.texts_encoded
    with pytest.raises(ModelChangedError) as err:
        mgr.build("ops")
    assert "fp32 encoder" in str(err.value) and "int8 encoder on a CPU of class" in str(err.value)
    assert "--rebuild" in str(err.value)
    name = mgr.get("ops").collection
    assert ChromaCollection(mgr.engine.chroma, name, fp32.model_id, create=False).count() > 0  # untouched

    mgr.build("ops", rebuild=True)
    # Embedded with int8 (the refused build's vectors wait in the cache), not fp32's relabelled.
    assert int8.texts_encoded > before
    assert ChromaCollection(mgr.engine.chroma, name, int8.model_id, create=False).count() > 0
    assert mgr.search("ops", "gearbox oil contamination").hits

    mgr = data(OtherCpu(int8, "avx512vnni"))  # the same data reached from a machine with VNNI
    with pytest.raises(ModelChangedError, match="int8 encoder on a CPU of class avx512vnni"):
        mgr.build("ops")
    assert ChromaCollection(mgr.engine.chroma, name, int8.model_id, create=False).count() > 0  # kept


def test_a_data_dir_built_with_fp32_still_searches_after_the_default_became_int8(tmp_path, monkeypatch):
    """The upgrade: workspaces built by a version whose default was fp32 keep working, embedding
    nothing again, because the data dir keeps the runtime its vectors were made with."""
    monkeypatch.delenv("SPAR_EMBED_RUNTIME", raising=False)  # tests/conftest.py pins fp32
    make_share(tmp_path / "share")
    fp32 = get_encoder("cpu", runtime="onnx")
    old = replace(load_settings(tmp_path / "data"), chroma_process=False)
    assert old.embed_runtime == "onnx-int8"  # a new data dir: the default
    lib = Library.open(old)
    Scanner(lib).scan([str(tmp_path / "share")])
    mgr = Workspaces(lib, Engine(old, fp32))  # what the fp32 version built
    mgr.create("ops", tags=["Operations"])
    mgr.build("ops")
    mgr.engine.close()
    lib.close()

    settings = replace(load_settings(tmp_path / "data"), chroma_process=False)  # the upgraded app
    assert (settings.embed_runtime, settings.embed_runtime_origin) == ("onnx", "data dir")
    lib = Library.open(settings)
    mgr = Workspaces(lib, Engine(settings))
    try:
        assert mgr.engine.encoder.model_id == fp32.model_id
        before = fp32.texts_encoded
        assert mgr.search("ops", "gearbox oil contamination").hits
        mgr.build("ops")  # an update, not a refusal
        assert fp32.texts_encoded == before  # nothing re-embedded
    finally:
        mgr.engine.close()
        lib.close()

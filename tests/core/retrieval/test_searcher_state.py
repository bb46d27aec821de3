"""A saved searcher opens to exactly the searcher that was saved (hits, scores, parents, evolved
keys), never unpickles, and refuses anything it cannot trust."""

import json

import numpy as np
import pytest

from spar_desktop.core.retrieval import searcher_state
from spar_desktop.core.retrieval.collection_sync import sync_collection
from spar_desktop.core.retrieval.searcher import HybridSearcher, KeyOverride
from spar_desktop.core.retrieval.searcher_state import StateError
from spar_desktop.core.retrieval.vector_store import ChromaCollection, make_chroma_client
from tests.core.retrieval.test_searcher import documents  # noqa: F401 - module fixture

QUERIES = ["how do photovoltaic panels make electricity", "budget road repairs taxes", "measles vaccine fever",
           "bread dough yeast", "striker debut stadium", "zzz unknownword", "battery storage night grid"]


def same_results(a: HybridSearcher, b: HybridSearcher, methods=("hybrid", "bm25", "dense")) -> None:
    for q in QUERIES:
        for method in methods:
            ra, rb = a.search(q, k=8, method=method), b.search(q, k=8, method=method)
            assert ra == rb, (q, method)


def evolved(searcher: HybridSearcher) -> dict:
    rng = np.random.default_rng(0)
    out = {}
    for key in searcher.keys[:3]:
        v = rng.standard_normal(searcher.original_vectors.shape[1]).astype(np.float32)
        out[key] = KeyOverride(v / np.linalg.norm(v), "extra words harness", f"erm-{key}")
    out[searcher.keys[4]] = KeyOverride(None, "only bm25 text", "erm-text")
    return out


def test_round_trip_numpy_backend_with_evolved_keys(tmp_path, documents, encoder):  # noqa: F811
    original = HybridSearcher(documents, encoder, file_ids={"solar": 11})
    original = original.with_keys(evolved(original))
    searcher_state.save(original, tmp_path / "s", {"built_at": "x"})
    loaded = searcher_state.load(tmp_path / "s", encoder)
    assert isinstance(loaded.original_vectors, np.memmap)  # opened, not read
    same_results(original, loaded)
    assert loaded.keys == original.keys and loaded.overrides.keys() == original.overrides.keys()
    for k in original.keys:
        assert loaded.chunk_ref(k) == original.chunk_ref(k) and loaded.chunk_text(k) == original.chunk_text(k)
    # evolving further (and back to the originals) from a loaded searcher works as from the original
    same_results(original.with_keys({}), loaded.with_keys({}))
    assert searcher_state.read_manifest(tmp_path / "s")["built_from"] == {"built_at": "x"}


def test_round_trip_on_chroma_and_bm25_only(tmp_path, documents, encoder):  # noqa: F811
    from spar_desktop.core.config import load_settings

    client = make_chroma_client(load_settings(tmp_path / "data"))
    col = ChromaCollection(client, "ws-state", encoder.model_id)
    original, _ = sync_collection(HybridSearcher(documents, encoder), col)
    searcher_state.save(original, tmp_path / "c")
    loaded = searcher_state.load(tmp_path / "c", encoder,
                                 collection=ChromaCollection(client, "ws-state", encoder.model_id, create=False))
    same_results(original, loaded)

    bm25_only = HybridSearcher(documents, None)
    searcher_state.save(bm25_only, tmp_path / "b")
    same_results(bm25_only, searcher_state.load(tmp_path / "b", None), methods=("bm25",))
    with pytest.raises(StateError, match="without dense keys"):
        searcher_state.load(tmp_path / "b", encoder)


def test_empty_searcher_round_trips(tmp_path, encoder):
    empty = HybridSearcher({}, encoder)
    searcher_state.save(empty, tmp_path / "e")
    loaded = searcher_state.load(tmp_path / "e", encoder)
    assert len(loaded) == 0 and loaded.search("anything").message == empty.search("anything").message


def test_unknown_version_missing_and_damaged_parts_are_refused(tmp_path, documents, encoder):  # noqa: F811
    original = HybridSearcher(documents, encoder)
    d = searcher_state.save(original, tmp_path / "s")
    with pytest.raises(StateError, match="no saved searcher"):
        searcher_state.load(tmp_path / "nothing", encoder)
    manifest = json.loads((d / "manifest.json").read_text())
    (d / "manifest.json").write_text(json.dumps(dict(manifest, version=99)))
    with pytest.raises(StateError, match="v99"):
        searcher_state.load(d, encoder)
    (d / "manifest.json").write_text("{not json")
    with pytest.raises(StateError, match="unreadable"):
        searcher_state.load(d, encoder)
    (d / "manifest.json").write_text(json.dumps(manifest))
    vec = (d / "vectors.npy").read_bytes()
    (d / "vectors.npy").write_bytes(vec[: len(vec) // 2])  # truncated by a crash
    with pytest.raises(StateError, match="damaged"):
        searcher_state.load(d, encoder)
    (d / "vectors.npy").write_bytes(vec)
    keys = json.loads((d / "keys.json").read_text())
    (d / "keys.json").write_text(json.dumps(keys[::-1]))
    with pytest.raises(StateError, match="keys"):
        searcher_state.load(d, encoder)
    (d / "keys.json").write_text(json.dumps(keys))
    (d / "pages.npy").unlink()
    with pytest.raises(StateError, match="damaged"):
        searcher_state.load(d, encoder)

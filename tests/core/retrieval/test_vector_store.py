from dataclasses import replace

import numpy as np
import pytest

from spar_desktop.core.config import load_settings
from spar_desktop.core.retrieval.vector_store import (
    ChromaCollection,
    ModelMismatchError,
    NumpyBackend,
    VectorStoreError,
    delete_collection,
    make_chroma_client,
    safe_collection_name,
)


def unit_vectors(n, dim=16, seed=0):
    v = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.fixture(params=[False, True], ids=["in-process", "helper-process"])
def client(request, tmp_path):
    """A Chroma client both ways the product opens one: in this process (CLI) or hosted in a
    helper process (the desktop app)."""
    client = make_chroma_client(replace(load_settings(tmp_path), chroma_process=request.param))
    yield client
    if request.param:
        client.shutdown()


def test_collection_lifecycle(tmp_path, monkeypatch, client):
    assert (tmp_path / "chroma").is_dir()
    col = ChromaCollection(client, "ws", "model-a")
    assert col.name == "ws-ws"  # padded to Chroma's 3-character minimum
    vecs = unit_vectors(25)
    ids = [f"doc#{i}" for i in range(25)]
    monkeypatch.setattr(col, "max_batch", lambda: 7)  # forces 4 batches
    seen = []
    col.add(ids, vecs, [{"doc_id": "doc", "n": i, "none": None} for i in range(25)], progress=seen.append)
    assert [p.done for p in seen] == [7, 14, 21, 25]
    assert col.count() == 25

    got_ids, sims = col.query(vecs[3], 5)
    pos, exact = NumpyBackend(vecs).search(vecs[3], 5)
    assert got_ids == [ids[p] for p in pos]
    np.testing.assert_allclose(sims, exact, atol=1e-4)  # cosine similarity, not distance

    assert col.sync(ids[5:] + ["new#0"], np.vstack([vecs[5:], unit_vectors(1, seed=1)])) == (1, 5)
    assert col.ids() == set(ids[5:]) | {"new#0"}

    with pytest.raises(ModelMismatchError):
        ChromaCollection(client, "ws", "model-b")
    assert ChromaCollection(client, "ws", "model-a", create=False).count() == 21
    assert delete_collection(client, "ws")
    with pytest.raises(VectorStoreError):
        ChromaCollection(client, "ws", "model-a", create=False)


def test_numpy_backend_and_names():
    vecs = unit_vectors(10)
    pos, sims = NumpyBackend(vecs).search(vecs[2], 3)
    assert pos[0] == 2 and sims[0] == pytest.approx(1.0)
    assert np.all(np.diff(sims) <= 0)
    assert NumpyBackend(vecs).search(vecs[0], 50)[0].size == 10
    assert NumpyBackend(np.empty((0, 16), np.float32)).search(vecs[0], 5)[0].size == 0
    assert safe_collection_name("Q3 reports / finance!") == "Q3-reports-finance"
    assert safe_collection_name("..") == "collection"


def test_large_matrices_scored_in_parallel_match_the_single_pass_exactly():
    import numpy as np

    from spar_desktop.core.retrieval.vector_store import _SPLIT_ROWS, NumpyBackend, cosine_scores

    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((_SPLIT_ROWS + 1001, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    query = vectors[1234] + 0.01 * rng.standard_normal(384).astype(np.float32)
    assert np.array_equal(cosine_scores(vectors, query), np.einsum("ij,j->i", vectors, query))
    positions, sims = NumpyBackend(vectors).search(query, 5)
    assert positions[0] == 1234 and sims[0] == sims.max()


FP32 = "all-MiniLM-L6-v2@gt-0.1.0"
INT8_VNNI = FP32 + "+onnx-int8@avx512vnni-1a2b3c"  # a team's server filled from a VNNI machine
INT8_AVX2 = FP32 + "+onnx-int8@avx2-6b45ae"  # this laptop


def test_another_encoder_variant_or_cpu_class_is_refused_naming_both(client):
    vecs = unit_vectors(6)
    ChromaCollection(client, "team", INT8_VNNI).add([f"d#{i}" for i in range(6)], vecs)
    for mine, words in ((INT8_AVX2, "int8 encoder on a CPU of class avx2"), (FP32, f"fp32 encoder ({FP32})")):
        with pytest.raises(ModelMismatchError) as err:
            ChromaCollection(client, "team", mine)
        assert "int8 encoder on a CPU of class avx512vnni" in str(err.value) and words in str(err.value)
        assert (err.value.stored, err.value.wanted) == (INT8_VNNI, mine)
    kept = ChromaCollection(client, "team", INT8_VNNI, create=False)
    assert kept.count() == 6 and kept.query(vecs[2], 1)[0] == ["d#2"]  # refused, not emptied or mixed


def test_a_collection_without_a_recorded_model_is_adopted_only_when_empty(client):
    raw = client.get_or_create_collection("made-elsewhere", embedding_function=None)
    raw.upsert(ids=["x#0"], embeddings=unit_vectors(1))
    with pytest.raises(ModelMismatchError, match="unrecorded embedding model"):
        ChromaCollection(client, "made-elsewhere", FP32)
    client.get_or_create_collection("empty-one", embedding_function=None)
    col = ChromaCollection(client, "empty-one", INT8_AVX2)  # nothing to mix: made again with the record
    col.add(["a#0"], unit_vectors(1))
    with pytest.raises(ModelMismatchError):
        ChromaCollection(client, "empty-one", FP32)
    assert ChromaCollection(client, "empty-one", INT8_AVX2, create=False).count() == 1

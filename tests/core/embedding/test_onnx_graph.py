"""The torch-free parts of the ONNX path: safetensors reading, the graph builder against its numpy
reference, and the content-keyed graph cache (atomic, rebuilt when the key or files change)."""

import json

import numpy as np
import pytest

from spar_desktop.core.embedding import onnx_encoder
from spar_desktop.core.embedding.encoder import Encoder, bundled_model
from spar_desktop.core.embedding.onnx_bert import BertConfig, build_model, reference_forward
from spar_desktop.core.embedding.onnx_encoder import OnnxUnavailable, ensure_graph, load_tokenizer
from spar_desktop.core.embedding.safetensors_io import SafetensorsError, read_safetensors
from pathlib import Path

MODEL_DIR = Path(bundled_model()[0])


@pytest.fixture(scope="module")
def tensors():
    return read_safetensors(MODEL_DIR / "model.safetensors")


def test_safetensors_reader_matches_the_library(tensors, tmp_path):
    from safetensors.numpy import load_file, save_file

    ref = load_file(str(MODEL_DIR / "model.safetensors"))
    assert set(ref) == set(tensors)
    for name, arr in ref.items():
        assert tensors[name].dtype == arr.dtype and np.array_equal(tensors[name], arr), name
    mixed = {"a": np.arange(6, dtype=np.int64).reshape(2, 3), "b": np.float16([1.5, -2]), "c": np.zeros((0, 4), np.float32)}
    save_file(mixed, str(tmp_path / "m.safetensors"))
    back = read_safetensors(tmp_path / "m.safetensors")
    for name, arr in mixed.items():
        assert back[name].dtype == arr.dtype and np.array_equal(back[name], arr)
    (tmp_path / "bad.safetensors").write_bytes(b"\xff" * 8 + b"{}")
    with pytest.raises(SafetensorsError):
        read_safetensors(tmp_path / "bad.safetensors")


@pytest.mark.parametrize("fused", [True, False])
def test_both_graph_variants_match_the_numpy_reference(tensors, fused):
    import onnxruntime as ort

    cfg = BertConfig.from_json(json.loads((MODEL_DIR / "config.json").read_text()))
    tok = load_tokenizer(MODEL_DIR)
    tok.enable_padding(pad_id=0, pad_token="[PAD]")
    encs = tok.encode_batch(["Short one.", "", "A somewhat longer sentence about café prices in 東京. " * 3])
    ids = np.array([e.ids for e in encs], dtype=np.int64)
    mask = np.array([e.attention_mask for e in encs], dtype=np.int64)
    session = ort.InferenceSession(build_model(tensors, cfg, fused=fused).SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    got = session.run(None, {"input_ids": ids, "attention_mask": mask})[0]
    np.testing.assert_allclose(got, reference_forward(tensors, cfg, ids, mask), atol=1e-5)


def test_graph_cache_is_content_keyed_and_atomic(tmp_path, monkeypatch):
    graph, meta = ensure_graph(MODEL_DIR, tmp_path)
    stamp = graph.stat().st_mtime_ns
    assert ensure_graph(MODEL_DIR, tmp_path) == (graph, meta)  # warm: nothing rebuilt
    assert graph.stat().st_mtime_ns == stamp
    assert not list(tmp_path.glob("*.tmp"))
    assert meta["bytes"] == graph.stat().st_size and len(meta["probe_vector"]) == 384

    graph.write_bytes(graph.read_bytes()[:1000])  # a torn file (size differs from the record) is rebuilt
    again, _ = ensure_graph(MODEL_DIR, tmp_path)
    assert again == graph and again.stat().st_size == meta["bytes"]

    monkeypatch.setattr(onnx_encoder, "BUILDER_VERSION", "test")  # a new builder never loads an old graph
    newer, _ = ensure_graph(MODEL_DIR, tmp_path)
    assert newer != graph and newer.is_file()


def test_encoder_falls_back_to_sentence_transformers(tmp_path, monkeypatch, encoder):
    def broken(*_a, **_k):
        raise OnnxUnavailable("no graph today")

    monkeypatch.setattr(onnx_encoder, "ensure_graph", broken)
    fallback = Encoder("cpu", cache_dir=tmp_path)
    assert fallback.runtime == "torch" and "no graph today" in (fallback.fallback_reason or "")
    assert fallback.model_id == encoder.model_id  # same vectors, same cache rows
    texts = ["The cat sat on the mat.", "Quarterly revenue grew by 12 percent."]
    np.testing.assert_allclose(fallback.encode(texts), encoder.encode(texts), atol=1e-5)
    np.testing.assert_allclose(fallback.encode_query(texts[0]), encoder.encode_query(texts[0]), atol=1e-5)

import logging
import os

import numpy as np
import pytest

from spar_desktop.core.embedding.encoder import EncoderError, get_encoder, resolve_device
from spar_desktop.core.progress import CancelToken, Cancelled

TEXTS = [
    "The cat sat on the mat.",
    "A kitten is sleeping on the rug in the living room.",
    "Quarterly revenue grew by 12 percent thanks to strong sales in Europe.",
    "short",
    "Mitochondria are the powerhouse of the cell and produce ATP through oxidative phosphorylation "
    "in a long sentence that is clearly the longest of this small batch of texts.",
]


def test_identity_and_shape(encoder):
    assert encoder.model_id == "all-MiniLM-L6-v2@gt-0.1.0"
    assert (encoder.runtime, encoder.variant, encoder.fallback_reason) == ("onnx", "fp32", None)
    assert encoder.dim == 384 and encoder.max_seq_length == 256
    assert encoder.device == "cpu"
    vecs = encoder.encode(TEXTS, batch_size=2)
    assert vecs.shape == (len(TEXTS), 384)
    assert vecs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    assert encoder.encode([]).shape == (0, 384)


def test_order_is_restored_after_length_sorting(encoder):
    vecs = encoder.encode(TEXTS, batch_size=2)
    reversed_vecs = encoder.encode(TEXTS[::-1], batch_size=3)
    np.testing.assert_allclose(vecs, reversed_vecs[::-1], atol=1e-5)
    for text, vec in zip(TEXTS, vecs):  # the one-thread query session gives the same vectors
        np.testing.assert_allclose(encoder.encode_query(text), vec, atol=1e-5)


def test_semantics(encoder):
    cat, kitten, revenue = encoder.encode(TEXTS[:3])
    assert cat @ kitten > cat @ revenue + 0.2


def test_progress_and_cancel(encoder):
    seen = []
    encoder.encode(TEXTS, batch_size=2, progress=seen.append)
    assert [p.done for p in seen] == [2, 4, 5]
    assert all(p.total == 5 for p in seen)
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        encoder.encode(TEXTS, cancel=token)


def test_loader_is_cached_and_offline(encoder):
    assert get_encoder("cpu") is encoder
    assert get_encoder("auto") is encoder  # auto is the CPU for ONNX Runtime without CUDA
    assert os.environ["HF_HUB_OFFLINE"] == "1"
    with pytest.raises(EncoderError):
        resolve_device("tpu")
    with pytest.raises(EncoderError):
        get_encoder("cpu", runtime="tensorflow")


def test_cuda_without_a_provider_falls_back_to_cpu(caplog):
    import onnxruntime

    if "CUDAExecutionProvider" in onnxruntime.get_available_providers():
        pytest.skip("this machine has CUDA")
    with caplog.at_level(logging.WARNING):
        assert resolve_device("cuda") == "cpu"
    assert "no CUDA provider" in caplog.text


def test_thread_setting_keeps_vectors(encoder):
    before = encoder.encode(TEXTS)
    encoder.set_threads(1)
    try:
        np.testing.assert_allclose(encoder.encode(TEXTS), before, atol=1e-5)
    finally:
        encoder.set_threads(os.cpu_count() or 1)

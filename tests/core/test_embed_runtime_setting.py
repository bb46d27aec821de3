"""Which encoder a data dir uses: int8 for a new one; a data dir whose vectors were made with fp32
(before int8 became the default) keeps fp32 until the user chooses, and says so; a choice in
settings.json, SPAR_EMBED_RUNTIME or a flag wins."""

import json
import sys

import numpy as np
import pytest

from spar_desktop.core.config import DEFAULT_EMBED_RUNTIME, SettingsError, load_settings, runtime_note
from spar_desktop.core.documents.types import Chunk
from spar_desktop.core.embedding.cache import CachedDocument, EmbeddingCache


@pytest.fixture(autouse=True)
def no_pin(monkeypatch):
    monkeypatch.delenv("SPAR_EMBED_RUNTIME", raising=False)  # tests/conftest.py pins fp32


def fill_cache(data_dir, model_id):
    chunk = Chunk("c0", "gearbox oil", 0, 11, 1, 1, level="flat")
    with EmbeddingCache(data_dir) as cache:
        cache.put(CachedDocument("hash-" + model_id[-4:], "chunker", model_id, (chunk,),
                                 np.ones((1, 4), np.float32) / 2.0))


def test_a_new_data_dir_gets_int8(tmp_path):
    s = load_settings(tmp_path)
    assert DEFAULT_EMBED_RUNTIME == "onnx-int8"
    assert (s.embed_runtime, s.embed_runtime_origin) == ("onnx-int8", "default")


def test_a_data_dir_embedded_with_fp32_keeps_it_and_says_so(tmp_path):
    fill_cache(tmp_path, "all-MiniLM-L6-v2@gt-0.1.0")  # what 0.1.0 (fp32 by default) left
    s = load_settings(tmp_path)
    assert (s.embed_runtime, s.embed_runtime_origin) == ("onnx", "data dir")
    assert "fp32 (kept" in runtime_note(s) and "int8 embeds faster" in runtime_note(s)
    fill_cache(tmp_path, "all-MiniLM-L6-v2@gt-0.1.0+onnx-int8@avx2-6b45ae")  # the user switched and built
    assert load_settings(tmp_path).embed_runtime == "onnx-int8"


def test_a_choice_wins_over_the_data_dir(tmp_path, monkeypatch):
    fill_cache(tmp_path, "all-MiniLM-L6-v2@gt-0.1.0")
    (tmp_path / "settings.json").write_text(json.dumps({"embed_runtime": "onnx-int8"}))
    s = load_settings(tmp_path)
    assert (s.embed_runtime, s.embed_runtime_origin) == ("onnx-int8", "settings")
    assert load_settings(tmp_path, embed_runtime="onnx").embed_runtime_origin == "option"
    monkeypatch.setenv("SPAR_EMBED_RUNTIME", "onnx")
    assert load_settings(tmp_path).embed_runtime_origin == "environment"
    s.save()
    assert json.loads((tmp_path / "settings.json").read_text())["embed_runtime"] == "onnx-int8"
    (tmp_path / "settings.json").write_text(json.dumps({"embed_runtime": "int4"}))
    monkeypatch.delenv("SPAR_EMBED_RUNTIME")
    with pytest.raises(SettingsError, match="int4"):
        load_settings(tmp_path)


def test_spar_status_says_which_encoder_and_why(tmp_path, capsys):
    from spar_desktop.cli import main

    fill_cache(tmp_path, "all-MiniLM-L6-v2@gt-0.1.0")
    assert main(["--data-dir", str(tmp_path), "status", "--json"]) == 0
    encoder = json.loads(capsys.readouterr().out)["encoder"]
    assert (encoder["runtime"], encoder["origin"]) == ("onnx", "data dir")
    assert main(["--data-dir", str(tmp_path), "status"]) == 0
    assert "encoder:   fp32 (kept: this data dir's vectors were made with it)" in capsys.readouterr().out


def test_the_desktop_bundle_starts_a_new_data_dir_on_fp32(tmp_path, monkeypatch):
    """The bundle ships no int8 quantiser (onnxruntime.transformers imports torch): a new data dir
    there gets fp32 rather than a warning and a fallback on every start."""
    monkeypatch.delenv("SPAR_EMBED_RUNTIME", raising=False)
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    assert load_settings(tmp_path / "bundle").embed_runtime == "onnx"
    monkeypatch.setattr(sys, "frozen", False)
    assert load_settings(tmp_path / "pip").embed_runtime == "onnx-int8"

"""ONNX Runtime backend of the encoder: a graph built from the packaged weights, cached on disk.

The hot path imports only onnxruntime, tokenizers and numpy (no torch, transformers or
sentence-transformers): loading torch alone costs seconds, which the first search after start-up
would otherwise pay. The graph is built once (``onnx_bert``, ~1 s, needs the ``onnx`` package)
and cached under a content key, the SHA-256 of the weights file plus the builder version and the
variant, so a new model or builder can never load a stale graph. Files are written to a temp file
and renamed into place: two processes building at once both produce the same bytes, and a reader
never sees half a file.

Each graph is stored with the vector a float64 numpy forward pass gives for a probe text; a
loaded session must reproduce it, so an ONNX Runtime change can only make us fall back to
sentence-transformers, never put vectors in a different space.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import threading
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np
from platformdirs import user_cache_dir

from spar_desktop.core.documents.types import storable_text
from spar_desktop.core.embedding.onnx_bert import BUILDER_VERSION, OUTPUT, BertConfig, build_model, reference_forward
from spar_desktop.core.embedding.safetensors_io import read_safetensors

log = logging.getLogger(__name__)

VARIANTS = ("fp32", "int8")
PROBE = "Probe: does the graph match? 5 mg/kg of IL-6 in 2019, naïve café 東京."
# Probe agreement a loaded graph must reach with the float64 reference: fp32 agrees to ~1e-7;
# int8 measured 0.9968 on the probe here (AVX-512 VNNI) and 0.98-0.999 on other texts, and its
# integer kernels differ between CPUs, hence the margin.
PROBE_MIN_COSINE = {"fp32": 0.99999, "int8": 0.98}


class OnnxUnavailable(RuntimeError):
    """The ONNX path cannot be built or loaded here; the caller falls back to sentence-transformers."""


def graph_cache_dir(preferred: Optional[Path] = None) -> Path:
    """Where the built graph is kept: $SPAR_MODEL_CACHE when set, else ``preferred`` (callers with
    a data dir pass its ``DataLayout.onnx_cache``, so nothing is written outside it), else the
    platform's user cache dir.

    SPAR_MODEL_CACHE is read here, not in load_settings, on purpose: it is plumbing for one cache
    shared by several data dirs (the test suite, kill-trial children, an admin's image), and it must
    reach the process-wide encoder whoever builds it first, including the many callers that have
    no Settings (evaluation, benchmarks, tests)."""
    shared = os.environ.get("SPAR_MODEL_CACHE")
    if shared:
        return Path(shared).expanduser()
    return preferred if preferred is not None else Path(user_cache_dir("spar-desktop", "SPAR")) / "onnx"


def _atomic_write(target: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=target.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def weights_digest(weights: Path, cache_dir: Path) -> str:
    """SHA-256 of the weights file, remembered per (path, size, mtime): hashing 90 MB takes
    0.2-0.3 s, which every start-up would pay otherwise."""
    st = weights.stat()
    stamp = f"{weights.resolve()}|{st.st_size}|{st.st_mtime_ns}"
    memo = cache_dir / f"digest-{hashlib.sha256(stamp.encode()).hexdigest()[:16]}.txt"
    try:
        return memo.read_text(encoding="ascii").strip()
    except OSError:
        pass
    h = hashlib.sha256()
    with weights.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    digest = h.hexdigest()
    _atomic_write(memo, digest.encode("ascii"))
    return digest


def _quantize(src: Path, dst: Path) -> None:
    """Dynamic int8 (per-channel weights) of the attention and the first FFN projection. The FFN
    down-projection stays float: its GELU activations have outliers that per-tensor activation
    scales crush (quantising it too cost 0.983 vs 0.997 minimum cosine to fp32 on SciFact chunks)."""
    # Deferred: onnx and the quantizer are needed only to build the int8 graph, once.
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    model = onnx.load(str(src))
    keep_float = [n.name for n in model.graph.node if n.op_type == "MatMul" and n.input[1].endswith("_wo2")]
    del model
    root = logging.getLogger()
    root.addFilter(_quiet_quantizer)  # it advises "pre-processing" on the root logger each time
    try:
        quantize_dynamic(str(src), str(dst), weight_type=QuantType.QInt8, per_channel=True,
                         op_types_to_quantize=["MatMul", "Attention"], nodes_to_exclude=keep_float,
                         extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
    finally:
        root.removeFilter(_quiet_quantizer)


def _quiet_quantizer(record: logging.LogRecord) -> bool:
    return "onnxruntime/quantization" not in record.pathname.replace(os.sep, "/")


def _graph_paths(model_dir: Path, cache_dir: Path, variant: str) -> tuple[Path, Path]:
    if variant not in VARIANTS:
        raise ValueError(f"unknown graph variant {variant!r}")
    cache_dir.mkdir(parents=True, exist_ok=True)
    key = f"{weights_digest(model_dir / 'model.safetensors', cache_dir)[:20]}-b{BUILDER_VERSION}"
    return cache_dir / f"minilm-{key}-{variant}.onnx", cache_dir / f"minilm-{key}-{variant}.json"


def _built(graph: Path, meta_path: Path) -> Optional[dict[str, Any]]:
    """The metadata of a complete cached graph, else None."""
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        return meta if graph.is_file() and graph.stat().st_size == meta["bytes"] else None
    except (OSError, ValueError, KeyError):
        return None


def graph_is_built(model_dir: Path, cache_dir: Path, variant: str) -> bool:
    return _built(*_graph_paths(model_dir, cache_dir, variant)) is not None


def ensure_graph(model_dir: Path, cache_dir: Path, variant: str = "fp32") -> tuple[Path, dict[str, Any]]:
    """Path of the cached graph for ``variant`` (building it if needed) and its metadata."""
    graph, meta_path = _graph_paths(model_dir, cache_dir, variant)
    meta = _built(graph, meta_path)
    if meta is not None:
        return graph, meta

    log.info("building the ONNX %s encoder graph in %s", variant, cache_dir)
    if variant == "fp32":
        tensors = read_safetensors(model_dir / "model.safetensors")
        cfg = BertConfig.from_json(json.loads((model_dir / "config.json").read_text(encoding="utf-8")))
        _atomic_write(graph, build_model(tensors, cfg).SerializeToString())
        tok = load_tokenizer(model_dir)
        ids = np.asarray([tok.encode(PROBE).ids], dtype=np.int64)
        probe = reference_forward(tensors, cfg, ids, np.ones_like(ids))[0]
        reference = {"probe_ids": ids[0].tolist(), "probe_vector": [float(v) for v in probe]}
    else:
        fp32, fp32_meta = ensure_graph(model_dir, cache_dir, "fp32")
        fd, tmp = tempfile.mkstemp(dir=cache_dir, prefix=graph.name + ".", suffix=".tmp")
        os.close(fd)
        try:
            _quantize(fp32, Path(tmp))
            os.replace(tmp, graph)
        finally:
            Path(tmp).unlink(missing_ok=True)
        # The same weights and probe text: the fp32 graph's reference vector (a numpy forward pass).
        reference = {k: fp32_meta[k] for k in ("probe_ids", "probe_vector")}
    meta = {"variant": variant, "builder": BUILDER_VERSION, "bytes": graph.stat().st_size, **reference}
    _atomic_write(meta_path, json.dumps(meta).encode("utf-8"))  # last: its presence means "complete"
    return graph, meta


def read_model_config(model_dir: Path) -> tuple[int, int]:
    """(max_seq_length, dim) from the sentence-transformers files; refuses anything but the
    Transformer → mean Pooling → Normalize stack this backend reproduces."""
    st_cfg = json.loads((model_dir / "sentence_bert_config.json").read_text(encoding="utf-8"))
    pooling = json.loads((model_dir / "1_Pooling" / "config.json").read_text(encoding="utf-8"))
    modes = {k for k, v in pooling.items() if k.startswith("pooling_mode_") and v}
    if modes != {"pooling_mode_mean_tokens"} or st_cfg.get("do_lower_case"):
        raise OnnxUnavailable(f"{model_dir} is not a mean-pooled model this backend reproduces")
    return int(st_cfg.get("max_seq_length", 256)), int(pooling["word_embedding_dimension"])


def load_tokenizer(model_dir: Path, max_length: int = 256) -> Any:
    from tokenizers import Tokenizer  # deferred: loads a native library; only an encoder needs it

    tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    # tokenizer.json ships with truncation at 128 and fixed padding to 128; sentence-transformers
    # overrides both (truncate at max_seq_length, pad to the longest text of a batch), so do we.
    tok.enable_truncation(max_length=max_length)
    tok.no_padding()
    return tok


def _clean(text: object) -> str:
    """What the tokenizer accepts: it refused a whole batch for one lone surrogate."""
    return storable_text(str(text).strip())


class OnnxBackend:
    """Tokenizer + two ORT sessions: bulk (all cores, created on first use) and query (one thread:
    a dozen tokens gain little from more, and it never waits for a bulk batch to finish)."""

    runtime = "onnx"

    def __init__(self, model_dir: Path, cache_dir: Path, *, device: str = "cpu", variant: str = "fp32",
                 threads: Optional[int] = None) -> None:
        try:
            import onnxruntime as ort  # deferred: native libraries (~0.3 s); optional at start-up
        except ImportError as exc:
            raise OnnxUnavailable("onnxruntime is not installed") from exc
        if hasattr(ort, "disable_telemetry_events"):
            ort.disable_telemetry_events()
        self._ort, self.variant, self.device = ort, variant, device
        self.max_seq_length, self.dim = read_model_config(model_dir)
        self._tok = load_tokenizer(model_dir, self.max_seq_length)
        self._pad_id = self._tok.token_to_id("[PAD]") or 0
        try:
            self.graph, meta = ensure_graph(model_dir, cache_dir, variant)
        except Exception as exc:  # noqa: BLE001 - e.g. no `onnx` package, read-only cache dir
            raise OnnxUnavailable(f"cannot build the ONNX graph: {exc}") from exc
        self._providers = ["CUDAExecutionProvider", "CPUExecutionProvider"] if device == "cuda" else ["CPUExecutionProvider"]
        self.threads = max(1, threads or os.cpu_count() or 1)
        self._query = self._session(1)
        self._bulk: Any = None
        self._bulk_lock = threading.Lock()
        self._check_probe(meta)

    def _session(self, threads: int) -> Any:
        opts = self._ort.SessionOptions()
        opts.graph_optimization_level = self._ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        opts.log_severity_level = 3  # ORT's warnings are about its own internals, not the user's data
        # The arena keeps batch-sized buffers between runs: measured 26 vs 17 chunks/s without it.
        opts.enable_cpu_mem_arena = True
        # Idle pool threads sleep instead of spinning: on two shared cores (the app's UI thread, a
        # CI run) the spinning burnt CPU others needed. 2,711 tag texts under load 2: 10.5 / 9.8 s
        # wall, 13.4 / 12.4 s CPU spinning; 7.4 / 8.7 s, 10.4 / 9.7 s not.
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        try:
            return self._ort.InferenceSession(str(self.graph), opts, providers=self._providers)
        except Exception as exc:  # noqa: BLE001
            raise OnnxUnavailable(f"ONNX Runtime cannot load {self.graph}: {exc}") from exc

    def _check_probe(self, meta: dict[str, Any]) -> None:
        ids = np.asarray([meta["probe_ids"]], dtype=np.int64)
        got = self._query.run([OUTPUT], {"input_ids": ids, "attention_mask": np.ones_like(ids)})[0][0]
        want = np.asarray(meta["probe_vector"], dtype=np.float32)
        cos = float(got @ want / max(np.linalg.norm(got) * np.linalg.norm(want), 1e-12))
        if cos < PROBE_MIN_COSINE[self.variant]:
            raise OnnxUnavailable(f"the ONNX graph disagrees with the reference forward pass (cosine {cos:.6f})")

    def set_threads(self, threads: int) -> None:
        """Bulk threads for later batches (the app leaves one core to its UI thread)."""
        with self._bulk_lock:
            if max(1, threads) != self.threads:
                self.threads, self._bulk = max(1, threads), None

    def tokenize(self, texts: Sequence[str]) -> list[np.ndarray]:
        # sentence-transformers strips each text first; BERT's pre-tokenizer makes that a no-op
        # for ASCII whitespace, but not for every Unicode space, so we do the same.
        return [np.asarray(e.ids, dtype=np.int32) for e in self._tok.encode_batch([_clean(t) for t in texts])]

    def run(self, batch: Sequence[np.ndarray]) -> np.ndarray:
        """Vectors for token-id rows (padded here to the longest row of the batch)."""
        width = max(len(r) for r in batch)
        ids = np.full((len(batch), width), self._pad_id, dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.int64)
        for i, row in enumerate(batch):
            ids[i, : len(row)] = row
            mask[i, : len(row)] = 1
        with self._bulk_lock:
            if self._bulk is None:
                self._bulk = self._session(self.threads)
            session = self._bulk
        return session.run([OUTPUT], {"input_ids": ids, "attention_mask": mask})[0]

    def query(self, text: str) -> np.ndarray:
        ids = np.asarray([self._tok.encode(_clean(text)).ids], dtype=np.int64)
        return self._query.run([OUTPUT], {"input_ids": ids, "attention_mask": np.ones_like(ids)})[0][0]

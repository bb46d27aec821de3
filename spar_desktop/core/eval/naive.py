"""The naive-fusion baseline of issue 20: what anyone could write in an afternoon.

bm25s with its own tokenizer (English stop-words, no stemming) over whole documents; MiniLM on
each whole document (the encoder truncates it to its first 256 word pieces); both score vectors
min-max normalised over the whole collection and averaged (weight 0.5); no chunking. Documents
are ranked directly, so there is no chunk→document step. The default pipeline must beat this
on every development set (``spar eval --method naive-fusion``).

Whole-document vectors go through the embedding cache like any chunking (one flat chunk per
document, its own chunker key), so re-runs and the experiments in benchmarks/ reuse them.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import numpy as np

from spar_desktop.core.data_layout import DataLayout
from spar_desktop.core.documents.types import Chunk, ChunkerConfig, ExtractedDocument
from spar_desktop.core.embedding.cache import EmbeddingCache
from spar_desktop.core.embedding.encoder import get_encoder
from spar_desktop.core.embedding.pipeline import content_hash, embed_documents
from spar_desktop.core.eval.beir import BeirDataset
from spar_desktop.core.eval.runner import EXTRA_KS, IndexInfo, default_extract_fn, report_from_run
from spar_desktop.core.progress import CancelToken, Progress, ProgressCallback, check, no_progress

# A key no real chunker produces: one flat chunk = the whole extracted text.
WHOLE_DOC_CONFIG = ChunkerConfig(method="fixed", child_tokens=256, parent_tokens=256, overlap_tokens=0,
                                 extra=(("whole", "1"),))
NAIVE_WEIGHT = 0.5


def whole_document_chunks(doc: ExtractedDocument, config: Optional[ChunkerConfig] = None, **_: Any) -> list[Chunk]:
    text = doc.text
    if not text.strip():
        return []
    return [Chunk("c0", text, 0, len(text), 1, max(1, len(doc.pages)), "flat", None)]


def minmax(scores: np.ndarray) -> np.ndarray:
    lo, hi = float(scores.min(initial=0.0)), float(scores.max(initial=0.0))
    if hi <= lo:
        return np.zeros_like(scores, dtype=np.float32)
    return ((scores - lo) / (hi - lo)).astype(np.float32)


@dataclass
class NaiveFusion:
    """Document-level BM25 (bm25s defaults) + whole-document dense, min-max, fixed weight."""

    doc_ids: list[str]
    retriever: Any  # bm25s.BM25 over the whole documents
    doc_vectors: Optional[np.ndarray]  # (n_docs, dim), rows aligned with doc_ids
    encoder: Any = None
    weight: float = NAIVE_WEIGHT  # dense weight

    @classmethod
    def build(cls, dataset: BeirDataset, data_dir: str | Path, encoder: Any = None, *, dense: bool = True,
              progress: ProgressCallback = no_progress, cancel: Optional[CancelToken] = None) -> "NaiveFusion":
        import bm25s  # deferred: bm25s loads scipy; only a naive-baseline run needs it here

        logging.getLogger("bm25s").setLevel(logging.WARNING)
        docs = list(dataset.corpus.values())
        retriever = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
        retriever.index(bm25s.tokenize([d.full_text for d in docs], stopwords="en", show_progress=False),
                        show_progress=False)
        vectors = None
        if dense:
            if encoder is None:
                encoder = get_encoder("auto", cache_dir=DataLayout(Path(data_dir)).onnx_cache)
            vectors = whole_document_vectors(dataset, data_dir, encoder, progress, cancel)
        return cls([d.doc_id for d in docs], retriever, vectors, encoder)

    def bm25_scores(self, query: str) -> np.ndarray:
        import bm25s  # deferred: see build

        tokens = bm25s.tokenize([query], stopwords="en", show_progress=False, return_ids=False)[0]
        if not tokens:
            return np.zeros(len(self.doc_ids), dtype=np.float32)
        return np.asarray(self.retriever.get_scores(tokens), dtype=np.float32)

    def dense_scores(self, query: str, qvec: Optional[np.ndarray] = None) -> np.ndarray:
        assert self.doc_vectors is not None, "built without vectors"
        if qvec is None:
            qvec = self.encoder.encode_query(query)
        return self.doc_vectors @ np.asarray(qvec, dtype=np.float32)

    def scores(self, query: str, method: str = "hybrid", qvec: Optional[np.ndarray] = None) -> np.ndarray:
        if method == "bm25":
            return self.bm25_scores(query)
        if method == "dense":
            return self.dense_scores(query, qvec)
        return self.weight * minmax(self.dense_scores(query, qvec)) + (1 - self.weight) * minmax(self.bm25_scores(query))

    def rank(self, query: str, k: int, method: str = "hybrid", qvec: Optional[np.ndarray] = None) -> list[str]:
        s = self.scores(query, method, qvec)
        k = min(k, len(s))
        top = np.argpartition(-s, k - 1)[:k] if k < len(s) else np.arange(len(s))
        top = top[np.lexsort((top, -s[top]))]  # best first, ties by corpus order
        return [self.doc_ids[i] for i in top]


def whole_document_vectors(dataset: BeirDataset, data_dir: str | Path, encoder: Any = None,
                           progress: ProgressCallback = no_progress,
                           cancel: Optional[CancelToken] = None) -> np.ndarray:
    """One vector per corpus document (corpus order), through the embedding cache."""
    if encoder is None:
        encoder = get_encoder("auto", cache_dir=DataLayout(Path(data_dir)).onnx_cache)
    extract = default_extract_fn()
    docs = list(dataset.corpus.values())
    hashes = [content_hash(d.full_text) for d in docs]
    with EmbeddingCache(data_dir) as cache:
        by_hash = embed_documents([(h, (lambda d=d: extract(d))) for h, d in zip(hashes, docs)],
                                  WHOLE_DOC_CONFIG, encoder, cache, progress, cancel,
                                  chunk_fn=whole_document_chunks)
    dim = int(encoder.dim)
    out = np.zeros((len(docs), dim), dtype=np.float32)
    for i, h in enumerate(hashes):
        got = by_hash.get(h)
        if got is not None and len(got.vectors):
            out[i] = got.vectors[0]
    return out


def evaluate_naive(dataset: BeirDataset, data_dir: str | Path, encoder: Any = None, *, method: str = "hybrid",
                   k: int = 10, built: Optional[NaiveFusion] = None, progress: ProgressCallback = no_progress,
                   cancel: Optional[CancelToken] = None) -> tuple[Any, NaiveFusion]:
    """(EvalReport, the baseline) for ``method`` 'hybrid' (naive fusion), 'bm25' or 'dense'."""
    started = time.perf_counter()
    naive = built or NaiveFusion.build(dataset, data_dir, encoder, dense=method != "bm25", progress=progress,
                                       cancel=cancel)
    info = IndexInfo(len(naive.doc_ids), len(naive.doc_ids), 0,
                     getattr(naive.encoder, "model_id", None) if naive.doc_vectors is not None else None,
                     WHOLE_DOC_CONFIG.cache_key, round(time.perf_counter() - started, 2))
    depth = max(k, *EXTRA_KS)
    run: dict[str, list[str]] = {}
    latencies: list[float] = []
    queries = list(dataset.queries.items())
    for i, (qid, text) in enumerate(queries):
        if i % 25 == 0:
            check(cancel)
            progress(Progress(i, len(queries), f"naive {method} queries"))
        t0 = time.perf_counter()
        run[qid] = naive.rank(text, depth, method)
        latencies.append((time.perf_counter() - t0) * 1000.0)
    label = {"hybrid": "naive-fusion", "bm25": "naive-bm25", "dense": "naive-dense"}[method]
    report = report_from_run(dataset, run, latencies, info, k=k, method=label,
                             fusion="minmax" if method == "hybrid" else "-",
                             alpha=naive.weight if method == "hybrid" else None)
    return report, naive

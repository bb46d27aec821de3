"""Evaluate retrieval on a BEIR collection through the product's own pipeline.

Documents go through the same steps as user files (extract_text_string → chunk_document →
embedding cache → HybridSearcher), so the figures describe what the app does, and re-runs reuse
the cached vectors in the data dir. A document's score is its best chunk's score.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

import numpy as np

from spar_desktop.core.data_layout import DataLayout
from spar_desktop.core.documents.extract import extract_text_string
from spar_desktop.core.documents.types import ChunkerConfig, ExtractedDocument
from spar_desktop.core.embedding.cache import CachedDocument, EmbeddingCache, is_searchable
from spar_desktop.core.embedding.encoder import get_encoder
from spar_desktop.core.embedding.pipeline import ChunkFn, chunk_with, content_hash, default_chunk_fn, embed_documents
from spar_desktop.core.eval import metrics as m
from spar_desktop.core.eval.beir import BeirDataset, BeirDoc
from spar_desktop.core.progress import CancelToken, Progress, ProgressCallback, check, no_progress
from spar_desktop.core.retrieval.keyword_units import DEFAULT_KEYWORD_UNIT
from spar_desktop.core.retrieval.searcher import HybridSearcher

EXTRA_KS = (100,)  # Recall@100 shows how much the candidate lists leave for a reranker


@dataclass(frozen=True)
class IndexInfo:
    documents: int
    chunks: int
    embedded_now: int  # chunks the encoder had to process in this run (0 on a warm cache)
    model_id: Optional[str]
    chunker: str
    seconds: float


@dataclass
class EvalReport:
    dataset: str
    split: str
    method: str
    fusion: str
    alpha: Optional[float]
    fill_missing: Optional[str]
    k: int
    queries: int
    metrics: dict[str, float]
    ndcg_ci95: tuple[float, float]
    latency_ms: dict[str, float]
    index: IndexInfo
    warnings: list[str] = field(default_factory=list)
    per_query_ndcg: dict[str, float] = field(default_factory=dict)  # for paired comparisons
    # 'flatness' when the weight was set per query (then ``alpha`` is its mean over the queries)
    alpha_rule: Optional[str] = None

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["ndcg_ci95"] = list(self.ndcg_ci95)
        data.pop("per_query_ndcg")
        return data


def chunker_config_from(settings: Any = None) -> ChunkerConfig:
    """The default hierarchical chunking, sized by the user's settings when given."""
    if settings is None:
        return ChunkerConfig()
    return ChunkerConfig(child_tokens=settings.chunk_child_tokens, parent_tokens=settings.chunk_parent_tokens,
                         overlap_tokens=settings.chunk_overlap_tokens)


def default_extract_fn() -> Callable[[BeirDoc], ExtractedDocument]:
    return lambda doc: extract_text_string(doc.text, doc.title or None)


def build_searcher(
    dataset: BeirDataset,
    data_dir: str | Path,
    *,
    dense: bool = True,
    encoder: Any = None,
    device: str = "auto",
    runtime: Optional[str] = None,
    config: Optional[ChunkerConfig] = None,
    chunk_fn: Optional[ChunkFn] = None,
    extract_fn: Optional[Callable[[BeirDoc], ExtractedDocument]] = None,
    keyword_unit: str = DEFAULT_KEYWORD_UNIT,
    progress: ProgressCallback = no_progress,
    cancel: Optional[CancelToken] = None,
) -> tuple[HybridSearcher, IndexInfo]:
    """Index the corpus. ``dense=False`` skips the encoder entirely (BM25-only runs need no
    vectors, and chunking alone takes seconds where embedding takes minutes on a CPU)."""
    started = time.perf_counter()
    config = config or ChunkerConfig()
    chunk_fn = chunk_fn or default_chunk_fn()
    extract_fn = extract_fn or default_extract_fn()
    docs = list(dataset.corpus.values())
    hashes = [content_hash(d.full_text) for d in docs]
    embedded_now, model_id = 0, None
    if dense:
        if encoder is None:  # its graph kept in this data dir, like the app's
            encoder = get_encoder(device, runtime=runtime, cache_dir=DataLayout(Path(data_dir)).onnx_cache)
        model_id = encoder.model_id
        before = encoder.texts_encoded if hasattr(encoder, "texts_encoded") else 0
        with EmbeddingCache(data_dir) as cache:
            by_hash = embed_documents(
                [(h, (lambda d=d: extract_fn(d))) for h, d in zip(hashes, docs)],
                config, encoder, cache, progress, cancel, chunk_fn=chunk_fn,
            )
        embedded_now = (encoder.texts_encoded if hasattr(encoder, "texts_encoded") else 0) - before
    else:
        encoder = None
        by_hash = {}
        for i, (h, d) in enumerate(zip(hashes, docs)):
            if h in by_hash:
                continue
            if i % 500 == 0:
                check(cancel)
                progress(Progress(i, len(docs), "chunking"))
            extracted = extract_fn(d)
            chunks = chunk_with(chunk_fn, extracted, config, None) if not extracted.no_text_reason else []
            n = sum(1 for c in chunks if is_searchable(c))
            by_hash[h] = CachedDocument(h, config.cache_key, "", tuple(chunks), np.zeros((n, 0), np.float32),
                                        title=extracted.title)
    documents = {d.doc_id: by_hash[h] for h, d in zip(hashes, docs) if h in by_hash}
    searcher = HybridSearcher(documents, encoder, keyword_unit=keyword_unit, progress=progress, cancel=cancel)
    info = IndexInfo(len(documents), len(searcher), embedded_now, model_id, config.cache_key,
                     round(time.perf_counter() - started, 2))
    return searcher, info


def evaluate_searcher(
    searcher: HybridSearcher,
    dataset: BeirDataset,
    info: IndexInfo,
    *,
    method: str = "hybrid",
    alpha: Optional[float] = None,
    fusion: str = "tm2c2",
    k: int = 10,
    fill_missing: Optional[str] = None,
    progress: ProgressCallback = no_progress,
    cancel: Optional[CancelToken] = None,
) -> EvalReport:
    """Run every judged query once (after one untimed warm-up) and score the document rankings."""
    ks = tuple(sorted({k, *EXTRA_KS}))
    depth = max(ks)
    queries = list(dataset.queries.items())
    if queries:  # warm-up: first-call costs (allocations, lazy imports) are not query latency
        searcher.search(queries[0][1], k=depth, method=method, alpha=alpha, fusion=fusion, fill_missing=fill_missing)
    run: dict[str, list[str]] = {}
    latencies: list[float] = []
    alphas: list[float] = []
    for i, (qid, text) in enumerate(queries):
        if i % 25 == 0:
            check(cancel)
            progress(Progress(i, len(queries), f"{method} queries"))
        t0 = time.perf_counter()
        res = searcher.search(text, k=depth, method=method, alpha=alpha, fusion=fusion, fill_missing=fill_missing)
        latencies.append((time.perf_counter() - t0) * 1000.0)
        run[qid] = [f.doc_id for f in res.files]
        if res.alpha is not None:
            alphas.append(res.alpha)
    progress(Progress(len(queries), len(queries), f"{method} queries"))
    used_alpha = used_fill = rule = None
    if method == "hybrid" and fusion == "tm2c2":
        used_alpha = searcher.default_alpha if alpha is None else alpha
        used_fill = fill_missing or searcher.fill_missing
        if alpha is None and searcher.alpha_model is None and searcher.alpha_rule != "fixed":
            rule = searcher.alpha_rule
            used_alpha = round(sum(alphas) / len(alphas), 4) if alphas else used_alpha
    report = report_from_run(dataset, run, latencies, info, k=k, method=method,
                             fusion=fusion if method == "hybrid" else "-", alpha=used_alpha, fill_missing=used_fill)
    report.alpha_rule = rule
    return report


def report_from_run(dataset: BeirDataset, run: dict[str, list[str]], latencies: list[float], info: IndexInfo, *,
                    k: int, method: str, fusion: str = "-", alpha: Optional[float] = None,
                    fill_missing: Optional[str] = None) -> EvalReport:
    """Score document rankings (query id -> doc ids, best first) of every judged query."""
    ks = tuple(sorted({k, *EXTRA_KS}))
    queries = list(dataset.queries.items())
    qrels = {q: dataset.qrels[q] for q, _ in queries}
    per_q = m.per_query(run, qrels, ks)
    means = {name: round(sum(v.values()) / len(v), 4) if v else 0.0 for name, v in per_q.items()}
    ci = m.bootstrap_ci(list(per_q[f"ndcg@{k}"].values()))
    return EvalReport(
        dataset=dataset.name, split=dataset.split, method=method, fusion=fusion,
        alpha=alpha, fill_missing=fill_missing, k=k, queries=len(queries), metrics=means,
        ndcg_ci95=(round(ci[0], 4), round(ci[1], 4)),
        latency_ms={
            "p50": round(m.percentile(latencies, 50), 2),
            "p95": round(m.percentile(latencies, 95), 2),
            "mean": round(sum(latencies) / len(latencies), 2) if latencies else 0.0,
        },
        index=info, warnings=list(dataset.warnings),
        per_query_ndcg={q: round(v, 6) for q, v in per_q[f"ndcg@{k}"].items()},
    )

"""Measuring relations against known ones, and session metrics on BEIR collections.

- ``edge_precision``: precision of the top-E pairs of a relation matrix against E true pairs
  (newsgroups20 replies, SciFact documents cited by the same claim);
- ``cluster_pair_stats``: the same question for co-occurrence clusters (pairs sharing a cluster);
- ``beir_sessions`` / ``evaluate_beir_sessions``: sessions = claims citing ≥ 2 documents; vanilla
  dense retrieval vs cluster expansion (and the boost variant) on coverage@k and calls-to-τ.
Documents go through the product's own pipeline and embedding cache, so runs are reproducible
and re-runs reuse the vectors.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence

import numpy as np
from scipy import sparse

from spar_desktop.core.data_layout import DataLayout
from spar_desktop.core.documents.extract import extract_text_string
from spar_desktop.core.documents.types import ChunkerConfig
from spar_desktop.core.embedding import encoder as embedding_encoder
from spar_desktop.core.embedding.cache import EmbeddingCache
from spar_desktop.core.embedding.pipeline import content_hash, embed_documents
from spar_desktop.core.eval.beir import BeirDoc
from spar_desktop.core.progress import CancelToken, ProgressCallback, no_progress
from spar_desktop.core.relations.doc_vectors import DocSet, from_cached
from spar_desktop.core.relations.graph import undirected

Pair = tuple[int, int]


def read_jsonl_corpus(path: str | Path) -> list[Any]:
    """A corpus.jsonl (BEIR layout) as BeirDoc records, for collections without qrels."""
    out = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                r = json.loads(line)
                out.append(BeirDoc(str(r["_id"]), str(r.get("title") or ""), str(r.get("text") or "")))
    return out


def eval_encoder(data_dir: str | Path, device: str = "cpu", runtime: Optional[str] = None) -> Any:
    """The process-wide encoder an evaluation over ``data_dir`` uses: its built ONNX graph kept in
    that data dir, as `spar eval` and the app keep theirs."""
    return embedding_encoder.get_encoder(device, runtime=runtime, cache_dir=DataLayout(Path(data_dir)).onnx_cache)


def corpus_docs(records: Sequence[Any], data_dir: str | Path, *, encoder: Any = None, device: str = "cpu",
                with_vectors: bool = True, progress: ProgressCallback = no_progress,
                cancel: Optional[CancelToken] = None) -> DocSet:
    """DocSet of BEIR records through the same extract → chunk → cache steps as `spar eval`."""
    if not with_vectors:
        return DocSet(tuple(r.doc_id for r in records), tuple(r.title for r in records),
                      tuple(r.full_text for r in records))
    if encoder is None:
        encoder = eval_encoder(data_dir, device)  # looked up per call: tests swap get_encoder
    # The same extraction as `spar eval` (core/eval/runner.py), so both share cached vectors.
    def extract(r: Any) -> Any:
        return extract_text_string(r.text, r.title or None)

    hashes = [content_hash(r.full_text) for r in records]
    with EmbeddingCache(data_dir) as cache:
        by_hash = embed_documents([(h, (lambda r=r: extract(r))) for h, r in zip(hashes, records)], ChunkerConfig(),
                                  encoder, cache, progress, cancel)
    docs = {r.doc_id: by_hash[h] for r, h in zip(records, hashes) if h in by_hash}
    return from_cached(docs, titles={r.doc_id: r.title for r in records})


def pairs_from_groups(groups: Iterable[Iterable[str]], index: dict[str, int]) -> set[Pair]:
    out: set[Pair] = set()
    for g in groups:
        rows = sorted({index[d] for d in g if d in index})
        out.update((a, b) for i, a in enumerate(rows) for b in rows[i + 1:])
    return out


def read_relation_pairs(tsv: str | Path, index: dict[str, int]) -> set[Pair]:
    """Undirected pairs from a 'src<TAB>dst<TAB>relation' file with a header row."""
    out: set[Pair] = set()
    with open(tsv, encoding="utf-8") as fh:
        next(fh, None)
        for line in fh:
            parts = line.rstrip("\n").split("\t")
            if len(parts) >= 2 and parts[0] in index and parts[1] in index and parts[0] != parts[1]:
                a, b = index[parts[0]], index[parts[1]]
                out.add((min(a, b), max(a, b)))
    return out


def edge_precision(R: sparse.spmatrix, true_pairs: set[Pair], e: Optional[int] = None,
                   combine: str = "sum") -> dict[str, float]:
    """Precision of the e strongest undirected pairs (default e = number of true pairs); ties at
    the cut are broken by row/column so the figure is reproducible."""
    e = len(true_pairs) if e is None else e
    coo = sparse.triu(undirected(R, combine), k=1).tocoo()
    order = np.lexsort((coo.col, coo.row, -coo.data))[:e]
    top = set(zip(coo.row[order].tolist(), coo.col[order].tolist()))
    hits = len(top & true_pairs)
    in_graph = sum(1 for a, b in zip(coo.row.tolist(), coo.col.tolist()) if (a, b) in true_pairs)
    return {"e": e, "candidates": int(coo.nnz), "hits": hits, "precision": round(hits / e, 4) if e else 0.0,
            "recall_at_e": round(hits / len(true_pairs), 4) if true_pairs else 0.0,
            "true_pairs_anywhere_in_graph": in_graph,
            "graph_recall": round(in_graph / len(true_pairs), 4) if true_pairs else 0.0}


def true_pair_hits(R: sparse.spmatrix, true_pairs: set[Pair], e: Optional[int] = None,
                   combine: str = "sum") -> np.ndarray:
    """Per true pair (in sorted order), whether it is among the e strongest pairs of R. With
    e = |true pairs| the mean is edge_precision's precision, and methods compared on the same true
    pairs give paired samples: bootstrapping the true pairs yields CIs of each precision and of
    the difference between two methods (the relations one would hope to find, resampled)."""
    e = len(true_pairs) if e is None else e
    coo = sparse.triu(undirected(R, combine), k=1).tocoo()
    order = np.lexsort((coo.col, coo.row, -coo.data))[:e]
    top = set(zip(coo.row[order].tolist(), coo.col[order].tolist()))
    return np.array([p in top for p in sorted(true_pairs)], dtype=bool)


def cluster_pair_stats(labels: np.ndarray, true_pairs: set[Pair]) -> dict[str, float]:
    sizes = np.bincount(labels)
    same = int((sizes * (sizes - 1) // 2).sum())
    hits = sum(1 for a, b in true_pairs if labels[a] == labels[b])
    return {"same_cluster_pairs": same, "hits": hits, "precision": round(hits / same, 4) if same else 0.0,
            "recall": round(hits / len(true_pairs), 4) if true_pairs else 0.0, "clusters": int(sizes.size),
            "max_cluster": int(sizes.max()) if sizes.size else 0}

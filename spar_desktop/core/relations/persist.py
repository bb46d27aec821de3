"""Persisting relations under <data dir>/relations/<scope>-<method>/ without pickle.

- sum.npz: the accumulated sum of p1·p2 (scipy sparse, loaded with allow_pickle=False);
- meta.json: format/version, document ids (row order), query count, parameters, model id, the last
  query-log id consumed (incremental updates start after it) and, from version 2, a fingerprint
  (content hash) of every file the build considered, rows or left out (build_delta.py diffs it
  against the scope to find added, changed and removed files);
- clusters.json / cooc_vectors.npy: co-occurrence cluster labels and embeddings (method cooc).
Files are written to temporary names and renamed, meta.json last, so a crash mid-save leaves the
previous build readable; saves in one process take turns (a background update and a Rebuild of
the same scope may finish together).
Version 1 (no fingerprints) still loads: its first update can tell added and removed files, not
files edited before it (their rows count as unchanged), and then writes version 2.
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import numpy as np
from scipy import sparse

from spar_desktop.core.data_layout import DataLayout
from spar_desktop.core.relations.edrmq import RelationAccumulator
from spar_desktop.core.relations.names import METHODS

FORMAT = "spar-relations"
VERSION = 2
READABLE = (1, 2)  # versions load() accepts


class RelationsStoreError(ValueError):
    """Nothing stored, or stored data that cannot be read; the message says which."""


@dataclass
class StoredRelations:
    method: str
    scope: str
    ids: list[str]
    acc: RelationAccumulator
    params: dict = field(default_factory=dict)
    model_id: Optional[str] = None
    last_log_id: int = 0
    created_at: float = field(default_factory=time.time)
    stats: dict = field(default_factory=dict)  # query counts by source, etc. (shown, not used)
    cluster_labels: Optional[np.ndarray] = None
    cooc_vectors: Optional[np.ndarray] = None
    # file id -> content hash of every file the build considered (rows and files left out);
    # empty for a version-1 build, whose rows then count as unchanged.
    fingerprints: dict[str, str] = field(default_factory=dict)

    def known(self) -> dict[str, Optional[str]]:
        """What the build saw: id -> fingerprint (None where a version-1 build did not record it)."""
        out: dict[str, Optional[str]] = {d: None for d in self.ids}
        out.update(self.fingerprints)
        return out

    def matrix(self) -> sparse.csr_matrix:
        return self.acc.matrix()


def relations_dir(data_dir: str | Path, scope: str, method: str) -> Path:
    return DataLayout(Path(data_dir)).relations / f"{scope}-{method}"


_SAVE_LOCK = threading.Lock()


def _replace_write(path: Path, write) -> None:
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    write(tmp)
    os.replace(tmp, path)


def save(directory: str | Path, stored: StoredRelations) -> Path:
    with _SAVE_LOCK:
        _remove_stale_temporaries(Path(directory))
        return _save(Path(directory), stored)


def _remove_stale_temporaries(d: Path, older_than_s: float = 3600.0) -> None:
    """Temporary files a killed save left (their names carry the writer's pid, so two processes
    never share one); an hour old, no save is still writing them."""
    if not d.is_dir():
        return
    for tmp in d.glob("*.tmp"):
        try:
            if time.time() - tmp.stat().st_mtime > older_than_s:
                tmp.unlink()
        except OSError:
            continue


def _save(d: Path, stored: StoredRelations) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    def write_sum(p: Path) -> None:
        with open(p, "wb") as fh:  # a file object: save_npz would append '.npz' to a '.tmp' name
            sparse.save_npz(fh, stored.acc.total.tocsr(), compressed=True)

    def write_vectors(p: Path) -> None:
        with open(p, "wb") as fh:
            np.save(fh, np.asarray(stored.cooc_vectors, dtype=np.float32), allow_pickle=False)

    _replace_write(d / "sum.npz", write_sum)
    if stored.cluster_labels is not None:
        labels = {"ids": stored.ids, "labels": [int(x) for x in stored.cluster_labels]}
        _replace_write(d / "clusters.json", lambda p: p.write_text(json.dumps(labels), encoding="utf-8"))
    if stored.cooc_vectors is not None:
        _replace_write(d / "cooc_vectors.npy", write_vectors)
    meta = {"format": FORMAT, "version": VERSION, "method": stored.method, "scope": stored.scope,
            "ids": stored.ids, "n_queries": stored.acc.n_queries, "params": stored.params,
            "model_id": stored.model_id, "last_log_id": stored.last_log_id, "created_at": stored.created_at,
            "stats": stored.stats, "has_clusters": stored.cluster_labels is not None,
            "fingerprints": stored.fingerprints}
    _replace_write(d / "meta.json", lambda p: p.write_text(json.dumps(meta, indent=1), encoding="utf-8"))
    return d


def load_meta(directory: str | Path) -> dict[str, Any]:
    """meta.json alone (ids, fingerprints, counts): what a staleness check needs, without the matrix."""
    d = Path(directory)
    try:
        meta = json.loads((d / "meta.json").read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise RelationsStoreError(f"no relations stored in {d}") from exc
    except (OSError, json.JSONDecodeError) as exc:
        raise RelationsStoreError(f"{d}/meta.json is not readable: {exc}") from exc
    if not isinstance(meta, dict) or meta.get("format") != FORMAT or meta.get("version") not in READABLE:
        got = meta if not isinstance(meta, dict) else f"{meta.get('format')} v{meta.get('version')}"
        raise RelationsStoreError(f"{d}: unsupported relations format {got}")
    return meta


def known_files(meta: dict[str, Any]) -> dict[str, Optional[str]]:
    """id -> fingerprint of what a stored build saw, from its meta (None: not recorded, v1)."""
    out: dict[str, Optional[str]] = {str(x): None for x in meta.get("ids", [])}
    out.update({str(k): str(v) for k, v in (meta.get("fingerprints") or {}).items()})
    return out


def load(directory: str | Path) -> StoredRelations:
    d = Path(directory)
    meta = load_meta(d)
    ids = [str(x) for x in meta["ids"]]
    try:
        total = sparse.load_npz(d / "sum.npz").tocsr()  # np.load(allow_pickle=False) inside
    except (OSError, ValueError) as exc:
        raise RelationsStoreError(f"{d}/sum.npz is not readable: {exc}") from exc
    if total.shape != (len(ids), len(ids)):
        raise RelationsStoreError(f"{d}: matrix is {total.shape} but {len(ids)} documents are listed")
    labels = vectors = None
    if meta.get("has_clusters") and (d / "clusters.json").is_file():
        cl = json.loads((d / "clusters.json").read_text(encoding="utf-8"))
        if [str(x) for x in cl["ids"]] == ids:
            labels = np.asarray(cl["labels"], dtype=np.int64)
    if (d / "cooc_vectors.npy").is_file():
        vectors = np.load(d / "cooc_vectors.npy", allow_pickle=False)
    return StoredRelations(meta["method"], meta["scope"], ids, RelationAccumulator(len(ids), total, meta["n_queries"]),
                           meta.get("params", {}), meta.get("model_id"), int(meta.get("last_log_id", 0)),
                           float(meta.get("created_at", 0.0)), meta.get("stats", {}), labels, vectors,
                           {str(k): str(v) for k, v in (meta.get("fingerprints") or {}).items()})


def available(data_dir: str | Path, scope: str) -> list[tuple[str, float]]:
    """(method, created_at) of what is stored for a scope, newest first."""
    out = []
    for method in METHODS:
        meta = relations_dir(data_dir, scope, method) / "meta.json"
        if meta.is_file():
            try:
                out.append((method, float(json.loads(meta.read_text(encoding="utf-8")).get("created_at", 0.0))))
            except (OSError, ValueError):
                continue
    return sorted(out, key=lambda x: -x[1])

"""Save a HybridSearcher to a directory and open it again, without pickle (bm25s style).

A directory holds: ``manifest.json`` (format, version, what the searcher was built from, a digest
of its chunk keys, written last), the chunk table (``keys.json``, ``docs.json``, ``parents.json``,
``doc_index.npy``, ``pages.npy``, ``parent_pos.npy``, texts as UTF-8 blobs ``texts.npy`` /
``parent_texts.npy`` with their ``*_offsets.npy``), the original dense keys ``vectors.npy``, the
evolved keys (``overrides.json`` + ``override_vectors.npy``) and the BM25 index (``bm25/``, which
already holds evolved BM25 text) over the keyword units the manifest names (keyword_units.py). Big arrays open memory-mapped: a 50k-chunk workspace does not
read its vectors or texts until a query needs them.

``load`` raises StateError for anything it cannot use (unknown version, missing or damaged file,
parts that disagree); callers rebuild from the embedding cache then.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Mapping, Optional

import numpy as np

from spar_desktop.core.retrieval.bm25_index import BM25Index
from spar_desktop.core.retrieval.chunk_table import ChunkTable, PackedTexts, intern_all
from spar_desktop.core.retrieval.fusion import ALPHA_RULES, DEFAULT_ALPHA_RULE
from spar_desktop.core.retrieval.keyword_units import UnitMap, check_unit
from spar_desktop.core.retrieval.searcher import HybridSearcher, KeyOverride

FORMAT = "spar-searcher"
# v2: BM25 indexes keyword units (parents by default), named by "keyword_unit"; a v1 state
# (BM25 over chunks) is stale and rebuilt from the embedding cache.
FORMAT_VERSION = 2
MANIFEST = "manifest.json"


class StateError(ValueError):
    """A saved searcher that cannot be used as it is (the message says why)."""


def keys_digest(keys: list[str]) -> str:
    h = hashlib.blake2b(digest_size=16)
    for k in keys:
        h.update(k.encode("utf-8"))
        h.update(b"\n")
    return h.hexdigest()


def save(searcher: HybridSearcher, directory: str | Path, built_from: Optional[Mapping[str, Any]] = None) -> Path:
    """Write ``searcher`` into ``directory`` (created; meant to be a fresh one: see
    workspaces/searchers.py for the atomic swap). ``built_from`` is recorded in the manifest."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    t = searcher.table
    doc_ids = list(t.titles)
    number = {doc_id: i for i, doc_id in enumerate(doc_ids)}
    _json(d / "keys.json", t.keys)
    _json(d / "docs.json", [{"id": i, "title": t.titles[i], "content_hash": t.doc_refs[i][0],
                             "chunker_key": t.doc_refs[i][1], "file_id": t.file_ids.get(i)} for i in doc_ids])
    _json(d / "parents.json", {"ids": list(t.parent_ids), "orphans": {str(p): v for p, v in t.orphans.items()},
                               "contexts": {str(p): v for p, v in t.contexts.items()}})
    np.save(d / "doc_index.npy", np.asarray([number[x] for x in t.doc_of], dtype=np.int32))
    np.save(d / "pages.npy", np.asarray(t.pages, dtype=np.int32).reshape(len(t), 2))
    np.save(d / "parent_pos.npy", np.asarray(t.parent_pos, dtype=np.int32).reshape(len(t)))
    for name, texts in (("texts", t.texts), ("parent_texts", t.parent_texts)):
        blob, offsets = PackedTexts.pack(texts)
        np.save(d / f"{name}.npy", blob)
        np.save(d / f"{name}_offsets.npy", offsets)
    has_vectors = searcher.original_vectors is not None
    dim = int(searcher.original_vectors.shape[1]) if has_vectors else 0
    if has_vectors:
        np.save(d / "vectors.npy", np.ascontiguousarray(searcher.original_vectors, dtype=np.float32))
    rows, entries = [], []
    for key, o in sorted(searcher.overrides.items()):
        row = -1
        if o.vector is not None:
            row = len(rows)
            rows.append(np.asarray(o.vector, dtype=np.float32))
        entries.append({"key": key, "text": o.extra_text, "tag": o.tag, "row": row})
    _json(d / "overrides.json", entries)
    np.save(d / "override_vectors.npy", np.vstack(rows).astype(np.float32) if rows else np.zeros((0, dim), np.float32))
    if len(searcher.bm25) and searcher.bm25._retriever is not None:
        searcher.bm25.save(d / "bm25")
    manifest = {
        "format": FORMAT, "version": FORMAT_VERSION, "chunks": len(t), "documents": len(doc_ids),
        "keys_digest": keys_digest(t.keys), "dim": dim, "vectors": has_vectors, "overrides": len(entries),
        "candidate_depth": searcher.candidate_depth, "default_alpha": searcher.default_alpha,
        "alpha_rule": searcher.alpha_rule,
        "fill_missing": searcher.fill_missing, "keyword_unit": searcher.keyword_unit,
        "built_from": dict(built_from or {}),
    }
    _json(d / MANIFEST, manifest)  # last: a directory without a manifest is incomplete
    return d


def read_manifest(directory: str | Path) -> dict[str, Any]:
    path = Path(directory) / MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise StateError("no saved searcher") from exc
    except (OSError, ValueError) as exc:
        raise StateError(f"unreadable manifest: {exc}") from exc
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise StateError("not a saved searcher")
    if manifest.get("version") != FORMAT_VERSION:
        raise StateError(f"saved searcher format v{manifest.get('version')} is not v{FORMAT_VERSION}")
    return manifest


def load(directory: str | Path, encoder: Any, *, collection: Any = None, alpha_model: Any = None,
         manifest: Optional[dict[str, Any]] = None) -> HybridSearcher:
    """The saved searcher, its arrays memory-mapped. ``collection``: the Chroma collection that
    holds its vectors (the caller checked it), else dense search runs on the saved matrix."""
    d = Path(directory)
    m = manifest or read_manifest(d)
    try:
        return _load(d, m, encoder, collection, alpha_model)
    except StateError:
        raise
    except Exception as exc:  # noqa: BLE001 - any damaged or missing part means "rebuild"
        raise StateError(f"damaged saved searcher: {type(exc).__name__}: {exc}") from exc


def _load(d: Path, m: dict[str, Any], encoder: Any, collection: Any, alpha_model: Any) -> HybridSearcher:
    n = int(m["chunks"])
    keys = json.loads((d / "keys.json").read_text(encoding="utf-8"))
    if len(keys) != n or keys_digest(keys) != m["keys_digest"]:
        raise StateError("chunk keys do not match the manifest")
    docs = json.loads((d / "docs.json").read_text(encoding="utf-8"))
    parents = json.loads((d / "parents.json").read_text(encoding="utf-8"))
    doc_ids = [x["id"] for x in docs]
    doc_index = _array(d, "doc_index", (n,))
    table = ChunkTable(
        keys=keys, doc_of=[doc_ids[i] for i in doc_index.tolist()],
        texts=PackedTexts(_array(d, "texts", None), _array(d, "texts_offsets", (n + 1,))),
        pages=_array(d, "pages", (n, 2)), parent_pos=_array(d, "parent_pos", (n,)),
        parent_ids=intern_all(parents["ids"]),
        parent_texts=PackedTexts(_array(d, "parent_texts", None), _array(d, "parent_texts_offsets",
                                                                          (len(parents["ids"]) + 1,))),
        orphans={int(p): v for p, v in parents["orphans"].items()},
        contexts={int(p): v for p, v in parents["contexts"].items()},
        titles={x["id"]: x["title"] for x in docs},
        doc_refs={x["id"]: (x["content_hash"], x["chunker_key"]) for x in docs},
        file_ids={x["id"]: x["file_id"] for x in docs},
    )
    bm25 = BM25Index.load(d / "bm25", mmap=True) if (d / "bm25").is_dir() else BM25Index().build_tokens([])

    try:
        units = UnitMap.build(table, check_unit(m["keyword_unit"]))
    except (KeyError, ValueError) as exc:
        raise StateError(f"unknown keyword unit: {exc}") from exc
    if len(bm25) != len(units) or (n and bm25.doc_ids != units.ids):
        raise StateError("the BM25 index does not match the chunks")
    vectors = None
    dim = int(m["dim"])
    if m["vectors"]:
        vectors = _array(d, "vectors", (n, dim))
        if encoder is not None and int(getattr(encoder, "dim", dim)) != dim:
            raise StateError(f"saved vectors have {dim} dimensions, the encoder {encoder.dim}")
    elif encoder is not None:
        raise StateError("saved without dense keys")
    override_rows = _array(d, "override_vectors", None)
    overrides = {}
    for e in json.loads((d / "overrides.json").read_text(encoding="utf-8")):
        vec = np.array(override_rows[e["row"]], dtype=np.float32) if e["row"] >= 0 else None
        overrides[e["key"]] = KeyOverride(vec, e["text"], e["tag"])
    if len(overrides) != m["overrides"]:
        raise StateError("evolved keys do not match the manifest")
    return HybridSearcher.restore(
        table, bm25, vectors, encoder, overrides=overrides, collection=collection, tokenizer=bm25.tokenizer,
        candidate_depth=int(m["candidate_depth"]), default_alpha=float(m["default_alpha"]),
        fill_missing=m["fill_missing"], alpha_model=alpha_model, keyword_unit=units.unit,
        alpha_rule=_alpha_rule(m))


def _alpha_rule(m: dict[str, Any]) -> str:
    # States saved before the rule existed have no entry: they take today's default (a query-time
    # choice, nothing in the saved arrays depends on it).
    rule = m.get("alpha_rule", DEFAULT_ALPHA_RULE)
    if rule not in ALPHA_RULES:
        raise StateError(f"unknown alpha rule: {rule!r}")
    return rule


def _array(d: Path, name: str, shape: Optional[tuple[int, ...]]) -> np.ndarray:
    a = np.load(d / f"{name}.npy", mmap_mode="r", allow_pickle=False)
    if shape is not None and a.shape != shape:
        raise StateError(f"{name}.npy has shape {a.shape}, expected {shape}")
    return a


def _json(path: Path, value: Any) -> None:
    path.write_text(json.dumps(value, ensure_ascii=False), encoding="utf-8")

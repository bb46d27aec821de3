"""Tag-hierarchy induction benchmark (issue 16 part 2): how well induced topics recover known ones.

  newsgroups  newsgroups20 (development train split), the first --per-group posts of each group,
              summarised as the app summarises files (title + ~150 words). Top-level and leaf
              clusters are scored against the 20 groups and the top-level categories (comp, rec,
              sci, talk, ...): purity and NMI, per feature set (TF-IDF phrases alone, summary
              vectors, both), with the induction time.
  pubmedqa    1,000 abstracts, no topic labels: sizes, time, sample names, and MeSH coherence
              (share of a leaf's files carrying the leaf's most common MeSH descriptor, check tags
              on >10% of abstracts ignored), beside the same figure for shuffled leaves.
Vectors are the project encoder's (all-MiniLM-L6-v2), cached under --cache as .npy keyed by
the texts; induction is seeded, so re-runs give the same figures.
Usage: nice -n 10 python benchmarks/tag_hierarchy.py [--per-group 100] [--out FILE]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import platform
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Optional

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from spar_desktop.core.tagging.hierarchy import InduceConfig, induce_hierarchy  # noqa: E402
from spar_desktop.core.tagging.proposal import Proposal  # noqa: E402
from spar_desktop.core.tagging.summaries import summary_text  # noqa: E402
from tests.support.corpora import shared_data  # noqa: E402


def log(*a) -> None:
    print(time.strftime("%X"), *a, file=sys.stderr, flush=True)


def vectors_for(texts: dict[int, str], cache: Path) -> tuple[np.ndarray, np.ndarray]:
    ids = sorted(texts)
    key = hashlib.sha1("\x00".join(texts[i] for i in ids).encode()).hexdigest()[:16]
    path = cache / f"vectors-{key}.npy"
    if path.exists():
        vecs = np.load(path)
    else:
        from spar_desktop.core.embedding.encoder import get_encoder

        log(f"encoding {len(ids)} summaries (cached at {path})")
        vecs = np.asarray(get_encoder("cpu").encode([texts[i] for i in ids]), dtype=np.float32)
        cache.mkdir(parents=True, exist_ok=True)
        np.save(path, vecs)
    vecs = vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
    return np.asarray(ids, dtype=np.int64), vecs.astype(np.float32)


def assignments(p: Proposal) -> tuple[dict[int, str], dict[int, str]]:
    """file -> top node id, file -> leaf node id (a top topic's own files are its leaf)."""
    top, leaf = {}, {}
    for t in p.nodes:
        for f in t.all_file_ids():
            top[f] = t.id
        for f, _ in t.files:
            leaf[f] = t.id
        for c in t.children:
            for f, _ in c.files:
                leaf[f] = c.id
    return top, leaf


def purity(pred: dict[int, str], truth: dict[int, str]) -> float:
    groups: dict[str, Counter] = {}
    for f, c in pred.items():
        groups.setdefault(c, Counter())[truth[f]] += 1
    return round(sum(max(g.values()) for g in groups.values()) / max(1, len(pred)), 4)


def nmi(pred: dict[int, str], truth: dict[int, str]) -> float:
    from sklearn.metrics import normalized_mutual_info_score

    ids = sorted(pred)
    return round(float(normalized_mutual_info_score([truth[i] for i in ids], [pred[i] for i in ids])), 4)


def shape(p: Proposal) -> dict:
    return {"top": len(p.nodes), "leaves": sum(max(1, len(t.children)) for t in p.nodes),
            "top_sizes": [t.file_count for t in p.nodes], "unplaced": p.unplaced,
            "sample_names": [[t.name, [c.name for c in t.children][:4]] for t in p.nodes[:8]]}


def induce(texts: dict[int, str], vectors, features: str) -> tuple[Proposal, float]:
    t0 = time.perf_counter()
    p = induce_hierarchy(texts, None if features == "phrases" else vectors, config=InduceConfig(features=features))
    return p, round(time.perf_counter() - t0, 2)


def newsgroups(per_group: int, cache: Path, features: list[str]) -> dict:
    texts: dict[int, str] = {}
    group: dict[int, str] = {}
    category: dict[int, str] = {}
    seen: Counter = Counter()
    with open(shared_data("newsgroups20") / "corpus.jsonl", encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            meta = rec["metadata"]
            if seen[meta["newsgroup"]] >= per_group:
                continue
            seen[meta["newsgroup"]] += 1
            i = len(texts) + 1
            texts[i] = summary_text(rec["title"], rec["text"])
            group[i], category[i] = meta["newsgroup"], meta["category_path"][0]
    vectors = vectors_for(texts, cache) if any(f != "phrases" for f in features) else None
    out = {"files": len(texts), "groups": len(seen), "categories": len(set(category.values())), "runs": {}}
    for feat in features:
        log(f"newsgroups: {feat}")
        p, secs = induce(texts, vectors, feat)
        top, leaf = assignments(p)
        out["runs"][feat] = {
            "seconds": secs, **shape(p),
            "top_vs_category": {"purity": purity(top, category), "nmi": nmi(top, category)},
            "top_vs_group": {"purity": purity(top, group), "nmi": nmi(top, group)},
            "leaf_vs_group": {"purity": purity(leaf, group), "nmi": nmi(leaf, group)},
        }
        log(json.dumps(out["runs"][feat]["leaf_vs_group"]), secs, "s")
    return out


def pubmedqa(limit: int, cache: Path, features: list[str]) -> dict:
    texts: dict[int, str] = {}
    mesh: dict[int, list[str]] = {}
    with open(shared_data("pubmedqa") / "corpus.jsonl", encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            i = len(texts) + 1
            texts[i] = summary_text(rec.get("title"), rec["text"])
            mesh[i] = list((rec.get("metadata") or {}).get("mesh", []))
            if len(texts) >= limit:
                break
    vectors = vectors_for(texts, cache) if any(f != "phrases" for f in features) else None
    # Check tags (Humans, Male, Adult...) sit on most abstracts and say nothing about a topic.
    freq = Counter(d for ds in mesh.values() for d in set(ds))
    common = {d for d, n in freq.items() if n > 0.1 * len(texts)}
    out = {"files": len(texts), "mesh_ignored": sorted(common), "runs": {}}
    for feat in features:
        log(f"pubmedqa: {feat}")
        p, secs = induce(texts, vectors, feat)
        _, leaf = assignments(p)
        shuffled = dict(zip(sorted(leaf), np.random.default_rng(0).permutation([leaf[f] for f in sorted(leaf)])))
        out["runs"][feat] = {"seconds": secs, **shape(p),
                             "leaf_mesh_coherence": mesh_coherence(leaf, mesh, common),
                             "leaf_mesh_coherence_shuffled": mesh_coherence(shuffled, mesh, common)}
    return out


def mesh_coherence(leaf: dict[int, str], mesh: dict[int, list[str]], common: set[str]) -> float:
    """Share of files that carry their leaf's most common (non-check-tag) MeSH descriptor."""
    members: dict[str, list[int]] = {}
    for f, c in leaf.items():
        members.setdefault(c, []).append(f)
    hits = 0
    for fs in members.values():
        top = Counter(d for f in fs for d in set(mesh[f]) - common).most_common(1)
        hits += top[0][1] if top else 0
    return round(hits / max(1, len(leaf)), 4)


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per-group", type=int, default=100)
    ap.add_argument("--pubmed", type=int, default=1000)
    ap.add_argument("--features", default="phrases,vectors,both")
    ap.add_argument("--cache", default="/tmp/spar-bench-tag-hierarchy")
    ap.add_argument("--out", default=None, help="also write the JSON here")
    ap.add_argument("--only", choices=["newsgroups", "pubmedqa"])
    args = ap.parse_args(argv)
    features = args.features.split(",")
    cache = Path(args.cache)
    result = {"benchmark": "tag_hierarchy", "python": platform.python_version(), "machine": platform.machine(),
              "config": {"per_group": args.per_group, "pubmed": args.pubmed, "features": features}}
    if args.only in (None, "newsgroups"):
        result["newsgroups"] = newsgroups(args.per_group, cache, features)
    if args.only in (None, "pubmedqa"):
        result["pubmedqa"] = pubmedqa(args.pubmed, cache, features)
    text = json.dumps(result, indent=1, ensure_ascii=False)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

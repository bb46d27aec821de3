"""Relations benchmark: EDR-MQ build time and ForceAtlas2 layout time (each side by side with a
reference), and relation quality on real data.

  timing      R for 1,000 queries × k1=5 × k2=5 over 5,183 documents (SciFact's size; seeded
              synthetic unit vectors with topic structure), ours vs a plain-numpy version of the
              same arithmetic, interleaved; ForceAtlas2 on a 5,000-node graph, ours vs
              networkx.forceatlas2_layout per iteration (networkx is O(n²) in memory and time,
              so it runs a few iterations only).
  view        the graph view (offscreen) at 5,000 nodes: first paint, threshold change, zoom.
  newsgroups  newsgroups20 (11,314 posts): EDR-MQ from synthetic queries (titles + one salient
              sentence per post), TF-IDF top-25, dense top-25 and co-occurrence clusters, each
              scored by the precision of its top-E pairs against relations.tsv (E = #relations).
  scifact     SciFact: related = cited by the same train claim; the same precisions (EDR-MQ from
              synthetic queries, from the claims, from both) and session coverage@8 / calls-to-τ
              for vanilla vs cluster expansion (sessions = claims citing ≥ 2 documents).
Vectors go through the app's embedding cache (--data-dir, default /tmp/spar-rel-data), query
vectors are cached next to it (.npy), every random choice is seeded: re-runs give the same figures.
Usage: python benchmarks/relations.py {timing,view,newsgroups,scifact,all} [--out FILE] [--data-dir DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np
from scipy import sparse

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from spar_desktop.core.relations.doc_vectors import normalize_rows  # noqa: E402
from spar_desktop.core.relations.edrmq import EdrmqParams, accumulate_dense, top_k_rows  # noqa: E402
from tests.support.corpora import shared_data  # noqa: E402

DATA_DIR = "/tmp/spar-rel-data"
SEED = 42


def log(*a) -> None:
    print(time.strftime("%X"), *a, file=sys.stderr, flush=True)


# -- timing ---------------------------------------------------------------------------------------
def plain_numpy_edrmq(D: np.ndarray, Q: np.ndarray, k: int = 5, T: float = 0.05) -> sparse.csr_matrix:
    """The reference: the same arithmetic written the obvious way (one product per stage)."""
    n = D.shape[0]
    S1 = Q @ D.T
    z = np.argpartition(S1, n - k, axis=1)[:, n - k:]
    v = np.take_along_axis(S1, z, 1)
    p1 = np.exp((v - v.max(1, keepdims=True)) / T)
    p1 /= p1.sum(1, keepdims=True)
    C = D[z] + Q[:, None, :]
    C /= np.linalg.norm(C, axis=-1, keepdims=True)
    S2 = C.reshape(-1, D.shape[1]) @ D.T
    S2[np.arange(S2.shape[0]), z.ravel()] = -np.inf
    z2 = np.argpartition(S2, n - k, axis=1)[:, n - k:]
    v2 = np.take_along_axis(S2, z2, 1)
    p2 = np.exp((v2 - v2.max(1, keepdims=True)) / T)
    p2 /= p2.sum(1, keepdims=True)
    vals = (p1.reshape(-1, 1) * p2).ravel() / len(Q)
    return sparse.coo_matrix((vals, (np.repeat(z.ravel(), k), z2.ravel())), shape=(n, n)).tocsr()


def synthetic_vectors(n_docs: int, n_queries: int, dim: int = 384, topics: int = 150, seed: int = SEED):
    rng = np.random.default_rng(seed)
    centers = normalize_rows(rng.standard_normal((topics, dim)))
    D = normalize_rows(centers[rng.integers(0, topics, n_docs)] + 0.9 * normalize_rows(rng.standard_normal((n_docs, dim))))
    Q = normalize_rows(D[rng.integers(0, n_docs, n_queries)] + 0.8 * normalize_rows(rng.standard_normal((n_queries, dim))))
    return D.astype(np.float32), Q.astype(np.float32)


def time_edrmq(n_docs: int = 5183, n_queries: int = 1000, repeats: int = 7) -> dict:
    """Wall and CPU time (CPU time is less sensitive to other jobs on a shared machine; with two
    BLAS threads it can exceed wall time). 'ours' is the default path for this size (a full
    second-stage scan: 1,000 × 5 conditional queries do not pay for a neighbour index);
    'ours_indexed' scores second stages from a precomputed neighbour index (what large query
    sets and incremental updates use), whose one-off cost is reported separately."""
    from spar_desktop.core.relations.neighbors import doc_neighbors

    from spar_desktop.core.relations.evaluation import read_jsonl_corpus
    from spar_desktop.core.relations.hybrid import LexicalIndex, accumulate_hybrid
    from spar_desktop.core.relations.synthetic import salient_sentences

    D, Q = synthetic_vectors(n_docs, n_queries)
    t = time.perf_counter()
    nb = doc_neighbors(D)
    index_s = time.perf_counter() - t
    # The hybrid (app default) needs real text for its lexical side: SciFact's 5,183 abstracts and
    # 1,000 of their salient sentences as queries; the vectors stay the synthetic ones above.
    texts = [r.full_text for r in read_jsonl_corpus(shared_data("scifact") / "corpus.jsonl")][:n_docs]
    queries = [s for per in salient_sentences(texts[:n_queries], per_doc=1) for s in per][:n_queries]
    queries += texts[: n_queries - len(queries)]
    t = time.perf_counter()
    lex = LexicalIndex.fit(texts)
    lexical_fit_s = time.perf_counter() - t
    runs = {"plain": lambda: plain_numpy_edrmq(D, Q),
            "ours": lambda: accumulate_dense(D, Q, EdrmqParams(k1=5, k2=5)).matrix(),
            "ours_indexed": lambda: accumulate_dense(D, Q, EdrmqParams(k1=5, k2=5), neighbors=nb).matrix(),
            "hybrid": lambda: accumulate_hybrid(lex, queries, EdrmqParams(), EdrmqParams.alpha, D, Q).matrix(),
            "words_only": lambda: accumulate_hybrid(lex, queries, EdrmqParams(), 0.0).matrix()}
    walls: dict[str, list[float]] = {k: [] for k in runs}
    cpus: dict[str, list[float]] = {k: [] for k in runs}
    results = {k: f() for k, f in runs.items()}  # warm-up (allocator, BLAS threads)
    for _ in range(repeats):  # interleaved, so all see the same machine load
        for name, f in runs.items():
            t, c = time.perf_counter(), time.process_time()
            results[name] = f()
            walls[name].append(time.perf_counter() - t)
            cpus[name].append(time.process_time() - c)

    def stats(v: list[float]) -> dict:
        return {"min": round(min(v), 4), "median": round(float(np.median(v)), 4)}

    out = {"docs": n_docs, "queries": n_queries, "k1": 5, "k2": 5, "repeats": repeats, "target_s": 0.5,
           "neighbor_index_once_s": round(index_s, 3), "lexical_index_once_s": round(lexical_fit_s, 3)}
    for name in runs:
        out[f"{name}_wall_s"] = stats(walls[name])
        out[f"{name}_cpu_s"] = stats(cpus[name])
    for name in ("hybrid", "words_only"):
        out[f"ratio_{name}_over_ours_cpu_min"] = round(min(cpus[name]) / min(cpus["ours"]), 3)
    for name in ("ours", "ours_indexed"):
        out[f"ratio_{name}_over_plain_wall_median"] = round(float(np.median(walls[name]) / np.median(walls["plain"])), 3)
        out[f"ratio_{name}_over_plain_cpu_min"] = round(min(cpus[name]) / min(cpus["plain"]), 3)
        out[f"{name}_max_abs_difference_vs_plain"] = float(abs(results[name] - results["plain"]).max())
    return out


def planted_graph(n: int = 5000, communities: int = 50, seed: int = SEED):
    rng = np.random.default_rng(seed)
    comm = np.arange(n) % communities
    members = [np.flatnonzero(comm == c) for c in range(communities)]
    edges = set()
    for i in range(n):
        for j in rng.choice(members[comm[i]], 5, replace=False):
            if i != j:
                edges.add((min(i, int(j)), max(i, int(j))))
        if rng.random() < 0.5:
            j = int(rng.integers(n))
            if j != i:
                edges.add((min(i, j), max(i, j)))
    e = np.array(sorted(edges), dtype=np.int64)
    return e, rng.random(len(e)) * 0.1 + 0.001


def layout_separation(P: np.ndarray, comm: np.ndarray, seed: int = SEED) -> float:
    """Mean distance between random same-community pairs / between random pairs of different
    communities: 1.0 = no visible structure, near 0 = communities drawn apart."""
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, len(P), 20000), rng.integers(0, len(P), 20000)
    d = np.linalg.norm(P[a] - P[b], axis=1)
    same = comm[a] == comm[b]
    return round(float(d[same].mean() / d[~same].mean()), 3)


def time_layout(n: int = 5000, iterations: int = 100, nx_iterations: int = 3) -> dict:
    """Ours (Table 1, spectral start) vs networkx.forceatlas2_layout per iteration on a planted
    50-community graph; plus how well each variant separates the planted communities."""
    import networkx as nx

    from spar_desktop.core.relations.layout import PAPER_TABLE1, ForceAtlas2Settings, forceatlas2

    edges, weights = planted_graph(n)
    comm = np.arange(n) % 50
    t = time.perf_counter()
    P = forceatlas2(n, edges, weights, iterations=iterations, seed=SEED)
    ours = time.perf_counter() - t
    quality = {"table1_spectral_start": layout_separation(P, comm)}
    quality["table1_random_start"] = layout_separation(
        forceatlas2(n, edges, weights, iterations=iterations, seed=SEED, start="random"), comm)
    direct = ForceAtlas2Settings(invert_edge_weights=False)
    quality["weights_not_inverted_spectral_start"] = layout_separation(
        forceatlas2(n, edges, weights, direct, iterations=iterations, seed=SEED), comm)
    G = nx.Graph()
    G.add_nodes_from(range(n))
    G.add_weighted_edges_from((int(a), int(b), float(w)) for (a, b), w in zip(edges, weights))
    t = time.perf_counter()
    nx.forceatlas2_layout(G, max_iter=nx_iterations, weight="weight", linlog=True, distributed_action=True,
                          scaling_ratio=PAPER_TABLE1.scaling_ratio, gravity=PAPER_TABLE1.gravity, seed=SEED)
    nx_s = time.perf_counter() - t
    per_ours, per_nx = ours / iterations, nx_s / nx_iterations
    return {"nodes": n, "edges": int(len(edges)), "iterations": iterations, "ours_total_s": round(ours, 2),
            "ours_per_iteration_ms": round(per_ours * 1000, 2),
            "networkx_per_iteration_ms": round(per_nx * 1000, 1), "networkx_iterations_timed": nx_iterations,
            "ratio_ours_over_networkx_per_iteration": round(per_ours / per_nx, 4),
            "community_separation_after_iterations": quality}


def time_view(n: int = 5000) -> dict:
    """The graph view with a laid-out 5,000-node payload (offscreen Qt): payload → first paint,
    threshold change → repaint, pan/zoom → repaint. Qt lives only here, never in the core."""
    import os

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QRectF
    from PySide6.QtWidgets import QApplication

    from spar_desktop.core.relations.layout import forceatlas2
    from spar_desktop.core.relations.payload import make_payload
    from spar_desktop.ui.relations.graph_view import GraphView

    edges, weights = planted_graph(n)
    P = forceatlas2(n, edges, weights, iterations=100, seed=SEED)
    payload = make_payload([str(i) for i in range(n)], [f"doc {i}" for i in range(n)], P, edges, weights,
                           file_ids=list(range(n)), groups={"community": np.arange(n) % 50})
    app = QApplication.instance() or QApplication([])
    view = GraphView()
    view.resize(1200, 800)
    view.show()
    app.processEvents()
    timings = {}
    t = time.perf_counter()
    view.set_payload(payload)
    view.plot.grab()
    timings["set_payload_and_first_paint_ms"] = round((time.perf_counter() - t) * 1000, 1)
    slider, pan = [], []
    for v in (20, 50, 80, 0, 35):
        t = time.perf_counter()
        view.slider.setValue(v)
        view.plot.grab()
        slider.append(time.perf_counter() - t)
    vb = view.plot.getViewBox()
    for f in (0.5, 0.25, 1.0):
        t = time.perf_counter()
        vb.setRange(QRectF(P[:, 0].min() * f, P[:, 1].min() * f, np.ptp(P[:, 0]) * f, np.ptp(P[:, 1]) * f), padding=0)
        view.plot.grab()
        pan.append(time.perf_counter() - t)
    view.close()
    return {"nodes": n, "edges": int(len(edges)), **timings,
            "threshold_change_repaint_ms_median": round(float(np.median(slider)) * 1000, 1),
            "zoom_repaint_ms_median": round(float(np.median(pan)) * 1000, 1)}


# -- quality ------------------------------------------------------------------------------------------
def cached_query_vectors(encoder, texts: list[str], data_dir: str) -> np.ndarray:
    """Query vectors cached as .npy keyed by (model, texts): re-runs skip the encoder."""
    key = hashlib.sha256((encoder.model_id + "\n" + "\n".join(texts)).encode("utf-8")).hexdigest()[:20]
    path = Path(data_dir) / "bench-queries" / f"{key}.npy"
    if path.is_file():
        return np.load(path, allow_pickle=False)
    t = time.perf_counter()
    V = encoder.encode(texts, batch_size=128)
    log(f"encoded {len(texts)} queries in {time.perf_counter() - t:.0f}s")
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, V, allow_pickle=False)
    return V


class CachingEncoder:
    """Wraps the encoder so every query text is embedded once per run (and once across runs via
    cached_query_vectors): the suites and the session evaluation share many sentences."""

    def __init__(self, encoder, data_dir: str) -> None:
        self.encoder, self.data_dir = encoder, data_dir
        self.model_id, self.dim = encoder.model_id, encoder.dim
        self.memo: dict[str, np.ndarray] = {}

    def encode(self, texts, batch_size: int = 128, progress=None, cancel=None) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self.memo]
        if missing:
            self.memo.update(zip(missing, cached_query_vectors(self.encoder, missing, self.data_dir)))
        return np.stack([self.memo[t] for t in texts]) if len(texts) else np.zeros((0, self.dim), np.float32)

    def encode_query(self, text: str) -> np.ndarray:
        return self.encode([text])[0]


def dense_top_k(D: np.ndarray, k: int = 25) -> sparse.csr_matrix:
    from spar_desktop.core.relations.cooc import nearest_neighbors

    nb = nearest_neighbors(D, k)
    rows = np.repeat(np.arange(D.shape[0]), nb.shape[1])
    sims = np.einsum("ij,ij->i", D[rows], D[nb.ravel()])
    return sparse.coo_matrix((sims.astype(np.float64), (rows, nb.ravel())), shape=(D.shape[0],) * 2).tocsr()


EDRMQ_VARIANTS = (("dense", 1.0), ("hybrid", EdrmqParams.alpha), ("words", 0.0))  # (name, dense weight α)
APP_DEFAULT = "edrmq_hybrid_synthetic"  # what the app builds with no query log: hybrid, synthetic queries


def with_cis(out: dict, hits: dict[str, np.ndarray], base: str = "tfidf_top25") -> None:
    """Precision@E with a 95% bootstrap CI over the true pairs, and each method's paired difference
    to the TF-IDF baseline (same resampled pairs for both): evaluation.true_pair_hits."""
    from spar_desktop.core.relations.session_metrics import bootstrap_ci, paired_bootstrap_ci

    for name, h in hits.items():
        out[name]["precision_ci95"] = [round(x, 4) for x in bootstrap_ci(h.astype(float))]
        if name != base and base in hits:
            out[name]["minus_tfidf"] = round(float(h.mean() - hits[base].mean()), 4)
            out[name]["minus_tfidf_ci95"] = [round(x, 4) for x in paired_bootstrap_ci(hits[base].astype(float),
                                                                                        h.astype(float))]


def relation_suite(docs, pairs: set, encoder, data_dir: str, extra_queries: dict[str, list[str]] | None = None) -> dict:
    """EDR-MQ (dense, hybrid, words only; synthetic queries as the app draws them, plus any extra
    query sets), TF-IDF top-25, dense top-25, co-occurrence clusters — each scored against the same
    true pairs, with CIs."""
    from spar_desktop.core.relations.clusters import cluster_sequences
    from spar_desktop.core.relations.cooc import build_sequences, nearest_neighbors, question_sequences
    from spar_desktop.core.relations.evaluation import cluster_pair_stats, edge_precision, true_pair_hits
    from spar_desktop.core.relations.hybrid import LexicalIndex, accumulate_hybrid
    from spar_desktop.core.relations.synthetic import synthetic_queries
    from spar_desktop.core.relations.tfidf import tfidf_top_k

    D = docs.vectors
    out: dict = {"documents": len(docs), "true_pairs": len(pairs),
                 "random_precision": round(len(pairs) / (len(docs) * (len(docs) - 1) / 2), 7),
                 "app_default": APP_DEFAULT}
    hits: dict[str, np.ndarray] = {}
    t = time.perf_counter()
    sq = synthetic_queries(docs.titles, docs.texts)  # the app's defaults
    out["synthetic_queries"] = {"total": len(sq), "titles": sum(q.kind == "title" for q in sq),
                                "sentences": sum(q.kind == "sentence" for q in sq),
                                "seconds": round(time.perf_counter() - t, 1)}
    synthetic = [q.text for q in sq]
    sets = {"synthetic": synthetic}
    for name, texts in (extra_queries or {}).items():
        sets[name] = list(texts)
        sets[f"{name}+synthetic"] = list(texts) + synthetic
    t = time.perf_counter()
    lex = LexicalIndex.fit(docs.texts)
    out["lexical_index_s"] = round(time.perf_counter() - t, 2)
    for set_name, texts in sets.items():
        V = encoder.encode(texts)
        for variant, alpha in EDRMQ_VARIANTS:
            name = f"edrmq_{variant}_{set_name}"
            t = time.perf_counter()
            if variant == "dense":
                R = accumulate_dense(D, V, EdrmqParams()).matrix()
            else:
                R = accumulate_hybrid(lex, texts, EdrmqParams(alpha=alpha), alpha, D, V).matrix()
            res = edge_precision(R, pairs, combine="sum")
            res.update(queries=len(texts), dense_weight=alpha, build_s=round(time.perf_counter() - t, 2))
            hits[name] = true_pair_hits(R, pairs, combine="sum")
            out[name] = res
            log(name, res)
    t = time.perf_counter()
    Rt = tfidf_top_k(docs.texts)
    out["tfidf_top25"] = {**edge_precision(Rt, pairs, combine="max"), "build_s": round(time.perf_counter() - t, 2)}
    hits["tfidf_top25"] = true_pair_hits(Rt, pairs, combine="max")
    log("tfidf", out["tfidf_top25"])
    Rd = dense_top_k(D)
    out["dense_top25"] = edge_precision(Rd, pairs, combine="max")
    hits["dense_top25"] = true_pair_hits(Rd, pairs, combine="max")
    log("dense", out["dense_top25"])
    # co-occurrence clusters without any ground truth: walks + question-driven paths
    t = time.perf_counter()
    SV = encoder.encode(synthetic)
    sentences = [i for i, q in enumerate(sq) if q.kind == "sentence"]
    retrieved = np.vstack([top_k_rows(SV[sentences[i:i + 1024]] @ D.T, 4)[0] for i in range(0, len(sentences), 1024)])
    questions = question_sequences([sq[i].doc_index for i in sentences], retrieved, 3)
    seqs = build_sequences(len(docs), neighbors=nearest_neighbors(D, 10), questions=questions)
    clusters = cluster_sequences(seqs, len(docs))
    Rc = clusters.relation_matrix()
    out["cooc_clusters"] = {**cluster_pair_stats(clusters.labels, pairs), "sequences": len(seqs),
                            "top_e_by_cooc_cosine": edge_precision(Rc, pairs, combine="max"),
                            "build_s": round(time.perf_counter() - t, 1)}
    hits["cooc_top_e"] = true_pair_hits(Rc, pairs, combine="max")
    out["cooc_top_e"] = dict(out["cooc_clusters"]["top_e_by_cooc_cosine"])
    log("cooc", out["cooc_clusters"])
    with_cis(out, hits)
    return out


def run_newsgroups(data_dir: str, limit: int | None = None) -> dict:
    from spar_desktop.core.embedding.encoder import get_encoder
    from spar_desktop.core.relations.evaluation import corpus_docs, read_jsonl_corpus, read_relation_pairs

    folder = shared_data("newsgroups20")
    records = read_jsonl_corpus(folder / "corpus.jsonl")
    if limit:
        records = records[:limit]
    raw = get_encoder("cpu")
    t = time.perf_counter()
    docs = corpus_docs(records, data_dir, encoder=raw)
    encoder = CachingEncoder(raw, data_dir)
    log(f"newsgroups: {len(docs)} documents ready in {time.perf_counter() - t:.0f}s")
    pairs = read_relation_pairs(folder / "relations.tsv", docs.index())
    out = relation_suite(docs, pairs, encoder, data_dir)
    out["note"] = ("replies usually keep the subject ('Re: ...'), so title queries are a strong, legitimate "
                   "signal; replies also quote their parent, which helps TF-IDF")
    return out


def run_scifact(data_dir: str, with_sessions: bool = False) -> dict:
    from spar_desktop.core.embedding.encoder import get_encoder
    from spar_desktop.core.eval.beir import load_beir
    from spar_desktop.core.relations.beir_sessions import evaluate_beir_sessions
    from spar_desktop.core.relations.evaluation import corpus_docs, pairs_from_groups

    folder = shared_data("scifact")
    ds = load_beir(folder, "train")
    raw = get_encoder("cpu")
    docs = corpus_docs(list(ds.corpus.values()), data_dir, encoder=raw)
    encoder = CachingEncoder(raw, data_dir)
    pairs = pairs_from_groups([[d for d, r in rels.items() if r > 0] for rels in ds.qrels.values()], docs.index())
    claims = [ds.queries[q] for q in ds.queries]
    out = relation_suite(docs, pairs, encoder, data_dir, {"claims": claims})
    out["note"] = ("edrmq_claims uses the 809 train claims as the query log (the EDR-MQ paper's setting); the "
                   "claims are also what defines the true pairs, so it shows what a real query log contributes")
    if not with_sessions:  # benchmarks/relations_sessions.py measures sessions on SciFact and NFCorpus
        return out
    sessions = {}
    for holdout in (0.0, 0.5):
        report, extras = evaluate_beir_sessions(folder, "train", data_dir, holdout=holdout, encoder=encoder)
        sessions[f"holdout={holdout}"] = {**report.to_json(), "setup": extras}
        log("sessions", holdout, {k: (v.coverage, v.coverage_delta, v.coverage_delta_ci95)
                                  for k, v in report.systems.items()})
    out["sessions"] = sessions
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=("timing", "view", "newsgroups", "scifact", "all"))
    ap.add_argument("--data-dir", default=DATA_DIR)
    ap.add_argument("--out", help="write the JSON report here (always printed to stdout)")
    ap.add_argument("--limit", type=int, help="newsgroups: only the first N posts (quick runs)")
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    import os

    report: dict = {"machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                                "load_avg_start": [round(x, 2) for x in os.getloadavg()]}}
    if args.what in ("timing", "all"):
        report["edrmq_build"] = time_edrmq(repeats=args.repeats)
        log("edrmq timing", report["edrmq_build"])
        report["layout"] = time_layout()
        log("layout timing", report["layout"])
    if args.what in ("view", "all"):
        report["graph_view"] = time_view()
        log("view timing", report["graph_view"])
    if args.what in ("scifact", "all"):
        report["scifact"] = run_scifact(args.data_dir)
    if args.what in ("newsgroups", "all"):
        report["newsgroups"] = run_newsgroups(args.data_dir, args.limit)
    report["machine"]["load_avg_end"] = [round(x, 2) for x in os.getloadavg()]
    text = json.dumps(report, indent=1)
    print(text)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

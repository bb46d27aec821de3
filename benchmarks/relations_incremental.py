"""Relations that follow the files: a full EDR-MQ build vs an incremental update after 1% of the
documents changed (a third added, a third edited, a third removed), side by side in one run, on
SciFact's 5,183 abstracts through the app's pipeline (corpus_docs: extract → chunk → embedding
cache; the service's one accumulate function; the store). Prints JSON.

Both timed paths start from the same changed corpus and pay the same document load (the
embedding cache read; the edited abstracts are embedded once beforehand and reported apart, as
either path would pay it). The full build uses the encoder for every query; the build the update
starts from is made with the full build's recorded query vectors (it is setup, not measured).
Quality: the incremental graph against the exact rebuild (the same top pairs? the new documents'
neighbours?) and both against SciFact's co-cited pairs. Also: EDR-MQ's marginalisation alone for
1,000 queries × 5 × 5 at 5,183 documents (benchmarks/relations.py time_edrmq), since the build
path now runs through incremental.update_edrmq.

Usage: python benchmarks/relations_incremental.py [--cache /tmp/spar-r-cache/data/embeddings.sqlite3]
       [--share 0.01] [--out FILE]
The cache file is copied into a temporary data dir first: the run never writes into it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.corpora import shared_data  # noqa: E402

SEED = 42
GOAL = 0.10  # incremental ≤ 10% of full


def log(*a) -> None:
    print(time.strftime("%X"), *a, file=sys.stderr, flush=True)


class RecordingEncoder:
    """The real encoder, timed; remembers every query vector so the (unmeasured) setup build can
    reuse them instead of encoding the same sentences again."""

    def __init__(self, encoder, memo: dict | None = None, record: bool = True) -> None:
        self.encoder, self.model_id, self.dim = encoder, encoder.model_id, encoder.dim
        self.memo = {} if memo is None else memo
        self.record, self.seconds, self.texts = record, 0.0, 0

    def encode(self, texts, batch_size: int = 128, progress=None, cancel=None) -> np.ndarray:
        texts = list(texts)
        missing = [t for t in dict.fromkeys(texts) if t not in self.memo] if not self.record else texts
        t0 = time.perf_counter()
        V = self.encoder.encode(missing, batch_size=batch_size) if missing else np.zeros((0, self.dim), np.float32)
        self.seconds += time.perf_counter() - t0
        self.texts += len(missing)
        self.memo.update(zip(missing, V))
        return V if self.record else np.stack([self.memo[t] for t in texts])


def change_corpus(records: list, share: float, seed: int = SEED):
    """(before, after, mix): ``share`` of the corpus changes — a third held out then added, a
    third edited (one sentence of another abstract appended), a third removed."""
    from spar_desktop.core.eval.beir import BeirDoc

    rng = np.random.default_rng(seed)
    n = max(3, round(share * len(records)))
    picks = rng.permutation(len(records))[:n]
    added, edited, removed = (set(picks[i::3].tolist()) for i in range(3))
    donors = rng.permutation(len(records))
    before = [r for i, r in enumerate(records) if i not in added]
    after = []
    for i, r in enumerate(records):
        if i in removed:
            continue
        if i in edited:
            donor = records[int(donors[i])].text.split(". ")[0].strip()
            r = BeirDoc(r.doc_id, r.title, f"{r.text} {donor}.")
        after.append(r)
    mix = {"added": len(added), "edited": len(edited), "removed": len(removed), "total": n,
           "share_of_corpus": round(n / len(records), 4)}
    return before, after, mix, {records[i].doc_id for i in added}, {records[i].doc_id for i in edited}


def fingerprints(records: list) -> dict[str, str]:
    from spar_desktop.core.embedding.pipeline import content_hash

    return {r.doc_id: content_hash(r.full_text) for r in records}


def top_pairs(R, e: int) -> set:
    from scipy import sparse

    from spar_desktop.core.relations.graph import undirected

    coo = sparse.triu(undirected(R, "sum"), k=1).tocoo()
    order = np.lexsort((coo.col, coo.row, -coo.data))[:e]
    return set(zip(coo.row[order].tolist(), coo.col[order].tolist()))


def neighbours(R, row: int, k: int = 5) -> list[int]:
    from spar_desktop.core.relations.graph import undirected

    r = undirected(R, "sum").tocsr().getrow(row)
    return r.indices[np.lexsort((r.indices, -r.data))[:k]].tolist()


def run(cache: Path, share: float, limit: int | None = None) -> dict:
    from spar_desktop.core.eval.beir import load_beir
    from spar_desktop.core.embedding.encoder import get_encoder
    from spar_desktop.core.relations import persist
    from spar_desktop.core.relations.edrmq import EdrmqParams
    from spar_desktop.core.relations.evaluation import corpus_docs, edge_precision, pairs_from_groups
    from spar_desktop.core.relations.build_delta import fresh_queries, update_edrmq
    from spar_desktop.core.relations.names import DEFAULT_RETRIEVER
    from spar_desktop.core.relations.service import edrmq_accumulator
    from spar_desktop.core.relations.synthetic import synthetic_queries

    work = Path(tempfile.mkdtemp(prefix="spar-rel-incr-"))
    data = work / "data"
    data.mkdir()
    shutil.copyfile(cache, data / "embeddings.sqlite3")
    try:
        ds = load_beir(shared_data("scifact"), "train")
        records = list(ds.corpus.values())[:limit]
        before, after, mix, added_ids, edited_ids = change_corpus(records, share)
        raw = get_encoder("cpu")
        params = EdrmqParams()
        out: dict = {"corpus": "scifact", "documents_before": len(before), "documents_after": len(after),
                     "change": mix, "params": {"k1": params.k1, "k2": params.k2}}

        t = time.perf_counter()
        corpus_docs(after, data, encoder=raw)  # embeds the edited abstracts (either path would)
        out["embed_edited_documents_s"] = round(time.perf_counter() - t, 2)
        t = time.perf_counter()
        docs_after = corpus_docs(after, data, encoder=raw)
        load_s = time.perf_counter() - t
        out["load_documents_s"] = round(load_s, 2)
        log("documents", len(docs_after), f"{load_s:.1f}s")

        # -- the full build of the changed corpus (timed) -----------------------------------------
        full_enc = RecordingEncoder(raw)
        t = time.perf_counter()
        full = update_edrmq(docs_after, edrmq_accumulator(DEFAULT_RETRIEVER, params, full_enc),
                            fingerprints=fingerprints(after))
        build_s = time.perf_counter() - t
        t = time.perf_counter()
        full_dir = persist.save(work / "full", persist.StoredRelations("edrmq", "bench", full.ids, full.acc,
                                                                       fingerprints=fingerprints(after)))
        save_s = time.perf_counter() - t
        out["full"] = {"queries_run": int(full.acc.n_queries), "fresh_documents": full.fresh,
                       "encode_queries_s": round(full_enc.seconds, 2), "build_s": round(build_s, 2),
                       "save_s": round(save_s, 2), "total_s": round(load_s + build_s + save_s, 2)}
        log("full", out["full"])

        # -- setup: the build before the change, from recorded query vectors (not timed) -----------
        docs_before = corpus_docs(before, data, encoder=raw)
        setup = update_edrmq(docs_before, edrmq_accumulator(DEFAULT_RETRIEVER, params, RecordingEncoder(raw, full_enc.memo,
                                                                                              record=False)),
                             fingerprints=fingerprints(before))
        prev_dir = persist.save(work / "incremental", persist.StoredRelations(
            "edrmq", "bench", setup.ids, setup.acc, stats={"queries": setup.counts}, fingerprints=fingerprints(before)))

        # -- the incremental update (timed) ----------------------------------------------------------
        inc_enc = RecordingEncoder(raw)
        t = time.perf_counter()
        prev = persist.load(prev_dir)
        load_store_s = time.perf_counter() - t
        t = time.perf_counter()
        inc = update_edrmq(docs_after, edrmq_accumulator(DEFAULT_RETRIEVER, params, inc_enc), prev=prev,
                           fingerprints=fingerprints(after))
        update_s = time.perf_counter() - t
        t = time.perf_counter()
        persist.save(prev_dir, persist.StoredRelations("edrmq", "bench", inc.ids, inc.acc, fingerprints=fingerprints(after)))
        inc_save_s = time.perf_counter() - t
        inc_total = load_s + load_store_s + update_s + inc_save_s
        out["incremental"] = {"changes": inc.changes.to_json(), "fresh_documents": inc.fresh,
                              "queries_run": int(inc.acc.n_queries - prev.acc.n_queries),
                              "encode_queries_s": round(inc_enc.seconds, 2), "load_store_s": round(load_store_s, 2),
                              "update_s": round(update_s, 2), "save_s": round(inc_save_s, 2),
                              "total_s": round(inc_total, 2)}
        log("incremental", out["incremental"])
        full_total = out["full"]["total_s"]
        out["ratio_incremental_over_full"] = round(inc_total / full_total, 4)
        out["ratio_without_document_load"] = round((inc_total - load_s) / (full_total - load_s), 4)
        out["goal"] = f"incremental <= {GOAL:.0%} of full"
        out["goal_met"] = inc_total <= GOAL * full_total

        # -- quality: incremental vs the exact rebuild, both vs co-cited pairs --------------------
        R_full = persist.load(full_dir).matrix()
        at = {d: i for i, d in enumerate(inc.ids)}
        order = [at[d] for d in full.ids]  # the incremental rows in the full build's order
        R_inc = inc.acc.matrix()[order][:, order]
        index = {d: i for i, d in enumerate(full.ids)}
        pairs = pairs_from_groups([[d for d, r in rels.items() if r > 0] for rels in ds.qrels.values()], index)
        e = len(pairs) or len(full.ids)  # the top-E pairs compared (E = co-cited pairs, as in relations.py)
        same = len(top_pairs(R_inc, e) & top_pairs(R_full, e))
        fresh_rows = [index[d] for d in sorted(added_ids | edited_ids) if d in index]
        overlap = [len(set(neighbours(R_inc, r)) & set(neighbours(R_full, r))) / 5 for r in fresh_rows]
        out["quality"] = {
            "cocited_pairs": len(pairs),
            "full_top_e_precision": edge_precision(R_full, pairs)["precision"],
            "incremental_top_e_precision": edge_precision(R_inc, pairs)["precision"],
            "top_e_pairs_shared_with_full": round(same / e, 4),
            "new_and_edited_documents_top5_neighbours_shared_with_full": round(float(np.mean(overlap)), 4),
        }
        # why new documents' sentences are weighed with a sample of the others (build_delta.py)
        rows = [i for i, d in enumerate(docs_after.ids) if d in added_ids | edited_ids]
        exact = {}
        for q in synthetic_queries(docs_after.titles, docs_after.texts):
            exact.setdefault(q.doc_index, set()).add(q.text)
        with_context = {}
        for q in fresh_queries(docs_after, rows):
            with_context.setdefault(rows[q.doc_index], set()).add(q.text)
        alone = {}
        for q in synthetic_queries([docs_after.titles[i] for i in rows], [docs_after.texts[i] for i in rows]):
            alone.setdefault(rows[q.doc_index], set()).add(q.text)

        def agreement(got: dict) -> float:
            return round(float(np.mean([len(got.get(r, set()) & exact.get(r, set())) / max(1, len(exact.get(r, set())))
                                        for r in rows])), 4)

        out["quality"]["new_documents_queries_as_full_build"] = {"with_context_sample": agreement(with_context),
                                                                 "new_documents_alone": agreement(alone)}
        log("quality", out["quality"])
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cache", type=Path, default=Path("/tmp/spar-r-cache/data/embeddings.sqlite3"),
                    help="an embedding cache holding SciFact's chunk vectors (copied, never written)")
    ap.add_argument("--share", type=float, default=0.01, help="share of the documents that change")
    ap.add_argument("--limit", type=int, help="only the first N abstracts (a quick check of the script)")
    ap.add_argument("--repeats", type=int, default=3, help="EDR-MQ marginalisation timing repeats")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    report: dict = {"machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                                "load_avg_start": [round(x, 2) for x in os.getloadavg()]}}
    report["incremental_vs_full"] = run(args.cache, args.share, args.limit)
    from benchmarks.relations import time_edrmq

    report["edrmq_marginalisation"] = time_edrmq(repeats=args.repeats)
    report["machine"]["load_avg_end"] = [round(x, 2) for x in os.getloadavg()]
    text = json.dumps(report, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

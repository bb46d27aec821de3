"""Quality of automatic tag suggestions (core/tagging) on development data.

(i) PubMedQA abstracts with their MeSH descriptors (taxonomy tags): a 20% seed keeps its
    confirmed descriptors, the other 80% have theirs removed; precision@5 and recall@5 of the
    descriptors suggested for the hidden 80%, per method: tag text only, neighbours only,
    combined (the app's default settings). "stored" is the end-to-end path: the real job writes
    its suggestions (threshold and all) and the review queue is read back.
(ii) newsgroups20, N posts per group written under their group folders: leave-one-out folder
    category accuracy: each post's own folder tags hidden (it is its own neighbour never), is the
    top suggested leaf folder tag its group?
Summaries live in a data dir under /tmp reused across runs (``--work``), so a rerun only scores.
Usage: nice -n 10 python benchmarks/tag_suggestions.py [--per-group 150] [--tune] [--out FILE]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from sqlalchemy import delete, select  # noqa: E402

from spar_desktop.core.config import load_settings  # noqa: E402
from spar_desktop.core.embedding.encoder import get_encoder  # noqa: E402
from spar_desktop.core.library.database import Library  # noqa: E402
from spar_desktop.core.library.models import FileTag, Tag, TagEdge, TagSource  # noqa: E402
from spar_desktop.core.library.scanner import Scanner  # noqa: E402
from spar_desktop.core.library.taxonomy import assign_from_csv  # noqa: E402
from spar_desktop.core.tagging import review  # noqa: E402
from spar_desktop.core.tagging.scoring import SuggestConfig  # noqa: E402
from spar_desktop.core.tagging.suggest import _context, score_batch, suggest_files  # noqa: E402
from spar_desktop.core.tagging.summaries import SummaryStore, summarize_files  # noqa: E402
from tests.support.corpora import DATA  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "tag_suggestions.json"


def methods(cfg: SuggestConfig) -> dict[str, SuggestConfig]:
    return {"tag_text": replace(cfg, w_neighbours=0.0), "neighbours": replace(cfg, w_text=0.0), "combined": cfg}


def open_library(data_dir: Path) -> tuple[Library, object]:
    settings = load_settings(data_dir)
    return Library.open(settings), settings


# -- (i) PubMedQA -----------------------------------------------------------------------------------
def pubmedqa_setup(work: Path, encoder) -> tuple[Library, dict[int, set[int]], list[int], tuple[int, float]]:
    share, data_dir = work / "pubmedqa-corpus", work / "pubmedqa-data"
    mesh: dict[str, list[str]] = {}
    share.mkdir(parents=True, exist_ok=True)
    with open(DATA / "pubmedqa" / "corpus.jsonl", encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            path = share / f"{rec['_id']}.txt"
            if not path.exists():
                path.write_text(rec["text"], encoding="utf-8")
            mesh[rec["_id"]] = rec["metadata"].get("mesh", [])
    lib, settings = open_library(data_dir)
    Scanner(lib).scan([str(share)])
    assignments = work / "mesh.csv"
    with open(assignments, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        for doc_id, terms in mesh.items():
            if terms:
                w.writerow([f"{doc_id}.txt", *terms])
    with lib.session() as s:
        s.execute(delete(FileTag).where(FileTag.source.in_([TagSource.TAXONOMY, TagSource.AUTO, TagSource.LLM])))
    with lib.session() as s:
        assign_from_csv(s, assignments, str(share))
    with lib.session() as s:
        gold: dict[int, set[int]] = {}
        for fid, tid in s.execute(select(FileTag.file_id, FileTag.tag_id).join(Tag, Tag.id == FileTag.tag_id)
                                  .where(Tag.source == TagSource.TAXONOMY)):
            gold.setdefault(fid, set()).add(tid)
    t0 = time.perf_counter()
    summarized = summarize_files(lib, settings, encoder).summarized
    summarize_s = time.perf_counter() - t0
    files = sorted(gold)
    rng = random.Random(0)
    hidden = sorted(rng.sample(files, int(round(0.8 * len(files)))))
    with lib.session() as s:  # the hidden 80% lose their descriptors
        for i in range(0, len(hidden), 500):
            s.execute(delete(FileTag).where(FileTag.file_id.in_(hidden[i:i + 500]), FileTag.source == TagSource.TAXONOMY))
    return lib, gold, hidden, (summarized, summarize_s)


def rank(lib: Library, encoder, cfg: SuggestConfig, file_ids: list[int], k: int,
         only: set[int] | None = None) -> dict[int, list[int]]:
    """Top-k tag ids per file by the embedding scores (no threshold), ``only``: allowed tag ids."""
    ids, vecs = SummaryStore(lib).matrix(encoder.model_id)
    ctx = _context(lib, encoder, ids, vecs)
    pos = {int(f): i for i, f in enumerate(ids)}
    allowed = None if only is None else np.asarray([t in only for t in ctx.vocab.ids])
    out: dict[int, list[int]] = {}
    for start in range(0, len(file_ids), 256):
        part = [f for f in file_ids[start:start + 256] if f in pos]
        rows = np.asarray([pos[f] for f in part], dtype=np.int64)
        scores = score_batch(ctx, ids[rows], vecs[rows], cfg)
        if allowed is not None:
            scores[:, ~allowed] = -1.0
        top = np.argsort(-scores, axis=1, kind="stable")[:, :k]
        for f, cols in zip(part, top):
            out[f] = [ctx.vocab.ids[c] for c in cols]
    return out


def pr_at_k(ranked: dict[int, list[int]], gold: dict[int, set[int]], k: int) -> dict[str, float]:
    p = [len(set(ranked[f][:k]) & gold[f]) / k for f in ranked]
    r = [len(set(ranked[f][:k]) & gold[f]) / len(gold[f]) for f in ranked if gold[f]]
    return {f"precision@{k}": round(float(np.mean(p)), 4), f"recall@{k}": round(float(np.mean(r)), 4)}


def pubmedqa(work: Path, encoder, cfg: SuggestConfig, tune: bool) -> dict:
    lib, gold, hidden, (summarized, summarize_s) = pubmedqa_setup(work, encoder)
    result = {"files": len(gold), "hidden": len(hidden), "seed": len(gold) - len(hidden),
              "mean_gold_descriptors": round(float(np.mean([len(gold[f]) for f in hidden])), 2),
              "summarized_this_run": summarized, "summarize_s": round(summarize_s, 1)}
    # Baseline: the seed's five most frequent descriptors for every file ('Humans', 'Female'...).
    seed_counts: dict[int, int] = {}
    for f in set(gold) - set(hidden):
        for t in gold[f]:
            seed_counts[t] = seed_counts.get(t, 0) + 1
    common = sorted(seed_counts, key=lambda t: -seed_counts[t])[:5]
    result["most_frequent_baseline"] = pr_at_k({f: common for f in hidden}, gold, 5)
    for name, m in methods(cfg).items():
        result[name] = pr_at_k(rank(lib, encoder, m, hidden, 5), gold, 5)
    # Topical descriptors only: without the check tags carried by more than 10% of the seed
    # ('Humans', 'Female', 'Adult', 'Retrospective Studies'...), which a frequency prior already gets.
    topical = {t for f in gold for t in gold[f]} - {t for t, n in seed_counts.items() if n > 0.1 * result["seed"]}
    gold_topical = {f: gold[f] & topical for f in hidden if gold[f] & topical}
    result["topical"] = {"descriptors_left_per_file": round(float(np.mean([len(v) for v in gold_topical.values()])), 2),
                         "files": len(gold_topical)}
    for name, m in methods(cfg).items():
        result["topical"][name] = pr_at_k(rank(lib, encoder, m, sorted(gold_topical), 5, only=topical), gold_topical, 5)
    if tune:
        result["tuning"] = tune_grid(lambda c: pr_at_k(rank(lib, encoder, c, hidden, 5), gold, 5)["precision@5"], cfg)
    t0 = time.perf_counter()
    report = suggest_files(lib, encoder, hidden, cfg, redo=True)
    stored: dict[int, list[int]] = {f: [] for f in hidden}
    for sug in review.pending(lib):
        if sug.file_id in stored:
            stored[sug.file_id].append(sug.tag_id)
    n_stored = sum(len(v) for v in stored.values())
    correct = sum(len(set(v) & gold[f]) for f, v in stored.items())
    result["stored"] = {"suggest_s": round(time.perf_counter() - t0, 2), "suggestions": report.suggestions,
                        "per_file": round(n_stored / len(hidden), 2),
                        "precision": round(correct / max(n_stored, 1), 4),
                        "recall@5": round(float(np.mean([len(set(stored[f]) & gold[f]) / len(gold[f]) for f in hidden])), 4)}
    lib.close()
    return result


# -- (ii) newsgroups --------------------------------------------------------------------------------
def newsgroups_setup(work: Path, per_group: int, encoder) -> tuple[Library, tuple[int, float]]:
    share, data_dir = work / f"newsgroups{per_group}-corpus", work / f"newsgroups{per_group}-data"
    counts: dict[str, int] = {}
    with open(DATA / "newsgroups20" / "corpus.jsonl", encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            meta = rec["metadata"]
            group = meta["newsgroup"]
            if counts.get(group, 0) >= per_group:
                continue
            counts[group] = counts.get(group, 0) + 1
            folder = share.joinpath(*meta["category_path"])
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"{rec['_id'].rsplit('/', 1)[-1]}.txt"
            if not path.exists():
                path.write_text(f"Subject: {rec['title']}\n\n{rec['text']}", encoding="utf-8")
    lib, settings = open_library(data_dir)
    Scanner(lib).scan([str(share)])
    t0 = time.perf_counter()
    summarized = summarize_files(lib, settings, encoder).summarized
    return lib, (summarized, time.perf_counter() - t0)


def newsgroups(work: Path, per_group: int, encoder, cfg: SuggestConfig, tune: bool) -> dict:
    lib, (summarized, summarize_s) = newsgroups_setup(work, per_group, encoder)
    with lib.session() as s:
        group_of = dict(s.execute(select(FileTag.file_id, FileTag.tag_id).join(Tag, Tag.id == FileTag.tag_id)
                                  .where(Tag.source == TagSource.PATH)).all())
        parents = {p for (p,) in s.execute(select(TagEdge.parent_id))}
        leaves = {t for (t,) in s.execute(select(Tag.id).where(Tag.source == TagSource.PATH))} - parents
    files = sorted(group_of)

    def accuracy(c: SuggestConfig) -> float:
        top = rank(lib, encoder, c, files, 1, only=leaves)
        return round(float(np.mean([top[f][:1] == [group_of[f]] for f in top])), 4)

    result = {"files": len(files), "groups": len(leaves), "per_group": per_group,
              "summarized_this_run": summarized, "summarize_s": round(summarize_s, 1),
              "chance": round(1 / max(len(leaves), 1), 4)}
    for name, m in methods(cfg).items():
        result[name] = {"top1_accuracy": accuracy(m)}
    if tune:
        result["tuning"] = tune_grid(accuracy, cfg)
    lib.close()
    return result


def tune_grid(metric, cfg: SuggestConfig) -> list[dict]:
    rows = []
    for w_text in (0.3, 0.5, 0.7):
        for k in (5, 10, 20):
            for floor in (0.15, 0.25):
                c = replace(cfg, w_text=w_text, neighbours=k, text_floor=floor)
                rows.append({"w_text": w_text, "neighbours": k, "text_floor": floor, "value": metric(c)})
    return sorted(rows, key=lambda r: -r["value"])[:8]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default="/tmp/spar-tag-suggestions-bench", help="reused across runs (summaries)")
    ap.add_argument("--per-group", type=int, default=150)
    ap.add_argument("--tune", action="store_true", help="also print the best settings of a small grid")
    ap.add_argument("--skip", choices=("pubmedqa", "newsgroups"))
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    encoder = get_encoder("cpu")
    cfg = SuggestConfig()
    out = {"benchmark": "tag_suggestions", "settings": cfg.key(), "model": encoder.model_id}
    if args.skip != "pubmedqa":
        out["pubmedqa"] = pubmedqa(work, encoder, cfg, args.tune)
        print(json.dumps(out["pubmedqa"]), file=sys.stderr)
    if args.skip != "newsgroups":
        out["newsgroups"] = newsgroups(work, args.per_group, encoder, cfg, args.tune)
    text = json.dumps(out, indent=2)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

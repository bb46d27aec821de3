"""A harder SPAR benchmark (issue 16 part 4): requests that mix a topic, a newsgroup (named in
words) and a date range, on the 20 Newsgroups dev tree (../shared/data/newsgroups20).

Corpus: each post is written as an extension-less text file at its ``metadata.source_path``
(``20_newsgroups/<dotted group>/<number>``) holding ``Subject:`` and ``From:`` lines and the body
(capped at --body-chars), with its mtime set to the post's Date header. The probe reads such a
file as plain text (only ``.eml`` is read as mail), so the document date the request's range is
matched against is the mtime; the folder gives the path tags (``20_newsgroups`` >
``comp.sys.ibm.pc.hardware``: one tag per dotted folder). Bounded: every post whose subject
matches any benchmark topic (the confusers a global index sees), a sample of the other posts of
the groups the requests name, and a smaller sample of the rest (fractions in the JSON).

Relevance, from metadata only: the post is in one of the request's groups, its date lies in the
request's range (inclusive, as the words mean it: 'after April 15' starts on the 16th), and its
subject line matches the topic's pattern (word-start regex, listed below). Requests with fewer
than 3 relevant posts in the corpus are dropped. A lenient variant also counts posts whose body
(as written) matches the topic, reported beside the strict one.

Arms, all through the public manager API: (a) global — one workspace over every file, searched
with the request text; (b) SPAR — ``create(name, request)``, build, search with the request text;
(c) oracle scope — a workspace from the exact group tags and dates (create(tags=, since=, until=)),
the ceiling for scoping with today's retrieval; (d) spar_residual_query — SPAR's workspace searched
with only the keywords no tag matched (the topic), a diagnostic for searching without the words the
filter already used. Cross-posted copies (identical files) count once, relevant if any copy is. Top 10 distinct files each: precision@10,
recall@10, nDCG@10, hit@10, with paired bootstrap 95% CIs of SPAR - global.
Usage: nice -n 10 python benchmarks/spar_newsgroups.py [--data-dir /tmp/spar-ng-bench] [--dry-run]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import statistics
import sys
import time
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "newsgroups20" / "corpus.jsonl"
TODAY = date(2026, 11, 24)  # fixed, so 'April 1' without a year always resolves the same way

# Topic → subject-line pattern (case-insensitive, matched at word starts).
TOPICS: dict[str, str] = {
    "graphics cards": r"\b(?:video|graphics?) ?(?:cards?|boards?|adapters?|accelerators?)\b|\bs?vga\b|\blocal ?bus\b|\bvlb\b|\bvesa\b|\bstealth\b|\bati\b|\borchid\b",
    "monitors": r"\bmonitors?\b",
    "hard drives": r"\bhard ?(?:drives?|disks?)\b|\bide\b|\bscsi\b|\bdrives?\b",
    "modems": r"\bmodems?\b",
    "printers": r"\bprinters?\b|\blaserwriter|\bdeskjet|\blaserjet",
    "fonts": r"\bfonts?\b|\btruetype\b",
    "memory": r"\bram\b|\bsimms?\b|\bmemory\b|\bvram\b|\bdram\b",
    "image formats": r"\bjpe?g\b|\bgif\b|\btiff?\b|\bbmp\b|\bimage (?:formats?|files?|conver)",
    "3d rendering": r"\b3-?d\b|\brender|\bray ?trac|\bpolygon",
    "window managers": r"\bwindow managers?\b|\btwm\b|\bmwm\b|\bolwm\b|\bfvwm\b|\bmotif\b",
    "mouse": r"\bmouse\b|\bmice\b",
    "clipper chip": r"\bclipper\b|\bescrow|\bwiretap",
    "encryption": r"\bencrypt|\bcrypt|\bpgp\b|\bdes\b|\brsa\b|\bcipher",
    "waco": r"\bwaco\b|\bkoresh|\bbatf\b|\bdavidian|\bfbi\b",
    "guns": r"\bguns?\b|\bfirearms?\b|\bweapons?\b|\bassault\b",
    "insurance": r"\binsur",
    "helmets": r"\bhelmets?\b",
    "playoffs": r"\bplayoffs?\b|\bstanley cup\b",
    "goalies": r"\bgoal(?:ie|ies|tender|tending)\b",
    "moon": r"\bmoon\b|\blunar\b",
    "diet": r"\bdiet|\bfood|\bmsg\b",
    "radar detectors": r"\bradar|\bdetectors?\b",
    "batteries": r"\bbatter(?:y|ies)\b",
    "homosexuality": r"\bgays?\b|\bhomosex",
    "armenians": r"\barmenia",
    "israel": r"\bisrael",
    "oil": r"\boil\b",
    "cars": r"\bcars?\b",
}

PC, MAC, GFX, WIN, X = ("comp.sys.ibm.pc.hardware", "comp.sys.mac.hardware", "comp.graphics",
                        "comp.os.ms-windows.misc", "comp.windows.x")
COMP = (PC, MAC, GFX, WIN, X, "comp.os.ms-windows.misc")
POL = ("talk.politics.guns", "talk.politics.mideast", "talk.politics.misc")

# Date ranges as the words mean them (inclusive); the parser may read them otherwise (measured).
APR = (date(1993, 4, 1), date(1993, 4, 30))
EARLY = (date(1993, 4, 1), date(1993, 4, 10))
SECOND_HALF = (date(1993, 4, 16), date(1993, 4, 30))
AFTER15 = (date(1993, 4, 16), date(1993, 12, 31))
BEFORE15 = (date(1992, 1, 1), date(1993, 4, 14))
MID = (date(1993, 4, 15), date(1993, 4, 18))
LATE = (date(1993, 4, 19), date(1993, 4, 30))
SPRING = (date(1993, 3, 1), date(1993, 5, 31))
WEEK19 = (date(1993, 4, 19), date(1993, 4, 25))


@dataclass(frozen=True)
class Req:
    rid: str
    text: str
    topic: str
    groups: tuple[str, ...]
    dates: tuple[date, date]
    phrasing: str  # what is hard about it: 'plain', or the natural form the parser may miss


REQUESTS: list[Req] = [
    Req("gfx-comphw-apr", "posts about graphics cards in comp hardware from April 1993", "graphics cards", (PC, MAC), APR, "group family in words"),
    Req("gfx-pchw-late", "posts about graphics cards in pc hardware from 19 April 1993 to 30 April 1993", "graphics cards", (PC,), LATE, "plain"),
    Req("gfx-win-apr", "posts about video cards in MS Windows from April 1993", "graphics cards", (WIN,), APR, "plain"),
    Req("mon-pchw-early", "posts about monitors in pc hardware from 1 April 1993 to 10 April 1993", "monitors", (PC,), EARLY, "plain"),
    Req("mon-machw-after", "posts about monitors in mac hardware after April 15, 1993", "monitors", (MAC,), AFTER15, "plain"),
    Req("mon-comphw-mid", "monitor posts in comp hardware between 15 April 1993 and 18 April 1993", "monitors", (PC, MAC), MID, "group family in words"),
    Req("hd-pchw-apr", "posts about hard drives in IBM PC hardware from April 1993", "hard drives", (PC,), APR, "plain"),
    Req("hd-machw-early", "posts about hard drives in mac hardware from April 1 to April 10, 1993", "hard drives", (MAC,), EARLY, "year only on the range end"),
    Req("hd-pchw-second", "posts about SCSI and IDE drives in pc hardware in the second half of April 1993", "hard drives", (PC,), SECOND_HALF, "'second half of'"),
    Req("modem-machw-apr", "posts about modems in mac hardware from April 1993", "modems", (MAC,), APR, "plain"),
    Req("mem-machw-late", "posts about memory and SIMMs in Macintosh hardware from 19 April 1993 to 30 April 1993", "memory", (MAC,), LATE, "plain"),
    Req("printer-win-apr", "posts about printers in MS Windows from April 1993", "printers", (WIN,), APR, "plain"),
    Req("font-win-before", "posts about fonts in MS Windows before April 15, 1993", "fonts", (WIN,), BEFORE15, "plain"),
    Req("mouse-win-spring", "posts about the mouse in the Windows group in spring 1993", "mouse", (WIN,), SPRING, "'spring'"),
    Req("img-gfx-apr", "posts about image formats like JPEG and GIF in computer graphics from April 1993", "image formats", (GFX,), APR, "plain"),
    Req("3d-gfx-after", "posts about 3D rendering in comp graphics after April 15, 1993", "3d rendering", (GFX,), AFTER15, "plain"),
    Req("wm-x-early", "early April 1993 posts about window managers in X Windows", "window managers", (X,), EARLY, "'early April'"),
    Req("wm-x-mid", "posts about window managers in X Windows between 15 April 1993 and 18 April 1993", "window managers", (X,), MID, "plain"),
    Req("wm-x-apr", "posts about window managers in comp windows x from April 1993", "window managers", (X,), APR, "plain"),
    Req("clip-crypt-after", "posts about the Clipper chip in cryptography after April 15, 1993", "clipper chip", (CRYPT := "sci.crypt",), AFTER15, "plain"),
    Req("clip-crypt-mid", "posts about the Clipper chip in sci crypt between 15 April 1993 and 18 April 1993", "clipper chip", (CRYPT,), MID, "plain"),
    Req("clip-pol-apr", "posts about the Clipper chip in the politics groups from April 1993", "clipper chip", POL, APR, "group family in words"),
    Req("enc-crypt-early", "posts about encryption in sci.crypt from 1 April 1993 to 10 April 1993", "encryption", (CRYPT,), EARLY, "plain"),
    Req("waco-guns-late", "posts about Waco in gun politics from 19 April 1993 to 30 April 1993", "waco", ("talk.politics.guns",), LATE, "plain"),
    Req("waco-guns-second", "posts about Waco in talk politics guns in the second half of April 1993", "waco", ("talk.politics.guns",), SECOND_HALF, "'second half of'"),
    Req("waco-rel-apr", "posts about Koresh and Waco in the religion groups from April 1993", "waco", ("talk.religion.misc", "soc.religion.christian"), APR, "group family in words"),
    Req("guns-guns-week", "posts about gun control in talk politics guns from the week of April 19, 1993", "guns", ("talk.politics.guns",), WEEK19, "'the week of'"),
    Req("ins-moto-apr", "posts about insurance in the motorcycles group from April 1993", "insurance", ("rec.motorcycles",), APR, "plain"),
    Req("ins-rec-apr", "posts about insurance in rec autos and motorcycles from April 1993", "insurance", ("rec.autos", "rec.motorcycles"), APR, "two groups joined by 'and'"),
    Req("helm-moto-spring", "posts about helmets in rec motorcycles in spring 1993", "helmets", ("rec.motorcycles",), SPRING, "'spring'"),
    Req("play-hockey-late", "posts about the playoffs in hockey from 19 April 1993 to 30 April 1993", "playoffs", ("rec.sport.hockey",), LATE, "plain"),
    Req("play-hockey-before", "posts about playoffs in rec sport hockey before April 15, 1993", "playoffs", ("rec.sport.hockey",), BEFORE15, "plain"),
    Req("goal-hockey-apr", "posts about goalies in hockey from April 1993", "goalies", ("rec.sport.hockey",), APR, "plain"),
    Req("moon-space-apr", "posts about the moon in sci space from April 1993", "moon", ("sci.space",), APR, "plain"),
    Req("moon-space-after", "posts about lunar missions in space after April 15, 1993", "moon", ("sci.space",), AFTER15, "plain"),
    Req("diet-med-apr", "posts about diet and food in medicine from April 1993", "diet", ("sci.med",), APR, "plain"),
    Req("radar-elec-apr", "posts about radar detectors in electronics from April 1993", "radar detectors", ("sci.electronics",), APR, "plain"),
    Req("gay-polmisc-apr", "posts about homosexuality in talk politics misc from April 1993", "homosexuality", ("talk.politics.misc",), APR, "plain"),
    Req("arm-mideast-late", "posts about Armenians in mideast politics from 19 April 1993 to 30 April 1993", "armenians", ("talk.politics.mideast",), LATE, "plain"),
    Req("cars-forsale-apr", "posts about cars in the for sale group from April 1993", "cars", ("misc.forsale",), APR, "group in words"),
]


# -- pure helpers (tested in tests/test_benchmark_requests.py) --------------------------------
def topic_match(topic: str, text: str) -> bool:
    return re.search(TOPICS[topic], text or "", re.I) is not None


def post_date(rec: dict) -> date | None:
    raw = rec["metadata"].get("date")
    if not raw:
        return None
    # The app reads the file's mtime as local time: judge relevance by the same calendar day.
    return datetime.fromtimestamp(datetime.fromisoformat(raw).timestamp()).date()


def is_relevant(req: Req, group: str, when: date | None, subject: str) -> bool:
    return (group in req.groups and when is not None and req.dates[0] <= when <= req.dates[1]
            and topic_match(req.topic, subject))


def precision_recall_ndcg(ranked: list[str], relevant: set[str], k: int = 10) -> tuple[float, float, float, bool]:
    top = ranked[:k]
    gains = [1.0 if d in relevant else 0.0 for d in top]
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains))
    ideal = sum(1 / math.log2(i + 2) for i in range(min(k, len(relevant))))
    hits = sum(gains)
    return (hits / k, hits / len(relevant) if relevant else 0.0, dcg / ideal if ideal else 0.0, hits > 0)


def paired_bootstrap(a: list[float], b: list[float], n: int = 10000, seed: int = 0) -> dict:
    """Mean of b - a with a 95% percentile interval, resampling requests (paired)."""
    rng = random.Random(seed)
    d = [y - x for x, y in zip(a, b)]
    means = sorted(statistics.fmean(rng.choices(d, k=len(d))) for _ in range(n))
    return {"mean_diff": round(statistics.fmean(d), 4), "ci95": [round(means[int(0.025 * n)], 4), round(means[int(0.975 * n) - 1], 4)]}


# -- corpus -----------------------------------------------------------------------------------
def select_corpus(recs: list[dict], touched: set[str], frac_touched: float, frac_other: float, seed: int) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for r in sorted(recs, key=lambda r: r["_id"]):
        if post_date(r) is None:
            continue
        g = r["metadata"]["newsgroup"]
        if any(topic_match(t, r.get("title") or "") for t in TOPICS):
            out.append(r)
        elif rng.random() < (frac_touched if g in touched else frac_other):
            out.append(r)
    return out


def post_text(rec: dict, body_chars: int) -> str:
    body = rec["text"][:body_chars]
    return f"Subject: {rec.get('title') or ''}\nFrom: {rec['metadata'].get('from') or ''}\n\n{body}\n"


def write_corpus(root: Path, recs: list[dict], body_chars: int) -> dict[str, Path]:
    """Write changed files only and keep the rest, so a reused data dir rescans incrementally."""
    paths = {}
    for r in recs:
        p = root / r["metadata"]["source_path"]
        text = post_text(r, body_chars)
        ts = datetime.fromisoformat(r["metadata"]["date"]).timestamp()
        if not (p.exists() and p.read_text(encoding="utf-8") == text):
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text, encoding="utf-8")
        if int(p.stat().st_mtime) != int(ts):
            os.utime(p, (ts, ts))
        paths[r["_id"]] = p
    keep = {str(p) for p in paths.values()}
    for old in root.rglob("*"):
        if old.is_file() and str(old) not in keep:
            old.unlink()
    return paths


def doc_id(path: str) -> str:
    parts = Path(path).parts
    return f"{parts[-2]}/{parts[-1]}"


def summarize_filter(flt) -> dict:
    """What the parser and the tag matcher did, compactly (defensive: the filter may grow)."""
    d = flt.to_json()
    return {
        "groups": {g["label"]: [t["value"] for t in g.get("tags", ())] for g in d.get("groups", ())},
        "dropped": [g["label"] for g in d.get("dropped", ())],
        "unmatched": d.get("unmatched", []), "since": d.get("since"), "until": d.get("until"),
        "tolerance": d.get("tolerance"), "problems": d.get("problems", []), "notes": d.get("notes", []),
        "formats": d.get("formats", []), "ranked": d.get("ranked"), "budget": d.get("budget"),
    }


def residual_query(flt) -> str:
    """The request minus what the filter already used (dates, types, keywords matched to tags):
    the keywords no tag matched, i.e. the topic. A diagnostic: the app searches the full text."""
    return " ".join(getattr(flt, "unmatched", ()) or ()) or getattr(flt, "request", "")


def run_arm(mgr, name: str, request: str, query: str, fetch: int, k: int, residual: bool = False, **opts) -> dict:
    from spar_desktop.core.workspaces.errors import WorkspaceError

    t0 = time.perf_counter()
    try:
        info, exp = mgr.create(name, request, today=TODAY, **opts)
    except WorkspaceError as exc:
        return {"ranked": [], "ranked_residual": [], "admitted": 0, "admitted_ids": set(), "error": str(exc)[:300], "filter": None,
                "explain": [], "build_s": 0.0}
    out = {"admitted": exp.admitted, "filter": summarize_filter(exp.filter), "explain": exp.lines()}
    try:
        ranked = []
        if exp.admitted:
            mgr.build(name)
            r = mgr.search(name, query, k=fetch)
            ranked = list(dict.fromkeys(doc_id(h.path) for h in r.hits))[:k]
            if residual:
                out["residual_query"] = residual_query(exp.filter)
                rr = mgr.search(name, out["residual_query"], k=fetch)
                out["ranked_residual"] = list(dict.fromkeys(doc_id(h.path) for h in rr.hits))[:k]
        out["admitted_ids"] = {doc_id(f.path) for f in mgr.files(name)}
        out["ranked"] = ranked
        out.setdefault("ranked_residual", ranked)
    finally:
        mgr.delete(name)
    out["build_s"] = round(time.perf_counter() - t0, 2)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", default="/tmp/spar-ng-bench")
    ap.add_argument("--body-chars", type=int, default=1200)
    ap.add_argument("--frac-touched", type=float, default=0.2, help="sample of non-topic posts in requested groups")
    ap.add_argument("--frac-other", type=float, default=0.04, help="sample of non-topic posts in other groups")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--fetch", type=int, default=40, help="chunks fetched before taking the top k distinct files")
    ap.add_argument("--min-relevant", type=int, default=3)
    ap.add_argument("--limit", type=int, default=0, help="first N requests only")
    ap.add_argument("--no-oracle", action="store_true")
    ap.add_argument("--dry-run", action="store_true", help="corpus and relevance counts only")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "results" / "spar_newsgroups.json"))
    args = ap.parse_args()
    t_start = time.perf_counter()
    recs = [json.loads(line) for line in open(SHARED, encoding="utf-8")]
    touched = {g for r in REQUESTS for g in r.groups}
    corpus = select_corpus(recs, touched, args.frac_touched, args.frac_other, args.seed)
    meta = {r["_id"]: (r["metadata"]["newsgroup"], post_date(r), r.get("title") or "",
                       post_text(r, args.body_chars)) for r in corpus}
    # Cross-posted posts are written once per group with identical bytes; the index treats them
    # as copies of one document, so relevance is judged per distinct content: a hit (or an
    # admitted file) counts as relevant when any of its copies is.
    first: dict[str, str] = {}
    canon = {i: first.setdefault(m[3], i) for i, m in sorted(meta.items())}
    requests, skipped = [], []
    for q in REQUESTS[: args.limit or None]:
        rel = {i for i, (g, d, s, _) in meta.items() if is_relevant(q, g, d, s)}
        lenient = {i for i, (g, d, s, body) in meta.items()
                   if g in q.groups and q.dates[0] <= d <= q.dates[1] and topic_match(q.topic, body)}
        rel, lenient = {canon[i] for i in rel}, {canon[i] for i in lenient | rel}
        (requests if len(rel) >= args.min_relevant else skipped).append((q, rel, lenient))
    corpus_info = {"posts": len(corpus), "of": len(recs), "body_chars": args.body_chars,
                   "selection": "every post whose subject matches any benchmark topic, plus "
                                f"{args.frac_touched:.0%} of the other posts of the {len(touched)} requested groups and "
                                f"{args.frac_other:.0%} of the other groups' (seed {args.seed})",
                   "file_form": "extension-less text at metadata.source_path: Subject/From lines + body; "
                                "read as txt, document date = mtime = the post's Date header"}
    if args.dry_run:
        print(json.dumps({"corpus": corpus_info, "requests": [(q.rid, len(r), len(l)) for q, r, l in requests],
                          "skipped": [(q.rid, len(r)) for q, r, _ in skipped]}, indent=1))
        return

    from spar_desktop.core.config import load_settings
    from spar_desktop.core.library.database import Library
    from spar_desktop.core.library.scanner import Scanner
    from spar_desktop.core.workspaces.manager import Workspaces
    # Import every module a search touches now: others edit the tree while a run takes minutes,
    # and a lazy import half-way through mixes two versions of the code.
    import spar_desktop.core.workspaces.builder  # noqa: F401
    import spar_desktop.core.workspaces.search  # noqa: F401
    import spar_desktop.core.retrieval.searcher  # noqa: F401

    data_dir = Path(args.data_dir)
    share = Path(f"{data_dir}-corpus")  # beside the data dir, stable across runs
    t0 = time.perf_counter()
    write_corpus(share, corpus, args.body_chars)
    lib = Library.open(load_settings(data_dir))
    Scanner(lib).scan([str(share)])
    scan_s = time.perf_counter() - t0
    mgr = Workspaces(lib)
    t0 = time.perf_counter()
    mgr.tag_index
    tag_index_s = time.perf_counter() - t0
    for w in mgr.list():
        if w.name != "global":
            mgr.delete(w.name)
    if mgr.find("global") is None:
        mgr.create("global", since=date(1900, 1, 1))
    t0 = time.perf_counter()
    g_report = mgr.build("global")
    global_build_s = time.perf_counter() - t0
    print(f"corpus {len(corpus)} posts; scan {scan_s:.0f}s; global build {global_build_s:.0f}s", file=sys.stderr)

    rows = []
    for n, (q, rel, lenient) in enumerate(requests, 1):
        g = mgr.search("global", q.text, k=args.fetch)
        g_ranked = list(dict.fromkeys(canon.get(doc_id(h.path), doc_id(h.path)) for h in g.hits))[: args.k]
        s = run_arm(mgr, f"ng-{q.rid}", q.text, q.text, args.fetch, args.k, residual=True)
        o = None
        if not args.no_oracle:
            tags = "|".join(f"20_newsgroups/{grp}" for grp in q.groups)
            o = run_arm(mgr, f"ngo-{q.rid}", "", q.text, args.fetch, args.k, tags=[tags],
                        since=q.dates[0], until=q.dates[1])
        row = {"id": q.rid, "request": q.text, "phrasing": q.phrasing, "relevant": len(rel), "relevant_lenient": len(lenient),
               "truth": {"groups": list(q.groups), "since": q.dates[0].isoformat(), "until": q.dates[1].isoformat(),
                         "topic_pattern": TOPICS[q.topic]}}
        for res in (s, o):
            if res is not None:
                for key in ("ranked", "ranked_residual"):
                    res[key] = list(dict.fromkeys(canon.get(i, i) for i in res.get(key, [])))
                res["admitted_ids"] = {canon.get(i, i) for i in res.get("admitted_ids", set())}
        for arm, ranked in (("global", g_ranked), ("spar", s["ranked"]), ("spar_residual_query", s["ranked_residual"]),
                            ("oracle", o["ranked"] if o else None)):
            if ranked is None:
                continue
            p, r, nd, hit = precision_recall_ndcg(ranked, rel, args.k)
            pl = precision_recall_ndcg(ranked, lenient, args.k)[0]
            row[arm] = {"p@10": round(p, 3), "r@10": round(r, 3), "ndcg@10": round(nd, 3), "hit@10": hit,
                        "p@10_lenient": round(pl, 3), "returned": len(ranked)}
        for arm, res in (("spar", s), ("oracle", o)):
            if res is None:
                continue
            adm = res.get("admitted_ids", set())
            row[arm].update({"admitted": res["admitted"], "relevant_admitted": len(adm & rel),
                             "admitted_in_truth_scope": sum(1 for i in adm if meta[i][0] in q.groups
                                                            and q.dates[0] <= meta[i][1] <= q.dates[1]),
                             "create_build_search_s": res["build_s"]})
            if res.get("error"):
                row[arm]["error"] = res["error"]
        row["spar_filter"] = s["filter"]
        row["residual_query_text"] = s.get("residual_query")
        if s["filter"] is None or s["admitted"] == 0 or row["spar"]["p@10"] < row["global"]["p@10"] \
                or row["spar"]["relevant_admitted"] < len(rel):
            row["spar_explain"] = s["explain"]
        rows.append(row)
        print(f"{n}/{len(requests)} {q.rid}: global p@10 {row['global']['p@10']} spar {row['spar']['p@10']} "
              f"(admitted {s['admitted']}, rel {len(rel)})", file=sys.stderr)

    def mean(arm: str, key: str):
        vals = [float(r[arm][key]) for r in rows if arm in r]
        return round(statistics.fmean(vals), 4) if vals else None

    metrics = ["p@10", "r@10", "ndcg@10", "hit@10", "p@10_lenient"]
    arms = ["global", "spar", "spar_residual_query"] + ([] if args.no_oracle else ["oracle"])
    summary = {arm: {m: mean(arm, m) for m in metrics} for arm in arms}
    for arm in [a for a in arms if a in ("spar", "oracle")]:
        summary[arm].update({
            "empty_workspaces": sum(1 for r in rows if r[arm]["admitted"] == 0),
            "mean_admitted": round(statistics.fmean(r[arm]["admitted"] for r in rows), 1),
            "mean_admitted_fraction_of_corpus": round(statistics.fmean(r[arm]["admitted"] for r in rows) / len(corpus), 4),
            "relevant_admitted_fraction": round(sum(r[arm]["relevant_admitted"] for r in rows) / sum(r["relevant"] for r in rows), 4),
            "admitted_precision_of_scope": round(statistics.fmean(r[arm]["admitted_in_truth_scope"] / r[arm]["admitted"]
                                                                  for r in rows if r[arm]["admitted"]), 4)
            if any(r[arm]["admitted"] for r in rows) else None,
        })
    diffs = {f"{arm}_minus_global": {m: paired_bootstrap([float(r["global"][m]) for r in rows], [float(r[arm][m]) for r in rows])
                                     for m in metrics} for arm in arms[1:]}
    wins = {"spar_better_p@10": sum(r["spar"]["p@10"] > r["global"]["p@10"] for r in rows),
            "spar_worse_p@10": sum(r["spar"]["p@10"] < r["global"]["p@10"] for r in rows),
            "tie": sum(r["spar"]["p@10"] == r["global"]["p@10"] for r in rows)}
    result = {
        "benchmark": "spar_newsgroups", "dataset": "20 newsgroups (dev tree, ../shared/data/newsgroups20)",
        "corpus": corpus_info, "requests": len(rows),
        "skipped_requests_lt_min_relevant": [{"id": q.rid, "relevant": len(r)} for q, r, _ in skipped],
        "relevance": "strict: group in the request's groups AND post date in the range AND subject matches the topic "
                     "pattern; lenient: the same with subject OR written body matching",
        "summary": summary, "paired_bootstrap_95ci": diffs, "per_request_p@10": wins,
        "by_phrasing": {ph: {arm: round(statistics.fmean(r[arm]["p@10"] for r in rows if r["phrasing"] == ph), 3)
                             for arm in arms} for ph in sorted({r["phrasing"] for r in rows})},
        "timing_s": {"scan": round(scan_s, 1), "tag_index": round(tag_index_s, 1), "global_build": round(global_build_s, 1),
                     "global_chunks": getattr(g_report, "chunks", None), "total": round(time.perf_counter() - t_start, 1)},
        "code": {"commit_note": "run against the working tree at the time; see git log for the commit"},
        "rows": rows,
    }
    text = json.dumps(result, indent=1, default=str)
    print(text)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

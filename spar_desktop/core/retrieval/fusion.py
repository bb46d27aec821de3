"""Score fusion for hybrid retrieval: TM2C2 convex combination (paper §3.3.3) and RRF.

TM2C2 (theoretical-minimum min-max, eq. 14–15, after Bruch et al. 2023): each retriever's score is
shifted by the *theoretical* infimum of its scoring function and divided by the distance from that
infimum to the best score among the query's candidates:

    s~ = (s - inf) / (max_{c in C_q} s(c) - inf),   inf(cosine) = -1,  inf(BM25) = 0

so the best candidate of each retriever gets 1 and a score at the theoretical minimum gets 0 —
unlike plain min-max, the observed worst candidate does not define 0, which keeps scales stable
when a candidate list has an outlier at the bottom. The fused score (eq. 16) is

    R(c) = alpha * s~_dense(c) + (1 - alpha) * s~_BM25(c)

i.e. alpha weights the DENSE side, as in the paper (alpha = 0: pure BM25, alpha = 1: pure dense).
In ``tm2c2_fuse`` a candidate returned by only one retriever gets the normalised minimum, 0, for
the other; the searcher by default first looks up the true missing score (DEFAULT_FILL below).

RRF (Cormack et al. 2009) is offered for comparison: sum of 1 / (k + rank) with k = 60, ignoring
scores (and alpha) altogether.
"""

from __future__ import annotations

from typing import Hashable, Mapping, Optional, Sequence, TypeVar

K = TypeVar("K", bound=Hashable)

COSINE_INF = -1.0
BM25_INF = 0.0
RRF_K = 60
FUSIONS = ("tm2c2", "rrf")

# Default dense weight and missing-score policy, chosen on training splits only: nDCG@10 with
# doc score = best chunk, 100 candidates per retriever, hierarchical 200/800-token chunks,
# all-MiniLM-L6-v2, BM25 k1=1.5 b=0.75 with Porter stemming, measured with ``spar eval``:
#
#                         SciFact train (809 q)   NFCorpus dev (324 q)
#   BM25                         0.662                  0.301
#   dense                        0.682                  0.298
#   RRF (k=60)                   0.709                  0.327
#   TM2C2 zero-fill  a=0.4       0.697                  0.326   (best a on NFCorpus)
#   TM2C2 zero-fill  a=0.85      0.720                  0.324   (best a on SciFact)
#   TM2C2 exact      a=0.7       0.711                  0.332
#   TM2C2 exact      a=0.8       0.726                  0.336   <- default
#   TM2C2 exact      a=0.85      0.727                  0.333
#   TM2C2 exact      a=0.9       0.722                  0.327
#
# Why so much weight on the dense side: with inf(cosine) = -1, candidate cosines of 0.3–0.7
# normalise to a narrow 0.76–1.0 band, while BM25 candidates spread over 0–1; alpha must be high
# before dense differences count as much as BM25's. "exact" (score every candidate of the union
# with both retrievers, searcher.py) beat the zero fill on both sets, by 0.6–1 nDCG point.
#
# Re-measured with BM25 over parent sections (keyword_units.py, issue 20) on all four development
# sets (benchmarks/results/retrieval_quality.md): a = 0.8 stays best or within 0.3 point of the
# best on SciFact, NFCorpus and PubMedQA; MEDLINE (30 queries) prefers 0.85–0.9. Min-max over the
# collection (best a = 0.65), z-scores and a query-length alpha gave nothing beyond noise.
DEFAULT_ALPHA = 0.8
DEFAULT_FILL = "exact"

# Query-aware dense weight from BM25's own flatness (issue 20, retrieval_quality.md). A keyword
# ranking whose 10th unit scores nearly as much as its 1st has not separated its candidates (long
# descriptive queries: many units match some of many words), so its weight shrinks; a sharp one
# (a rare phrase pinned to a few units) keeps more. BM25's weight is proportional to its sharpness
# 1 - s10/s1 and equals 1 - DEFAULT_ALPHA at FLATNESS_REFERENCE, the median flatness of the
# SciFact train / NFCorpus dev queries DEFAULT_ALPHA was chosen on, so a typical query there keeps
# 0.8: alpha = 1 - 0.2 * (1 - flatness) / (1 - 0.533), i.e. BM25 weight 0.43 * sharpness. No
# MEDLINE or PubMedQA query chose it.
ALPHA_RULES = ("flatness", "fixed")
DEFAULT_ALPHA_RULE = "flatness"
FLATNESS_RANK = 10
FLATNESS_REFERENCE = 0.533


def check_alpha(alpha: float) -> float:
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be within [0, 1], got {alpha}")
    return float(alpha)


def check_alpha_rule(rule: str) -> str:
    if rule not in ALPHA_RULES:
        raise ValueError(f"alpha rule must be one of {ALPHA_RULES}, not '{rule}'")
    return rule


def keyword_flatness(top_scores: Sequence[float], units: int, rank: int = FLATNESS_RANK) -> Optional[float]:
    """BM25's score at ``rank`` over its best score, from its keyword units' scores best first.
    None when it says nothing: no unit matched, or the collection has fewer than ``rank`` units
    (a small workspace). Fewer matches than ``rank`` in a larger one is a sharp ranking: 0."""
    if units < rank or len(top_scores) == 0 or top_scores[0] <= 0:
        return None
    return float(top_scores[rank - 1]) / float(top_scores[0]) if len(top_scores) >= rank else 0.0


def flatness_alpha(flatness: Optional[float], alpha0: float = DEFAULT_ALPHA,
                   reference: float = FLATNESS_REFERENCE) -> float:
    """Dense weight for a query whose BM25 ranking has this flatness (``alpha0`` when unknown)."""
    if flatness is None:
        return alpha0
    sharpness = 1.0 - min(max(flatness, 0.0), 1.0)
    return min(1.0, max(0.0, 1.0 - (1.0 - alpha0) * sharpness / (1.0 - reference)))


def tm2c2_normalize(scores: Mapping[K, float], inf: float) -> dict[K, float]:
    """Eq. 14/15 over one retriever's candidate scores. A degenerate list whose best score sits
    at the theoretical minimum (e.g. every cosine == -1) maps to all zeros instead of dividing by 0."""
    if not scores:
        return {}
    denom = max(scores.values()) - inf
    if denom <= 0:
        return {key: 0.0 for key in scores}
    return {key: (value - inf) / denom for key, value in scores.items()}


def tm2c2_fuse(dense: Mapping[K, float], bm25: Mapping[K, float], alpha: float = DEFAULT_ALPHA) -> dict[K, float]:
    """Eq. 16 over the union of both candidate sets (raw cosine and raw BM25 scores in)."""
    alpha = check_alpha(alpha)
    nd = tm2c2_normalize(dense, COSINE_INF)
    nb = tm2c2_normalize(bm25, BM25_INF)
    keys = list(dict.fromkeys([*dense, *bm25]))  # keeps first-seen order for stable ties
    return {key: alpha * nd.get(key, 0.0) + (1.0 - alpha) * nb.get(key, 0.0) for key in keys}


def rrf_fuse(rankings: Sequence[Sequence[K]], k: int = RRF_K) -> dict[K, float]:
    """Reciprocal rank fusion of ranked lists (best first, ranks start at 1)."""
    fused: dict[K, float] = {}
    for ranking in rankings:
        for rank, key in enumerate(ranking, start=1):
            fused[key] = fused.get(key, 0.0) + 1.0 / (k + rank)
    return fused


def ranked(fused: Mapping[K, float]) -> list[tuple[K, float]]:
    """Fused scores best first; Python's stable sort keeps first-seen order among ties."""
    return sorted(fused.items(), key=lambda kv: kv[1], reverse=True)

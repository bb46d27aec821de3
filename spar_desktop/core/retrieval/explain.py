"""Why a hit ranks where it does: its keyword and meaning shares of the fused score, the query
words it contains, and whether an evolved key (ERM, core/memory) moved it.

Pure functions over values the searcher already has, so the search panel can show them without
another query. Matched words are found with the BM25 tokenizer itself (lower-casing, stop-words,
Porter stems), so "infections" in a passage lights up for the query word "infection" exactly
when BM25 counted it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

import numpy as np

from spar_desktop.core.retrieval import fusion as fz
from spar_desktop.core.retrieval.bm25_index import TokenizerConfig

_WORD = re.compile(r"[^\W_]+", re.UNICODE)


@dataclass(frozen=True)
class ScoreExplanation:
    """``keyword_part + meaning_part == score`` for a TM2C2 hybrid hit (each is its weight times
    the normalised score); for BM25- or dense-only results one of them is None."""

    score: float
    keyword_part: Optional[float]
    meaning_part: Optional[float]
    alpha: Optional[float]
    keyword_unit: str  # what BM25 scored: 'parent' (its section / whole document) or 'chunk'
    matched: tuple[str, ...]  # query words found in the passage, as typed in the passage
    evolved: bool  # its retrieval key was evolved by feedback
    rank: int
    rank_without_evolution: Optional[int]  # where the original key would have put it

    def moved_by_evolution(self) -> Optional[int]:
        """Places gained (> 0) or lost (< 0) through the evolved key; None when not evolved."""
        if not self.evolved or self.rank_without_evolution is None:
            return None
        return self.rank_without_evolution - self.rank

    def lines(self) -> list[str]:
        """Plain-language lines for a tooltip or a details pane."""
        out: list[str] = []
        if self.keyword_part is not None and self.meaning_part is not None:
            unit = "its section" if self.keyword_unit == "parent" else "this passage"
            out.append(f"score {self.score:.2f} = keywords {self.keyword_part:.2f} (BM25 on {unit}) "
                       f"+ meaning {self.meaning_part:.2f} (dense, weight {self.alpha:.2f})")
        else:
            out.append(f"score {self.score:.2f}")
        out.append("matched words: " + (", ".join(self.matched) if self.matched else "none (found by meaning)"))
        moved = self.moved_by_evolution()
        if moved is not None:
            if moved > 0:
                out.append(f"learned keys moved it up {moved} place{'s' if moved != 1 else ''}")
            elif moved < 0:
                out.append(f"learned keys moved it down {-moved} place{'s' if moved != -1 else ''}")
            else:
                out.append("learned keys: evolved, same place")
        return out


def matched_spans(query: str, text: str, tokenizer: Optional[TokenizerConfig] = None) -> list[tuple[int, int]]:
    """(start, end) character spans of the words of ``text`` that BM25 matches to ``query``."""
    tok = tokenizer or TokenizerConfig()
    wanted = set(tok.tokenize(query))
    if not wanted:
        return []
    spans = []
    for m in _WORD.finditer(text):
        terms = tok.tokenize(m.group(0))
        if terms and terms[0] in wanted:
            spans.append((m.start(), m.end()))
    return spans


def matched_words(query: str, text: str, tokenizer: Optional[TokenizerConfig] = None) -> tuple[str, ...]:
    """Distinct matched words as they appear in ``text`` (first spelling wins, case-folded)."""
    seen: dict[str, str] = {}
    for a, b in matched_spans(query, text, tokenizer):
        seen.setdefault(text[a:b].lower(), text[a:b])
    return tuple(seen.values())


def explain_score(hit: object, query: str, *, tokenizer: Optional[TokenizerConfig] = None,
            keyword_unit: str = "parent") -> ScoreExplanation:
    """A ScoreExplanation of a ChunkHit or WorkspaceHit (duck-typed: both carry the parts)."""
    return ScoreExplanation(
        score=float(getattr(hit, "score")),
        keyword_part=getattr(hit, "keyword_part", None),
        meaning_part=getattr(hit, "meaning_part", None),
        alpha=getattr(hit, "alpha", None),
        keyword_unit=keyword_unit,
        matched=matched_words(query, getattr(hit, "text", ""), tokenizer),
        evolved=bool(getattr(hit, "evolved", False)),
        rank=int(getattr(hit, "rank")),
        rank_without_evolution=getattr(hit, "rank_without_evolution", None),
    )


class FusionParts:
    """The TM2C2 parts of one query's fused scores, for the hits' explanations (explain.py)."""

    def __init__(self, searcher: Any, ranking: Sequence[tuple[int, float]], dense: Mapping[int, float],
                 bm25: Mapping[int, float], alpha: float, qvec: Optional[np.ndarray]) -> None:
        self.searcher, self.ranking, self.alpha, self.qvec = searcher, ranking, alpha, qvec
        self.dense_max = max(dense.values()) if dense else None
        self.nd = fz.tm2c2_normalize(dense, fz.COSINE_INF)
        self.nb = fz.tm2c2_normalize(bm25, fz.BM25_INF)
        self.factors: dict[int, float] = {}  # share of its parent's keyword part a child keeps

    def parts(self, pos: int) -> tuple[float, float]:
        return ((1.0 - self.alpha) * self.nb.get(pos, 0.0) * self.factors.get(pos, 1.0),
                self.alpha * self.nd.get(pos, 0.0))

    def original_rank(self, pos: int) -> Optional[int]:
        """The rank this chunk would take with its original dense key, everything else as it is
        (the normalisation keeps this query's best cosine); None when only BM25 text evolved."""
        s = self.searcher
        o = s.overrides.get(s.keys[pos])
        if o is None or o.vector is None or self.qvec is None or s.original_vectors is None or self.dense_max is None:
            return None
        cos = float(np.dot(np.asarray(s.original_vectors[pos], dtype=np.float32), self.qvec))
        denom = max(self.dense_max, cos) - fz.COSINE_INF
        score = self.parts(pos)[0] + self.alpha * ((cos - fz.COSINE_INF) / denom if denom > 0 else 0.0)
        return 1 + sum(1 for p, v in self.ranking if p != pos and v > score)

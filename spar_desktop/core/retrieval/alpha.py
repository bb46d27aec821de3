"""Query-aware fusion weight (paper 002 §3.3.3): alpha*(q) in closed form on labelled queries
(eq. 19), then a ridge model on four cheap query features (eq. 20–22) or, optionally, gradient-
boosted trees that also see the top-10 normalised scores of each retriever and their overlap.

Labels: with BEIR qrels there is no answer string for LSS (eq. 17), so a candidate chunk's label
is its document's relevance scaled to [0, 1] — the same "what the fused score should say" target.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

import numpy as np

from spar_desktop.core.data_layout import DataLayout
from spar_desktop.core.retrieval.fusion import BM25_INF, COSINE_INF, tm2c2_normalize

log = logging.getLogger(__name__)

WH_WORDS = frozenset("who what where when why how which whom whose".split())
_WORDS = re.compile(r"[^\W_]+", re.UNICODE)
_ACRONYM = re.compile(r"\b[A-Z][A-Z0-9]+\b")
FEATURES = ("words", "digits", "wh", "acronym")
FORMAT = "spar-alpha"
DEFAULT_FILE = DataLayout(".").alpha_model.name  # in the data dir: workspaces use it when present
VERSION = 1


def query_features(query: str) -> np.ndarray:
    """Eq. 20's x(q): word count, has digits, has a wh-word, has an acronym."""
    words = _WORDS.findall(query)
    return np.array([len(words), any(c.isdigit() for c in query),
                     any(w.lower() in WH_WORDS for w in words), bool(_ACRONYM.search(query))], dtype=np.float64)


def score_features(dense: Mapping[Any, float], bm25: Mapping[Any, float], n: int = 10) -> np.ndarray:
    """Top-n TM2C2-normalised scores of each retriever (zero-padded) and the overlap of their
    top-n lists: the 21 extra features of the boosted-trees model."""
    nd, nb = tm2c2_normalize(dense, COSINE_INF), tm2c2_normalize(bm25, BM25_INF)
    td = sorted(nd.items(), key=lambda kv: -kv[1])[:n]
    tb = sorted(nb.items(), key=lambda kv: -kv[1])[:n]
    pad = lambda xs: [v for _, v in xs] + [0.0] * (n - len(xs))  # noqa: E731
    overlap = len({k for k, _ in td} & {k for k, _ in tb})
    return np.array(pad(td) + pad(tb) + [overlap], dtype=np.float64)


def optimal_alpha(dense: Mapping[Any, float], bm25: Mapping[Any, float], labels: Mapping[Any, float]) -> Optional[float]:
    """Eq. 19 over the candidate union (raw scores in), clipped to [0, 1]; None when both
    retrievers score every candidate alike (alpha does not matter)."""
    nd, nb = tm2c2_normalize(dense, COSINE_INF), tm2c2_normalize(bm25, BM25_INF)
    keys = list(dict.fromkeys([*dense, *bm25]))
    if not keys:
        return None
    d = np.array([nd.get(k, 0.0) for k in keys])
    b = np.array([nb.get(k, 0.0) for k in keys])
    y = np.array([float(labels.get(k, 0.0)) for k in keys])
    den = float(np.sum((d - b) ** 2))
    if den <= 1e-12:
        return None
    return float(np.clip(np.sum((y - b) * (d - b)) / den, 0.0, 1.0))


def ridge_fit(X: np.ndarray, y: np.ndarray, lam: float) -> tuple[np.ndarray, float]:
    """Eq. 22 on centred data (the bias is not penalised): w = (XᵀX + λI)⁻¹ Xᵀy."""
    mx, my = X.mean(axis=0), y.mean()
    Xc = X - mx
    w = np.linalg.solve(Xc.T @ Xc + lam * np.eye(X.shape[1]), Xc.T @ (y - my))
    return w, float(my - mx @ w)


@dataclass
class AlphaModel:
    kind: str  # ridge | gbt
    weights: list[float] = field(default_factory=list)
    bias: float = 0.0
    lam: float = 1.0
    train_queries: int = 0
    mean_alpha: float = 0.0
    r2: float = 0.0  # in-sample, to show how much of alpha* the features explain
    # When set, predictions are anchor + (model − mean alpha*): the features move alpha per query
    # around a weight tuned for ranking. eq. 18 fits scores to labels, not rankings, and with
    # TM2C2's narrow cosine band its level sits far from the best ranking weight (NFCorpus dev:
    # mean alpha* 0.03 while the fixed 0.8 ranks best); the per-query deviations still carry signal.
    anchor: Optional[float] = None
    _trees: Any = None

    def predict(self, query: str, dense: Mapping[Any, float], bm25: Mapping[Any, float]) -> float:
        x = query_features(query)
        if self.kind == "gbt" and self._trees is not None:
            x = np.concatenate([x, score_features(dense, bm25)])
            value = float(self._trees.predict(x[None, :])[0])
        else:
            value = float(np.dot(self.weights, x) + self.bias)
        if self.anchor is not None:
            value = self.anchor + value - self.mean_alpha
        return float(np.clip(value, 0.0, 1.0))

    def save(self, path: str | Path) -> Path:
        if self.kind != "ridge":
            raise ValueError("only ridge alpha models are saved (trees are refitted from labelled data)")
        data = {"format": FORMAT, "version": VERSION, "kind": self.kind, "features": list(FEATURES),
                "weights": list(self.weights), "bias": self.bias, "lambda": self.lam,
                "train_queries": self.train_queries, "mean_alpha": self.mean_alpha, "r2": self.r2,
                "anchor": self.anchor}
        p = Path(path)
        p.write_text(json.dumps(data, indent=2), encoding="utf-8")
        return p

    @classmethod
    def load(cls, path: str | Path) -> "AlphaModel":
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        if data.get("format") != FORMAT or data.get("version") != VERSION or len(data.get("weights", [])) != 4:
            raise ValueError(f"{path} is not a spar alpha model (v{VERSION})")
        return cls("ridge", [float(w) for w in data["weights"]], float(data["bias"]), float(data["lambda"]),
                   int(data.get("train_queries", 0)), float(data.get("mean_alpha", 0)), float(data.get("r2", 0)),
                   None if data.get("anchor") is None else float(data["anchor"]))


def load_default_model(data_dir: Optional[str | Path]) -> Optional[AlphaModel]:
    """The data dir's trained model, or None (fixed alpha); an unreadable file is logged."""
    if data_dir is None:
        return None
    path = DataLayout(data_dir).alpha_model
    if not path.is_file():
        return None
    try:
        return AlphaModel.load(path)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        log.warning("learned alpha in %s not used (fixed alpha instead): %s", path, exc)
        return None


def alpha_targets(searcher: Any, queries: Mapping[str, str], qrels: Mapping[str, Mapping[str, int]],
                  qvecs: Optional[Mapping[str, np.ndarray]] = None, depth: int = 10) -> list[tuple[str, float, np.ndarray]]:
    """(query text, alpha*, score features) for each labelled query where alpha* is defined,
    over the union of each retriever's top ``depth`` chunks (the paper's k = 10: deeper lists
    are mostly unlabelled-irrelevant candidates, which pull alpha* towards whichever side
    scores them lowest rather than the side that ranks the relevant ones first)."""
    out = []
    for qid, text in queries.items():
        dense, bm25 = searcher.candidate_scores(text, candidates=depth, query_vector=(qvecs or {}).get(qid))
        rels = qrels.get(qid, {})
        top = max([r for r in rels.values() if r > 0], default=1)
        labels = {k: max(rels.get(searcher.doc_of(k), 0), 0) / top for k in {*dense, *bm25}}
        a = optimal_alpha(dense, bm25, labels)
        if a is not None:
            out.append((text, a, score_features(dense, bm25)))
    return out


def fit_alpha(targets: Sequence[tuple[str, float, np.ndarray]], kind: str = "ridge",
              lambdas: Sequence[float] = (0.1, 1.0, 10.0, 100.0), folds: int = 5, seed: int = 0) -> AlphaModel:
    """Ridge with lambda chosen by k-fold cross-validation (eq. 21), or boosted trees."""
    if len(targets) < 10:
        raise ValueError(f"need at least 10 labelled queries to learn alpha, got {len(targets)}")
    X = np.vstack([query_features(t) for t, _, _ in targets])
    y = np.array([a for _, a, _ in targets])
    if kind == "gbt":
        from sklearn.ensemble import GradientBoostingRegressor

        Xg = np.hstack([X, np.vstack([f for _, _, f in targets])])
        trees = GradientBoostingRegressor(n_estimators=100, max_depth=3, learning_rate=0.05, subsample=0.8,
                                          random_state=seed).fit(Xg, y)
        r2 = float(trees.score(Xg, y))
        return AlphaModel("gbt", train_queries=len(y), mean_alpha=float(y.mean()), r2=r2, _trees=trees)
    if kind != "ridge":
        raise ValueError("kind must be 'ridge' or 'gbt'")
    rng = np.random.default_rng(seed)
    fold = rng.permutation(len(y)) % folds
    best = (np.inf, lambdas[0])
    for lam in lambdas:
        err = 0.0
        for f in range(folds):
            tr, te = fold != f, fold == f
            w, b = ridge_fit(X[tr], y[tr], lam)
            err += float(np.sum((X[te] @ w + b - y[te]) ** 2))
        best = min(best, (err, lam))
    w, b = ridge_fit(X, y, best[1])
    pred = X @ w + b
    ss = float(np.sum((y - y.mean()) ** 2))
    r2 = 1.0 - float(np.sum((y - pred) ** 2)) / ss if ss > 0 else 0.0
    return AlphaModel("ridge", w.tolist(), b, best[1], len(y), float(y.mean()), r2)

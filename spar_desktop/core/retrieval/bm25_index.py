"""BM25 over chunk texts (bm25s), with our own tokenizer and a pickle-free save format.

Scoring follows the paper's eq. 11–12 (bm25s 'lucene' variant: IDF = ln(1 + (N-n+0.5)/(n+0.5)),
k1 = 1.5, b = 0.75). bm25s drops the constant (k1+1) factor of eq. 11, which changes no ranking
and no TM2C2-normalised score (those divide by the per-query maximum).
"""

from __future__ import annotations

import logging

import json
import re
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np

from spar_desktop.core.progress import CancelToken, check
from spar_desktop.core.retrieval.stemmer import porter_stem

FORMAT = "spar-bm25"
FORMAT_VERSION = 1
META_FILE = "spar_bm25.json"
IDS_FILE = "doc_ids.json"

# Runs of letters/digits; everything else (punctuation, '_', symbols) separates tokens.
_TOKEN_RE = re.compile(r"[^\W_]+", re.UNICODE)


@lru_cache(maxsize=1)
def english_stopwords() -> frozenset[str]:
    from bm25s.stopwords import STOPWORDS_EN

    return frozenset(STOPWORDS_EN)


@dataclass(frozen=True)
class TokenizerConfig:
    lowercase: bool = True
    stopwords: bool = True  # English stopwords (bm25s's list)
    stem: bool = True  # Porter stemming (our stemmer.py; bm25s would need PyStemmer)
    min_length: int = 1  # keep one-character tokens: digits in claims ('5 mg') matter

    def tokenize(self, text: str) -> list[str]:
        if self.lowercase:
            text = text.lower()
        tokens = _TOKEN_RE.findall(text)
        stop = english_stopwords() if self.stopwords else frozenset()
        out = [t for t in tokens if len(t) >= self.min_length and t not in stop]
        if self.stem:
            out = [porter_stem(t) for t in out]
        return out


class BM25Index:
    """A bm25s index over a list of texts addressed by position (0..n-1) and optional ids."""

    def __init__(self, k1: float = 1.5, b: float = 0.75, method: str = "lucene",
                 tokenizer: Optional[TokenizerConfig] = None) -> None:
        self.k1, self.b, self.method = k1, b, method
        self.tokenizer = tokenizer or TokenizerConfig()
        self.doc_ids: list[str] = []
        self._retriever: Any = None
        self._vocab: dict[str, int] = {}
        self._built = False

    # -- build -------------------------------------------------------------------------------
    def build(self, texts: Sequence[str], doc_ids: Optional[Sequence[str]] = None,
              cancel: Optional[CancelToken] = None) -> "BM25Index":
        if doc_ids is not None and len(doc_ids) != len(texts):
            raise ValueError("doc_ids and texts differ in length")
        tokens = []
        for i, text in enumerate(texts):
            if i % 2000 == 0:
                check(cancel)
            tokens.append(self.tokenizer.tokenize(text))
        return self.build_tokens(tokens, doc_ids, cancel)

    def build_tokens(self, tokens: Sequence[Sequence[str]], doc_ids: Optional[Sequence[str]] = None,
                     cancel: Optional[CancelToken] = None) -> "BM25Index":
        """Build from already tokenized texts (this index's tokenizer): a caller that rebuilds
        often over mostly unchanged texts (evolved keys, ERM) tokenizes each text once."""
        import bm25s  # deferred: bm25s loads scipy; importing this module (the tokenizer, stopwords) must not

        logging.getLogger("bm25s").setLevel(logging.WARNING)  # bm25s sets its own logger to DEBUG
        if doc_ids is not None and len(doc_ids) != len(tokens):
            raise ValueError("doc_ids and texts differ in length")
        self.doc_ids = list(doc_ids) if doc_ids is not None else [str(i) for i in range(len(tokens))]
        self._built = True
        if not tokens:  # bm25s cannot index nothing; an empty index simply scores nothing
            self._retriever, self._vocab = None, {}
            return self
        # Build the vocabulary ourselves so index and query share one tokenizer, then hand
        # bm25s token ids (its own tokenizer would need a second pass).
        vocab: dict[str, int] = {}
        corpus_ids: list[list[int]] = []
        for i, toks in enumerate(tokens):
            if i % 2000 == 0:
                check(cancel)
            corpus_ids.append([vocab.setdefault(t, len(vocab)) for t in toks])
        vocab.setdefault("", len(vocab))  # bm25s expects an empty token for token-less documents
        retriever = bm25s.BM25(k1=self.k1, b=self.b, method=self.method)
        retriever.index((corpus_ids, vocab), create_empty_token=False, show_progress=False)
        self._retriever, self._vocab = retriever, vocab
        return self

    def __len__(self) -> int:
        return len(self.doc_ids)

    # -- query -------------------------------------------------------------------------------
    def query_token_ids(self, query: str) -> list[int]:
        return [self._vocab[t] for t in self.tokenizer.tokenize(query) if t in self._vocab]

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every document (zeros when no query term is in the vocabulary)."""
        if not self._built:
            raise RuntimeError("BM25Index has not been built or loaded")
        ids = self.query_token_ids(query)
        if not ids or self._retriever is None:
            return np.zeros(len(self), dtype=np.float32)
        return np.asarray(self._retriever.get_scores_from_ids(ids), dtype=np.float32)

    def idf(self, word: str) -> float:
        """Eq. 12 for one word as the index tokenizes it (0 for a stopword or an empty index);
        a word the index never saw gets the highest IDF. Used to pick salient feedback terms."""
        tokens = self.tokenizer.tokenize(word)
        return self.token_idf(tokens[0]) if tokens else 0.0

    def token_idf(self, token: str) -> float:
        """Eq. 12 for a token already tokenized by this index's tokenizer."""
        if self._retriever is None:
            return 0.0
        n = len(self)
        tid = self._vocab.get(token)
        df = 0
        if tid is not None:
            indptr = self._retriever.scores["indptr"]
            df = int(indptr[tid + 1] - indptr[tid])
        return float(np.log(1.0 + (n - df + 0.5) / (df + 0.5)))

    def top_k(self, query: str, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(positions, scores) of the best ``k`` documents with a positive score, best first."""
        return top_k_positive(self.scores(query), k)

    # -- persistence -------------------------------------------------------------------------
    def save(self, directory: str | Path) -> Path:
        """Write the index as .npy arrays + JSON (bm25s's own format, never pickled) plus our
        versioned metadata, so a load knows exactly which tokenizer produced the vocabulary."""
        if self._retriever is None:
            raise RuntimeError("nothing to save: the index is empty")
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        self._retriever.save(str(d), allow_pickle=False, show_progress=False)
        (d / IDS_FILE).write_text(json.dumps(self.doc_ids), encoding="utf-8")
        meta = {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "k1": self.k1,
            "b": self.b,
            "method": self.method,
            "tokenizer": asdict(self.tokenizer),
            "n_docs": len(self.doc_ids),
        }
        (d / META_FILE).write_text(json.dumps(meta, indent=2), encoding="utf-8")
        return d

    @classmethod
    def load(cls, directory: str | Path, mmap: bool = False) -> "BM25Index":
        """``mmap``: the score arrays stay in the files (read-only) and only the pages a query
        touches are read: a saved workspace searcher opens without reading its whole index."""
        import bm25s  # deferred: see build_tokens

        logging.getLogger("bm25s").setLevel(logging.WARNING)

        d = Path(directory)
        try:
            meta = json.loads((d / META_FILE).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise ValueError(f"{d} does not hold a readable BM25 index: {exc}") from exc
        if meta.get("format") != FORMAT or meta.get("version") != FORMAT_VERSION:
            raise ValueError(f"{d}: unsupported BM25 index format {meta.get('format')} v{meta.get('version')}")
        index = cls(meta["k1"], meta["b"], meta["method"], TokenizerConfig(**meta["tokenizer"]))
        index._built = True
        index._retriever = bm25s.BM25.load(str(d), load_corpus=False, mmap=mmap, allow_pickle=False,
                                           show_progress=False)
        index._vocab = index._retriever.vocab_dict  # read only here: no second copy of the vocabulary
        index.doc_ids = json.loads((d / IDS_FILE).read_text(encoding="utf-8"))
        if len(index.doc_ids) != meta["n_docs"]:
            raise ValueError(f"{d}: id list and metadata disagree on the number of documents")
        return index


def top_k_positive(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices and values of the ``k`` largest scores above zero, in descending order.

    argpartition keeps this O(n) even at 50k chunks; ties are broken by position so results are
    deterministic across runs and backends.
    """
    n = scores.shape[0]
    if n == 0 or k <= 0:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32)
    if k < n:
        cand = np.argpartition(-scores, k - 1)[:k]
    else:
        cand = np.arange(n)
    cand = cand[scores[cand] > 0]
    order = np.lexsort((cand, -scores[cand]))
    cand = cand[order]
    return cand.astype(np.int64), scores[cand].astype(np.float32)

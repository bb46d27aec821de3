"""Key phrases of files: TF-IDF-weighted 1–3-grams without stop words, from file summaries.

The phrase table feeds both halves of hierarchy induction: its TF-IDF rows (reduced by LSA) are
what files are clustered by, and its raw counts are what clusters are named from (c-TF-IDF).
Texts are the short summaries (title + opening) of ``tagging.summaries``, so the vocabulary stays
small (a 100k-file share is 100k short texts) and fitting is seconds, not minutes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping, Optional, Sequence

import numpy as np
from scipy import sparse

# Artefacts of mail, web pages and file formats that say nothing about a topic. Kept small and
# domain-neutral: anything topical is left to max_df and c-TF-IDF to judge.
EXTRA_STOP_WORDS = frozenset("""
    article articles writes wrote write writing re fwd fw subject lines organization date sent
    reply replies posted posting post email mail mailto http https www com edu org net html htm
    pdf doc docx page pages file files said says say like just know think does did don didn doesn
    isn wasn aren won ll ve ok yes hi hello thanks thank regards dear best cheers
    also would could should might may must will shall one two three use used using get got
    make made way well really many much even still new good see seen want need
""".split())

# Addresses, URLs, message ids and numbers: frequent in shares (mail quotes, signatures) and never a
# topic name.
_NOISE = re.compile(r"\S+@\S+|<[^>\s]*>|(?:https?://|www\.)\S+|\b\w*\d\w*\b")
FIT_SAMPLE = 20_000  # texts the vocabulary is fitted on
TOKEN_PATTERN = r"(?u)\b[^\W\d_][^\W\d_'\-]+[^\W\d_]\b"  # words of 3+ letters (no digits)


def clean_text(text: str) -> str:
    """Text with addresses, URLs and digit-bearing tokens removed (they would become 'phrases')."""
    return _NOISE.sub(" ", text)


@dataclass(frozen=True)
class PhraseTable:
    """Files × phrases. ``counts`` are raw n-gram counts (for c-TF-IDF naming), ``weights`` the
    L2-normalised sublinear TF-IDF rows (for clustering and per-file key phrases)."""

    file_ids: np.ndarray  # int64 [n]
    phrases: np.ndarray  # object [v]: the phrase strings
    counts: sparse.csr_matrix  # [n, v]
    weights: sparse.csr_matrix  # [n, v]

    def __len__(self) -> int:
        return len(self.file_ids)

    def top_phrases(self, row: int, k: int = 8) -> list[str]:
        """One file's key phrases, best first."""
        start, end = self.weights.indptr[row], self.weights.indptr[row + 1]
        cols, vals = self.weights.indices[start:end], self.weights.data[start:end]
        order = np.argsort(-vals, kind="stable")
        return distinct_phrases([str(self.phrases[c]) for c in cols[order]], k)


def _min_df(n: int) -> int:
    # A phrase seen in one file cannot describe a group; in tiny corpora 2 is already strict.
    return 2 if n < 2000 else 3


def build_phrase_table(texts: Mapping[int, str], max_phrases: int = 40_000,
                       stop_words: Optional[Sequence[str]] = None) -> PhraseTable:
    """Fit the phrase vocabulary on ``texts`` (file id -> summary). Raises ValueError when the
    texts have no phrase in common (empty or all-unique vocabularies)."""
    # Deferred: scikit-learn takes ~1 s to import; only an induction run needs it.
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, CountVectorizer, TfidfTransformer

    ids = sorted(texts)
    docs = [clean_text(texts[i]) for i in ids]
    n = len(ids)
    stops = sorted(set(ENGLISH_STOP_WORDS) | EXTRA_STOP_WORDS | set(stop_words or ()))
    vectorizer = CountVectorizer(lowercase=True, stop_words=stops, token_pattern=TOKEN_PATTERN,
                                 ngram_range=(1, 3), min_df=min(_min_df(n), max(1, n - 1)),
                                 max_df=0.5 if n >= 10 else 1.0, max_features=max_phrases, dtype=np.float32)
    try:
        if n > FIT_SAMPLE:
            # 1–3-grams of 100k texts are tens of millions of candidates before pruning (GBs of
            # dict); a seeded sample finds the phrases that matter, then every file is counted.
            sample = np.random.default_rng(0).choice(n, FIT_SAMPLE, replace=False)
            vectorizer.fit([docs[i] for i in sorted(sample)])
            counts = vectorizer.transform(docs).tocsr()
        else:
            counts = vectorizer.fit_transform(docs).tocsr()
    except ValueError as exc:  # "empty vocabulary" / "max_df corresponds to < documents than min_df"
        raise ValueError("the files share no key phrases to group them by") from exc
    weights = TfidfTransformer(sublinear_tf=True, norm="l2").fit_transform(counts).tocsr()
    return PhraseTable(np.asarray(ids, dtype=np.int64), vectorizer.get_feature_names_out(), counts,
                       weights.astype(np.float32))


def distinct_phrases(ranked: Sequence[str], k: int) -> list[str]:
    """The first ``k`` phrases of ``ranked`` that do not repeat a better one: 'space station'
    after 'space' adds a word and is kept, 'station space' or 'space' after 'space station' is not."""
    out: list[str] = []
    seen: list[set[str]] = []
    for phrase in ranked:
        words = set(phrase.split())
        if any(words <= s for s in seen):
            continue
        out.append(phrase)
        seen.append(words)
        if len(out) == k:
            break
    return out


def class_tfidf(counts: sparse.csr_matrix, labels: np.ndarray, n_classes: int) -> np.ndarray:
    """c-TF-IDF (BERTopic's class-based TF-IDF): per-class term frequency, normalised by class
    size, times log(1 + mean class size / term frequency over all classes). Dense [classes, v];
    callers pass only the rows of one sibling group, so v stays the vocabulary size."""
    rows = sparse.csr_matrix((np.ones(len(labels), dtype=np.float32), (labels, np.arange(len(labels)))),
                             shape=(n_classes, len(labels)))
    per_class = np.asarray((rows @ counts).todense(), dtype=np.float64)  # [c, v]
    sizes = per_class.sum(axis=1, keepdims=True)
    tf = per_class / np.where(sizes > 0, sizes, 1.0)
    total = per_class.sum(axis=0)
    mean_words = float(sizes.mean()) if n_classes else 0.0
    idf = np.log1p(mean_words / np.where(total > 0, total, np.inf))
    return tf * idf

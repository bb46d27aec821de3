"""The baseline the EDR-MQ paper compares against (its Figure 5): every document linked to its
top-25 most similar documents by TF-IDF cosine. 25 = k1 × k2 = 5 × 5, the number of pairs one
EDR-MQ query can produce, so both graphs have comparable edge budgets per document."""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np
from scipy import sparse

from spar_desktop.core.progress import CancelToken, Progress, ProgressCallback, check, no_progress

TOP_K = 25


def tfidf_vectorizer(n_docs: int):
    """Rows L2-normalised (TfidfVectorizer's default), so a row product is a cosine. Terms in a
    single document cannot link two documents and terms in over half of them carry no topic, so
    both are dropped (this also keeps the vocabulary small on 10k+ documents)."""
    from sklearn.feature_extraction.text import TfidfVectorizer  # deferred: sklearn loads in ~1 s

    return TfidfVectorizer(sublinear_tf=True, stop_words="english", min_df=2 if n_docs >= 20 else 1,
                           max_df=0.5 if n_docs >= 20 else 1.0, dtype=np.float32)


def fit_tfidf(texts: Sequence[str]) -> tuple[sparse.csr_matrix, Any]:
    """(the documents' TF-IDF rows as float32 CSR, the fitted vectorizer); the vectorizer is None
    and the rows are empty when no term is left after stop words (no document shares a term)."""
    n = len(texts)
    vec = tfidf_vectorizer(n)
    try:
        return vec.fit_transform(list(texts)).tocsr().astype(np.float32), vec
    except ValueError:
        return sparse.csr_matrix((n, 1), dtype=np.float32), None


def tfidf_top_k(texts: Sequence[str], k: int = TOP_K, block: int = 1024, progress: ProgressCallback = no_progress,
                cancel: Optional[CancelToken] = None) -> sparse.csr_matrix:
    """(n × n) sparse matrix holding, per row, the cosine to that document's ``k`` nearest other
    documents (zero similarities are not edges). Computed a block of rows at a time: the full
    n × n product of 11k newsgroup posts would be ~500 MB dense."""
    X, _ = fit_tfidf(texts)
    n = X.shape[0]
    XT = X.T.tocsc()
    rows, cols, vals = [], [], []
    for start in range(0, n, block):
        check(cancel)
        stop = min(start + block, n)
        S = (X[start:stop] @ XT).toarray()
        S[np.arange(stop - start), np.arange(start, stop)] = -1.0  # no self loops
        kk = min(k, n - 1)
        if kk < 1:
            break
        part = np.argpartition(S, n - kk, axis=1)[:, n - kk:]
        v = np.take_along_axis(S, part, axis=1)
        keep = v > 0
        r = np.repeat(np.arange(start, stop), kk).reshape(-1, kk)
        rows.append(r[keep])
        cols.append(part[keep])
        vals.append(v[keep])
        progress(Progress(stop, n, "TF-IDF similarities"))
    if not rows:
        return sparse.csr_matrix((n, n), dtype=np.float64)
    return sparse.coo_matrix((np.concatenate(vals).astype(np.float64), (np.concatenate(rows), np.concatenate(cols))),
                             shape=(n, n)).tocsr()

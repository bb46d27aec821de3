"""A build that stops part way (cancelled, or killed outright) keeps what it embedded before:
the next build re-embeds only the rest, however few chunks the stopped build got through."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from spar_desktop.core.documents.types import ChunkerConfig, ExtractedDocument, PageText
from spar_desktop.core.embedding.cache import EmbeddingCache
from spar_desktop.core.embedding.pipeline import content_hash, embed_documents
from spar_desktop.core.progress import CancelToken, Cancelled

CONFIG = ChunkerConfig(child_tokens=64, parent_tokens=256, overlap_tokens=8)
N_DOCS = 96  # far below the 1,024-text flush: before, a stopped build of this size kept nothing
STOP_AFTER = 40  # texts embedded before the build is stopped
# Small batches so that the stop lands after a few of them, as it would in a big build.
OPTIONS = dict(batch_size=16, commit_texts=32)


def texts() -> list[str]:
    return [f"Inspection note {i}: turbine {i % 7} at site {i} was checked; blade {i % 3} shows wear." for i in range(N_DOCS)]


def items(values: list[str]):
    return [(content_hash(t), (lambda t=t: ExtractedDocument((PageText(1, t),), "text", title=None))) for t in values]


def resume(data_dir: Path, encoder) -> int:
    """Build again; returns how many texts it had to embed."""
    before = encoder.texts_encoded
    with EmbeddingCache(data_dir) as cache:
        docs = embed_documents(items(texts()), CONFIG, encoder, cache, **OPTIONS)
    assert len(docs) == N_DOCS and all(len(d.children) == 1 for d in docs.values())
    return encoder.texts_encoded - before


def test_a_cancelled_build_keeps_the_batches_it_finished(tmp_path, encoder):
    token = CancelToken()
    start = encoder.texts_encoded

    def progress(_):  # the user presses Cancel once a few batches are done
        if encoder.texts_encoded - start >= STOP_AFTER:
            token.cancel()

    with EmbeddingCache(tmp_path) as cache, pytest.raises(Cancelled):
        embed_documents(items(texts()), CONFIG, encoder, cache, progress, token, **OPTIONS)
    embedded_before = encoder.texts_encoded - start
    assert STOP_AFTER <= embedded_before < N_DOCS
    with EmbeddingCache(tmp_path) as cache:
        kept = len(cache.hashes())
    assert kept >= 32  # at least the first commit group
    again = resume(tmp_path, encoder)
    assert again == N_DOCS - kept
    assert again <= N_DOCS - 32


CHILD = textwrap.dedent("""
    import os, signal, sys
    sys.path.insert(0, {root!r})
    from tests.core.embedding.test_durable_cache import CONFIG, OPTIONS, STOP_AFTER, items, texts
    from spar_desktop.core.embedding.cache import EmbeddingCache
    from spar_desktop.core.embedding.encoder import get_encoder
    from spar_desktop.core.embedding.pipeline import embed_documents

    encoder = get_encoder("cpu")

    def progress(_):  # killed outright part way: no cleanup, no exception handler runs
        if encoder.texts_encoded >= STOP_AFTER:
            os.kill(os.getpid(), signal.SIGKILL)

    embed_documents(items(texts()), CONFIG, encoder, EmbeddingCache({data!r}), progress, **OPTIONS)
    sys.exit(3)  # not reached: the build was killed
""")


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")
def test_a_killed_build_keeps_the_batches_it_finished(tmp_path, encoder):
    root = str(Path(__file__).resolve().parents[3])
    child = subprocess.run([sys.executable, "-c", CHILD.format(root=root, data=str(tmp_path))], cwd=root,
                           capture_output=True, text=True, timeout=120)
    assert child.returncode == -signal.SIGKILL, child.stderr
    with EmbeddingCache(tmp_path) as cache:
        kept = len(cache.hashes())
    assert kept >= 32, "the batches committed before the kill were lost"
    assert resume(tmp_path, encoder) == N_DOCS - kept

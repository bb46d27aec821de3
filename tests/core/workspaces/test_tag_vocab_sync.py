"""Issues 29 and 30: the tag vocabulary is embedded incrementally into a vector file of its own.
A sync embeds only tags not embedded yet (new, changed), encodes each distinct text once (a
share's folder names repeat), resumes where a cancelled one stopped, refills a lost store and
takes over a state from before the store (the Chroma collection of earlier releases) by
re-embedding, never by failing. A later process matches keywords without loading the encoder
when their vectors are known."""

from __future__ import annotations

import pytest
from sqlalchemy import update

from spar_desktop.core.config import load_settings
from spar_desktop.core.embedding.encoder import get_encoder
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.models import Tag, TagSource
from spar_desktop.core.library.scanner import Scanner
from spar_desktop.core.library.tags import create_tag
from spar_desktop.core.progress import CancelToken, Cancelled
from spar_desktop.core.workspaces import tag_vocab_sync
from spar_desktop.core.workspaces.models import TagVocabularyEntry
from spar_desktop.core.workspaces.tag_index import TAG_VECTORS, TagIndex
from spar_desktop.core.workspaces.tag_vectors import TextVectors

FOLDERS = ("Engineering/Falcon/reports", "Engineering/Heron/reports", "Finance/Audit/minutes",
           "Finance/Budget/contracts", "Safety/incident-reports", "Safety/Falcon/reports")


class CountingEncoder:
    """The real encoder, counting the texts it is asked to embed."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.texts: list[str] = []
        self.queries: list[str] = []

    def encode(self, texts, **kw):
        self.texts += list(texts)
        return self.inner.encode(texts, **kw)

    def encode_query(self, text):
        self.queries.append(text)
        return self.inner.encode_query(text)


@pytest.fixture()
def env(tmp_path):
    share = tmp_path / "share"
    for n, folder in enumerate(FOLDERS):
        (share / folder).mkdir(parents=True)
        (share / folder / f"doc{n}.txt").write_text(f"document {n} in {folder}", encoding="utf-8")
    lib = Library.open(load_settings(tmp_path / "data"))
    Scanner(lib).scan([str(share)])
    encoder = CountingEncoder(get_encoder("cpu"))
    yield lib, encoder
    lib.close()


def indexed_tag_count(lib: Library) -> int:
    with lib.session() as s:
        return s.query(Tag).filter(Tag.source.in_(tag_vocab_sync.INDEXED_SOURCES)).count()


def test_only_tags_not_embedded_yet_are_embedded_each_distinct_text_once(env):
    lib, encoder = env
    index = TagIndex(lib, encoder)
    total = indexed_tag_count(lib)
    assert index.sync() == (total, 0) and index.pending() == 0
    # 'reports' is the label of three folders and 'Falcon' of two: encoded once each.
    assert len(encoder.texts) == len(set(encoder.texts)) == len(index.store)
    assert encoder.texts.count("reports") == 1
    first = len(encoder.texts)
    assert index.sync() == (0, 0) and len(encoder.texts) == first  # nothing new: nothing embedded
    with lib.session() as s:
        tag = create_tag(s, "user:Offshore wind", "Offshore wind", TagSource.USER, "wind farms at sea")
    assert index.sync() == (1, 0) and len(encoder.texts) - first == 2  # its full text and its label
    assert index.match("wind farms at sea")[0].tag_id == tag.id


def test_a_sync_after_a_commit_of_any_connection_sees_its_tags(env, tmp_path, monkeypatch):
    """A sync with nothing committed since the last one (a request's second sync) skips reading
    every tag and edge; a tag another process adds, or a description this one sets, is still
    indexed by the next sync."""
    lib, encoder = env
    index = TagIndex(lib, encoder)
    index.sync()
    index.sync()  # sees the first one's own commits: nothing changed
    reads: list[int] = []
    signature = tag_vocab_sync.signature
    monkeypatch.setattr(tag_vocab_sync, "signature", lambda s: reads.append(1) or signature(s))
    assert index.sync() == (0, 0) and index.sync() == (0, 0) and not reads
    with lib.session() as s:  # a read commits nothing
        s.query(Tag).count()
    assert index.sync() == (0, 0) and not reads
    other = Library.open(load_settings(tmp_path / "data"))  # another process's connection
    try:
        with other.session() as s:
            tag = create_tag(s, "user:Offshore wind", "Offshore wind", TagSource.USER, "wind farms at sea")
    finally:
        other.close()
    assert index.sync() == (1, 0) and reads
    assert index.match("wind farms at sea")[0].tag_id == tag.id
    with lib.session() as s:
        s.query(Tag).filter(Tag.key == "Finance/Audit").one().description = "internal and external audits"
    assert index.sync() == (1, 0)
    assert index.match("external audits")[0].key == "Finance/Audit"


def test_an_index_in_memory_always_checks_its_tags():
    """No commit watch without a database file of its own: every sync reads the signature."""
    from spar_desktop.core.library.commits import CommitWatch
    from spar_desktop.core.library.database import make_engine

    engine = make_engine("sqlite:///:memory:")
    watch = CommitWatch(engine)
    watch.mark(watch.now())
    assert not watch.unchanged()
    engine.dispose()


def test_a_changed_description_re_embeds_that_tag_only(env):
    lib, encoder = env
    index = TagIndex(lib, encoder)
    index.sync()
    with lib.session() as s:
        tag = s.query(Tag).filter(Tag.key == "Finance/Audit").one()
        tag.description = "internal and external audits"
    assert index.sync() == (1, 0)
    assert index.match("external audits")[0].key == "Finance/Audit"


def test_a_cancelled_sync_resumes_where_it_stopped(env, monkeypatch):
    lib, encoder = env
    monkeypatch.setattr(tag_vocab_sync, "EMBED_BATCH", 3)
    index = TagIndex(lib, encoder)
    token = CancelToken()

    def stop_after_first_batch(p):
        if p.done >= 3:
            token.cancel()

    with pytest.raises(Cancelled):
        index.sync(stop_after_first_batch, token)
    total = indexed_tag_count(lib)
    assert index.pending() == total - 3
    # Lexical matching works before the vectors are all there: words are indexed first.
    assert {m.key for m in index.match("reports")} >= {"Engineering/Falcon/reports", "Engineering/Heron/reports"}
    assert index.sync() == (total - 3, 0) and index.pending() == 0


def test_a_lost_store_and_a_state_from_before_the_store_are_embedded_again(env, tmp_path):
    lib, encoder = env
    TagIndex(lib, encoder).sync()
    total = indexed_tag_count(lib)
    # The store folder was deleted behind our back: the next process embeds every tag again.
    import shutil

    shutil.rmtree(tmp_path / "data" / TAG_VECTORS)
    again = TagIndex(lib, encoder)
    assert again.sync() == (total, 0)
    assert again.match("incident reports")[0].key == "Safety/incident-reports"
    # A data dir of an earlier release: every tag marked embedded with a fingerprint of the Chroma
    # collection's, which names no row here. Re-embedded (only the texts missing), not an error.
    with lib.session() as s:
        s.execute(update(TagVocabularyEntry).values(fp="0123456789abcdef"))
    encoded = len(encoder.texts)
    upgraded = TagIndex(lib, encoder)
    assert upgraded.sync() == (total, 0) and len(encoder.texts) == encoded
    assert upgraded.match("incident reports")[0].key == "Safety/incident-reports"


def test_a_deleted_tag_leaves_the_vocabulary(env):
    lib, encoder = env
    index = TagIndex(lib, encoder)
    index.sync()
    assert any(m.key == "Finance/Budget/contracts" for m in index.match("contracts"))
    with lib.session() as s:
        s.delete(s.query(Tag).filter(Tag.key == "Finance/Budget/contracts").one())
    assert index.sync() == (0, 1)
    assert all(m.key != "Finance/Budget/contracts" for m in index.match("contracts"))
    assert all(m.key != "Finance/Budget/contracts" for m in index.match("agreements"))


def test_a_later_process_matches_known_keywords_without_loading_the_encoder(env):
    lib, encoder = env
    first = TagIndex(lib, lambda: encoder)
    first.sync()
    seen = first.match("financial audit")  # encoded once, then cached with the store
    loads = []

    def load():
        loads.append(1)
        return encoder

    later = TagIndex(lib, load)
    assert later.sync() == (0, 0)
    assert [m.key for m in later.match("financial audit")] == [m.key for m in seen]
    assert {m.key for m in later.match("reports")} >= {"Engineering/Falcon/reports"}  # a folder's own name
    assert loads == [] and encoder.queries == ["financial audit"]
    later.match("safety paperwork")  # never seen: the encoder loads now
    assert loads == [1]


def test_a_torn_append_loses_only_that_append(tmp_path):
    import numpy as np

    store = TextVectors(tmp_path / "v")
    store.add(["alpha", "beta"], np.eye(2, 4, dtype=np.float32))
    with open(tmp_path / "v" / "vectors.f32", "ab") as f:
        f.write(b"\x00" * 10)  # a process killed while writing the next rows
    with open(tmp_path / "v" / "texts.jsonl", "ab") as f:
        f.write(b'"gam')
    reopened = TextVectors(tmp_path / "v")
    assert len(reopened) == 2 and reopened.search(np.array([1, 0, 0, 0], dtype=np.float32), 0.5)[0][1] == 1.0
    reopened.add(["gamma"], np.array([[0, 0, 1, 0]], dtype=np.float32))
    assert len(TextVectors(tmp_path / "v")) == 3
    assert TextVectors(tmp_path / "v").vector("gamma").tolist() == [0, 0, 1, 0]


def test_two_writers_appending_in_turn_each_keep_every_row(tmp_path):
    """The app's background job and a CLI command add to one store in turn: each append sees the
    other's rows (no duplicate, no lost row), and a fresh reader holds them all in order."""
    import numpy as np

    app, cli = TextVectors(tmp_path / "v"), TextVectors(tmp_path / "v")
    app.add(["alpha"], np.array([[1, 0, 0, 0]], dtype=np.float32))
    cli.add(["beta", "alpha"], np.array([[0, 1, 0, 0], [9, 9, 9, 9]], dtype=np.float32))
    app.add(["gamma", "beta"], np.array([[0, 0, 1, 0], [9, 9, 9, 9]], dtype=np.float32))
    app.add(["delta"], np.array([[0, 0, 0, 1]], dtype=np.float32))
    fresh = TextVectors(tmp_path / "v")
    assert len(fresh) == 4 and len(app) == 4
    assert [fresh.vector(t).tolist() for t in ("alpha", "beta", "gamma", "delta")] == np.eye(4).tolist()
    cli.refresh()
    assert cli.vector("delta").tolist() == [0, 0, 0, 1]

"""Issue 29: the tag vocabulary is embedded incrementally. A sync embeds only tags not embedded
yet (new, changed), resumes where a cancelled one stopped, never reads the tag collection back
whole (that read died inside Chroma at 30,000 folder tags), and refills a collection that lost
its vectors."""

from __future__ import annotations

import hashlib

import pytest
from sqlalchemy import delete

from spar_desktop.core.config import load_settings
from spar_desktop.core.embedding.encoder import get_encoder
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.models import Tag, TagSource
from spar_desktop.core.library.scanner import Scanner
from spar_desktop.core.library.tags import create_tag
from spar_desktop.core.progress import CancelToken, Cancelled
from spar_desktop.core.retrieval.vector_store import delete_collection, make_chroma_client
from spar_desktop.core.workspaces import tag_vocab_sync
from spar_desktop.core.workspaces.models import TagVocabularyEntry, TagVocabularyMeta, TagWord
from spar_desktop.core.workspaces.tag_index import TAG_COLLECTION, TagIndex

FOLDERS = ("Engineering/Falcon/reports", "Engineering/Heron/reports", "Finance/Audit/minutes",
           "Finance/Budget/contracts", "Safety/incident-reports")


class CountingEncoder:
    """The real encoder, counting the texts it is asked to embed."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.texts = 0

    def encode(self, texts, **kw):
        self.texts += len(texts)
        return self.inner.encode(texts, **kw)

    def encode_query(self, text):
        return self.inner.encode_query(text)


@pytest.fixture()
def env(tmp_path):
    share = tmp_path / "share"
    for n, folder in enumerate(FOLDERS):
        (share / folder).mkdir(parents=True)
        (share / folder / f"doc{n}.txt").write_text(f"document {n} in {folder}", encoding="utf-8")
    lib = Library.open(load_settings(tmp_path / "data"))
    Scanner(lib).scan([str(share)])
    client = make_chroma_client(lib.settings)
    encoder = CountingEncoder(get_encoder("cpu"))
    yield lib, client, encoder
    lib.close()


def indexed_tag_count(lib: Library) -> int:
    with lib.session() as s:
        return s.query(Tag).filter(Tag.source.in_(tag_vocab_sync.INDEXED_SOURCES)).count()


def test_only_tags_not_embedded_yet_are_embedded_and_the_collection_is_never_read_whole(env, monkeypatch):
    lib, client, encoder = env
    index = TagIndex(lib, client, encoder)
    reads = []
    real_get = index.collection._col.get

    def spy_get(*args, **kwargs):
        reads.append(kwargs.get("ids"))
        return real_get(*args, **kwargs)

    monkeypatch.setattr(index.collection._col, "get", spy_get)
    total = indexed_tag_count(lib)
    assert index.sync() == (total, 0)
    assert index.pending() == 0 and index.collection.count() > total  # folder tags: full text + label
    first = encoder.texts
    assert index.sync() == (0, 0) and encoder.texts == first  # nothing new: nothing embedded
    with lib.session() as s:
        tag = create_tag(s, "user:Offshore wind", "Offshore wind", TagSource.USER, "wind farms at sea")
    assert index.sync() == (1, 0) and encoder.texts - first <= 2
    assert index.match("wind farms at sea")[0].tag_id == tag.id
    assert all(ids for ids in reads), "the tag collection was read without naming ids"


def test_a_changed_description_re_embeds_that_tag_only(env):
    lib, client, encoder = env
    index = TagIndex(lib, client, encoder)
    index.sync()
    with lib.session() as s:
        tag = s.query(Tag).filter(Tag.key == "Finance/Audit").one()
        tag.description = "internal and external audits"
    assert index.sync() == (1, 0)
    assert index.match("external audits")[0].key == "Finance/Audit"


def test_a_cancelled_sync_resumes_where_it_stopped(env, monkeypatch):
    lib, client, encoder = env
    monkeypatch.setattr(tag_vocab_sync, "EMBED_BATCH", 3)
    index = TagIndex(lib, client, encoder)
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


def test_vectors_already_in_the_collection_are_kept_and_a_lost_collection_is_refilled(env):
    lib, client, encoder = env
    index = TagIndex(lib, client, encoder)
    index.sync()
    total, embedded = indexed_tag_count(lib), encoder.texts
    with lib.session() as s:
        reports = s.query(Tag.id).filter(Tag.key == "Engineering/Falcon/reports").scalar()
    stored = index.collection._col.get(ids=[f"{reports}:label"], include=["metadatas"])["metadatas"][0]
    # Each vector's fingerprint is the hash of its own text, as releases before issue 29 stored it.
    assert stored["fp"] == hashlib.sha1(b"reports").hexdigest()[:16]
    # An index from before the state table (an upgrade): its vectors are adopted, not re-encoded.
    with lib.session() as s:
        s.execute(delete(TagWord))
        s.execute(delete(TagVocabularyEntry))
        s.execute(delete(TagVocabularyMeta))
    assert TagIndex(lib, client, encoder).sync() == (0, 0) and encoder.texts == embedded
    # The store lost the collection (reset, deleted): the next process embeds every tag again.
    delete_collection(client, TAG_COLLECTION)
    again = TagIndex(lib, client, encoder)
    assert again.sync() == (total, 0)
    assert again.match("incident reports")[0].key == "Safety/incident-reports"


def test_a_deleted_tag_leaves_the_vocabulary(env):
    lib, client, encoder = env
    index = TagIndex(lib, client, encoder)
    index.sync()
    before = index.collection.count()
    with lib.session() as s:
        s.delete(s.query(Tag).filter(Tag.key == "Finance/Budget/contracts").one())
    assert index.sync() == (0, 1)
    assert index.collection.count() == before - 2  # its full text and its label
    assert all(m.key != "Finance/Budget/contracts" for m in index.match("contracts"))

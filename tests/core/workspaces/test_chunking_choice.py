"""Chunking per workspace (issue 32): each choice is kept on the workspace and builds its own
passages under its own cache key; contextual passages come from the language model (the project's
Ollama-protocol test server) after the plain build, are cached per passage, resume after a stop,
and a failing model leaves the plain passages. Real encoder and Chroma, on a handful of files."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from spar_desktop.core.config import load_settings
from spar_desktop.core.documents.types import ChunkerConfig
from spar_desktop.core.embedding.encoder import get_encoder
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.scanner import Scanner
from spar_desktop.core.llm.client import Ollama
from spar_desktop.core.llm.helpers import LLMHelpers
from spar_desktop.core.workspaces.chunkings import CHUNKINGS, build_config, contextual_config
from spar_desktop.core.workspaces.engine import Engine, chunker_config
from spar_desktop.core.workspaces.enhance import enhance_workspace, enhancement_status
from spar_desktop.core.workspaces.errors import WorkspaceError
from spar_desktop.core.workspaces.manager import Workspaces
from spar_desktop.core.workspaces.selection import WorkspaceFilter
from tests.support.fake_ollama import FakeOllama

SENTENCES = {
    "gearbox": "The gearbox bearing failed after oil contamination. Vibration alarms preceded the failure by a week. "
               "The oil sample showed water ingress and metal particles.",
    "budget": "The capital budget for the year is 1.2 million pounds. A contingency of fifty thousand was approved. "
              "The finance board reviews overruns every quarter.",
    "blade": "A leading edge erosion survey found cracks on blade two. Repair by resin filling is planned for May. "
             "Rope access technicians will do the work.",
}


@pytest.fixture(scope="module")
def encoder():
    return get_encoder("cpu")


@pytest.fixture
def fake():
    server = FakeOllama().start()
    server.set(reply_fn=lambda body: f"Context: from a maintenance file ({len(body.get('prompt', ''))} chars).")
    yield server
    server.stop()


@pytest.fixture
def mgr(tmp_path: Path, encoder, fake):
    share = tmp_path / "share"
    share.mkdir()
    for topic, text in SENTENCES.items():
        (share / f"{topic}.md").write_text(f"# {topic.title()}\n\n" + " ".join([text] * 3), encoding="utf-8")
    settings = replace(load_settings(tmp_path / "data"), chroma_process=False, ollama_host=fake.url,
                       ollama_model="llama3.2")
    lib = Library.open(settings)
    Scanner(lib).scan([str(share)])
    m = Workspaces(lib, Engine(settings, encoder))
    yield m
    m.engine.close()
    lib.close()


def context_fn(fake: FakeOllama):
    return LLMHelpers(Ollama(fake.url, "llama3.2")).context_fn


def create(mgr: Workspaces, name: str, chunking: str):
    return mgr.create(name, filter=WorkspaceFilter(all_files=True), chunking=chunking)[0]


def test_each_chunking_has_its_own_cache_key_and_the_default_key_is_unchanged():
    settings = load_settings(Path("/nonexistent-spar-data"))
    keys = {c: build_config(settings, c).cache_key for c in CHUNKINGS}
    # The key every cache before the choice existed was written under: still the default's.
    assert keys["hierarchical"] == chunker_config(settings).cache_key == ChunkerConfig().cache_key \
        == "hierarchical-c200-p800-o30"
    # Contextual builds plain hierarchical passages first (sharing the default cache) ...
    assert keys["contextual"] == keys["hierarchical"]
    enhanced = contextual_config(build_config(settings, "contextual"), "llama3.2").cache_key
    other_model = contextual_config(build_config(settings, "contextual"), "qwen2.5:0.5b").cache_key
    # ... and its enhanced passages have keys of their own, per model that wrote the contexts.
    assert len({keys["hierarchical"], keys["fixed"], keys["semantic"], enhanced, other_model}) == 5


def test_an_unknown_chunking_is_refused(mgr):
    with pytest.raises(WorkspaceError, match="unknown chunking"):
        create(mgr, "odd", "paragraphs")


@pytest.mark.parametrize("chunking,levels", [("fixed", {"flat"}), ("semantic", {"flat"}),
                                             ("hierarchical", {"parent", "child"})])
def test_the_chosen_chunking_is_kept_and_builds_its_passages(mgr, chunking, levels):
    create(mgr, "w", chunking)
    # Kept on the workspace: a new manager over the same index reads it back.
    again = Workspaces(mgr.library, mgr.engine)
    assert again.get("w").chunking == chunking
    report = mgr.build("w")
    assert report.ready == 3
    info = mgr.get("w")
    assert info.chunker_key == build_config(mgr.library.settings, chunking).cache_key
    assert info.to_json()["chunking"] == chunking
    docs = [mgr.engine.cache.get(h, info.chunker_key, info.model_id) for h in mgr.ready_hashes("w")]
    assert all(d is not None for d in docs)
    assert {c.level for d in docs for c in d.chunks} == levels
    hits = mgr.search("w", "gearbox oil contamination", k=3).hits
    assert hits and hits[0].path.endswith("gearbox.md")
    # The saved search index matches the workspace's own chunking: a new process opens it as
    # saved instead of rebuilding it from the cache.
    saved, why = Workspaces(mgr.library, mgr.engine).searchers.open(info.id, info.built_at)
    assert why is None and len(saved) == info.chunk_count


def test_contextual_is_searchable_plain_at_once_then_enhanced_and_swapped_in(mgr, fake):
    create(mgr, "ctx", "contextual")
    mgr.build("ctx")
    assert fake.calls("/api/generate") == []  # the build itself never asks the model
    status = enhancement_status(mgr, "ctx")
    assert status.enhanced == 0 and status.total == mgr.get("ctx").chunk_count and status.pending
    assert mgr.search("ctx", "gearbox oil", k=1).hits  # plain passages searchable meanwhile

    report = enhance_workspace(mgr, "ctx", context_fn(fake))
    total = mgr.get("ctx").chunk_count
    assert report.failed is None and not report.cancelled and report.swapped
    assert report.asked == total == len(fake.calls("/api/generate"))
    assert report.status.enhanced == total and not report.status.pending
    assert report.status.describe() == f"contextual: {total}/{total} passages enhanced"

    info = mgr.get("ctx")
    key = contextual_config(build_config(mgr.library.settings, "contextual"), "llama3.2").cache_key
    searcher = mgr.open_search("ctx").searcher
    for h in mgr.ready_hashes("ctx"):
        plain = mgr.engine.cache.get(h, info.chunker_key, info.model_id)
        enhanced = mgr.engine.cache.get(h, key, info.model_id)
        assert [c.chunk_id for c in enhanced.children] == [c.chunk_id for c in plain.children]
        assert all(c.context and c.context.startswith("Context: from a maintenance file") for c in enhanced.children)
        assert not any(c.context for c in plain.children)
        # The workspace's vectors are the enhanced ones now.
        file_id = next(f.file_id for f in mgr.files("ctx") if f.content_hash == h)
        first = enhanced.children[0]
        pos = searcher.position(f"{file_id}#{first.chunk_id}")
        assert np.allclose(searcher.original_vectors[pos], enhanced.vectors[0], atol=1e-5)
        assert not np.allclose(enhanced.vectors[0], plain.vectors[0], atol=1e-3)
    assert len(searcher) == total  # swapped, not added: one vector per passage

    # Nothing left to ask: a second run makes no model call.
    again = enhance_workspace(mgr, "ctx", context_fn(fake))
    assert again.asked == 0 and len(fake.calls("/api/generate")) == total


def test_a_failing_model_leaves_plain_passages_and_a_rerun_asks_only_the_rest(mgr, fake):
    create(mgr, "ctx", "contextual")
    mgr.build("ctx")
    total = mgr.get("ctx").chunk_count
    good = context_fn(fake)
    calls = {"n": 0}

    def flaky(doc: str, chunk: str) -> str:
        calls["n"] += 1
        if calls["n"] > 2:
            raise RuntimeError("llama runner process has terminated")
        return good(doc, chunk)

    first = enhance_workspace(mgr, "ctx", flaky)
    assert first.failed and "terminated" in first.failed
    assert first.asked == 2 and first.status.enhanced == 2 and first.status.pending
    assert mgr.search("ctx", "budget contingency", k=1).hits  # still searchable, plain

    # The server itself failing: nothing is lost, nothing gained.
    fake.push(failure="server-error")
    second = enhance_workspace(mgr, "ctx", good)
    assert second.failed and second.asked == 0 and second.status.enhanced == 2

    third = enhance_workspace(mgr, "ctx", good)
    assert third.failed is None and third.asked == total - 2  # the two done are not asked again
    assert third.status.enhanced == total


def test_enhancing_a_workspace_that_is_not_contextual_is_refused(mgr, fake):
    create(mgr, "plain", "hierarchical")
    mgr.build("plain")
    assert enhancement_status(mgr, "plain") is None
    with pytest.raises(WorkspaceError, match="contextual"):
        enhance_workspace(mgr, "plain", context_fn(fake))

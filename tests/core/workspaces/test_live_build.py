"""Searchable while it builds (issue 30): keyword hits before the embedding ends, the dense
coverage figure, a complete build that says 1.0 and answers exactly as a build without snapshots,
and what a search says about a workspace another process is building or whose build stopped."""

from __future__ import annotations

import copy
from dataclasses import replace
from pathlib import Path

import pytest

from spar_desktop.core.config import load_settings
from spar_desktop.core.embedding import pipeline
from spar_desktop.core.embedding.encoder import get_encoder
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.scanner import Scanner
from spar_desktop.core.progress import Cancelled, CancelToken
from spar_desktop.core.retrieval.searcher import HybridSearcher
from spar_desktop.core.workspaces import builder
from spar_desktop.core.workspaces.engine import Engine
from spar_desktop.core.workspaces.errors import WorkspaceError
from spar_desktop.core.workspaces.manager import Workspaces
from spar_desktop.core.workspaces.models import Workspace, WorkspaceStatus
from spar_desktop.core.workspaces.selection import WorkspaceFilter

TOPICS = ("gearbox bearing oil contamination vibration", "blade leading edge erosion cracks resin",
          "capital budget contingency pounds forecast", "working at height harness rescue climbers")
QUERY = "harness rescue"


def make_share(root: Path, n: int = 24) -> None:
    root.mkdir(parents=True)
    for i in range(n):
        topic = TOPICS[i % len(TOPICS)]
        (root / f"note-{i:02d}.md").write_text(f"# Note {i}\n\n{topic}. This is note number {i} about {topic}.\n",
                                              encoding="utf-8")


@pytest.fixture()
def mgr(tmp_path: Path):
    make_share(tmp_path / "share")
    settings = replace(load_settings(tmp_path / "data"), chroma_process=False)
    lib = Library.open(settings)
    Scanner(lib).scan([str(tmp_path / "share")])
    m = Workspaces(lib, Engine(settings, get_encoder("cpu")))
    m.create("notes", filter=WorkspaceFilter(all_files=True))
    yield m
    m.engine.close()
    lib.close()


def _search_during_embedding(mgr: Workspaces, monkeypatch, after_commits: int = 1) -> list:
    """Build 'notes' with small commits; after ``after_commits`` commits, search it (in this
    process, as the app does) and stop the build. Returns the results seen during the build."""
    seen = []
    real = pipeline.embed_documents
    commits = {"n": 0}

    def small_commits(*args, **kw):
        ready = kw["on_documents_ready"]

        def hooked(docs):
            ready(docs)
            commits["n"] += 1
            if commits["n"] == after_commits:
                seen.append(mgr.search("notes", QUERY, k=5))
                seen.append(mgr.search("notes", QUERY, k=10, method="bm25"))
                seen.append(mgr.search("notes", QUERY, k=5, method="dense"))
                raise Cancelled()
        kw.update(on_documents_ready=hooked, commit_texts=4, flush_texts=8)
        return real(*args, **kw)

    monkeypatch.setattr(builder, "embed_documents", small_commits)
    monkeypatch.setattr("spar_desktop.core.workspaces.live_build.PUBLISH_SECONDS", 0.0)
    report = mgr.build("notes")
    assert report.cancelled
    return seen


def test_keyword_hits_before_embedding_finishes_with_partial_coverage(mgr, monkeypatch):
    hybrid, keyword, dense = _search_during_embedding(mgr, monkeypatch)
    assert hybrid.building and 0 < hybrid.dense_coverage < 1
    assert hybrid.hits and "harness" in hybrid.hits[0].text
    # Keyword search covers every file already: all six harness notes, embedded or not.
    assert len({h.path for h in keyword.hits}) == 6 and all("harness" in h.text for h in keyword.hits)
    assert any(n.startswith("searching while building: meaning search covers") for n in hybrid.notes)
    # Meaning search only returns passages embedded so far (the first commit: 4 texts).
    assert 0 < len(dense.hits) <= 4
    # After the stopped build, nothing of the snapshot is left in this process.
    assert mgr.searchers.partial(mgr.get("notes").id) is None


def test_snapshots_report_growing_coverage(mgr, monkeypatch):
    coverages = []
    real_publish = mgr.searchers.publish_partial

    def record(ws_id, searcher):
        coverages.append(searcher.dense_coverage)
        assert searcher.building
        real_publish(ws_id, searcher)

    monkeypatch.setattr(mgr.searchers, "publish_partial", record)
    monkeypatch.setattr("spar_desktop.core.workspaces.live_build.PUBLISH_SECONDS", 0.0)
    real = pipeline.embed_documents
    monkeypatch.setattr(builder, "embed_documents", lambda *a, **kw: real(*a, **{**kw, "commit_texts": 4}))
    messages = []
    report = mgr.build("notes", progress=lambda p: messages.append(p.message))
    assert not report.cancelled and report.searchable_seconds is not None
    assert coverages[0] == 0.0 and coverages[-1] == 1.0
    assert coverages == sorted(coverages) and len(set(coverages)) > 3
    assert any("meaning search covers" in m for m in messages)
    # The finished build: its own searcher, complete, no snapshot label.
    res = mgr.search("notes", QUERY)
    assert not res.building and res.dense_coverage == 1.0 and res.coverage_note is None


@pytest.mark.parametrize("kept_text", [None, 0], ids=["kept", "read-again"])
def test_complete_build_answers_exactly_as_a_build_without_snapshots(mgr, tmp_path, monkeypatch, kept_text):
    if kept_text is not None:  # no text kept between the phases: every document is read again (bounded memory)
        monkeypatch.setattr("spar_desktop.core.workspaces.live_build.KEEP_TEXT_CHARS", kept_text)
    report = mgr.build("notes")
    assert not report.cancelled
    live = mgr.search("notes", QUERY, k=10)
    live_searcher = mgr.searchers.cached(mgr.get("notes").id)
    assert live.dense_coverage == 1.0 and not live.building

    # The same workspace built the way it was before issue 30: everything embedded, then one searcher.
    cache = mgr.engine.cache
    docs = pipeline.embed_documents(  # all from the cache now: the same documents, the same vectors
        [(h, None) for h in sorted(live_searcher.content_hashes())], builder.build_config(mgr.library.settings, ""),
        mgr.engine.encoder, cache)
    by_doc = {doc_id: docs[h].with_file_id(int(doc_id)) for doc_id, (h, _) in live_searcher.table.doc_refs.items()}
    plain = HybridSearcher(by_doc, mgr.engine.encoder, file_ids={d: int(d) for d in by_doc})
    assert plain.keys == live_searcher.keys
    for method in ("hybrid", "bm25", "dense"):
        a = live_searcher.search(QUERY, k=10, method=method)
        b = plain.search(QUERY, k=10, method=method)
        assert [(h.key, round(h.score, 4)) for h in a.hits] == [(h.key, round(h.score, 4)) for h in b.hits]


def test_cli_side_messages_for_a_build_elsewhere_or_stopped(mgr, monkeypatch):
    ws_id = mgr.get("notes").id
    # Another process is building it (the lock is held, the row says BUILDING): no snapshot here.
    with mgr.library.session() as s:
        s.get(Workspace, ws_id).status = WorkspaceStatus.BUILDING
    monkeypatch.setattr("spar_desktop.core.workspaces.lookup.build_in_progress", lambda *a: True)
    with pytest.raises(WorkspaceError, match="being built by another process"):
        mgr.search("notes", QUERY, build_if_needed=False)
    monkeypatch.undo()
    # A first build stopped part-way: say so, and that building again resumes it.
    token = CancelToken()
    token.cancel()
    with mgr.library.session() as s:
        s.get(Workspace, ws_id).status = WorkspaceStatus.DRAFT
    assert mgr.build("notes", cancel=token).cancelled
    with pytest.raises(WorkspaceError, match="stopped part-way"):
        mgr.search("notes", QUERY)


def test_keyword_snapshots_while_files_are_read_say_how_many_are_read(mgr, monkeypatch):
    """A share of slow files answers before every file is read, and says it covers only those."""
    monkeypatch.setattr("spar_desktop.core.workspaces.live_build.FIRST_SNAPSHOT_SECONDS", 0.0)
    seen = []
    real_publish = mgr.searchers.publish_partial

    def search_each(ws_id, searcher):
        real_publish(ws_id, searcher)
        if 0.5 <= searcher.keyword_coverage < 1.0 and not seen:
            seen.append(mgr.search("notes", QUERY, k=30, method="bm25"))

    monkeypatch.setattr(mgr.searchers, "publish_partial", search_each)
    assert not mgr.build("notes").cancelled
    (early,) = seen
    assert early.building and 0 < early.keyword_coverage < 1
    assert 0 < len({h.path for h in early.hits}) < 6  # only the harness notes read so far
    assert any("keyword search covers the" in n and "of files read so far" in n for n in early.notes)
    assert len({h.path for h in mgr.search("notes", QUERY, k=30, method="bm25").hits}) == 6


def test_a_search_before_the_first_snapshot_says_it_comes_in_seconds(mgr):
    errors = []

    def progress(p):
        if p.message == "reading files" and not errors:
            with pytest.raises(WorkspaceError) as exc:
                mgr.search("notes", QUERY, build_if_needed=False)
            errors.append(str(exc.value))

    assert not mgr.build("notes", progress=progress).cancelled
    assert errors == ["'notes' is being built: it answers as soon as its first files are read (seconds)"]


def test_semantic_chunking_publishes_the_documents_embedded_so_far(mgr, monkeypatch):
    """Semantic chunks need the model, so no keyword phase: snapshots grow with the embedding."""
    mgr.create("semantic notes", filter=WorkspaceFilter(all_files=True), chunking="semantic")
    monkeypatch.setattr("spar_desktop.core.workspaces.live_build.FIRST_SNAPSHOT_SECONDS", 0.0)
    real = pipeline.embed_documents
    monkeypatch.setattr(builder, "embed_documents", lambda *a, **kw: real(*a, **{**kw, "commit_texts": 4,
                                                                               "flush_texts": 8}))
    seen = []
    real_publish = mgr.searchers.publish_partial

    def record(ws_id, searcher):
        real_publish(ws_id, searcher)
        seen.append((searcher.keyword_coverage, searcher.dense_coverage,
                     mgr.search("semantic notes", QUERY, k=30, method="bm25")))

    monkeypatch.setattr(mgr.searchers, "publish_partial", record)
    assert not mgr.build("semantic notes").cancelled
    assert seen and all(0 < kw < 1 and dense == 1.0 for kw, dense, _ in seen)
    assert [kw for kw, _, _ in seen] == sorted(kw for kw, _, _ in seen)
    assert all(r.building and r.keyword_coverage == kw for kw, _, r in seen)
    final = mgr.search("semantic notes", QUERY, k=30, method="bm25")
    assert not final.building and len({h.path for h in final.hits}) == 6


def test_best_ranked_files_are_embedded_first_the_rest_in_path_order():
    from spar_desktop.core.workspaces.live_build import embedding_order

    admitted = [(1, "/a.md", "h1"), (2, "/b.md", "h2"), (3, "/c.md", "h3"), (4, "/d.md", "h4"), (5, "/e.md", "h5")]
    items = [(h, None) for _, _, h in admitted]  # path order, as build_plan gives them
    assert [h for h, _ in embedding_order(items, admitted, [4, 2])] == ["h4", "h2", "h1", "h3", "h5"]
    assert [h for h, _ in embedding_order(items, admitted, None)] == ["h1", "h2", "h3", "h4", "h5"]


def test_a_ranked_workspace_is_read_and_embedded_in_its_ranking_order(mgr, monkeypatch):
    from dataclasses import replace as with_

    from spar_desktop.core.workspaces import ranking

    real_select = builder.select_files
    order = {}

    def ranked(library, flt):  # the ranking step's order: here, reverse path order
        sel = real_select(library, flt)
        best = [ranking.ScoredFile(fid, path, h, 1.0 - i / 100, 0.5, None)
                for i, (fid, path, h) in enumerate(sorted(sel.rows, key=lambda r: r[1], reverse=True))]
        order["hashes"] = [f.content_hash for f in best]
        return with_(sel, ranking=ranking.Ranking(len(best), len(best), len(best), tuple(best), 0))

    real = pipeline.embed_documents
    embedded = []

    def record(items, *a, **kw):
        embedded.extend(h for h, _ in items)
        return real(items, *a, **kw)

    monkeypatch.setattr(builder, "select_files", ranked)
    monkeypatch.setattr(builder, "embed_documents", record)
    assert not mgr.build("notes").cancelled
    assert embedded == order["hashes"]


def test_an_update_answers_from_the_finished_build_until_its_snapshot_has_read_every_file(mgr):
    """An update (a few files changed) must not answer from a snapshot of the files read so far:
    the finished build answers over all of them, so it serves until the snapshot covers every file."""
    mgr.build("notes")
    ws_id = mgr.get("notes").id
    finished = mgr.searchers.cached(ws_id)
    snapshot = copy.copy(finished)
    snapshot.building, snapshot.keyword_coverage = True, 0.3
    mgr.searchers.begin_build(ws_id)
    mgr.searchers.publish_partial(ws_id, snapshot)
    try:
        res = mgr.search("notes", QUERY)
        assert not res.building and res.coverage_note is None  # the finished build's answer
        snapshot.keyword_coverage = 1.0
        res = mgr.search("notes", QUERY)
        assert res.building and "searching while building" in res.coverage_note
    finally:
        mgr.searchers.end_build(ws_id)

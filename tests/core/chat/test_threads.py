"""Thread store, Markdown export and the .sparws hooks."""

from __future__ import annotations

import json
import zipfile

import pytest

from spar_desktop.core.chat.prompt import Citation, Passage
from spar_desktop.core.chat.share import (
    export_thread_markdown, import_threads, thread_markdown,
)
from spar_desktop.core.chat.threads import ThreadError, ThreadStore
from spar_desktop.core.config import load_settings
from spar_desktop.core.library.database import Library
from spar_desktop.core.workspaces.errors import WorkspaceNotFound
from spar_desktop.core.workspaces.models import Workspace

PASSAGES = (
    Passage(1, 10, "/share/ops/report.pdf", "Gearbox report", 2, 3, "c3", 0.9, "parent text", "bearing failed"),
    Passage(2, 11, "/share/ops/blade.md", None, 1, 1, "c0", 0.5, "blade text", "blade crack"),
)
CITES = (Citation(1, 10, "/share/ops/report.pdf", 2, 3, "c3", True), Citation(7, None, None, None, None, None, False))


@pytest.fixture
def lib(tmp_path):
    library = Library.open(load_settings(tmp_path / "data"))
    with library.session() as s:
        s.add_all([Workspace(name="Ops", collection="ws-ops"), Workspace(name="Other", collection="ws-other")])
    yield library
    library.close()


def add_turn(store: ThreadStore, tid: int, q: str, a: str, **kw) -> int:
    store.add_user_message(tid, q)
    fields = dict(content=a, status="ok", mode="llm", error=None, model="llama3.2", passages=PASSAGES,
                  citations=CITES, timings={"total_ms": 2100.0}, log_id=None)
    fields.update(kw)
    return store.add_assistant_message(tid, **fields)


def test_several_threads_per_workspace_rename_delete(lib):
    store = ThreadStore(lib)
    a = store.create("ops")  # workspace names are matched like elsewhere: case-insensitively
    b = store.create("Ops", title="Budget questions")
    store.create("Other")
    assert a.display_title == "New thread" and a.workspace == "Ops"
    add_turn(store, a.id, "Why did it fail?", "Oil [1].")
    store.touch(a.id, title_from="Why did it fail?")
    listed = store.list("Ops")
    assert [t.id for t in listed] == [a.id, b.id] and listed[0].message_count == 2  # most recent first
    assert store.resolve("Ops", str(b.id)).id == b.id and store.resolve("Ops", "budget QUESTIONS").id == b.id
    assert store.resolve("Ops", "nope") is None
    assert store.rename(a.id, "  Gearbox  ").title == "Gearbox"
    with pytest.raises(ThreadError):
        store.rename(a.id, " ")
    store.delete(b.id)
    assert [t.id for t in store.list("Ops")] == [a.id]
    with pytest.raises(ThreadError, match="no thread"):
        store.messages(b.id)
    with pytest.raises(WorkspaceNotFound):
        store.create("missing")
    long = store.create("Ops", title="x" * 500)
    assert len(long.title) <= 80


def test_history_skips_failed_stopped_and_retrieval_only_turns(lib):
    store = ThreadStore(lib)
    t = store.create("Ops")
    add_turn(store, t.id, "q1", "a1")
    add_turn(store, t.id, "q2", "partial", status="error", error="boom")
    add_turn(store, t.id, "q3", "passages...", mode="retrieval-only")
    add_turn(store, t.id, "q4", "half", status="stopped")
    add_turn(store, t.id, "q5", "a5")
    assert store.history(t.id) == [("user", "q1"), ("assistant", "a1"), ("user", "q5"), ("assistant", "a5")]


def test_feedback_and_persistence_across_restart(lib, tmp_path):
    store = ThreadStore(lib)
    t = store.create("Ops", title="kept")
    mid = add_turn(store, t.id, "q", "a [1]")
    store.record_feedback(mid, False)
    assert store.record_citation_opened(mid, 2).path == "/share/ops/blade.md"  # no log_id: only remembered
    assert store.record_citation_opened(mid, 7) is None  # invalid citations open nothing
    with pytest.raises(ThreadError):
        store.record_feedback(mid - 1, True)  # the user's message cannot be rated
    lib.close()
    again = Library.open(load_settings(tmp_path / "data"))
    try:
        m = ThreadStore(again).messages(t.id)[1]
        assert m.feedback is False and m.opened == (2,) and m.passages == PASSAGES and m.citations == CITES
        assert m.timings == {"total_ms": 2100.0}
    finally:
        again.close()


def test_markdown_export_has_questions_answers_and_sources(lib, tmp_path):
    store = ThreadStore(lib)
    t = store.create("Ops", title="Gearbox")
    add_turn(store, t.id, "Why did it fail?", "Oil contamination [1]. Also [7].")
    add_turn(store, t.id, "More?", "The stream", status="error", error="The connection to Ollama was lost")
    md = thread_markdown(store, t.id)
    assert md.startswith("# Gearbox\n") and "Workspace: Ops" in md
    assert "## Question" in md and "Why did it fail?" in md and "Oil contamination [1]. Also [7]." in md
    assert "### Sources" in md and "1. **report.pdf**, pp. 2–3 — `/share/ops/report.pdf`" in md
    assert "2. **blade.md**, p. 1 (not cited)" in md and "> bearing failed" in md
    assert "Citations naming no source: [7]" in md and "**Error:** The connection to Ollama was lost" in md
    out = export_thread_markdown(store, t.id, tmp_path / "thread.md")
    assert out.read_text(encoding="utf-8") == md


def test_hostile_imported_threads_are_bounded_and_cleaned(lib):
    threads = [
        "not a dict",
        {"title": 5, "messages": "nope"},
        {"title": "ok", "messages": [
            {"role": "system", "content": "ignored"},
            {"role": "user", "content": "q" * 500_000},
            {"role": "assistant", "content": "a", "status": "weird", "mode": "x", "feedback": "yes",
             "passages": [{"n": 1, "path": "/elsewhere/x.md", "page_start": 1, "page_end": 1, "chunk_id": "c0"},
                          {"n": "2"}, {"n": 3, "path": None}, 7],
             "citations": [{"n": 1, "path": "/elsewhere/x.md", "valid": True}, {"n": 9, "valid": True}],
             "timings": {"total_ms": 5, "bad": {"x": 1}}, "opened": [1, "2"], "created_at": "not a date"},
        ]},
    ]
    assert import_threads(lib, "Ops", threads) == 1  # only the well-formed thread
    assert import_threads(lib, "Missing", threads) == 0 and import_threads(lib, "Ops", {"a": 1}) == 0
    store = ThreadStore(lib)
    t = next(t for t in store.list("Ops") if t.title == "ok")
    user, answer = store.messages(t.id)
    assert len(user.content) == 200_000
    assert answer.status == "ok" and answer.mode is None and answer.feedback is None
    assert [p.n for p in answer.passages] == [1] and answer.passages[0].file_id is None  # not in this index
    assert [(c.n, c.valid) for c in answer.citations] == [(1, True), (9, False)]
    assert answer.timings == {"total_ms": 5} and answer.opened == (1,)


def test_threads_travel_in_sparws_files(workspace_env, tmp_path):
    from spar_desktop.core.chat.prompt import parse_citations, passages_from_hits
    from spar_desktop.core.chat import share
    from spar_desktop.core.workspaces.sparws import export_workspace, import_workspace

    mgr, _ = workspace_env
    store = ThreadStore(mgr.library)
    t = store.create("ops", title="shared thread")
    res = mgr.search("ops", "gearbox bearing oil", k=3)
    ps = passages_from_hits(res.hits)
    add_turn(store, t.id, "Why?", "Oil [1].", passages=ps, citations=parse_citations("Oil [1].", ps))
    out = export_workspace(mgr, "ops", tmp_path / "ops.sparws", threads=share)
    manifest = json.loads(zipfile.ZipFile(out).read("manifest.json"))
    assert any(th["title"] == "shared thread" and len(th["messages"]) == 2 for th in manifest["threads"])
    report = import_workspace(mgr, out, "ops-shared", threads=share)
    assert report.threads >= 1
    copy = next(x for x in store.list("ops-shared") if x.title == "shared thread")
    answer = store.messages(copy.id)[1]
    assert answer.citations[0].valid and answer.citations[0].file_id == ps[0].file_id  # remapped to this index
    assert answer.passages[0].path == ps[0].path
    mgr.delete("ops-shared")

"""ChatSession end to end: a real workspace (index, encoder, Chroma), the real ollama client, and
the scripted server for every outcome. Thread state must survive each failure."""

from __future__ import annotations

import asyncio
import re
import json
from pathlib import Path

import pytest
from sqlalchemy import select

from spar_desktop.core.llm.client import ErrorKind, Ollama
from spar_desktop.core.chat.session import ChatSession
from spar_desktop.core.chat.threads import ThreadStore
from spar_desktop.core.progress import CancelToken
from spar_desktop.core.workspaces.models import QueryLogEntry
from tests.support.fake_ollama import FakeOllama

QUESTION = "Why did the gearbox bearing fail?"


def ask(session: ChatSession, thread_id: int, question: str = QUESTION, cancel=None, **kw):
    tokens: list[str] = []
    result = asyncio.run(session.answer(thread_id, question, tokens.append, cancel, **kw))
    assert "".join(tokens) == result.text  # what streamed is exactly what was kept
    return result, tokens


@pytest.fixture
def session(workspace_env, fast_ollama):
    mgr, _ = workspace_env
    return ChatSession(mgr, fast_ollama, k=4)


def test_streamed_answer_with_valid_and_invalid_citations_is_persisted(session, fake_ollama):
    fake_ollama.set(reply="The bearing failed after oil contamination [1]. Alarms came first [1][2]. See also [9].")
    thread = session.threads.create("ops")
    result, tokens = ask(session, thread.id)
    assert result.mode == "llm" and result.status == "ok" and result.error is None and len(tokens) > 5
    assert result.model == "llama3.2" and result.notice is None and session.llm_available is True
    assert [(c.n, c.valid) for c in result.citations] == [(1, True), (2, True), (9, False)]
    assert tuple(c.n for c in result.citations if not c.valid) == (9,)
    first = result.citations[0]
    assert Path(first.path).name == "gearbox.md" and first.page_start == 1 and first.file_id and first.chunk_id
    # The prompt held the workspace's passages, numbered, with file names and pages.
    prompt = fake_ollama.calls("/api/chat")[-1].body["messages"][-1]["content"]
    assert "[1] gearbox.md, p. 1" in prompt and "oil contamination" in prompt and QUESTION in prompt
    assert "budget.md" not in prompt  # scoped to the workspace (Finance is not in 'ops')
    t = result.timings
    assert t.retrieval_ms > 0 and t.first_token_ms is not None and t.total_ms >= t.first_token_ms
    assert t.output_tokens == len(tokens)

    msgs = session.threads.messages(thread.id)
    assert [(m.role, m.status) for m in msgs] == [("user", "ok"), ("assistant", "ok")]
    answer = msgs[1]
    assert answer.id == result.message_id and answer.content == result.text and answer.model == "llama3.2"
    assert answer.citations == result.citations and answer.passages == result.passages
    assert answer.timings["retrieval_ms"] > 0
    assert session.threads.get(thread.id).title == QUESTION  # titled by its first question


def test_follow_up_questions_carry_history_and_feedback_is_recorded(session, fake_ollama, workspace_env):
    mgr, _ = workspace_env
    fake_ollama.set(reply="Oil contamination [1].")
    thread = session.threads.create("ops", title="bearing")
    first, _ = ask(session, thread.id)
    fake_ollama.set(reply="Two weeks earlier [1].")
    second, _ = ask(session, thread.id, "When did the alarms start?")
    msgs = fake_ollama.calls("/api/chat")[-1].body["messages"]
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "user"]
    assert msgs[1]["content"] == QUESTION and msgs[2]["content"] == "Oil contamination [1]."

    session.threads.record_feedback(second.message_id, True)
    opened = session.threads.record_citation_opened(second.message_id, 1)
    assert opened is not None and opened.valid and opened.page_start == 1
    assert session.threads.record_citation_opened(second.message_id, 42) is None
    m = session.threads.message(second.message_id)
    assert m.feedback is True and m.opened == (1,)
    with mgr.library.session() as s:  # the query log knows the cited file was opened (relations, ERM)
        entry = s.get(QueryLogEntry, m.log_id)
        assert entry.source == "chat" and entry.session_key == f"thread-{thread.id}" and opened.file_id in entry.opened


@pytest.mark.parametrize("failure, kind", [
    ("model-not-found", ErrorKind.MODEL), ("server-error", ErrorKind.SERVER), ("stall", ErrorKind.TIMEOUT),
    ("drop", ErrorKind.DROPPED), ("malformed", ErrorKind.PROTOCOL), ("stream-error", ErrorKind.SERVER),
])
def test_each_failure_keeps_the_thread_whole_and_usable(session, fake_ollama, failure, kind):
    thread = session.threads.create("ops")
    fake_ollama.set(reply="Oil contamination of the bearing [1].", failure=failure, after=2, stall=10)
    result, _ = ask(session, thread.id)
    assert result.status == "error" and result.error_kind == kind and result.mode == "llm"
    assert result.error and fake_ollama.url in result.error and "Traceback" not in result.error
    assert result.passages  # the sources are still there to open
    msgs = session.threads.messages(thread.id)
    assert [(m.role, m.status) for m in msgs] == [("user", "ok"), ("assistant", "error")]
    assert msgs[0].content == QUESTION and msgs[1].error == result.error and msgs[1].content == result.text
    # The thread goes on; the failed turn is not replayed to the model.
    fake_ollama.set(reply="It was oil [1].")
    again, _ = ask(session, thread.id)
    assert again.status == "ok" and again.text == "It was oil [1]."
    sent = fake_ollama.calls("/api/chat")[-1].body["messages"]
    assert [m["role"] for m in sent] == ["system", "user"]
    assert len(session.threads.messages(thread.id)) == 4


def test_stop_keeps_the_partial_answer(session, fake_ollama):
    fake_ollama.set(reply="word " * 300, delay=0.01)
    cancel = CancelToken()
    thread = session.threads.create("ops")
    got: list[str] = []

    def on_token(t: str) -> None:
        got.append(t)
        if len(got) == 3:
            cancel.cancel()

    result = asyncio.run(session.answer(thread.id, QUESTION, on_token, cancel))
    assert result.status == "stopped" and result.text == "".join(got) and len(got) == 3
    assert session.threads.messages(thread.id)[-1].status == "stopped"


def test_no_server_gives_retrieval_only_answers_and_switches_back(workspace_env, dead_host):
    mgr, _ = workspace_env
    port = int(dead_host.rsplit(":", 1)[1])
    session = ChatSession(mgr, Ollama(dead_host, "llama3.2", stall_timeout=0.5), k=4)
    thread = session.threads.create("ops")
    first, tokens = ask(session, thread.id)
    assert first.mode == "retrieval-only" and first.status == "ok" and first.model is None
    assert first.notice and dead_host in first.notice and "ollama serve" in first.notice and "ollama pull llama3.2" in first.notice
    assert first.text.startswith("No language model") and "**gearbox.md**" in first.text and "[1]" in first.text
    assert len(tokens) == 1 and session.llm_available is False
    assert [c.n for c in first.citations] == [p.n for p in first.passages] and all(c.valid for c in first.citations)
    assert Path(first.citations[0].path).name == "gearbox.md"
    # Numbered in the order the answer shows them (grouped by file), and each [n] opens its passage.
    shown = [int(n) for n in re.findall(r"\[(\d+)\]", first.text)]
    assert shown == sorted(shown) == [p.n for p in first.passages]
    for p in first.passages:
        heading = first.text.rfind("**", 0, first.text.index(f"[{p.n}]"))
        assert first.text[first.text.rfind("**", 0, heading) + 2:heading] == Path(p.path).name
    second, _ = ask(session, thread.id, "What did the blade survey find?")
    assert second.mode == "retrieval-only" and second.notice is None  # the banner is given once
    assert "**blade.md**" in second.text

    server = FakeOllama(port=port).start()  # Ollama appears
    try:
        server.set(reply="Cracks on blade two [1].")
        assert asyncio.run(session.check_server()) is True and session.llm_available is True
        third, _ = ask(session, thread.id, "What did the blade survey find?")
        assert third.mode == "llm" and third.text == "Cracks on blade two [1]."
        # Retrieval-only turns are not replayed to the model as if it had said them.
        assert [m["role"] for m in server.calls("/api/chat")[-1].body["messages"]] == ["system", "user"]
    finally:
        server.stop()
    msgs = session.threads.messages(thread.id)
    assert [m.mode for m in msgs if m.role == "assistant"] == ["retrieval-only", "retrieval-only", "llm"]


def test_threads_survive_archive_reactivate_and_restart(workspace_env, fake_ollama, fast_ollama):
    from spar_desktop.core.config import load_settings
    from spar_desktop.core.library.database import Library

    mgr, tmp = workspace_env
    mgr.create("ops-archive", tags=["Operations"])
    mgr.build("ops-archive")
    session = ChatSession(mgr, fast_ollama, k=3)
    a = session.threads.create("ops-archive", title="first")
    b = session.threads.create("ops-archive", title="second")
    fake_ollama.set(reply="Turbine seven tripped: the yaw motor overheated [1].")
    result, _ = ask(session, a.id, "Why did turbine seven trip?")
    assert result.status == "ok" and any(c.page_start == 2 and c.path.endswith("overview.pdf") for c in result.citations)

    mgr.archive("ops-archive")
    archived, _ = ask(session, b.id, "anything")  # asking an archived workspace: clear error, stored
    assert archived.status == "error" and archived.error_kind == "workspace" and "reactivate" in archived.error
    mgr.reactivate("ops-archive")
    lib2 = Library.open(load_settings(tmp / "data"))  # another process opening the same database
    try:
        store = ThreadStore(lib2)
        assert {t.display_title for t in store.list("ops-archive")} == {"first", "second"}
        msgs = store.messages(a.id)
        assert [m.role for m in msgs] == ["user", "assistant"] and msgs[1].citations == result.citations
        assert [m.status for m in store.messages(b.id)] == ["ok", "error"]
    finally:
        lib2.close()
    again, _ = ask(session, b.id, "Why did turbine seven trip?")
    assert again.status == "ok"
    mgr.delete("ops-archive")  # threads go with their workspace
    with mgr.library.session() as s:
        from spar_desktop.core.chat.models import ChatMessage, ChatThread

        assert s.scalar(select(ChatThread).where(ChatThread.id.in_([a.id, b.id]))) is None
        assert s.scalar(select(ChatMessage).where(ChatMessage.thread_id.in_([a.id, b.id]))) is None


def test_result_json_is_serialisable(session, fake_ollama):
    thread = session.threads.create("ops")
    result, _ = ask(session, thread.id)
    data = json.loads(json.dumps(result.to_json()))
    assert data["mode"] == "llm" and data["citations"][0]["n"] == 1 and data["passages"][0]["path"]


def test_an_answer_during_a_build_uses_the_snapshot_and_says_how_much_meaning_search_covers(
        session, fake_ollama, workspace_env):
    """A build running in this process publishes snapshots (workspaces/live_build.py): chat
    answers from what is there and its answer carries the coverage line."""
    import numpy as np

    from spar_desktop.core.retrieval.partial import snapshot

    mgr, _ = workspace_env
    ws_id, built, _ = mgr.searcher("ops")
    ready = np.zeros(len(built), dtype=bool)
    ready[: len(built) // 2] = True
    mgr.searchers.publish_partial(ws_id, snapshot(built, built.original_vectors, ready))
    try:
        fake_ollama.set(reply="The bearing failed after oil contamination [1].")
        thread = session.threads.create("ops")
        result, _ = ask(session, thread.id)
    finally:
        mgr.searchers.end_build(ws_id)
    pct = round(100 * (len(built) // 2) / len(built))
    assert result.status == "ok" and result.passages
    assert result.timings.building_coverage_pct == pct and result.timings.building_keyword_pct is None
    stored = session.threads.messages(thread.id)[-1]
    assert stored.timings["building_coverage_pct"] == pct  # the reloaded thread says it too
    after, _ = ask(session, thread.id)
    assert after.timings.building_coverage_pct is None  # the build ended: a complete answer

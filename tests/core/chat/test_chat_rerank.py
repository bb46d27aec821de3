"""Chat's retrieval reranks like search: with the data dir's tau saying every question is unsure,
the model's order (the scripted server's /api/generate) decides the passage numbers the answer
cites; a chat that knows Ollama is down does not try."""

from __future__ import annotations

import asyncio
import json

import pytest

from spar_desktop.core.chat.session import ChatSession
from spar_desktop.core.retrieval.conditional_rerank import FORMAT, VERSION

QUESTION = "Why did the gearbox bearing fail?"


@pytest.fixture
def rerank_all(workspace_env):
    mgr, _ = workspace_env
    path = mgr.library.settings.layout.rerank_calibration
    path.write_text(json.dumps({"format": FORMAT, "version": VERSION, "tau": None}))  # no tau qualified
    yield mgr
    path.unlink()


def reply(body: dict) -> str:
    if "messages" in body:  # the answer
        return "From the passages [1]."
    n = int(body["prompt"].split("from 1 to ")[1].split()[0].strip(".,:;)"))
    return json.dumps({"ranking": list(range(n, 0, -1))})  # the model reverses the fused order


def test_chat_passages_follow_the_models_order_when_retrieval_is_unsure(rerank_all, fast_ollama, fake_ollama):
    mgr = rerank_all
    fused = [h.chunk_id for h in mgr.search("ops", QUESTION, 4).hits]
    fake_ollama.set(reply_fn=reply)
    session = ChatSession(mgr, fast_ollama, k=4)
    thread = session.threads.create("ops")
    result = asyncio.run(session.answer(thread.id, QUESTION))
    assert len(fake_ollama.calls("/api/generate")) == 1 and result.mode == "llm"
    assert [p.chunk_id for p in result.passages] == fused[::-1]
    assert result.timings.retrieval_ms > 0


def test_a_chat_that_knows_ollama_is_down_does_not_try_to_rerank(rerank_all, fast_ollama, fake_ollama):
    mgr = rerank_all
    fused = [h.chunk_id for h in mgr.search("ops", QUESTION, 4).hits]
    fake_ollama.set(reply_fn=reply)
    session = ChatSession(mgr, fast_ollama, k=4)
    session.llm_available = False  # as after a refused answer or the server watch
    thread = session.threads.create("ops")
    result = asyncio.run(session.answer(thread.id, QUESTION))
    assert fake_ollama.calls("/api/generate") == []
    assert [p.chunk_id for p in result.passages] == fused

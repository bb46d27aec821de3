"""Optional LLM helpers: each works through the scripted server and falls back cleanly."""

from __future__ import annotations

import asyncio

import pytest

from spar_desktop.core.llm.client import ChatError, Ollama
from spar_desktop.core.llm.helpers import LLMHelpers, parse_permutation, run_sync
from spar_desktop.core.documents.contextual import contextualize
from spar_desktop.core.documents.types import Chunk, ExtractedDocument, PageText


@pytest.fixture
def helpers(fast_ollama) -> LLMHelpers:
    return LLMHelpers(fast_ollama)


def test_contextual_chunks_use_the_model_and_fall_back_to_plain(helpers, fake_ollama):
    doc = ExtractedDocument((PageText(1, "Annual report of Site B. The gearbox failed."),), "txt", title="Report")
    chunks = [Chunk("p0", doc.text, 0, len(doc.text), 1, 1, "parent"),
              Chunk("c0", "The gearbox failed.", 25, 44, 1, 1, "child", "p0")]
    fake_ollama.set(reply="  From Site B's annual report,\n on equipment failures. ")
    out = contextualize(chunks, doc, helpers.context_fn)
    assert out[0].context is None and out[1].context == "From Site B's annual report, on equipment failures."
    sent = fake_ollama.calls("/api/generate")[-1].body["prompt"]
    assert "<document>\nReport" in sent and "<chunk>\nThe gearbox failed.\n</chunk>" in sent
    fake_ollama.set(failure="server-error")
    assert contextualize(chunks, doc, helpers.context_fn) == chunks  # all plain, no half-enhanced collection


def test_listwise_rerank_and_its_fallbacks(helpers, fake_ollama, dead_host):
    passages = ["about budgets", "gearbox oil failure", "blade cracks"]
    fake_ollama.set(reply='{"ranking": [2, 3, 1]}')
    r = helpers.rerank("why did the gearbox fail", passages)
    assert r.order == (1, 2, 0) and not r.fell_back and r.apply(passages)[0] == "gearbox oil failure"
    prompt = fake_ollama.calls("/api/generate")[-1].body["prompt"]
    assert "[1] about budgets" in prompt and "[3] blade cracks" in prompt and "from 1 to 3" in prompt

    fake_ollama.set(reply="I think passage two is best.")
    r = helpers.rerank("q", passages)
    assert r.order == (0, 1, 2) and r.fell_back and "did not parse" in r.reason
    fake_ollama.set(failure="stall", stall=10)
    r = helpers.rerank("q", passages)
    assert r.fell_back and r.order == (0, 1, 2) and "stopped responding" in r.reason
    r = LLMHelpers(Ollama(dead_host, "llama3.2")).rerank("q", passages)
    assert r.fell_back and "ollama serve" in r.reason


def test_permutation_parsing_is_forgiving_but_never_invents():
    assert parse_permutation('```json\n{"ranking": [3, 1]}\n```', 3) == (2, 0, 1)  # missing ones keep fused order
    assert parse_permutation('[2, 2, 9, "1", true]', 3) == (1, 0, 2)
    assert parse_permutation('{"order": ["[3]", 2, 1]}', 3) == (2, 1, 0)
    assert parse_permutation("{}", 3) is None and parse_permutation("[0, 7]", 3) is None
    assert parse_permutation("nonsense", 3) is None


def test_sync_wrappers_work_inside_a_running_event_loop(helpers, fake_ollama):
    fake_ollama.set(reply="From the site report.")

    async def inside_loop() -> str:  # e.g. called from a qasync slot
        return helpers.context_fn("Report", "The gearbox failed.")

    assert asyncio.run(inside_loop()) == "From the site report."
    with pytest.raises(ChatError):
        run_sync(LLMHelpers(Ollama("http://127.0.0.1:9", "m")).acontext("doc", "chunk"))

"""Conditional reranking (paper 002 eq. 28-29) through the real Ollama client against the scripted
server: the model is asked only when the top fused score is below tau, its order is applied to the
top hits, and any failure leaves the fused order with a reason. Plus the stored calibration."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import pytest

from spar_desktop.core.llm.client import Ollama
from spar_desktop.core.llm.helpers import LLMHelpers
from spar_desktop.core.retrieval.conditional_rerank import (
    DEFAULT_TAU, RERANK_ALL, Calibration, Reranker, conditional_rerank, load_calibration, save_calibration,
)
from tests.support.fake_ollama import FakeOllama
from tests.support.servers import free_port


@dataclass(frozen=True)
class Hit:
    score: float
    text: str
    context: str = ""


HITS = (Hit(0.91, "budget for the year"), Hit(0.88, "gearbox bearing failed", "Gearbox report: the bearing failed."),
        Hit(0.80, "blade cracks"))


@pytest.fixture
def fake():
    server = FakeOllama().start()
    yield server
    server.stop()


def reranker(url: str, timeout: float = 1.0) -> Reranker:
    helpers = LLMHelpers(Ollama(url, "llama3.2", request_timeout=timeout))
    return Reranker(helpers.rerank, helpers.ollama.model)


def test_unsure_search_is_reranked_by_the_model(fake):
    fake.set(reply='{"ranking": [2, 1, 3]}')
    order, out = conditional_rerank("why did the gearbox fail", HITS, reranker(fake.url), tau=0.95)
    assert order == (1, 0, 2)
    assert out.reranked and out.reranked_by == "llama3.2" and out.called and out.latency_ms > 0
    assert out.s_max == 0.91 and "0.910 < τ 0.950" in out.reason
    prompt = fake.calls("/api/generate")[-1].body["prompt"]
    assert "[2] Gearbox report: the bearing failed." in prompt  # the parent section is what the model judges
    assert out.to_json()["reranked_by"] == "llama3.2"


def test_confident_search_never_asks_the_model(fake):
    fake.set(reply='{"ranking": [3, 2, 1]}')
    order, out = conditional_rerank("q", HITS, reranker(fake.url), tau=0.91)  # s_max == tau: skipped (eq. 28)
    assert order == (0, 1, 2) and not out.reranked and not out.called and out.latency_ms == 0
    assert "confident" in out.reason and fake.calls("/api/generate") == []


def test_only_the_top_depth_hits_are_reordered(fake):
    hits = [Hit(0.5 - i / 100, f"passage {i}") for i in range(5)]
    fake.set(reply="[3, 1, 2]")
    order, out = conditional_rerank("q", hits, reranker(fake.url), tau=0.95, depth=3)
    assert out.reranked and order == (2, 0, 1, 3, 4)
    assert "[4]" not in fake.calls("/api/generate")[-1].body["prompt"]


@pytest.mark.parametrize("script, why", [
    ({"reply": "Passage two looks best to me."}, "did not parse"),
    ({"reply": "x", "failure": "stall", "after": 0, "stall": 5}, "stopped responding"),
    ({"reply": "x", "failure": "server-error"}, "llama runner"),
])
def test_a_hostile_or_slow_model_leaves_the_fused_order_with_a_reason(fake, script, why):
    fake.set(**script)
    order, out = conditional_rerank("q", HITS, reranker(fake.url, timeout=0.5), tau=0.95)
    assert order == (0, 1, 2) and not out.reranked and out.called and out.reranked_by is None
    assert out.reason.startswith("kept the fused order") and why in out.reason


def test_no_model_means_no_rerank():
    order, out = conditional_rerank("q", HITS, None, tau=0.95)
    assert order == (0, 1, 2) and not out.reranked and not out.called and out.latency_ms == 0
    dead = reranker(f"http://127.0.0.1:{free_port()}")  # nothing listens: refused at once
    order, out = conditional_rerank("q", HITS, dead, tau=0.95)
    assert order == (0, 1, 2) and not out.reranked and "ollama serve" in out.reason
    assert conditional_rerank("q", [], dead, tau=0.95)[1].reason == "no results"
    probed = Reranker(dead.fn, "llama3.2", available=lambda: False)  # the port is closed: the client is never used
    order, out = conditional_rerank("q", HITS, probed, tau=0.95)
    assert order == (0, 1, 2) and not out.called and out.latency_ms == 0 and "cannot be reached" in out.reason


def test_calibration_is_written_and_read_back(tmp_path):
    path = tmp_path / "rerank.json"
    assert load_calibration(path).tau == DEFAULT_TAU and load_calibration(path).source == "default"
    save_calibration(Calibration(0.87, beta=0.9, queries=120, skipped=64, precision_lower=0.91, dataset="scifact"), path)
    data = json.loads(path.read_text())
    assert data["format"] == "spar-rerank-tau" and data["version"] == 1 and data["created_at"]
    back = load_calibration(path)
    assert (back.tau, back.beta, back.queries, back.skipped, back.source) == (0.87, 0.9, 120, 64, "calibrated")
    save_calibration(Calibration(RERANK_ALL, beta=0.99), path)  # no threshold qualified: rerank every query
    assert math.isinf(load_calibration(path).tau) and json.loads(path.read_text())["tau"] is None
    for bad in ("{not json", json.dumps({"format": "spar-rerank-tau", "version": 9, "tau": 0.5}),
                json.dumps({"format": "other", "tau": 0.5}), json.dumps([1, 2]),
                json.dumps({"format": "spar-rerank-tau", "version": 1, "tau": 7})):
        path.write_text(bad)
        assert load_calibration(path).tau == DEFAULT_TAU  # never an error in a search

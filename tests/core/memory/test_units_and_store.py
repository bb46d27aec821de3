"""Expansion units from the LLM (scripted Ollama) or local feedback; junk and foreign memory ignored."""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest

from spar_desktop.core.memory import ERMConfig
from spar_desktop.core.memory.learner import ERMLearner, attribution, unit_vector
from spar_desktop.core.memory.units import ExpansionUnit, clean_units, parse_llm_units, prf_units
from tests.support.fake_ollama import FakeOllama

EVERY = ERMConfig(batch_size=1, max_batches_per_round=1)
QUERY = "why did the machine stop spinning"


@pytest.fixture
def ollama():
    server = FakeOllama().start()
    yield server
    server.stop()


def helpers_for(server):
    from spar_desktop.core.llm.client import Ollama
    from spar_desktop.core.llm.helpers import LLMHelpers

    return LLMHelpers(Ollama(server.url, "llama3.2", stall_timeout=0.5, first_token_timeout=1.5, request_timeout=1.0))


def test_clean_units_drops_empty_and_cuts_enormous(caplog):
    caplog.set_level(logging.INFO, logger="spar_desktop.core.memory")
    cfg = ERMConfig(max_unit_chars=50, max_units=3)
    out = clean_units(["", "   ", "!!!", None, 42, "yaw motor", "YAW  motor", "word " * 10_000, "brake pads", "more"], cfg)
    assert [u.text for u in out][:2] == ["yaw motor", "word word word word word word word word word word"]
    assert len(out) == 3 and all(len(u.text) <= 50 for u in out)
    assert "ignored" in caplog.text and "cut an expansion unit" in caplog.text


def test_llm_replies_parse_or_are_rejected():
    good = json.dumps({"keywords": ["yaw motor", "overheating", 7], "answer": "The yaw motor overheated and tripped."})
    units = parse_llm_units(good)
    assert [u.kind for u in units] == ["keywords", "hyde"] and units[0].text == "yaw motor overheating"
    for junk in ("", "sorry, I cannot help", "[1, 2, 3]", '{"keywords": "nope", "answer": 5}', "{broken"):
        assert parse_llm_units(junk) == []


def test_prf_units_pick_salient_terms_and_query_close_sentences():
    passages = ["The yaw motor overheated. The yaw brake pads were worn and replaced by the crew.",
                "A voltage dip made three turbines disconnect from the grid."]
    idf = lambda w: {"yaw": 3.0, "brake": 2.5, "pads": 2.5}.get(w, 1.0)  # noqa: E731
    units = prf_units("motor overheating", passages, idf=idf, stopwords=frozenset({"the", "and", "by", "were"}))
    terms = " ".join(u.text for u in units if u.kind == "terms").split()
    assert terms[0] == "yaw" and "motor" not in terms  # query words are not expansions
    assert any(u.kind == "sentence" and "overheated" in u.text for u in units)
    assert prf_units("q", []) == [] and prf_units("q", ["", "  "]) == []


def test_attribution_matches_the_definition_and_learner_is_bounded():
    rng = np.random.default_rng(0)
    q, keys, units = unit_vector(rng.normal(size=8)), rng.normal(size=(3, 8)), rng.normal(size=(4, 8))
    keys = np.vstack([unit_vector(k) for k in keys])
    units = np.vstack([unit_vector(u) for u in units])
    d = attribution(q, keys, units, 0.3)
    for i in range(3):
        for j in range(4):
            direct = float(unit_vector(keys[i] + 0.3 * units[j]) @ q - keys[i] @ q)
            assert d[i, j] == pytest.approx(direct, abs=1e-5)
    learner = ERMLearner(ERMConfig(capacity=2, top_x=1))
    for step in range(5):  # many queries, always the query itself as the unit: memory stays at 2
        u = [ExpansionUnit(f"unit {step}", "terms"), ExpansionUnit("query", "keywords")]
        learner.observe(q, u, np.vstack([unit_vector(rng.normal(size=8)), q]), [("k", keys[0])])
    assert len(learner.memory["k"].entries) == 2 and learner.memory["k"].top(1)[0].text == "query"
    key = learner.evolved_key("k", keys[0])
    assert np.linalg.norm(key.vector) == pytest.approx(1.0) and key.vector @ q > keys[0] @ q


def test_llm_units_feed_the_memory_and_junk_falls_back_to_local_feedback(ws, ollama):
    from spar_desktop.core.memory.feedback import memory_stats, record_feedback

    mgr, _ = ws
    hit = next(h for h in mgr.search("ops", QUERY).hits if h.path.endswith("yaw.md"))
    target = f"{hit.file_id}#{hit.chunk_id}"
    ollama.push(reply=json.dumps({"keywords": ["yaw motor", "turbine trip"], "answer": "The turbine stopped because its yaw motor overheated."}))
    out = record_feedback(mgr, "ops", QUERY, [target], True, helpers=helpers_for(ollama), config=EVERY)
    assert out.accepted and "yaw motor turbine trip" in out.units and out.evolved_keys == 1
    ollama.push(reply="I am a language model and this is not JSON")
    junk = record_feedback(mgr, "ops", QUERY, [target], True, helpers=helpers_for(ollama), config=EVERY)
    assert junk.accepted and junk.units and "language model" not in " ".join(junk.units)  # local units instead
    ollama.stop()  # server gone: local feedback again, never an exception
    gone = record_feedback(mgr, "ops", QUERY, [target], True, helpers=helpers_for(ollama), config=EVERY)
    assert gone.accepted
    assert memory_stats(mgr, "ops").evolved_keys == 1


def test_memory_from_another_model_is_ignored(ws, caplog):
    from spar_desktop.core.memory.feedback import memory_stats
    from spar_desktop.core.memory.models import MemoryUnitRow
    from spar_desktop.core.workspaces.models import EvolvedKeyRow, Workspace, WorkspaceFile

    mgr, _ = ws
    before = [(h.path, h.chunk_id, h.score) for h in mgr.search("ops", QUERY).hits]
    with mgr.library.session() as s:
        wf = s.query(WorkspaceFile).filter(WorkspaceFile.path.like("%yaw.md")).one()
        ck = s.query(Workspace).one().chunker_key
        vec = np.ones(384, np.float32) / np.sqrt(384)
        s.add(EvolvedKeyRow(content_hash=wf.content_hash, chunker_key=ck, chunk_id="c0", model_id="bge-large@1",
                            vector=vec.tobytes(), extra_text="foreign words", tag="erm-x"))
        s.add(MemoryUnitRow(content_hash=wf.content_hash, chunker_key=ck, chunk_id="c0", model_id="bge-large@1",
                            text="foreign", kind="terms", vector=vec.tobytes(), score=1.0, hits=1))
    caplog.set_level(logging.INFO, logger="spar_desktop.core")  # keys are read by workspaces/evolved_keys
    mgr.searchers.clear()
    after = [(h.path, h.chunk_id, h.score) for h in mgr.search("ops", QUERY).hits]
    # The reopened searcher scores the saved matrix exactly, the build's one through Chroma: the
    # same ranking and scores up to float32 rounding.
    assert [a[:2] for a in after] == [b[:2] for b in before]
    assert all(abs(a[2] - b[2]) < 1e-5 for a, b in zip(after, before))
    assert "another embedding model" in caplog.text
    st = memory_stats(mgr, "ops")
    assert st.evolved_keys == 0 and st.other_model == 2

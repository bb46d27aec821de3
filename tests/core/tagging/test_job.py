"""The background job: cancel + resume equals one run, low priority, the optional LLM step
through the real Ollama client against the loopback fake, and no server at all."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from spar_desktop.core.llm.client import Ollama
from spar_desktop.core.llm.helpers import run_sync
from spar_desktop.core.config import load_settings
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.scanner import Scanner
from spar_desktop.core.progress import CancelToken, Cancelled
from spar_desktop.core.tagging import review, suggest, summaries
from spar_desktop.core.tagging.job import run_tagging
from spar_desktop.core.tagging.llm import classifier
from tests.core.tagging.conftest import NOTES, RIGHT_FOLDER, file_id, write_share
from tests.support.fake_ollama import FakeOllama
from tests.support.servers import free_port


def queue(lib: Library, share: Path) -> list[tuple]:
    root = str(share) + os.sep
    return sorted((x.path.removeprefix(root), x.tag_key, x.source, x.score) for x in review.pending(lib))


def open_share(tmp_path: Path, name: str) -> tuple[Library, object, Path]:
    share = write_share(tmp_path / name / "share")
    settings = load_settings(tmp_path / name / "data")
    lib = Library.open(settings)
    Scanner(lib).scan([str(share)])
    return lib, settings, share


def test_a_cancelled_job_resumed_gives_the_same_queue_as_one_run(tmp_path, encoder, monkeypatch):
    monkeypatch.setattr(summaries, "BATCH_FILES", 4)
    monkeypatch.setattr(suggest, "BATCH", 3)
    whole, settings, share = open_share(tmp_path, "whole")
    run_tagging(whole, settings, encoder)
    expected = queue(whole, share)
    assert expected
    whole.close()

    lib, settings, share = open_share(tmp_path, "parts")
    for phase in ("Summaries", "Tag suggestions"):
        cancel = CancelToken()

        def stop(p, phase=phase):
            if p.message.startswith(phase) and p.total and 0 < p.done < p.total:
                cancel.cancel()

        with pytest.raises(Cancelled):
            run_tagging(lib, settings, encoder, progress=stop, cancel=cancel)
    report = run_tagging(lib, settings, encoder)
    assert report.summaries.summarized < len(NOTES) and report.summaries.up_to_date > 0
    assert 0 < report.suggestions.files < len(NOTES)
    got = queue(lib, share)
    assert [g[:3] for g in got] == [e[:3] for e in expected]
    assert all(abs(g[3] - e[3]) < 1e-3 for g, e in zip(got, expected))
    lib.close()


@pytest.mark.skipif(not hasattr(os, "setpriority"), reason="thread priorities are a Linux feature here")
def test_the_job_runs_at_low_priority_and_leaves_the_callers_thread_alone(env, encoder):
    lib, settings, _ = env
    seen = []
    before = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    run_tagging(lib, settings, encoder,
                progress=lambda p: seen.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id())))
    assert seen and set(seen) == {max(before, 10)}
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == before


@pytest.fixture
def fake_ollama():
    server = FakeOllama().start()
    yield server
    server.stop()


def ollama_classify(url: str):
    ollama = Ollama(url, "llama3.2", stall_timeout=0.5, first_token_timeout=1.5, request_timeout=2.0)
    return classifier(lambda prompt: run_sync(ollama.generate(prompt, json_format=True, options={"temperature": 0})))


def reads_the_document(body: dict) -> str:
    """A model that reads: money words -> Finance, machine words -> Turbines, else nothing."""
    doc = body["prompt"].split("Document:", 1)[1].lower()
    offered = body["prompt"].split("Tags:", 1)[1].split("Document:", 1)[0]
    pick = "Finance" if any(w in doc for w in ("budget", "spending", "salar", "invoice", "audit")) else \
        "Turbines" if any(w in doc for w in ("turbine", "gearbox", "blade", "yaw", "generator")) else None
    return json.dumps({"tags": [pick] if pick and f"- {pick}" in offered else []})


def test_the_llm_step_chooses_among_the_best_candidates(env, encoder, fake_ollama):
    lib, settings, share = env
    fake_ollama.set(reply_fn=reads_the_document)
    report = run_tagging(lib, settings, encoder, classify=ollama_classify(fake_ollama.url))
    # Only files with something to choose from are asked: the loose ones (the others have their folder).
    assert report.suggestions.llm_error is None and report.suggestions.llm_files == len(RIGHT_FOLDER)
    calls = fake_ollama.calls("/api/generate")
    assert len(calls) == len(RIGHT_FOLDER) and all(c.body.get("format") == "json" for c in calls)
    assert "Tags:\n- " in calls[0].body["prompt"]
    for name, folder in RIGHT_FOLDER.items():
        best = review.pending(lib, file_id=file_id(lib, share / name))[0]
        assert (best.tag_value, best.source) == (folder, "llm")


def test_a_confused_model_is_ignored_and_the_rest_goes_on(env, encoder, fake_ollama):
    lib, settings, share = env
    fake_ollama.set(reply="I think it is about turbines!")
    report = run_tagging(lib, settings, encoder, classify=ollama_classify(fake_ollama.url))
    assert "JSON" in report.suggestions.llm_error
    assert len(fake_ollama.calls("/api/generate")) == 1  # stopped asking after the first failure
    sources = {x.source for x in review.pending(lib)}
    assert sources == {"auto"}
    for name, folder in RIGHT_FOLDER.items():
        assert review.pending(lib, file_id=file_id(lib, share / name))[0].tag_value == folder
    fake_ollama.set(reply_fn=reads_the_document)  # the server is fixed: the next run asks it again
    again = run_tagging(lib, settings, encoder, classify=ollama_classify(fake_ollama.url))
    assert again.suggestions.llm_files == len(RIGHT_FOLDER) and again.suggestions.llm_error is None
    assert {x.source for x in review.pending(lib)} == {"llm"}


def test_no_ollama_server_means_embedding_suggestions_only(env, encoder):
    lib, settings, share = env
    dead = f"http://127.0.0.1:{free_port()}"
    report = run_tagging(lib, settings, encoder, classify=ollama_classify(dead))
    assert report.suggestions.llm_error and report.suggestions.llm_files == 0
    for name, folder in RIGHT_FOLDER.items():
        best = review.pending(lib, file_id=file_id(lib, share / name))[0]
        assert (best.tag_value, best.source) == (folder, "auto")

"""The newsgroups benchmark's relevance rules and metrics (benchmarks/spar_newsgroups.py): pure
helpers, no corpus or model needed."""

from __future__ import annotations

import importlib.util
import sys
from datetime import date
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "spar_newsgroups.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("spar_newsgroups_bench", _PATH)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_topic_patterns_match_at_word_starts(bench):
    assert bench.topic_match("graphics cards", "Re: Diamond Stealth 24 VLB")
    assert bench.topic_match("graphics cards", "Which video card for Windows?")
    assert not bench.topic_match("graphics cards", "Ratings of the Catholic church")  # 'ati' inside a word
    assert bench.topic_match("hard drives", "IDE vs SCSI")
    assert not bench.topic_match("hard drives", "which side are you on")
    assert bench.topic_match("clipper chip", "Re: Clipper considered harmful")


def test_relevance_needs_group_date_and_topic(bench):
    req = next(r for r in bench.REQUESTS if r.rid == "mon-machw-after")
    assert bench.is_relevant(req, "comp.sys.mac.hardware", date(1993, 4, 16), "Re: 16\" monitor")
    assert not bench.is_relevant(req, "comp.sys.mac.hardware", date(1993, 4, 15), "Re: 16\" monitor")  # 'after' the 15th
    assert not bench.is_relevant(req, "comp.sys.ibm.pc.hardware", date(1993, 4, 20), "monitor")
    assert not bench.is_relevant(req, "comp.sys.mac.hardware", date(1993, 4, 20), "SIMMs")
    assert not bench.is_relevant(req, "comp.sys.mac.hardware", None, "monitor")


def test_requests_name_known_topics_and_unique_ids(bench):
    assert 20 <= len(bench.REQUESTS) <= 40
    assert len({r.rid for r in bench.REQUESTS}) == len(bench.REQUESTS)
    assert all(r.topic in bench.TOPICS and r.dates[0] <= r.dates[1] and r.groups for r in bench.REQUESTS)


def test_metrics(bench):
    p, r, ndcg, hit = bench.precision_recall_ndcg(["a", "x", "b"], {"a", "b", "c", "d"}, k=10)
    assert (p, r, hit) == (0.2, 0.5, True)
    assert 0 < ndcg < 1
    assert bench.precision_recall_ndcg(["a", "b"], {"a", "b"}, k=10)[2] == pytest.approx(1.0)
    assert bench.precision_recall_ndcg([], {"a"}, k=10) == (0.0, 0.0, 0.0, False)


def test_paired_bootstrap_is_paired_and_seeded(bench):
    a, b = [0.1, 0.2, 0.3, 0.4], [0.3, 0.4, 0.5, 0.6]
    out = bench.paired_bootstrap(a, b, n=500)
    assert out["mean_diff"] == pytest.approx(0.2)
    assert out["ci95"][0] == pytest.approx(0.2) and out["ci95"][1] == pytest.approx(0.2)  # constant difference
    assert bench.paired_bootstrap(a, [0, 0.5, 0.1, 0.9], n=500) == bench.paired_bootstrap(a, [0, 0.5, 0.1, 0.9], n=500)

"""Tag-hierarchy induction: key phrases, two-level topics that recover known groups, names."""

from __future__ import annotations

import re

import numpy as np
import pytest

from spar_desktop.core.progress import CancelToken, Cancelled
from spar_desktop.core.tagging.hierarchy import (InduceConfig, InductionError, clean_name, induce_hierarchy,
                                                  naming_prompt, sub_count, top_count)
from spar_desktop.core.tagging.phrases import build_phrase_table, distinct_phrases
from tests.core.tagging.test_hierarchy_corpus import TOPICS, hand_written_corpus, newsgroups_posts, purity

WORDS = {w.lower() for subs in TOPICS.values() for ss in subs.values() for s in ss for w in re.findall(r"\w+", s)}


def test_key_phrases_are_words_of_the_files_without_noise():
    texts, _ = hand_written_corpus()
    table = build_phrase_table(texts)
    phrases = table.top_phrases(0, 10)
    assert phrases and len(phrases) == len(set(phrases))
    for p in phrases:
        assert 1 <= len(p.split()) <= 3
        assert set(p.split()) <= WORDS  # no address, URL, number or "note"/"from" filler
        assert not {"the", "and", "with", "example", "http", "intranet"} & set(p.split())
    assert distinct_phrases(["space", "space station", "station space", "space", "orbit"], 5) == \
        ["space", "space station", "orbit"]


def test_topic_counts_follow_the_number_of_files_within_bounds():
    cfg = InduceConfig()
    assert top_count(40, cfg) == 4 and top_count(6, cfg) == 2 and top_count(100_000, cfg) == cfg.max_top
    assert sub_count(5, cfg) == 0 and sub_count(12, cfg) == 2 and sub_count(50_000, cfg) == cfg.max_sub


def test_hand_written_topics_come_back_as_two_levels_with_readable_names():
    texts, truth = hand_written_corpus()
    progress = []
    proposal = induce_hierarchy(texts, progress=progress.append)
    assert progress and progress[-1].done == progress[-1].total
    tops = [t.all_file_ids() for t in proposal.nodes]
    assert 3 <= len(tops) <= 6
    assert purity(tops, {f: t for f, (t, _) in truth.items()}) >= 0.95
    # Every file is placed exactly once.
    placed = [f for t in proposal.nodes for f in t.all_file_ids()]
    assert sorted(placed) == sorted(texts) and proposal.unplaced == 0
    # Two levels: sub-topics that split a topic along its real sub-topics.
    leaves = [set(f for f, _ in c.files) for t in proposal.nodes for c in t.children]
    assert len(leaves) >= 4
    assert purity(leaves, truth) >= 0.9
    for t in proposal.nodes:
        assert len(t.phrases) >= 3
        for node in (t, *t.children):
            words = set(re.findall(r"\w+", node.name.lower()))
            assert words and words <= WORDS, node.name  # named from the files' own phrases
            assert all(0.0 <= s <= 1.0 for _, s in node.files)
        names = [c.name.casefold() for c in t.children]
        assert len(names) == len(set(names))
        for c in t.children:  # a sub-topic's name does not just repeat its topic's
            assert c.name.casefold() != t.name.casefold()
    assert {n.id for n, _ in proposal.walk()} >= {"1", "1.1"}


def test_newsgroups_posts_separate_by_group_with_summary_vectors(encoder):
    groups = ["comp.graphics", "rec.sport.hockey", "sci.space", "talk.politics.guns"]
    texts, label = newsgroups_posts(groups, 15)
    ids = np.array(sorted(texts))
    vectors = np.asarray(encoder.encode([texts[i] for i in ids]), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    proposal = induce_hierarchy(texts, (ids, vectors))
    assert "summary-vectors" in proposal.method
    tops = [t.all_file_ids() for t in proposal.nodes]
    assert 3 <= len(tops) <= 6
    assert purity(tops, label) >= 0.85
    by_name = " ".join(t.name for t in proposal.nodes).lower()
    assert any(w in by_name for w in ("graphics", "image", "hockey", "team", "game", "space", "gun", "nasa"))


def test_a_namer_names_nodes_and_a_failing_one_falls_back_to_phrases():
    texts, _ = hand_written_corpus()
    asked = []

    def namer(phrases: list[str]) -> str:
        asked.append(phrases)
        return f'Topic: "{phrases[0].title()} Things".'

    proposal = induce_hierarchy(texts, namer=namer)
    assert proposal.named_by == "ollama" and asked
    assert all(n.name.endswith("Things") and '"' not in n.name for n, _ in proposal.walk())

    calls = []

    def broken(phrases: list[str]) -> str:
        calls.append(1)
        raise ConnectionError("server went away")

    proposal = induce_hierarchy(texts, namer=broken)
    assert len(calls) == 3  # stops asking after three failures
    assert proposal.named_by == "phrases" and all(n.name for n, _ in proposal.walk())


def test_naming_prompt_and_reply_cleaning():
    assert "- gun control" in naming_prompt(["gun control", "weapons"])
    assert clean_name("Name: **Space Exploration**.\nBecause...") == "Space Exploration"
    assert clean_name("  'Ice Hockey'  ") == "Ice Hockey"


def test_cancel_stops_induction_and_too_few_files_say_so():
    texts, _ = hand_written_corpus()
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        induce_hierarchy(texts, cancel=token)
    with pytest.raises(InductionError, match="at least"):
        induce_hierarchy({1: "one file", 2: "two files"})
    with pytest.raises(InductionError):
        induce_hierarchy({i: f"word{i}" for i in range(10)})  # nothing shared, digits only


def test_a_large_share_fits_phrases_on_a_sample_and_counts_every_file(monkeypatch):
    from spar_desktop.core.tagging import phrases

    texts, _ = hand_written_corpus()
    monkeypatch.setattr(phrases, "FIT_SAMPLE", 30)
    table = build_phrase_table(texts)
    assert table.counts.shape[0] == len(texts) == len(table.file_ids)
    assert (table.weights.getnnz(axis=1) > 0).all()  # files outside the sample still get phrases

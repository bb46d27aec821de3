"""A relations build says what it will cost before it starts, says how long it has left while it
runs, and a cancelled build's queries are not run again.

- estimate_build: documents, what is not embedded yet, queries to run, seconds; growing with the
  scope; an EDR-MQ update of stored relations estimates only the difference.
- The ETA helper: time left from elapsed time and done/total of a phase; the progress wrapper.
- The long phase resumes: a build cancelled after some chunks of queries keeps them
  (partial.npz), the next build runs only the rest and stores what one uninterrupted build stores.
Words-only EDR-MQ (alpha 0) and TF-IDF need no encoder: these tests run in seconds.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from spar_desktop.core.config import Settings
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.scanner import Scanner
from spar_desktop.core.progress import Cancelled, CancelToken, Progress
from spar_desktop.core.relations import build as build_module
from spar_desktop.core.relations import persist
from spar_desktop.core.relations.checkpoint import FILE, QueryCheckpoint, pending_queries
from spar_desktop.core.relations.edrmq import EdrmqParams, RelationAccumulator
from spar_desktop.core.relations.estimate import (
    QUERIES_PER_DOCUMENT, RATES, SPREAD, estimate_build, local_factor, record_build,
)
from spar_desktop.core.relations.eta import Eta, format_duration, format_range, time_left, with_eta
from spar_desktop.core.relations.errors import RelationsError
from spar_desktop.core.relations.service import build_relations

WORDS = EdrmqParams(alpha=0.0)  # words-only EDR-MQ: no encoder
TOPICS = {
    "Space": "Orbit and launch of the rocket {i} to the space station. The astronauts planned the mission and the "
             "fuel of stage {i}. Thrust and orbit insertion were nominal for flight {i} today.",
    "Cooking": "Recipe {i}: bake the bread dough with flour, yeast and butter in a hot oven. The crust turns golden "
               "after {i} minutes. Serve the loaf with soup and a green salad.",
    "Cars": "The car engine {i} needs oil, new brakes and tyres. The mechanic checks the gearbox and the clutch. "
            "Replace the timing belt of model {i} every few years.",
}


def write_share(root: Path, per_topic: int) -> Path:
    for folder, text in TOPICS.items():
        (root / folder).mkdir(parents=True, exist_ok=True)
        for i in range(1, per_topic + 1):
            (root / folder / f"{folder.lower()}{i}.txt").write_text(text.format(i=i), encoding="utf-8")
    return root


@pytest.fixture
def library(tmp_path):
    lib = Library.open(Settings(data_dir=tmp_path / "data"))
    yield lib
    lib.engine.dispose()


def test_estimate_counts_documents_and_queries_and_grows_with_the_scope(library, tmp_path):
    with pytest.raises(RelationsError, match="no documents to relate"):
        estimate_build(library)  # an empty index: the build's own message
    root = write_share(tmp_path / "share", 2)
    Scanner(library).scan([str(root)])
    small = estimate_build(library, params=WORDS)
    assert small.documents == 6 and small.to_embed == 0 and small.whole_index and not small.incremental
    assert small.queries == round(6 * QUERIES_PER_DOCUMENT) and 0 < small.low < small.seconds < small.high
    assert small.summary().startswith("whole index: 6 documents, ~16 queries to run, ")
    assert small.summary().endswith("on this machine")
    hybrid = estimate_build(library)  # words + meaning: every document still has to be embedded
    assert hybrid.to_embed == 6 and hybrid.seconds > small.seconds and "6 to embed" in hybrid.summary()
    tfidf = estimate_build(library, method="tfidf")
    assert tfidf.queries == 0 and tfidf.documents == 6 and "every file's text read" in tfidf.summary()

    write_share(root, 4)
    Scanner(library).scan([str(root)])
    big = estimate_build(library, params=WORDS)
    assert big.documents == 12 and big.queries > small.queries and big.seconds > small.seconds
    assert estimate_build(library).seconds > hybrid.seconds
    assert estimate_build(library, method="tfidf").seconds > tfidf.seconds
    assert estimate_build(library, method="cooc").queries == 12  # one sentence per document
    # the 31-minute report (7,532 posts already embedded, 20,430 queries, under load) is in the range
    n, q = 7532, 20430
    estimated = (n * (RATES.cached_document + RATES.draw_queries + RATES.fit_document)
                 + q * (RATES.encode_query + n * RATES.pair["hybrid"]))
    assert estimated * SPREAD[0] < 31 * 60 < estimated * SPREAD[1]
    assert format_range(estimated * SPREAD[0], estimated * SPREAD[1]) == "about 15–35 min"


def test_an_update_is_estimated_as_the_difference(library, tmp_path):
    root = write_share(tmp_path / "share", 4)
    Scanner(library).scan([str(root)])
    full = estimate_build(library, params=WORDS)
    report = build_relations(library, params=WORDS)
    assert report.documents == 12
    nothing = estimate_build(library, params=WORDS)
    assert nothing.incremental and nothing.changed == 0 and nothing.queries == 0 and nothing.seconds < full.seconds
    assert "(0 changed since the last build), no queries to run" in nothing.summary()
    (root / "Space" / "space9.txt").write_text(TOPICS["Space"].format(i=9), encoding="utf-8")
    Scanner(library).scan([str(root)])
    one = estimate_build(library, params=WORDS)
    assert one.incremental and one.changed == 1 and one.queries == round(QUERIES_PER_DOCUMENT)
    assert estimate_build(library, params=WORDS, incremental=False).queries == round(13 * QUERIES_PER_DOCUMENT)
    # other parameters cannot update the stored sum: a full build, and it says so
    other = estimate_build(library)
    assert not other.incremental and "recomputes them in full" in " ".join(other.notes)


def test_time_left_and_its_words():
    assert time_left(10.0, 100, 1100) == pytest.approx(100.0)
    assert time_left(0.0, 0, 10) is None and time_left(5.0, 3, 0) is None
    assert format_duration(7) == "7 s" and format_duration(42) == "40 s" and format_duration(720) == "12 min"
    assert format_duration(2 * 3600 + 20 * 60) == "2 h 20 min"
    assert format_range(25 * 60, 35 * 60) == "about 25–35 min" and format_range(10, 40) == "under a minute"
    assert format_range(24 * 60, 36 * 60) == "about 20–40 min"  # rounded outwards: the range holds the estimate
    assert format_range(2 * 60, 3 * 60) == "about 2–3 min" and format_range(2 * 3600, 3 * 3600) == "about 2–3 h"
    assert format_range(40, 100) == "under 2 min"

    now = [0.0]
    eta = Eta(clock=lambda: now[0], min_elapsed_s=3.0)
    assert eta.update(0, 1000) is None  # the phase starts its clock
    now[0] = 2.0
    assert eta.update(100, 1000) is None  # too early to tell
    now[0] = 10.0
    assert eta.update(250, 1000) == pytest.approx(30.0)
    now[0] = 11.0
    assert eta.update(1, 10) is None  # another phase (another total): its own clock
    now[0] = 12.0
    assert eta.update(2, 10) is None and eta.update(0, 10) is None  # a count going back: a new pass
    # a resumed phase starts at what was done: those cost nothing this time
    now[0] = 20.0
    assert eta.update(600, 1000) is None
    now[0] = 30.0
    assert eta.update(700, 1000) == pytest.approx(30.0)

    seen: list[Progress] = []
    now[0] = 0.0
    relay = with_eta(seen.append, clock=lambda: now[0])
    for t, done in ((0.0, 0), (60.0, 1240), (120.0, 2480)):
        now[0] = t
        relay(Progress(done, 20430, f"running queries {done:,}/20,430"))
    assert seen[0].message == "running queries 0/20,430"
    assert seen[-1].message == "running queries 2,480/20,430, about 14 min left" and seen[-1].done == 2480
    relay(Progress(20430, 20430, "running queries 20,430/20,430"))
    assert seen[-1].message == "running queries 20,430/20,430"  # finished: no time left to tell


def test_a_cancelled_build_keeps_its_queries_and_the_next_one_resumes(library, tmp_path, monkeypatch):
    root = write_share(tmp_path / "share", 4)
    Scanner(library).scan([str(root)])
    monkeypatch.setattr(build_module, "QUERY_CHUNK", 5)  # a tiny corpus, several chunks
    out = persist.relations_dir(library.settings.data_dir, "index", "edrmq")
    cancel = CancelToken()
    seen: list[Progress] = []

    def stop_after_ten(p: Progress) -> None:
        seen.append(p)
        if p.message.startswith("running queries") and p.done >= 10:
            cancel.cancel()

    with pytest.raises(Cancelled):
        build_relations(library, params=WORDS, progress=stop_after_ten, cancel=cancel)
    assert not (out / "meta.json").exists()  # nothing stored: the build did not finish
    done = pending_queries(out)
    assert done == 10  # two whole chunks of five
    total = next(p.total for p in seen if p.message.startswith("running queries"))
    assert any(p.message.startswith(f"running queries 10/{total}") for p in seen)
    again = estimate_build(library, params=WORDS)
    assert again.resumable == 10 and "(10 done by a cancelled build)" in again.summary()
    assert estimate_build(library).resumable == 0  # other parameters cannot use those queries

    runs: list[int] = []
    real = build_module.edrmq_accumulator

    def counting(retriever, params, encoder=None):
        inner = real(retriever, params, encoder)

        def accumulate(docs, texts, acc, progress, cancel, **kw):
            runs.append(len(texts))
            return inner(docs, texts, acc, progress, cancel, **kw)
        return accumulate

    monkeypatch.setattr(build_module, "edrmq_accumulator", counting)
    resumed = build_relations(library, params=WORDS)
    assert runs == [total - 10] and any("resumed: 10 queries" in n for n in resumed.notes)
    assert not (out / FILE).exists() and (out / "meta.json").is_file()  # stored: nothing left to resume
    R_resumed = persist.load(out).matrix().toarray()
    exact = build_relations(library, params=WORDS, incremental=False)
    assert runs[-1] == total and exact.queries == resumed.queries
    np.testing.assert_allclose(persist.load(out).matrix().toarray(), R_resumed, atol=1e-9)


def test_a_checkpoint_of_another_job_or_other_queries_is_not_used(tmp_path):
    from scipy import sparse

    acc = RelationAccumulator(3, sparse.csr_matrix(np.eye(3)), 4)
    cp = QueryCheckpoint(tmp_path, {"method": "edrmq", "params": {"k1": 5}})
    start, done = cp.begin(["1", "2", "3"], RelationAccumulator(3), None, ["a", "b", "c", "d"])
    assert done == 0
    cp.save(acc)
    again = QueryCheckpoint(tmp_path, {"method": "edrmq", "params": {"k1": 5}})
    got, done = again.begin(["1", "2", "3"], RelationAccumulator(3), None, ["a", "b", "c", "d", "e"])
    assert done == 4 and got.n_queries == 4 and np.allclose(got.total.toarray(), np.eye(3))  # same prefix
    assert QueryCheckpoint(tmp_path, {"method": "edrmq", "params": {"k1": 5}}).begin(
        ["1", "2", "3"], RelationAccumulator(3), None, ["a", "X", "c", "d"])[1] == 0  # other queries
    assert QueryCheckpoint(tmp_path, {"method": "edrmq", "params": {"k1": 3}}).begin(
        ["1", "2", "3"], RelationAccumulator(3), None, ["a", "b", "c", "d"])[1] == 0  # other parameters
    assert QueryCheckpoint(tmp_path, {"method": "edrmq", "params": {"k1": 5}}).begin(
        ["1", "3", "2"], RelationAccumulator(3), None, ["a", "b", "c", "d"])[1] == 0  # other rows
    (tmp_path / FILE).write_bytes(b"half a file")
    assert pending_queries(tmp_path) is None and QueryCheckpoint(tmp_path, {}).begin(
        ["1"], RelationAccumulator(1), None, ["a"])[1] == 0


def test_finished_builds_teach_the_estimate_this_machine_s_speed(tmp_path):
    assert local_factor(tmp_path) == 1.0
    record_build(tmp_path, 100.0, 5.0)  # too short to teach anything
    assert local_factor(tmp_path) == 1.0
    record_build(tmp_path, 100.0, 400.0)  # four times slower than estimated: halfway there (log scale)
    assert local_factor(tmp_path) == pytest.approx(2.0, rel=1e-3)
    record_build(tmp_path, 200.0, 200.0)  # as estimated with that factor: it stays
    assert local_factor(tmp_path) == pytest.approx(2.0, rel=1e-3)


def test_a_long_update_of_the_whole_index_asks_first_and_a_short_one_does_not(library, tmp_path, monkeypatch):
    """Opening the whole index's graph updates stored relations without asking only when the
    update is short; one estimated over the threshold (a big scan since) is offered like a build."""
    from spar_desktop.core.relations import service
    from spar_desktop.core.relations.scope import BuildNotConfirmed

    root = write_share(tmp_path / "share", 3)
    Scanner(library).scan([str(root)])
    with pytest.raises(BuildNotConfirmed) as nothing_stored:
        service.require_confirmation(library, None, "tfidf")
    assert not nothing_stored.value.update and "no relations built yet" in str(nothing_stored.value)
    build_relations(library, method="tfidf")
    service.require_confirmation(library, None, "tfidf")  # stored, a short update: no question
    monkeypatch.setattr(service, "UPDATE_ASKS_AFTER_S", 0.0)
    with pytest.raises(BuildNotConfirmed) as long_update:
        service.require_confirmation(library, None, "tfidf")
    assert long_update.value.update and not long_update.value.rebuild
    assert "updating the whole index's relations" in str(long_update.value) and "9 documents" in str(long_update.value)
    service.require_confirmation(library, None, "tfidf", confirmed=True)  # the user said yes
    service.require_confirmation(library, "any workspace", "tfidf")  # a workspace never asks

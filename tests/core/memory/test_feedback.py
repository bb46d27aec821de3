"""Feedback in the app evolves keys (stats show it) and a reset restores the original results."""

from __future__ import annotations

import logging

from spar_desktop.core.memory import ERMConfig
from spar_desktop.core.memory.feedback import evolve_now, memory_stats, record_feedback, reset_memory

# Evolve after every feedback so a test needs one query, not a batch.
EVERY = ERMConfig(batch_size=1, max_batches_per_round=1)
QUERY = "why did the machine stop spinning"


def snapshot(res):
    return [(h.path, h.chunk_id, round(h.score, 6), round(h.dense_score, 6), round(h.bm25_score, 6)) for h in res.hits]


def chunk_of(mgr, name: str, query: str, filename: str) -> str:
    hit = next(h for h in mgr.search(name, query, k=10).hits if h.path.endswith(filename))
    return f"{hit.file_id}#{hit.chunk_id}"


def test_feedback_evolves_keys_and_reset_restores_results_exactly(ws):
    mgr, _ = ws
    before = snapshot(mgr.search("ops", QUERY, k=4))
    assert memory_stats(mgr, "ops").evolved_keys == 0
    target = chunk_of(mgr, "ops", QUERY, "yaw.md")
    both = EVERY.with_(bm25_units=3)  # BM25 keys evolve too (off by default)
    out = record_feedback(mgr, "ops", QUERY, [target], success=True, config=both)
    assert out.accepted and out.credited_chunks == 1 and out.units and out.evolved_keys == 1
    searcher = mgr.searchers.items()[0][1]
    assert searcher.overrides[target].extra_text  # unit text appended to the BM25 key
    stats = memory_stats(mgr, "ops")
    assert stats.evolved_keys == 1 and stats.units >= 1 and stats.rounds == 1 and stats.accepted == 1
    evolved = mgr.search("ops", QUERY, k=4)
    yaw = next(h for h in evolved.hits if h.path.endswith("yaw.md"))
    old_yaw = next(row for row in before if row[0].endswith("yaw.md"))
    assert yaw.dense_score > old_yaw[3]  # the confirmed chunk's key moved towards the query
    assert snapshot(evolved) != before

    # Archive drops the vectors; reactivating re-applies the evolved keys from the database.
    mgr.archive("ops")
    assert memory_stats(mgr, "ops").evolved_keys == 1  # stats readable while archived
    mgr.reactivate("ops")
    assert snapshot(mgr.search("ops", QUERY, k=4)) == snapshot(evolved)

    assert reset_memory(mgr, "ops") > 0
    assert memory_stats(mgr, "ops").evolved_keys == 0
    assert snapshot(mgr.search("ops", QUERY, k=4)) == before
    mgr.searchers.clear()  # a fresh process: the collection is reconciled from the database
    assert snapshot(mgr.search("ops", QUERY, k=4)) == before


def test_keys_evolve_in_batches_not_per_feedback(ws):
    mgr, _ = ws
    cfg = ERMConfig(batch_size=2, max_batches_per_round=1)
    target = chunk_of(mgr, "ops", QUERY, "yaw.md")
    first = record_feedback(mgr, "ops", QUERY, [target], success=True, config=cfg)
    assert first.accepted and first.evolved_keys is None
    assert memory_stats(mgr, "ops").evolved_keys == 0 and memory_stats(mgr, "ops").pending == 1
    second = record_feedback(mgr, "ops", "yaw motor overheated", [target], success=True, config=cfg)
    assert second.evolved_keys == 1 and memory_stats(mgr, "ops").pending == 0


def test_bad_feedback_is_ignored_with_a_log_line(ws, caplog):
    mgr, share = ws
    caplog.set_level(logging.INFO, logger="spar_desktop.core.memory")
    target = chunk_of(mgr, "ops", QUERY, "yaw.md")
    before = snapshot(mgr.search("ops", QUERY, k=4))
    cases = [
        record_feedback(mgr, "ops", QUERY, [target], success=False, config=EVERY),
        record_feedback(mgr, "ops", "   ", [target], success=True, config=EVERY),
        record_feedback(mgr, "ops", QUERY, ["999#c0", "garbage", None, (1,)], success=True, config=EVERY),
        record_feedback(mgr, "no such workspace", QUERY, [target], success=True, config=EVERY),
    ]
    assert [c.accepted for c in cases] == [False] * 4
    assert "in the workspace any more" in cases[2].reason and "no workspace" in cases[3].reason
    mgr.archive("ops")
    archived = record_feedback(mgr, "ops", QUERY, [target], success=True, config=EVERY)
    assert not archived.accepted and "archived" in archived.reason
    assert evolve_now(mgr, "ops") == 0
    assert "feedback ignored" in caplog.text
    stats = memory_stats(mgr, "ops")
    assert stats.evolved_keys == 0 and stats.units == 0 and stats.ignored == 4
    mgr.reactivate("ops")
    assert snapshot(mgr.search("ops", QUERY, k=4)) == before


def test_failed_collection_write_leaves_everything_as_it_was(ws, monkeypatch):
    mgr, _ = ws
    before = snapshot(mgr.search("ops", QUERY, k=4))
    target = chunk_of(mgr, "ops", QUERY, "yaw.md")
    from spar_desktop.core.retrieval.vector_store import ChromaCollection

    real_add = ChromaCollection.add
    calls = {"n": 0}

    def failing_add(self, ids, vectors, metadatas=None, *a, **kw):
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("disk full")
        return real_add(self, ids, vectors, metadatas, *a, **kw)

    monkeypatch.setattr(ChromaCollection, "add", failing_add)
    out = record_feedback(mgr, "ops", QUERY, [target], success=True, config=EVERY)
    monkeypatch.setattr(ChromaCollection, "add", real_add)
    assert not out.accepted and "disk full" in out.reason
    assert memory_stats(mgr, "ops").evolved_keys == 0
    assert snapshot(mgr.search("ops", QUERY, k=4)) == before
    mgr.searchers.clear()
    assert snapshot(mgr.search("ops", QUERY, k=4)) == before


def test_an_update_keeps_learned_keys_of_passages_that_survive_an_edit_and_drops_the_rest(ws):
    from spar_desktop.core.library.scanner import Scanner

    mgr, share = ws
    long_note = share / "Operations" / "2023" / "pumps.md"
    long_note.write_text(" ".join(f"Section {i}: the pump station at site {i} held its pressure; gasket {i * 7} "
                                  "was replaced during the visit." for i in range(40)), encoding="utf-8")
    Scanner(mgr.library).scan([str(share)])
    assert mgr.build("ops").new_files == 1
    first = chunk_of(mgr, "ops", "pump station at site 0 gasket 0", "pumps.md")
    yaw = chunk_of(mgr, "ops", QUERY, "yaw.md")
    for target, query in ((first, "pump station at site 0 gasket 0"), (yaw, QUERY)):
        assert record_feedback(mgr, "ops", query, [target], success=True, config=EVERY).accepted
    before = mgr.searchers.items()[0][1]
    pumps_id, yaw_id = first.split("#")[0], yaw.split("#")[0]
    last = max((k for k in before.keys if k.startswith(pumps_id + "#")), key=lambda k: int(k.split("#c")[1]))
    evolved = {k for k, o in before.overrides.items() if o.vector is not None}
    assert first in evolved and yaw in evolved
    surviving = {k for k in evolved if k.startswith(pumps_id + "#") and k != last}
    old_rows = {k for k in evolved if k.split("#")[0] in (pumps_id, yaw_id)}

    with open(long_note, "a", encoding="utf-8") as f:
        f.write(" A cracked bracket was found behind the valve.")
    (share / "Operations" / "2023" / "yaw.md").write_text("# Yaw system\n\nThe yaw motor was replaced.", encoding="utf-8")
    Scanner(mgr.library).scan([str(share)])
    report = mgr.build("ops")
    assert report.changed_files == 2
    assert report.carried_keys == len(surviving) >= 1  # unchanged passages keep what they learned
    assert report.dropped_keys == len(old_rows)  # the old versions' keys: no workspace holds them
    after = mgr.searchers.items()[0][1]
    kept = {k for k, o in after.overrides.items() if o.vector is not None}
    assert surviving <= kept and first in kept
    assert not any(k.startswith(yaw_id + "#") for k in kept) and last not in kept

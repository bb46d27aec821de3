"""Query-log readers (query sets, sessions, co-access sequences) and the pickle-free store."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import numpy as np
import pytest
from scipy import sparse

from spar_desktop.core.config import Settings
from spar_desktop.core.library.database import Library
from spar_desktop.core.relations import persist
from spar_desktop.core.relations.edrmq import RelationAccumulator
from spar_desktop.core.relations.querylog import group_sessions, query_texts, read_query_log, session_sequences


@pytest.fixture
def library(tmp_path):
    lib = Library.open(Settings(data_dir=tmp_path / "data"))
    yield lib
    lib.engine.dispose()


def log(lib, key, query, results, opened=(), minutes=0):
    from spar_desktop.core.workspaces.models import QueryLogEntry

    with lib.session() as s:
        s.add(QueryLogEntry(workspace_id=None, session_key=key, query=query, source="search",
                            results=[[f, 1.0 / (i + 1)] for i, f in enumerate(results)], opened=list(opened),
                            created_at=datetime(2024, 1, 1) + timedelta(minutes=minutes)))


def test_query_sets_and_sessions_from_the_log(library):
    log(library, "thread-1", "gearbox failure", [3, 4, 5, 6], opened=[5], minutes=0)
    log(library, "run-9", "budget 2023", [7, 8], minutes=1)
    log(library, "thread-1", "  gearbox   failure ", [4, 9], minutes=2)  # a repeat, spaced differently
    log(library, "thread-1", "oil contamination", [9, 10], opened=[10], minutes=3)
    entries = read_query_log(library)
    assert [e.query for e in entries][:2] == ["gearbox failure", "budget 2023"]
    assert query_texts(entries) == ["gearbox failure", "budget 2023", "oil contamination"]
    assert len(query_texts(entries, dedupe=False)) == 4
    sessions = group_sessions(entries)
    assert [s.key for s in sessions] == ["thread-1", "run-9"]
    # opened first, then the top results, each file once, in order of first appearance
    assert sessions[0].co_accessed(results_per_query=2) == [5, 3, 4, 9, 10]
    assert session_sequences(sessions, results_per_query=1) == [[5, 3, 4, 10, 9]]  # run-9 has one file: dropped
    assert [e.query for e in read_query_log(library, after_id=entries[2].log_id)] == ["oil contamination"]


def test_store_round_trip_without_pickle(tmp_path):
    total = sparse.csr_matrix(np.array([[0, 0.2, 0], [0.1, 0, 0.3], [0, 0, 0]]))
    stored = persist.StoredRelations("cooc", "index", ["1", "2", "3"], RelationAccumulator(3, total, 4),
                                     {"k1": 5}, "model@1", 17, stats={"queries": {"log": 4}},
                                     cluster_labels=np.array([0, 0, 1]), cooc_vectors=np.eye(3, dtype=np.float32))
    d = persist.save(persist.relations_dir(tmp_path, "index", "cooc"), stored)
    back = persist.load(d)
    assert back.ids == ["1", "2", "3"] and back.acc.n_queries == 4 and back.last_log_id == 17
    np.testing.assert_allclose(back.matrix().toarray(), total.toarray() / 4)
    assert back.cluster_labels.tolist() == [0, 0, 1] and back.cooc_vectors.shape == (3, 3)
    assert json.loads((d / "meta.json").read_text())["format"] == "spar-relations"
    with np.load(d / "sum.npz", allow_pickle=False) as z:  # plain arrays only
        assert "data" in z.files
    assert [m for m, _ in persist.available(tmp_path, "index")] == ["cooc"]
    (d / "meta.json").write_text("{not json")
    with pytest.raises(persist.RelationsStoreError):
        persist.load(d)
    with pytest.raises(persist.RelationsStoreError):
        persist.load(tmp_path / "nothing-here")

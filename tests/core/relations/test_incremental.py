"""Relations that follow the files: added files get rows and their own synthetic queries, removed
files leave the stored sum, changed files (same id, new content hash) are reset and re-queried;
what is stored stays loadable (format v2, v1 still read); TF-IDF recomputes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from scipy import sparse

from spar_desktop.core.changes import Changes
from spar_desktop.core.config import Settings
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.scanner import Scanner
from spar_desktop.core.relations import persist
from spar_desktop.core.relations.doc_vectors import DocSet, normalize_rows
from spar_desktop.core.relations.edrmq import EdrmqParams, RelationAccumulator, accumulate_dense
from spar_desktop.core.relations.build_delta import DocChanges, diff, pending_changes, realign, update_edrmq
from spar_desktop.core.relations.update_stored import update_relations
from spar_desktop.core.relations.service import build_relations, related_files

TOPICS = {
    "Space": "Orbit and launch of the rocket {i} to the space station. The astronauts planned the mission, the fuel "
             "and the thrust of the {i}th stage.",
    "Cooking": "Recipe {i}: bake the bread dough with flour, yeast and butter in a hot oven until the crust is golden.",
    "Cars": "The car engine {i} needs oil, new brakes and tyres; the mechanic checks the gearbox and the clutch.",
}


def test_diff_sees_added_changed_removed_and_tolerates_unknown_fingerprints():
    known = {"1": "a", "2": "b", "3": None, "4": "d"}  # "3": a version-1 build recorded no hash
    changes = diff(known, {"1": "a", "2": "B", "3": "c", "5": "e"})
    assert changes == DocChanges(added=("5",), changed=("2",), removed=("4",))
    assert len(changes) == 3
    assert changes.to_json() == {"added": 1, "changed": 1, "removed": 1}
    assert not diff(known, dict(known))


def test_realign_drops_moves_and_resets_rows_and_columns():
    S = np.arange(16, dtype=float).reshape(4, 4)
    acc = RelationAccumulator(4, sparse.csr_matrix(S), 7)
    out = realign(acc, ["a", "b", "c", "d"], ["d", "a", "c", "new"], reset=["c"])
    assert out.n_queries == 7 and out.n_docs == 4
    expected = np.zeros((4, 4))
    expected[0, 0], expected[0, 1], expected[1, 0], expected[1, 1] = S[3, 3], S[3, 0], S[0, 3], S[0, 0]
    np.testing.assert_array_equal(out.total.toarray(), expected)  # b gone, c reset, new empty


def test_update_keeps_R_as_S_over_N_and_only_queries_the_fresh_documents():
    rng = np.random.default_rng(7)
    D = normalize_rows(rng.normal(size=(30, 12)))
    ids = tuple(str(i) for i in range(30))
    docs = DocSet(ids, tuple(f"doc {i}" for i in ids), tuple("" for _ in ids), D)
    Q = normalize_rows(D[rng.integers(0, 30, 40)] + 0.3 * rng.normal(size=(40, 12)))
    vectors = {f"q{i}": Q[i] for i in range(40)}
    calls: list[list[str]] = []

    def accumulate(d, texts, acc, progress, cancel):  # queries are vectors looked up by name
        calls.append(list(texts))
        accumulate_dense(d.vectors, np.stack([vectors[t] for t in texts]), EdrmqParams(k1=3, k2=3), acc)

    full = update_edrmq(docs, accumulate, queries=[(f"q{i}", "log") for i in range(30)], synthetic=False)
    prev = persist.StoredRelations("edrmq", "index", full.ids, full.acc, stats={"queries": full.counts},
                                   fingerprints={d: "h" + d for d in ids})
    before = prev.acc.total.toarray().copy()
    # remove documents 3 and 17, change 5 (new vector), add 30
    keep = [i for i in range(30) if i not in (3, 17)]
    D2 = np.vstack([D[keep], normalize_rows(rng.normal(size=(1, 12)))])
    D2[keep.index(5)] = normalize_rows(rng.normal(size=(1, 12)))[0]
    ids2 = tuple(str(i) for i in keep) + ("30",)
    docs2 = DocSet(ids2, tuple(f"doc {i}" for i in ids2), tuple("" for _ in ids2), D2)
    fps = {d: "h" + d for d in ids2} | {"5": "h5-new"}
    up = update_edrmq(docs2, accumulate, prev=prev, fingerprints=fps, queries=[(f"q{i}", "log") for i in range(30, 40)],
                      synthetic=False)
    assert up.incremental and up.changes == DocChanges(("30",), ("5",), ("3", "17"))
    assert up.ids == [str(i) for i in keep] + ["30"] and up.fresh == 2
    assert up.acc.n_queries == 40 and up.counts == {"log": 40} and calls[-1] == [f"q{i}" for i in range(30, 40)]
    # only the ten new queries were run; without them the sum is the old one minus the dropped rows
    # and columns (R stays S / N), the changed document's row and column reset
    again = realign(RelationAccumulator(30, sparse.csr_matrix(before), 30), list(ids), up.ids, ["5"]).total.toarray()
    new_part = RelationAccumulator(len(ids2))
    accumulate(docs2, [f"q{i}" for i in range(30, 40)], new_part, None, None)  # docs2 is already in row order
    np.testing.assert_allclose(up.acc.total.toarray(), again + new_part.total.toarray(), atol=1e-12)
    np.testing.assert_allclose(up.acc.matrix().toarray(), up.acc.total.toarray() / 40)


@pytest.fixture
def indexed(tmp_path):
    root = tmp_path / "share"
    for folder, text in TOPICS.items():
        (root / folder).mkdir(parents=True)
        for i in range(1, 5):
            (root / folder / f"{folder.lower()}{i}.txt").write_text(text.format(i=i), encoding="utf-8")
    lib = Library.open(Settings(data_dir=tmp_path / "data"))
    Scanner(lib).scan([str(root)])
    yield lib, root
    lib.engine.dispose()


def file_id(lib, path: Path) -> str:
    from sqlalchemy import select

    from spar_desktop.core.library.models import File

    with lib.session() as s:
        return str(s.scalar(select(File.id).where(File.path == str(path))))


def test_files_added_changed_and_removed_update_the_stored_relations(indexed):
    """The real encoder and the real scanner: a new space file relates to the space files, a car
    file rewritten about baking now relates to the cooking files, a deleted file is gone."""
    lib, root = indexed
    full = build_relations(lib)
    assert not full.incremental and full.documents == 12
    d = Path(full.path)
    meta = json.loads((d / "meta.json").read_text())
    assert meta["version"] == 2 and len(meta["fingerprints"]) == 12
    assert pending_changes(lib) == DocChanges() and update_relations(lib) is None  # nothing to do
    before = persist.load(d)

    new = root / "Space" / "space5.txt"
    new.write_text(TOPICS["Space"].format(i=5) + " The capsule docked with the orbital station.", encoding="utf-8")
    changed = root / "Cars" / "cars1.txt"
    changed.write_text("Bake the bread: knead the dough with flour, yeast, butter and bake it in the oven until "
                       "golden. A recipe for a crust.", encoding="utf-8")
    removed = root / "Cooking" / "cooking4.txt"
    removed_id = file_id(lib, removed)
    removed.unlink()
    Scanner(lib).scan([str(root)])
    new_id, changed_id = file_id(lib, new), file_id(lib, changed)
    assert pending_changes(lib) == DocChanges((new_id,), (changed_id,), (removed_id,))

    report = update_relations(lib)
    assert report.incremental and report.files_changed == {"added": 1, "changed": 1, "removed": 1}
    assert report.changes == Changes(relations=True)  # the app's views showing relations reload
    after = persist.load(d)
    assert len(after.ids) == 12 and removed_id not in after.ids and after.ids[-1] == new_id
    assert after.ids.index(changed_id) == before.ids.index(changed_id)  # a changed file keeps its place
    assert after.acc.n_queries > before.acc.n_queries  # only the new documents' queries were added
    assert after.stats["last_update"]["fresh_documents"] == 2 and after.stats["updates_since_full_build"] == 1
    assert pending_changes(lib) == DocChanges() and update_relations(lib) is None

    _, top = related_files(lib, str(new), k=3)
    assert [Path(r.path).parent.name for r in top] == ["Space"] * 3
    _, top = related_files(lib, str(changed), k=2)
    assert [Path(r.path).parent.name for r in top] == ["Cooking"] * 2  # its old relations were reset
    # kept pairs only gained mass: earlier queries were not re-run (Rebuild recomputes exactly)
    keep = [i for i in before.ids if i in after.ids and i != changed_id]
    old = before.acc.total[[before.ids.index(i) for i in keep]][:, [before.ids.index(i) for i in keep]]
    now = after.acc.total[[after.ids.index(i) for i in keep]][:, [after.ids.index(i) for i in keep]]
    assert (now - old).min() >= 0
    exact = build_relations(lib, incremental=False)
    assert not exact.incremental and exact.documents == 12 and "updates_since_full_build" not in persist.load(d).stats


def test_version_1_builds_load_and_update_from_their_ids(indexed, tmp_path):
    lib, root = indexed
    report = build_relations(lib, method="tfidf")
    d = Path(report.path)
    meta = json.loads((d / "meta.json").read_text())
    meta["version"] = 1
    del meta["fingerprints"]
    (d / "meta.json").write_text(json.dumps(meta))
    v1 = persist.load(d)
    assert v1.fingerprints == {} and len(v1.known()) == 12
    (root / "Cars" / "cars2.txt").write_text("A new text about the clutch and the gearbox of a truck engine.")
    (root / "Cars" / "cars9.txt").write_text(TOPICS["Cars"].format(i=9))
    Scanner(lib).scan([str(root)])
    changes = pending_changes(lib, method="tfidf")
    assert len(changes.added) == 1 and not changes.changed  # an edit before the upgrade is not visible
    report = update_relations(lib, method="tfidf")  # TF-IDF recomputes, and records fingerprints
    assert report.documents == 13 and not report.incremental
    assert json.loads((d / "meta.json").read_text())["version"] == 2 and pending_changes(lib, method="tfidf") == DocChanges()
    meta = json.loads((d / "meta.json").read_text())
    meta["version"] = 3
    (d / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(persist.RelationsStoreError):
        persist.load(d)
    assert pending_changes(lib, method="tfidf") is None  # unreadable: nothing to update, the graph says rebuild
    shutil.rmtree(d)
    assert pending_changes(lib, method="tfidf") is None


def test_a_killed_save_leaves_no_lasting_temporaries(tmp_path):
    import os
    import time

    d = tmp_path / "rel"
    d.mkdir()
    old, fresh = d / "sum.npz.999999.tmp", d / "meta.json.999998.tmp"
    for p in (old, fresh):
        p.write_bytes(b"half a save")
    hour_ago = time.time() - 3700
    os.utime(old, (hour_ago, hour_ago))
    persist.save(d, persist.StoredRelations("tfidf", "index", ["1"], RelationAccumulator(1)))
    assert not old.exists() and fresh.exists()  # another process may still be writing a fresh one
    assert persist.load(d).ids == ["1"]


def test_cover_my_session_gives_a_passage_or_an_opening_per_file(indexed):
    """The search panel's view of cluster expansion (real encoder, real co-occurrence build): one
    result per file, the search's own top first; a file only its cluster brought, which the search
    never reached, is shown by its opening (no chunk: nothing for the evolving keys to learn)."""
    from spar_desktop.core.relations.expanded_search import session_search
    from spar_desktop.core.workspaces.manager import Workspaces

    lib, root = indexed
    Workspaces(lib).create("mix", tags=["Space|Cars"])
    assert Workspaces(lib).build("mix").ready == 8
    build_relations(lib, workspace="mix", method="cooc")
    res = session_search(lib, "mix", "rocket launch to the space station", k=6, k_v=2, depth=2)
    assert len(res.hits) == 6 and len({h.file_id for h in res.hits}) == 6
    assert [h.rank for h in res.hits] == list(range(1, 7)) and res.log_id is not None
    assert res.from_cluster[:2] == (False, False) and all(h.chunk_id for h in res.hits[:2])
    assert all("/Space/" in h.path for h in res.hits[:2])
    openings = [h for h, added in zip(res.hits, res.from_cluster) if added and not h.chunk_id]
    assert openings and res.added >= len(openings)
    for h in openings:  # the file's own text, from its start
        assert Path(h.path).read_text(encoding="utf-8").startswith(h.text[:40]) and h.page_start == 1

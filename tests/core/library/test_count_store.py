"""The tag tree's stored counts (count_store.py) against the counts computed from the links and
files, after scans, re-scans that add, remove and move files, a person's tag edits, writes no one
refreshed after, and the migration that fills them for an existing index."""

from __future__ import annotations

import os
import sqlite3
from collections import Counter
from datetime import datetime
from pathlib import Path

from sqlalchemy import select

from spar_desktop.core.config import load_settings
from spar_desktop.core.library import count_store, overview, tag_edits
from spar_desktop.core.library.database import Library, make_engine
from spar_desktop.core.library.models import File, Folder, TagEdge, TagSource
from spar_desktop.core.library.scanner import Scanner
from spar_desktop.core.library.tags import add_edge, create_tag, tag_files, tag_infos
from spar_desktop.core.tagging import review
from tests.core.library.test_tag_counts import reference_counts


def _write(share: Path, rel: str, year: int = 2021) -> None:
    path = share / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(rel)
    when = datetime(year, 3, 4).timestamp()
    os.utime(path, (when, when))


def _share(root: Path) -> Path:
    for i in range(30):
        top = ["Finance/2023/Q1", "Finance/2023", "HR/People", "HR", "", "Legal"][i % 6]
        _write(root, f"{top}/f{i:02d}.txt".lstrip("/"), 2019 + i % 4)
    return root


def reference_roots(session) -> dict[int, Counter]:
    """Root folder id → Counter(top-level folder name → files; '' → all), from every file row."""
    out = {fid: Counter({"": 0}) for fid in session.scalars(select(Folder.id))}
    for folder_id, rel in session.execute(select(File.folder_id, File.rel_path)):
        out[folder_id][""] += 1
        if "/" in rel:
            out[folder_id][rel.split("/", 1)[0]] += 1
    return out


def assert_fresh_and_exact(lib: Library) -> None:
    with lib.session() as s:
        got = count_store.stored(s)
        assert got is not None, "the stored counts are behind the index"
        assert got[0] == reference_counts(s)
        assert {f: +c for f, c in got[1].items()} == {f: +c for f, c in reference_roots(s).items()}
        assert set(got[1]) == set(reference_roots(s))


def test_a_scan_stores_the_counts_and_a_rescan_keeps_them_exact(tmp_path: Path):
    share = _share(tmp_path / "share")
    other = _share(tmp_path / "other")
    lib = Library.open(load_settings(tmp_path / "data"))
    scanner = Scanner(lib, batch_size=7)
    scanner.scan([str(share), str(other)])
    assert_fresh_and_exact(lib)
    # Added, removed and moved files (a move is a file gone and one new), a new top folder.
    _write(share, "Finance/2023/Q1/new.txt", 2024)
    _write(share, "Projects/Alpha/plan.txt", 2018)
    (share / "HR" / "f03.txt").unlink()
    (share / "Legal" / "f05.txt").rename(share / "HR" / "People" / "f05.txt")
    scanner.scan([str(share)])
    assert_fresh_and_exact(lib)
    with lib.session() as s:
        roots = count_store.stored(s)[1]
    assert sum(c["Projects"] for c in roots.values()) == 1
    scanner.scan([str(share)])  # unchanged: nothing to count again
    assert_fresh_and_exact(lib)
    lib.close()


def test_tag_edits_keep_the_counts_exact(tmp_path: Path):
    share = _share(tmp_path / "share")
    lib = Library.open(load_settings(tmp_path / "data"))
    Scanner(lib).scan([str(share)])
    with lib.session() as s:
        ids = sorted(s.scalars(select(File.id)))
        key = {t.key: i for i, t in tag_infos(s).items()}
    # A person's tag on files of two folders, then taken off some of them.
    made = tag_edits.apply_tag(lib, tuple(ids[:12]), None, "Reviewed")
    assert made.count == 12
    assert_fresh_and_exact(lib)
    with lib.session() as s:
        reviewed = next(i for i, t in tag_infos(s).items() if t.value == "Reviewed")
    tag_edits.apply_tag(lib, tuple(ids[5:9]), key["HR"])  # a folder tag given by hand: mixed kinds
    assert_fresh_and_exact(lib)
    tag_edits.remove_tag(lib, tuple(ids[:4]), reviewed)
    assert_fresh_and_exact(lib)
    # Suggestions are not counted; accepting them is, rejecting the rest changes nothing.
    with lib.session() as s:
        tag_files(s, ids[20:26], reviewed, TagSource.AUTO, score=0.8, confirmed=False)
        count_store.refresh(s, ())  # as suggest.py stores a batch
    assert_fresh_and_exact(lib)
    review.accept(lib, [(f, reviewed) for f in ids[20:23]])
    assert_fresh_and_exact(lib)
    review.reject(lib, [(f, reviewed) for f in ids[23:26]])
    assert_fresh_and_exact(lib)
    review.accept_above(lib, 0.0)
    assert_fresh_and_exact(lib)
    lib.close()


def test_a_write_no_one_refreshed_after_is_never_shown_stale(tmp_path: Path):
    share = _share(tmp_path / "share")
    lib = Library.open(load_settings(tmp_path / "data"))
    Scanner(lib).scan([str(share)])
    with lib.session() as s:  # a taxonomy written straight into the index, with a diamond
        ids = sorted(s.scalars(select(File.id)))
        money, budget, audit = (create_tag(s, f"tax:{n}", n, TagSource.TAXONOMY).id for n in ("Money", "Budget", "Audit"))
        add_edge(s, money, budget)
        add_edge(s, money, audit)
        add_edge(s, budget, audit)
        tag_files(s, ids[:6], audit, TagSource.TAXONOMY)
        tag_files(s, ids[3:9], budget, TagSource.TAXONOMY)
    with lib.session() as s:
        assert count_store.stored(s) is None
        expected = reference_counts(s)
    snapshot = overview.load_tags(lib)  # counts, and stores them for the next reader
    assert {i: snapshot.infos[i].file_count for i in expected} == expected
    assert snapshot.infos[money].file_count == 9
    assert_fresh_and_exact(lib)
    # A partial refresh after it counts only the edited tag's ancestors, the diamond included.
    tag_edits.apply_tag(lib, tuple(ids[10:12]), audit)
    assert_fresh_and_exact(lib)
    with lib.session() as s:  # inside the writing transaction the rows do not count its own writes
        tag_files(s, ids[12:14], audit, TagSource.TAXONOMY)
        assert count_store.stored(s) is None
    overview.load_tags(lib)  # a plain session wrote: the next load counts and stores
    assert_fresh_and_exact(lib)
    with lib.session() as s:  # an edge alone, left pending for the commit's own flush
        s.add(TagEdge(parent_id=key_of(s, "Legal"), child_id=money))
    with lib.session() as s:
        assert count_store.stored(s) is None
    overview.load_tags(lib)
    assert_fresh_and_exact(lib)
    lib.close()


def key_of(session, key: str) -> int:
    return next(i for i, t in tag_infos(session).items() if t.key == key)


def test_the_migration_fills_the_counts_of_an_existing_index(tmp_path: Path):
    share = _share(tmp_path / "share")
    data = tmp_path / "data"
    lib = Library.open(load_settings(data))
    Scanner(lib).scan([str(share)])
    with lib.session() as s:
        expected = reference_counts(s), reference_roots(s)
    lib.close()
    # The index as revision 0007 left it: no count tables.
    db = sqlite3.connect(data / "library.sqlite3")
    db.executescript("DROP TABLE tag_file_counts; DROP TABLE root_top_counts; DROP TABLE count_state;"
                     "UPDATE alembic_version SET version_num = '0007';")
    db.commit()
    db.close()
    lib = Library.open(load_settings(data))
    assert lib.upgrade is not None and lib.upgrade.from_revision == "0007"
    with lib.session() as s:
        got = count_store.stored(s)
    assert got is not None and got[0] == expected[0] and len(got[0]) > 10
    assert {f: +c for f, c in got[1].items()} == {f: +c for f, c in expected[1].items()}
    lib.close()


def test_the_same_on_postgres(pg_url, tmp_path: Path):
    share = _share(tmp_path / "share")
    lib = Library(make_engine(pg_url), None)
    try:
        Scanner(lib, batch_size=7).scan([str(share)])
        assert_fresh_and_exact(lib)
        _write(share, "Projects/Alpha/plan.txt", 2018)
        (share / "HR" / "f03.txt").unlink()
        Scanner(lib).scan([str(share)])
        assert_fresh_and_exact(lib)
        with lib.session() as s:
            ids = sorted(s.scalars(select(File.id)))
        tag_edits.apply_tag(lib, tuple(ids[:9]), None, "Reviewed")
        assert_fresh_and_exact(lib)
    finally:
        lib.close()

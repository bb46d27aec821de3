"""The tag tree's tags read by id from SQL (tag_view.SqlTagInfos) against the snapshot that
built every TagInfo at once (tags.tag_infos), on a small index with folders, dates and a
taxonomy with a diamond: same tags, parents, children and counts, same roots, same filter hits."""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

from sqlalchemy import select

from spar_desktop.core.config import Settings
from spar_desktop.core.library import overview
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.models import File, TagSource
from spar_desktop.core.library.scanner import Scanner
from spar_desktop.core.library.tag_view import HeldTagInfos, SqlTagInfos
from spar_desktop.core.library.tags import add_edge, create_tag, tag_files, tag_infos


def small_library(tmp_path: Path) -> Library:
    share = tmp_path / "share"
    for i in range(15):
        folder = share / ["Finance/2023/Q1", "Finance/Reports", "HR/People", "HR", ""][i % 5]
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{i:02d}.txt").write_text(f"file {i}")
        when = datetime(2020 + i % 3, 1 + i % 12, 2).timestamp()
        os.utime(folder / f"f{i:02d}.txt", (when, when))
    lib = Library.open(Settings(data_dir=tmp_path / "data"))
    Scanner(lib).scan([str(share)])
    with lib.session() as s:
        ids = sorted(s.scalars(select(File.id)))
        money, budget, audit = (create_tag(s, f"tax:{n}", n, TagSource.TAXONOMY, description=f"{n} terms").id
                                for n in ("Money", "Budget", "Audit"))
        add_edge(s, money, budget)
        add_edge(s, money, audit)
        add_edge(s, budget, audit)  # a diamond: Audit under Money twice
        tag_files(s, ids[:4], audit, TagSource.TAXONOMY)
        tag_files(s, ids[3:7], budget, TagSource.TAXONOMY)
    return lib


def test_tags_read_by_id_equal_the_whole_snapshot(tmp_path: Path):
    lib = small_library(tmp_path)
    try:
        with lib.session() as s:
            reference = tag_infos(s)
        snapshot = overview.load_tags(lib)
        lazy = snapshot.infos
        assert isinstance(lazy, SqlTagInfos) and lazy.loaded() == frozenset()  # nothing read up front
        assert set(lazy) == set(reference) and len(lazy) == len(reference)
        assert sorted(lazy.root_ids()) == sorted(i for i, t in reference.items() if not t.parent_ids)
        for tag_id, info in reference.items():
            assert lazy[tag_id] == info  # label, source, description, parents, children, count
        assert lazy.max_count() == max(t.file_count for t in reference.values())
        held = HeldTagInfos(reference)
        for text in ("fin", "REPORTS", "audit", "terms", "2021", "no-such-tag"):
            assert lazy.search(text) == held.search(text), text
        assert lazy.by_sources([TagSource.TAXONOMY]) == held.by_sources([TagSource.TAXONOMY])
        assert set(lazy.by_sources([TagSource.TAXONOMY])) == {"Money", "Budget", "Audit"}
    finally:
        lib.close()


def test_reading_a_tag_reads_only_that_tag(tmp_path: Path):
    lib = small_library(tmp_path)
    try:
        lazy = overview.load_tags(lib).infos
        roots = lazy.root_ids()
        lazy.load(roots)  # as the tree does at start-up
        finance = next(i for i in roots if lazy[i].key == "Finance")
        assert lazy.loaded() == set(roots)  # the roots only (Finance, HR, the years, Money)
        kids = lazy[finance].child_ids
        lazy.load(kids)
        assert lazy.loaded() == {*roots, *kids} and {lazy[k].value for k in kids} == {"2023", "Reports"}
    finally:
        lib.close()

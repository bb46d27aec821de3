"""The tag tree's counts (tag_counts.py: sums of GROUP BY counts where no file can be counted
twice, sets elsewhere) against the plain definition: distinct files linked to a tag or to any
descendant, confirmed links only."""

from __future__ import annotations

import os
from collections import defaultdict
from datetime import datetime
from pathlib import Path

from sqlalchemy import select

from spar_desktop.core.config import Settings
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.models import File, FileTag, TagEdge, TagSource
from spar_desktop.core.library.scanner import Scanner
from spar_desktop.core.library.tags import add_edge, create_tag, tag_files, tag_infos


def reference_counts(session) -> dict[int, int]:
    children: dict[int, list[int]] = defaultdict(list)
    for p, c in session.execute(select(TagEdge.parent_id, TagEdge.child_id)):
        children[p].append(c)
    direct: dict[int, set[int]] = defaultdict(set)
    for t, f in session.execute(select(FileTag.tag_id, FileTag.file_id).where(FileTag.confirmed.is_(True))):
        direct[t].add(f)

    def under(t: int) -> set[int]:
        out = set(direct.get(t, ()))
        for c in children.get(t, ()):
            out |= under(c)
        return out

    return {t: len(under(t)) for t in tag_infos(session)}


def test_counts_equal_the_distinct_files_under_each_tag(tmp_path: Path):
    share = tmp_path / "share"
    for i in range(24):
        folder = share / ["Finance/2023/Q1", "Finance/2023", "HR/People", "HR", ""][i % 5]
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{i:02d}.txt").write_text(f"file {i}")
        when = datetime(2020 + i % 3, 1 + i % 12, 2).timestamp()  # dates over three years and months
        os.utime(folder / f"f{i:02d}.txt", (when, when))
    lib = Library.open(Settings(data_dir=tmp_path / "data"))
    Scanner(lib).scan([str(share)])
    with lib.session() as s:
        ids = sorted(s.scalars(select(File.id)))
        infos = tag_infos(s)
        key = {t.key: i for i, t in infos.items()}
        # A taxonomy with a diamond (Audit under both Finance terms), files tagged at two levels.
        money, budget, audit = (create_tag(s, f"tax:{n}", n, TagSource.TAXONOMY).id for n in ("Money", "Budget", "Audit"))
        add_edge(s, money, budget)
        add_edge(s, money, audit)
        add_edge(s, budget, audit)
        tag_files(s, ids[:6], audit, TagSource.TAXONOMY)
        tag_files(s, ids[3:9], budget, TagSource.TAXONOMY)
        tag_files(s, ids[8:10], money, TagSource.TAXONOMY)
        # A user's group over a folder tag, a date tag and a user tag: kinds mixed under one tag.
        group = create_tag(s, "user:Mixed", "Mixed", TagSource.USER).id
        for child in (key["HR"], key["date:2021"], audit):
            add_edge(s, group, child)
        tag_files(s, ids[:2], key["Finance/2023"], TagSource.USER)  # a folder tag given by hand
        tag_files(s, ids[10:14], budget, TagSource.AUTO, confirmed=False)  # unconfirmed: not counted
    with lib.session() as s:
        got = {i: t.file_count for i, t in tag_infos(s).items()}
        assert got == reference_counts(s)
        assert got[key["Finance"]] > got[key["Finance/2023/Q1"]] > 0 and got[group] > got[key["HR"]] > 0
    lib.close()

"""A keyword that matches a folder and folders inside it keeps only the outermost (selection's
prune_to_ancestors): tags.under_another names the matched tags with a matched ancestor, checked
against every tag's ancestors read one by one, on a DAG with shared parents and a deep chain."""

from __future__ import annotations

from pathlib import Path

from spar_desktop.core.config import Settings
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.models import TagSource
from spar_desktop.core.library.tags import add_edge, ancestor_ids, create_tag, under_another


def test_matched_tags_under_another_matched_tag_are_the_ones_with_a_matched_ancestor(tmp_path: Path):
    lib = Library.open(Settings(data_dir=tmp_path / "data"))
    with lib.session() as s:
        t = {k: create_tag(s, k, k, TagSource.USER).id for k in
             ("root", "reports", "reports-2019", "archive", "old-reports", "shared", "lone")}
        for parent, child in [("root", "reports"), ("reports", "reports-2019"), ("root", "archive"),
                              ("archive", "old-reports"), ("reports", "shared"), ("archive", "shared")]:
            add_edge(s, t[parent], t[child])
        chain = [create_tag(s, f"deep/{i}", f"level {i}", TagSource.USER).id for i in range(1500)]
        add_edge(s, t["reports"], chain[0])
        for a, b in zip(chain, chain[1:]):
            add_edge(s, a, b)
        matched = {t["reports"], t["reports-2019"], t["old-reports"], t["shared"], t["lone"], chain[-1]}
        expected = {m for m in matched if (ancestor_ids(s, [m]) - {m}) & matched}
        assert under_another(s, matched) == expected == {t["reports-2019"], t["shared"], chain[-1]}
        assert under_another(s, {t["old-reports"], t["lone"]}) == set()
        assert under_another(s, set()) == set()


def test_ids_written_into_the_sql_select_exactly_those_rows_past_the_variable_limit(tmp_path: Path):
    """``ids_in`` writes tens of thousands of ids into one statement (a keyword's every same-named
    folder at 1M files); none is an empty ``IN ()``."""
    from sqlalchemy import select

    from spar_desktop.core.library.models import Tag
    from spar_desktop.core.library.raw_rows import ids_in

    lib = Library.open(Settings(data_dir=tmp_path / "data"))
    with lib.session() as s:
        made = [create_tag(s, f"t{i}", f"t{i}", TagSource.USER).id for i in range(5)]
        wanted = [made[1], made[3], *range(10_000_000, 10_040_000)]  # 40,002 ids, two of them tags
        assert sorted(s.scalars(select(Tag.id).where(ids_in(Tag.id, wanted)))) == [made[1], made[3]]
        assert list(s.scalars(select(Tag.id).where(ids_in(Tag.id, [])))) == []
        assert sorted(s.scalars(select(Tag.id).where(~ids_in(Tag.id, made[:4])))) == [made[4]]

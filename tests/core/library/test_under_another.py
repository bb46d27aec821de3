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

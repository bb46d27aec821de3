"""The tag filter's search (core/library/tag_search.py) on a real library: Unicode case-insensitive
matches on labels, keys and descriptions, their ancestors, and everything the tree needs to open
the way to them read in the same call (nothing left for the UI thread to read)."""

from __future__ import annotations

import unicodedata
from pathlib import Path

from sqlalchemy import select

from spar_desktop.core.config import Settings
from spar_desktop.core.library import overview
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.models import File, TagSource
from spar_desktop.core.library.scanner import Scanner
from spar_desktop.core.library.tag_search import LabelIndex
from spar_desktop.core.library.tag_view import HeldTagInfos
from spar_desktop.core.library.tags import add_edge, create_tag, tag_files, tag_infos

CAFE_NFD = unicodedata.normalize("NFD", "Café")  # as a Mac writes folder names


def unicode_library(tmp_path: Path) -> Library:
    share = tmp_path / "share"
    for folder in ("Über-Projekt/Entwurf", "Über-Projekt/Plan", "ÅRSRAPPORT", f"{CAFE_NFD}/Menu", "Straße"):
        (share / folder).mkdir(parents=True, exist_ok=True)
        (share / folder / "a.txt").write_text(folder)
    lib = Library.open(Settings(data_dir=tmp_path / "data"))
    Scanner(lib).scan([str(share)])
    with lib.session() as s:
        ids = sorted(s.scalars(select(File.id)))
        top = create_tag(s, "tax:Берлин", "Берлин", TagSource.TAXONOMY, description="ОТЧЁТ города").id
        leaf = create_tag(s, "tax:Bezirke", "Bezirke", TagSource.TAXONOMY).id
        add_edge(s, top, leaf)
        tag_files(s, ids[:2], leaf, TagSource.TAXONOMY)
    return lib


def labels(infos, ids) -> set[str]:
    return {infos[i].value for i in ids}


def test_search_folds_unicode_case_and_reads_the_way_to_the_matches(tmp_path: Path):
    lib = unicode_library(tmp_path)
    try:
        infos = overview.load_tags(lib).infos
        found = infos.matches("über")
        assert labels(infos, found.matching) == {"Über-Projekt", "Entwurf", "Plan"}  # the sub-folders by their keys
        assert labels(infos, infos.matches("årsrapport").matching) == {"ÅRSRAPPORT"}
        assert labels(infos, infos.matches("STRASSE").matching) == {"Straße"}
        assert labels(infos, infos.matches("café").matching) == {CAFE_NFD, "Menu"}  # typed NFC, stored NFD
        assert labels(infos, infos.matches("отчёт").matching) == {"Берлин"}  # in the description
        assert infos.matches("  ").matching == frozenset() and infos.matches("no-such-tag").visible == frozenset()

        # A child's match brings its ancestors; the ancestor the tree opens comes whole, with its
        # children's rows, so showing the matches reads no SQL.
        found = infos.matches("BEZIRKE")
        berlin = next(i for i in found.visible if i not in found.matching)
        assert labels(infos, found.matching) == {"Bezirke"} and labels(infos, found.visible) == {"Bezirke", "Берлин"}
        assert [t.id for t in found.opened] == [berlin] and found.opened[0] == infos[berlin]
        assert {r.id for r in found.rows} == set(found.visible)
        fresh = overview.load_tags(lib).infos
        fresh.remember(found)
        assert fresh.loaded() == set(found.visible)
        assert fresh.search("bezirke") == (set(found.matching), set(found.visible))

        # The same answers as the in-memory snapshot's search.
        with lib.session() as s:
            held = HeldTagInfos(tag_infos(s))
        for text in ("über", "ÅRSRAPPORT", "strasse", "café", "Отчёт", "a", "share"):
            assert infos.search(text) == held.search(text), text
    finally:
        lib.close()


def test_label_index_finds_each_tag_once_in_id_order_up_to_the_limit():
    index = LabelIndex([(3, "a/Über", "Über", None), (7, "b", "über über", "ÜBER"), (9, "c", "other", "x")])
    assert index.find("ÜBER") == [3, 7]
    assert index.find("über", limit=1) == [3]
    assert index.find("c") == [9] and index.find("") == []
    # Never across two fields or two tags: "x" ends tag 9's description, "ab" starts the next label.
    index = LabelIndex([(9, "k", "v", "x"), (10, "ab", "ab", None)])
    assert index.find("xab") == [] and index.find("vk") == [] and index.find("ab") == [10]

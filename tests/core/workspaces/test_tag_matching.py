"""Keywords → tags on a share whose folders have dotted names (newsgroups: 'comp.sys.ibm.pc.hardware'
is one folder, so one tag): words of a keyword found in a label in any order, and a label's own
meaning not drowned by its ancestors ('comp graphics (20_newsgroups)')."""

from __future__ import annotations

import os
from datetime import date, datetime

import pytest
from sqlalchemy import select

from spar_desktop.core.config import load_settings
from spar_desktop.core.embedding.encoder import get_encoder
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.models import Tag
from spar_desktop.core.library.scanner import Scanner
from spar_desktop.core.workspaces.request import parse_request
from spar_desktop.core.workspaces.selection import build_filter
from spar_desktop.core.workspaces.models import TagVocabularyEntry
from spar_desktop.core.workspaces.tag_index import ANY_ORDER_SCORE, TagIndex, normalize_words, tag_label

TODAY = date(2026, 11, 24)
GROUPS = ("comp.graphics", "comp.sys.ibm.pc.hardware", "comp.sys.mac.hardware", "comp.windows.x",
          "comp.os.ms-windows.misc", "sci.crypt", "sci.med", "rec.sport.hockey", "talk.politics.guns")


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    base = tmp_path_factory.mktemp("ng")
    share = base / "share"
    for n, group in enumerate(GROUPS):
        path = share / "20_newsgroups" / group / f"{1000 + n}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"Subject: a post in {group}\n\nSome text of post {n}.\n", encoding="utf-8")
        ts = datetime(1993, 4, 5 + n).timestamp()
        os.utime(path, (ts, ts))
    lib = Library.open(load_settings(base / "data"))
    Scanner(lib).scan([str(share)])
    index = TagIndex(lib, get_encoder("cpu"))
    index.sync()
    yield lib, index
    lib.close()


def values(matches) -> list[str]:
    return [m.value for m in matches]


def test_dots_separate_words_of_one_tag():
    assert normalize_words("comp.sys.ibm.pc.hardware") == ["comp", "sys", "ibm", "pc", "hardware"]
    assert normalize_words("comp.os.ms-windows.misc") == ["comp", "os", "ms", "window", "misc"]
    assert tag_label("comp.windows.x") == "comp windows x"
    assert tag_label("20_newsgroups") == "20 newsgroups"
    assert tag_label("v1.5 Dr. Smith") == "v1.5 Dr. Smith"  # only a dot between letters separates


def test_each_dotted_folder_is_one_tag(indexed):
    lib, _ = indexed
    with lib.session() as s:  # the vocabulary index holds one entry per folder
        labels = {value for (value,) in s.execute(select(Tag.value).join(TagVocabularyEntry, TagVocabularyEntry.tag_id == Tag.id))}
    assert set(GROUPS) <= labels
    assert not {"comp", "sys", "graphics", "crypt"} & labels


def test_every_word_of_a_keyword_in_a_label_in_any_order(indexed):
    _, index = indexed
    # 'comp hardware': both hardware groups, below an exact or contiguous match; the sibling
    # 'comp.graphics', close only in meaning, stays out.
    found = index.match("comp hardware")
    assert set(values(found)) == {"comp.sys.ibm.pc.hardware", "comp.sys.mac.hardware"}
    assert all(m.score >= ANY_ORDER_SCORE for m in found)
    assert values(index.match("X Windows")) == ["comp.windows.x"]  # not MS Windows: 'x' is not in it
    assert [(m.value, m.how) for m in index.match("comp windows x")] == [("comp.windows.x", "exact")]
    pc = index.match("pc hardware")
    assert values(pc) == ["comp.sys.ibm.pc.hardware"] and pc[0].score > ANY_ORDER_SCORE  # contiguous
    assert values(index.match("hockey")) == ["rec.sport.hockey"]


def test_a_label_is_matched_in_meaning_without_its_ancestors(indexed):
    _, index = indexed
    for keyword, tag in (("computer graphics", "comp.graphics"), ("cryptography", "sci.crypt"),
                         ("medicine", "sci.med")):
        found = index.match(keyword)
        assert found and found[0].value == tag and found[0].how == "semantic", (keyword, found)
    assert index.match("insurance premiums") == []  # the threshold still holds


def test_sync_counts_tags_not_vectors(indexed):
    _, index = indexed
    assert index.sync() == (0, 0)


def test_a_request_naming_groups_in_words(indexed):
    lib, index = indexed
    flt = build_filter(lib, parse_request("posts about window managers in X Windows from April 1993", TODAY), index)
    assert {g.label: [t.value for t in g.tags] for g in flt.groups} == {"X Windows": ["comp.windows.x"]}
    assert flt.unmatched == ("window managers",)  # 'posts' is no topic
    assert (flt.since, flt.until) == (date(1993, 4, 1), date(1993, 4, 30))
    flt = build_filter(lib, parse_request("posts about graphics cards in comp hardware in early April 1993", TODAY), index)
    groups = {g.label: {t.value for t in g.tags} for g in flt.groups}
    assert groups["comp hardware"] == {"comp.sys.ibm.pc.hardware", "comp.sys.mac.hardware"}
    assert (flt.since, flt.until) == (date(1993, 4, 1), date(1993, 4, 10))

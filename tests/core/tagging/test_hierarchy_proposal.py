"""Topic proposals: versioned JSON in the data dir, edits, and accepting into a real index."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import func, select

from spar_desktop.core.config import load_settings
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.models import File, FileTag, Tag, TagEdge
from spar_desktop.core.library.scanner import Scanner
from spar_desktop.core.library.tags import tag_infos
from spar_desktop.core.tagging.hierarchy import induce_hierarchy
from spar_desktop.core.tagging.proposal import (Proposal, ProposalError, TopicNode, accept_proposal,
                                                 discard_proposal, load_proposal, proposal_path, save_proposal)
from tests.core.tagging.test_hierarchy_corpus import hand_written_corpus, write_notes


def small() -> Proposal:
    return Proposal((
        TopicNode("1", "Space", ("space", "orbit"), ((9, 0.5),), (
            TopicNode("1.1", "Rockets", ("rocket",), ((1, 0.9), (2, 0.8))),
            TopicNode("1.2", "Planets", ("planet",), ((3, 0.7),)))),
        TopicNode("2", "Cooking", ("cooking",), (), (
            TopicNode("2.1", "Soups", ("soup",), ((4, 0.6),)),)),
    ), file_count=6, method="test")


def test_save_load_round_trip_is_versioned_and_atomic(tmp_path: Path):
    assert load_proposal(tmp_path) is None
    saved = small()  # one proposal: its created_at is the clock's second when it was made
    path = save_proposal(tmp_path, saved)
    assert path == proposal_path(tmp_path) and path.parent.name == "tagging"
    assert [p.name for p in path.parent.iterdir()] == ["topic_proposal.json"]  # no temp file left
    data = json.loads(path.read_text())
    assert (data["format"], data["version"]) == ("spar-topic-proposal", 1)
    assert load_proposal(tmp_path) == saved
    data["version"] = 2
    path.write_text(json.dumps(data))
    with pytest.raises(ProposalError, match="version 2"):
        load_proposal(tmp_path)
    path.write_text("{not json")
    with pytest.raises(ProposalError):
        load_proposal(tmp_path)
    assert discard_proposal(tmp_path) and not path.exists() and not discard_proposal(tmp_path)


def test_rename_remove_and_move_return_new_proposals():
    p = small()
    renamed = p.rename("1.1", "  Launch   vehicles ")
    assert renamed.find("1.1")[0].name == "Launch vehicles" and p.find("1.1")[0].name == "Rockets"
    assert p.rename("planets", "Worlds").find("1.2")[0].name == "Worlds"  # by name, case-insensitive
    with pytest.raises(ProposalError, match="already named"):
        p.rename("1.2", "rockets")
    for bad in ("", "   ", "evil\x1b[2J", "rtl\u202eflip"):
        with pytest.raises(ProposalError):
            p.rename("1", bad)
    with pytest.raises(ProposalError, match="no topic"):
        p.rename("7", "x")

    # Removing a sub-topic keeps its files in the topic; removing a topic drops it all.
    without = p.remove("1.1")
    space = without.find("1")[0]
    assert [c.id for c in space.children] == ["1.2"] and space.all_file_ids() == {1, 2, 3, 9}
    assert [t.id for t in p.remove("Cooking").nodes] == ["1"]

    moved = p.move("1.2", "2")
    assert [c.name for c in moved.find("2")[0].children] == ["Soups", "Planets"]
    assert moved.find("Planets")[0].id == "2.2" and moved.find("1")[0].file_count == 3
    with pytest.raises(ProposalError):
        p.move("1", "2")  # a top topic does not move


@pytest.fixture
def indexed(tmp_path: Path):
    """(library, {corpus id: file id}, texts by file id, paths by file id): the hand-written
    corpus as files in a real, scanned index."""
    texts, _ = hand_written_corpus()
    paths = write_notes(tmp_path / "share", texts)
    lib = Library.open(load_settings(tmp_path / "data"))
    Scanner(lib).scan([str(tmp_path / "share")])
    with lib.session() as s:
        ids = dict(s.execute(select(File.path, File.id)).all())
    by_file = {ids[str(paths[i])]: texts[i] for i in texts}
    yield lib, by_file, {ids[str(paths[i])]: paths[i] for i in texts}
    lib.close()


def counts(lib: Library) -> tuple[int, int, int]:
    with lib.session() as s:
        return tuple(s.scalar(select(func.count()).select_from(m)) for m in (Tag, TagEdge, FileTag))


def test_accepting_creates_topic_tags_edges_and_confirmed_assignments_once(indexed):
    lib, texts, paths = indexed
    proposal = induce_hierarchy(texts)
    before = counts(lib)
    with lib.session() as s:
        report = accept_proposal(s, proposal)
    nodes = proposal.walk()
    assert report.tags_created == len(nodes) and report.files_skipped == 0
    assert report.edges_created == sum(len(t.children) for t in proposal.nodes)
    assert report.assigned == len(texts)
    with lib.session() as s:
        infos = {t.key: t for t in tag_infos(s).values()}
        rows = s.execute(select(FileTag.source, FileTag.confirmed, FileTag.score)
                         .join(Tag, Tag.id == FileTag.tag_id).where(Tag.key.like("topic:%"))).all()
    assert {(src, ok) for src, ok, _ in rows} == {("auto", True)} and all(0 <= sc <= 1 for *_, sc in rows)
    for top in proposal.nodes:
        tag = infos[f"topic:{top.name}"]
        assert tag.value == top.name and tag.source == "auto" and tag.file_count == top.file_count
        for child in top.children:
            sub = infos[f"topic:{top.name}/{child.name}"]
            assert sub.parent_ids == (tag.id,) and sub.file_count == child.file_count

    after = counts(lib)
    with lib.session() as s:
        again = accept_proposal(s, proposal)
    assert (again.tags_created, again.edges_created, again.assigned) == (0, 0, 0)
    assert again.tags_existing == len(nodes) and counts(lib) == after != before


def test_accepting_after_files_vanished_skips_them(indexed):
    lib, texts, paths = indexed
    proposal = induce_hierarchy(texts)
    gone = sorted(texts)[:3]
    for fid in gone:
        paths[fid].unlink()
    Scanner(lib).scan([str(paths[gone[0]].parent)])
    with lib.session() as s:
        report = accept_proposal(s, proposal)
        tagged = set(s.scalars(select(FileTag.file_id).join(Tag, Tag.id == FileTag.tag_id)
                               .where(Tag.key.like("topic:%"))))
    assert report.files_skipped == 3 and report.assigned == len(texts) - 3
    assert not tagged & set(gone)


def test_an_edited_proposal_is_what_gets_accepted(indexed):
    lib, texts, _ = indexed
    proposal = induce_hierarchy(texts)
    top = proposal.nodes[0]
    edited = proposal.rename(top.id, "My topic").remove(proposal.nodes[-1].id)
    with lib.session() as s:
        accept_proposal(s, edited)
        keys = set(s.scalars(select(Tag.key).where(Tag.key.like("topic:%"))))
    assert "topic:My topic" in keys
    assert f"topic:{proposal.nodes[-1].name}" not in keys
    assert len([k for k in keys if "/" not in k]) == len(proposal.nodes) - 1

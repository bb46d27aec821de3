"""The review queue: accept confirms, reject removes and is remembered, bulk accept above a score."""

from __future__ import annotations

from sqlalchemy import select

from spar_desktop.core.library.models import FileTag
from spar_desktop.core.tagging import review
from spar_desktop.core.tagging.job import run_tagging
from spar_desktop.core.tagging.scoring import SuggestConfig
from tests.core.tagging.conftest import file_id

LOW = SuggestConfig(min_score=0.05)  # more suggestions to review on a ten-file share


def test_accept_makes_a_suggestion_a_confirmed_tag_that_later_runs_keep(env, encoder):
    lib, settings, share = env
    run_tagging(lib, settings, encoder)
    loose = file_id(lib, share / "oil-change.md")
    best = review.pending(lib, file_id=loose)[0]
    assert review.accept(lib, [(best.file_id, best.tag_id)]) == 1
    assert review.accept(lib, [(best.file_id, best.tag_id)]) == 0  # already confirmed
    with lib.session() as s:
        row = s.execute(select(FileTag.confirmed, FileTag.source).where(
            FileTag.file_id == loose, FileTag.tag_id == best.tag_id)).one()
    assert tuple(row) == (True, "auto")  # who suggested it stays visible
    assert best.tag_id not in {x.tag_id for x in review.pending(lib, file_id=loose)}
    run_tagging(lib, settings, encoder, redo=True)
    with lib.session() as s:
        assert s.scalar(select(FileTag.confirmed).where(FileTag.file_id == loose, FileTag.tag_id == best.tag_id))


def test_a_rejected_suggestion_is_never_made_again(env, encoder):
    lib, settings, share = env
    run_tagging(lib, settings, encoder)
    loose = file_id(lib, share / "spending.md")
    best = review.pending(lib, file_id=loose)[0]
    assert review.reject(lib, [(best.file_id, best.tag_id)]) == 1
    assert best.tag_id not in {x.tag_id for x in review.pending(lib, file_id=loose)}
    run_tagging(lib, settings, encoder, config=SuggestConfig(min_score=0.0, top_k=20), redo=True)
    assert best.tag_id not in {x.tag_id for x in review.pending(lib, file_id=loose)}


def test_counts_per_tag_and_bulk_accept_above_a_threshold(env, encoder):
    lib, settings, _ = env
    run_tagging(lib, settings, encoder, config=LOW)
    everything = review.pending(lib)
    counts = review.pending_counts(lib)
    assert sum(counts.values()) == len(everything)
    assert [x.score for x in everything] == sorted((x.score for x in everything), reverse=True)
    threshold = everything[len(everything) // 2].score
    above = [x for x in everything if x.score >= threshold]
    tag = above[0].tag_id
    assert review.accept_above(lib, threshold, tag_id=tag) == len([x for x in above if x.tag_id == tag])
    assert review.accept_above(lib, threshold) == len([x for x in above if x.tag_id != tag])
    assert all(x.score < threshold for x in review.pending(lib))
    assert review.pending(lib, min_score=threshold) == []
    assert review.pending(lib, limit=1) == review.pending(lib)[:1]


def test_the_tag_tree_counts_a_suggestion_only_once_it_is_accepted(env, encoder):
    from spar_desktop.core.library.tags import tag_infos

    lib, settings, share = env
    run_tagging(lib, settings, encoder)
    loose = file_id(lib, share / "oil-change.md")
    best = review.pending(lib, file_id=loose)[0]
    with lib.session() as s:
        before = tag_infos(s)[best.tag_id].file_count
    review.accept(lib, [(best.file_id, best.tag_id)])
    with lib.session() as s:
        assert tag_infos(s)[best.tag_id].file_count == before + 1

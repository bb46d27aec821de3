"""Ranked admission (issue 16): hard constraints stay hard, the other keyword groups and file
summaries score files, the best are admitted up to a budget, and the funnel says so exactly.
Unconfirmed tag suggestions count only when the user says so, and the explanation names the
files that came in through them."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from spar_desktop.core.config import load_settings
from spar_desktop.core.embedding.encoder import get_encoder
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.models import File, Tag, TagSource
from spar_desktop.core.library.queries import FileFilter, count_files
from spar_desktop.core.library.scanner import Scanner
from spar_desktop.core.library.tags import tag_files, untag_files
from spar_desktop.core.library.taxonomy import assign_from_csv, import_taxonomy
from spar_desktop.core.workspaces.engine import Engine
from spar_desktop.core.workspaces.manager import Workspaces
from spar_desktop.core.workspaces.request import parse_request
from spar_desktop.core.workspaces.selection import WorkspaceFilter, admitted_files, build_filter, explain

FILES = {  # file → (its tags, its text)
    "all-four.md": (["Gearbox", "Blade", "Tower", "Turbine T7"], "Turbine T7 inspection: gearbox, blades and tower."),
    "no-tower.md": (["Gearbox", "Blade", "Turbine T7"], "Gearbox and blade inspection of turbine T7."),
    "gearbox-only.md": (["Gearbox", "Turbine T7"], "Gearbox check of turbine T7."),
    "other-turbine.md": (["Gearbox", "Blade", "Tower", "Turbine T9"], "Turbine T9: gearbox, blade, tower."),
    "nacelle-t9.md": (["Nacelle", "Turbine T9"], "Nacelle cover inspection of turbine T9."),
    "oil-report.md": ([], "Oil analysis found metal particles from worn gearbox bearings in the planetary stage."),
    "lemon-cake.md": ([], "A recipe for lemon cake: sugar, butter, eggs and grated lemon zest, baked for forty minutes."),
}
REQUEST = "gearbox, blade and nacelle inspections for turbine T7"


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    base = tmp_path_factory.mktemp("ranked")
    share = base / "share"
    share.mkdir()
    for name, (_, text) in FILES.items():
        (share / name).write_text(text, encoding="utf-8")
    tax = base / "tax.json"
    tax.write_text(json.dumps([{"name": n} for n in ("Gearbox", "Blade", "Tower", "Nacelle", "Turbine T7",
                                                       "Turbine T9")]), encoding="utf-8")
    assign = base / "assign.csv"
    assign.write_text("".join(f"{n},{','.join(t)}\n" for n, (t, _) in FILES.items() if t), encoding="utf-8")
    settings = load_settings(base / "data")
    lib = Library.open(settings)
    Scanner(lib).scan([str(share)])
    with lib.session() as s:
        import_taxonomy(s, tax)
        assign_from_csv(s, assign, str(share))
    mgr = Workspaces(lib, Engine(settings, get_encoder("cpu")))
    yield lib, mgr
    lib.close()


def names(lib: Library, flt: WorkspaceFilter) -> list[str]:
    return sorted(Path(p).name for _, p, _ in admitted_files(lib, flt))


def tag_id(lib: Library, value: str) -> int:
    with lib.session() as s:
        return s.query(Tag.id).filter(Tag.value == value).first()[0]


def test_required_identifiers_stay_hard_and_the_rest_is_ranked_up_to_the_budget(indexed):
    lib, mgr = indexed
    flt = build_filter(lib, parse_request(REQUEST), mgr.tag_index)
    assert flt.ranked and flt.budget == 25  # a small index: at least 25
    # Turbine T7 names one thing: required. No T7 file has a nacelle tag, yet nothing is dropped:
    # the T7 files are ranked by how many of the keywords' tags they have.
    assert names(lib, flt) == ["all-four.md", "gearbox-only.md", "no-tower.md"]
    exp = explain(lib, flt)
    assert [s.label for s in exp.funnel][:2] == ["all indexed files", "tag group 'turbine T7' (required)"]
    assert [s.admitted for s in exp.funnel] == [7, 3, 3]
    assert exp.funnel[-1].label.startswith("ranked: top 3 of 3 candidates (score ≥ ")
    assert flt.dropped == () and flt.tolerance == 0 and not flt.notes  # no relaxation in ranked mode
    # The user moves the budget: the best first, ties by path, and the funnel follows exactly.
    two = flt.with_budget(2)
    assert names(lib, two) == ["all-four.md", "no-tower.md"]
    exp2 = explain(lib, two)
    assert exp2.admitted == 2 and exp2.funnel[-1].label.startswith("ranked: top 2 of 3 candidates")
    assert [Path(f.path).name for f in exp2.ranking.admitted] == ["all-four.md", "no-tower.md"]
    assert "2 files, 29% of the index" in exp2.lines()


def test_a_file_without_evidence_is_never_admitted_to_fill_the_budget(indexed):
    lib, mgr = indexed
    flt = build_filter(lib, parse_request("nacelle inspections"), mgr.tag_index)
    assert flt.budget == 25
    assert names(lib, flt) == ["nacelle-t9.md"]  # not the other six files of the index
    exp = explain(lib, flt)
    assert exp.admitted == 1 and exp.ranking.candidates == 1


def test_unconfirmed_suggestions_count_only_when_the_user_says_so(indexed):
    lib, mgr = indexed
    nacelle = tag_id(lib, "Nacelle")
    with lib.session() as s:
        cake = s.query(File.id).filter(File.name == "lemon-cake.md").scalar()
        tag_files(s, [cake], nacelle, TagSource.AUTO, score=0.6, confirmed=False)  # a wrong suggestion
        assert count_files(s, FileFilter(tag_groups=(frozenset({nacelle}),))) == 1
        assert count_files(s, FileFilter(tag_groups=(frozenset({nacelle}),), include_unconfirmed=True)) == 2
    try:
        for ranked in (True, False):
            flt = build_filter(lib, parse_request("nacelle inspections"), mgr.tag_index, ranked=ranked)
            assert names(lib, flt) == ["nacelle-t9.md"]
            assert explain(lib, flt).suggested_only == ()
            counted = replace(flt, include_unconfirmed=True)
            assert names(lib, counted) == ["lemon-cake.md", "nacelle-t9.md"]
            exp = explain(lib, counted)
            assert exp.admitted == 2 and [Path(p).name for p in exp.suggested_only] == ["lemon-cake.md"]
            text = "\n".join(exp.lines())
            assert "1 admitted only through unconfirmed tag suggestions" in text and "lemon-cake.md" in text
            assert [Path(p).name for p in exp.to_json()["suggested_only"]] == ["lemon-cake.md"]
            # The user's choice is saved with the filter.
            assert WorkspaceFilter.from_json(json.loads(json.dumps(counted.to_json()))).include_unconfirmed
    finally:
        with lib.session() as s:
            untag_files(s, [cake], nacelle)


def test_filters_saved_before_ranking_keep_their_all_or_nothing_meaning(indexed):
    lib, mgr = indexed
    ranked = build_filter(lib, parse_request(REQUEST), mgr.tag_index)
    again = WorkspaceFilter.from_json(json.loads(json.dumps(ranked.to_json())))
    assert again.ranked and again.budget == ranked.budget and names(lib, again) == names(lib, ranked)
    legacy = build_filter(lib, parse_request(REQUEST), mgr.tag_index, ranked=False)
    old_json = {k: v for k, v in legacy.to_json().items()
                if k not in ("ranked", "budget", "include_unconfirmed", "request_vector", "vector_model")}
    old = WorkspaceFilter.from_json(old_json)
    assert not old.ranked and old.tolerance == 1  # as relaxation left it
    assert names(lib, old) == ["all-four.md", "no-tower.md"]  # lacking at most one group: all-or-nothing
    assert all(not s.label.startswith("ranked") for s in explain(lib, old).funnel)


def test_summaries_rank_untagged_files_that_are_like_the_request(indexed):
    lib, mgr = indexed
    from spar_desktop.core.tagging.summaries import summarize_files

    summarize_files(lib, lib.settings, mgr.engine.encoder)
    flt = mgr.filter_for("worn gearbox bearings")
    assert flt.ranked and flt.request_vector and flt.vector_model == mgr.engine.encoder.model_id
    admitted = names(lib, flt)
    assert "oil-report.md" in admitted  # no tag at all: its summary is like the request
    assert "lemon-cake.md" not in admitted  # unlike anything asked: never admitted to fill the budget
    exp = explain(lib, flt)
    assert exp.admitted == len(admitted) and exp.ranking.with_summaries == len(FILES)
    by_name = {Path(f.path).name: f for f in exp.ranking.admitted}
    assert by_name["oil-report.md"].tags == 0 and by_name["oil-report.md"].similarity > 0.25
    # Stored in the filter: a later explain (another process, no encoder) ranks the same way.
    saved = WorkspaceFilter.from_json(json.loads(json.dumps(flt.to_json())))
    assert names(lib, saved) == admitted
    # Even words no tag matches rank by likeness, within the budget, instead of being refused.
    only_words = mgr.filter_for("metal particles in lubricating oil")
    assert only_words.groups == () and only_words.scoped
    assert "oil-report.md" in names(lib, only_words) and "lemon-cake.md" not in names(lib, only_words)


def test_the_default_budget_is_a_tenth_of_the_index_between_25_and_5000_files():
    """A workspace is built for one task: a million-file share's request admits at most 5,000
    files unless the user asks for more (--budget, Show more), a small index at least 25."""
    from spar_desktop.core.workspaces.ranking import default_budget

    assert [default_budget(n) for n in (0, 100, 20_000, 49_999, 50_000, 100_000, 1_000_000)] == \
        [25, 25, 2_000, 5_000, 5_000, 5_000, 5_000]

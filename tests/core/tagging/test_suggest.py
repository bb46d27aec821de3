"""Suggestions on a small real share: from neighbours (folder tags vote), from tag text (a taxonomy
nobody has assigned yet), never touching what is confirmed, never a date, never a second folder."""

from __future__ import annotations

import json

from sqlalchemy import select

from spar_desktop.core.library.models import FileTag, Tag, TagSource
from spar_desktop.core.library.taxonomy import import_taxonomy
from spar_desktop.core.tagging import review
from spar_desktop.core.tagging.job import run_tagging
from spar_desktop.core.tagging.scoring import SuggestConfig
from tests.core.tagging.conftest import NOTES, RIGHT_FOLDER, file_id


def confirmed_rows(lib) -> list[tuple]:
    with lib.session() as s:
        return sorted(tuple(r) for r in s.execute(select(FileTag.file_id, FileTag.tag_id, FileTag.source, FileTag.score)
                                                  .where(FileTag.confirmed.is_(True))))


def test_loose_files_get_the_folder_their_neighbours_are_in(env, encoder):
    lib, settings, share = env
    before = confirmed_rows(lib)
    report = run_tagging(lib, settings, encoder)
    assert report.summaries.summarized == len(NOTES)
    for name, folder in RIGHT_FOLDER.items():
        got = review.pending(lib, file_id=file_id(lib, share / name))
        assert got and got[0].tag_value == folder and got[0].source == "auto", (name, got)
        assert 0 < got[0].score <= 1
    # Files that live in a folder are not offered another one; nothing confirmed changed.
    for rel in NOTES:
        if "/" in rel:
            assert all(x.tag_key.startswith("date:") is False for x in review.pending(lib, file_id=file_id(lib, share / rel)))
            assert not [x for x in review.pending(lib, file_id=file_id(lib, share / rel))
                        if x.tag_key in ("Turbines", "Finance")]
    assert confirmed_rows(lib) == before
    with lib.session() as s:
        sources = set(s.scalars(select(Tag.source).join(FileTag, FileTag.tag_id == Tag.id)
                                .where(FileTag.confirmed.is_(False))))
    assert TagSource.DATE not in sources


def test_a_taxonomy_nobody_assigned_is_suggested_from_its_tag_text(env, encoder, tmp_path):
    lib, settings, share = env
    taxonomy = tmp_path / "taxonomy.json"
    taxonomy.write_text(json.dumps([
        {"name": "Engineering", "children": [
            {"name": "Drivetrain", "description": "gearbox, bearings, lubrication oil and shafts"},
            {"name": "Rotor blades", "description": "blade erosion, cracks and repairs"}]},
        {"name": "Accounting", "children": [
            {"name": "Payroll", "description": "salaries, wages and tax deductions of employees"},
            {"name": "Budgeting", "description": "budgets, spending plans and cost control"}]},
    ]), encoding="utf-8")
    with lib.session() as s:
        import_taxonomy(s, taxonomy)
    run_tagging(lib, settings, encoder)
    expect = {"Turbines/gearbox.md": "Drivetrain", "Turbines/blade.md": "Rotor blades",
              "Finance/payroll.md": "Payroll", "Finance/budget.md": "Budgeting"}
    for rel, tag in expect.items():
        got = [x.tag_value for x in review.pending(lib, file_id=file_id(lib, share / rel))]
        assert got and got[0] == tag, (rel, got)
        # A tag and its own parent are not both offered: the parent is implied.
        assert not ({"Engineering", "Accounting"} & set(got)), got


def test_suggestions_are_stored_up_to_top_k_above_the_threshold(env, encoder):
    lib, settings, _ = env
    run_tagging(lib, settings, encoder, config=SuggestConfig(top_k=1, min_score=0.0))
    per_file: dict[int, int] = {}
    for x in review.pending(lib):
        per_file[x.file_id] = per_file.get(x.file_id, 0) + 1
    assert per_file and max(per_file.values()) == 1
    run_tagging(lib, settings, encoder, config=SuggestConfig(min_score=0.99))  # new settings redo every file
    assert review.pending(lib) == []


def test_a_second_run_only_does_new_work(env, encoder):
    lib, settings, _ = env
    first = run_tagging(lib, settings, encoder)
    assert first.suggestions.files == len(NOTES)
    again = run_tagging(lib, settings, encoder)
    assert (again.summaries.summarized, again.suggestions.files) == (0, 0)
    assert again.suggestions.up_to_date == len(NOTES)

"""When no file has every concept a request names, files lacking one are admitted; never a file
about another identified thing (another turbine, another patient)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from spar_desktop.core.config import load_settings
from spar_desktop.core.embedding.encoder import get_encoder
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.scanner import Scanner
from spar_desktop.core.library.taxonomy import assign_from_csv, import_taxonomy
from spar_desktop.core.workspaces.request import parse_request
from spar_desktop.core.workspaces.selection import WorkspaceFilter, admitted_files, build_filter, explain
from spar_desktop.core.workspaces.tag_index import TagIndex

FILES = {  # file → its tags
    "all-four.md": ["Gearbox", "Blade", "Tower", "Turbine T7"],
    "no-tower.md": ["Gearbox", "Blade", "Turbine T7"],
    "gearbox-only.md": ["Gearbox", "Turbine T7"],
    "other-turbine.md": ["Gearbox", "Blade", "Tower", "Turbine T9"],
    "no-turbine.md": ["Gearbox", "Blade", "Tower"],
    "nacelle-t9.md": ["Nacelle", "Gearbox", "Turbine T9"],
}


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    base = tmp_path_factory.mktemp("tol")
    share = base / "share"
    share.mkdir()
    for name in FILES:
        (share / name).write_text(f"inspection notes {name}", encoding="utf-8")
    tax = base / "tax.json"
    tax.write_text(json.dumps([{"name": n} for n in ("Gearbox", "Blade", "Tower", "Nacelle", "Turbine T7", "Turbine T9", "Blade Inspection")]),
                   encoding="utf-8")
    assign = base / "assign.csv"
    assign.write_text("".join(f"{name},{','.join(tags)}\n" for name, tags in FILES.items()), encoding="utf-8")
    lib = Library.open(load_settings(base / "data"))
    Scanner(lib).scan([str(share)])
    with lib.session() as s:
        import_taxonomy(s, tax)
        assign_from_csv(s, assign, str(share))
    index = TagIndex(lib, get_encoder("cpu"))
    index.sync()
    yield lib, index
    lib.close()


def names(lib: Library, flt: WorkspaceFilter) -> set[str]:
    return {Path(p).name for _, p, _ in admitted_files(lib, flt)}


def test_every_group_is_required_while_some_file_has_them_all(indexed):
    lib, index = indexed
    flt = build_filter(lib, parse_request("gearbox, blade and tower inspections for turbine T7"), index, ranked=False)
    assert flt.tolerance == 0
    tower = next(g for g in flt.groups if g.label == "tower inspections")
    assert [(t.value, t.how) for t in tower.tags][0] == ("Tower", "lexical")
    assert [(g.label, [t.value for t in g.tags]) for g in flt.groups if g.required] == [("turbine T7", ["Turbine T7"])]
    assert names(lib, flt) == {"all-four.md"}


def test_no_file_has_every_concept_so_files_lacking_one_are_admitted_but_not_another_turbine(indexed):
    lib, index = indexed
    flt = build_filter(lib, parse_request("gearbox, blade and nacelle inspections for turbine T7"), index, ranked=False)
    assert flt.tolerance == 1
    assert names(lib, flt) == {"all-four.md", "no-tower.md"}  # gearbox+blade; nacelle-t9 is turbine T9
    exp = explain(lib, flt)
    assert exp.admitted == 2 and exp.emptied_by is None
    assert any("lacking at most 1" in s.label for s in exp.funnel)
    lines = exp.lines()
    assert any("may lack 1 of the 3 groups" in line for line in lines)
    assert any("match every group" in line for line in lines)


def test_match_every_group_when_the_user_asks_and_tolerance_survives_saving(indexed):
    lib, index = indexed
    flt = build_filter(lib, parse_request("gearbox, blade and nacelle inspections for turbine T7"), index, ranked=False)
    strict = WorkspaceFilter.from_json(json.loads(json.dumps({**flt.to_json(), "tolerance": 0})))
    assert names(lib, strict) == set()
    assert explain(lib, strict).emptied_by is not None
    again = WorkspaceFilter.from_json(json.loads(json.dumps(flt.to_json())))
    assert again.tolerance == 1 and [g.required for g in again.groups] == [g.required for g in flt.groups]
    assert names(lib, again) == names(lib, flt)


def test_tolerance_never_lets_every_optional_group_go(indexed):
    lib, index = indexed
    flt = build_filter(lib, parse_request("gearbox, blade and nacelle inspections for turbine T7"), index, ranked=False)
    only_one_optional = flt.without_group("blade").without_group("gearbox")
    assert only_one_optional.tolerance == 1 and only_one_optional.effective_tolerance == 0
    assert names(lib, only_one_optional) == set()  # no T7 file has a nacelle tag


def test_a_tag_named_exactly_leaves_out_tags_that_are_only_part_of_the_keyword(indexed):
    _, index = indexed
    assert [(m.value, m.how) for m in index.match("blade inspection") if m.how != "semantic"] == \
        [("Blade Inspection", "exact")]
    # No exact name: both labels inside the keyword match, the one covering more of it better.
    loose = {m.value: m for m in index.match("blade inspection notes")}
    assert loose["Blade"].how == "lexical"
    assert loose["Blade Inspection"].score > loose["Blade"].score

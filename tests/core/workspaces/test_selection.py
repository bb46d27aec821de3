"""Request → tags (exact, lexical, semantic via the tag index) → explained funnel of files."""

from __future__ import annotations

import json
from dataclasses import replace
import os
from datetime import date, datetime
from pathlib import Path

import pytest

from spar_desktop.core.config import load_settings
from spar_desktop.core.embedding.encoder import get_encoder
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.scanner import Scanner
from spar_desktop.core.library.taxonomy import assign_from_csv, import_taxonomy
from spar_desktop.core.workspaces.request import parse_request
from spar_desktop.core.workspaces.selection import WorkspaceFilter, admitted_files, build_filter, explain, relax_groups
from spar_desktop.core.workspaces.tag_index import TagIndex

TODAY = date(2026, 11, 22)


def write(path: Path, text: str, when: datetime) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    os.utime(path, (when.timestamp(), when.timestamp()))


@pytest.fixture(scope="module")
def indexed(tmp_path_factory):
    base = tmp_path_factory.mktemp("sel")
    share = base / "share"
    write(share / "Operations" / "Incident-Reports" / "2023" / "gearbox-site-b.md", "Gearbox failure at Site B", datetime(2023, 3, 14))
    write(share / "Operations" / "Incident-Reports" / "2022" / "blade-crack.md", "Blade crack", datetime(2022, 7, 2))
    write(share / "Engineering" / "Project-Falcon" / "2023" / "design.md", "Falcon design", datetime(2023, 5, 5))
    write(share / "Engineering" / "Project-Falcon" / "2024" / "budget.csv", "item,cost\nx,1", datetime(2024, 1, 9))
    write(share / "HR" / "Policies" / "working-at-height.md", "Working at height policy", datetime(2022, 1, 1))
    tax = base / "tax.json"
    tax.write_text(json.dumps([
        {"name": "Safety", "description": "health and safety at work", "children": [
            {"name": "Working at Height", "description": "ladders, harnesses, climbing turbine towers"}]},
        {"name": "Assets", "children": [{"name": "Turbines", "children": [{"name": "Gearbox"}]}]},
        {"name": "Maintenance", "children": [{"name": "Gearbox"}]},
    ]), encoding="utf-8")
    assign = base / "assign.csv"
    assign.write_text("path,tag\nHR/Policies/working-at-height.md,Working at Height\n"
                      "Operations/Incident-Reports/2023/gearbox-site-b.md,Gearbox\n", encoding="utf-8")
    lib = Library.open(load_settings(base / "data"))
    Scanner(lib).scan([str(share)])
    with lib.session() as s:
        import_taxonomy(s, tax)
        assign_from_csv(s, assign)
    index = TagIndex(lib, get_encoder("cpu"))
    index.sync()
    yield lib, index
    lib.close()


def names(lib, flt) -> set[str]:
    return {Path(p).name for _, p, _ in admitted_files(lib, flt)}


def test_request_selects_files_and_explains_each_step(indexed):
    lib, index = indexed
    flt = build_filter(lib, parse_request("all incident reports from 2023", TODAY), index)
    [group] = flt.groups
    assert group.label == "incident reports"
    assert any(t.key == "Operations/Incident-Reports" for t in group.tags)
    exp = explain(lib, flt)
    assert [s.admitted for s in exp.funnel] == [5, 2, 1]
    assert names(lib, flt) == {"gearbox-site-b.md"}
    assert any("Incident-Reports" in line for line in exp.lines())


def test_semantic_match_and_hierarchy_pruning(indexed):
    lib, index = indexed
    # 'climbing ladders safely' shares no word with 'Working at Height': only meaning links them.
    m = index.match("climbing ladders safely", threshold=0.3)
    assert m and m[0].value in ("Working at Height", "Safety") and m[0].how == "semantic"
    flt = build_filter(lib, parse_request("safety documents", TODAY), index, threshold=0.3)
    [group] = flt.groups
    assert [t.value for t in group.tags][0] == "Safety"
    assert "Working at Height" not in [t.value for t in group.tags]  # covered by its ancestor
    assert names(lib, flt) == {"working-at-height.md"}


def test_a_term_under_two_parents_and_several_groups(indexed):
    lib, index = indexed
    request = parse_request("maintenance records for the Falcon project", TODAY)
    strict = build_filter(lib, request, index, relax=False, ranked=False)  # all-or-nothing
    labels = [g.label for g in strict.groups]
    assert labels[0] == "maintenance"  # "records" is a generic word
    exp = explain(lib, strict)
    assert exp.admitted == 0 and exp.emptied_by and "Falcon" in exp.emptied_by
    relaxed = strict.without_group(strict.groups[-1].label)
    assert names(lib, relaxed) == {"gearbox-site-b.md"}  # Gearbox sits under Maintenance too
    # All-or-nothing relaxes: a file may then lack one of the groups: both concepts stay, the notes say so.
    auto = build_filter(lib, request, index, ranked=False)
    assert [g.label for g in auto.groups] == labels and auto.tolerance == 1
    assert names(lib, auto) >= {"gearbox-site-b.md", "design.md"}
    assert explain(lib, auto).emptied_by is None
    assert any("lack at most 1" in n for n in auto.notes)
    # Groups that must not be missed (chosen by the user): the least certain one is dropped instead.
    chosen = replace(strict, groups=tuple(replace(g, required=True) for g in strict.groups))
    dropped = relax_groups(lib, chosen)
    assert len(dropped.groups) == 1 and explain(lib, dropped).admitted >= 1
    assert any("dropped the least certain" in n for n in dropped.notes)
    # The dropped group stays in the filter (and its JSON), so it can be shown and added back.
    [gone] = dropped.dropped
    assert gone.label in labels and gone.tags
    assert WorkspaceFilter.from_json(dropped.to_json()).dropped == dropped.dropped
    back = dropped.restore_group(gone.label)
    assert back.dropped == () and sorted(g.label for g in back.groups) == sorted(labels)
    assert explain(lib, back).emptied_by


def test_contradictory_dates_name_the_emptying_step(indexed):
    lib, index = indexed
    flt = build_filter(lib, parse_request("policies before 2010 since 2015", TODAY), index)
    exp = explain(lib, flt)
    assert exp.admitted == 0 and exp.emptied_by.startswith("dated")
    assert any("contradict" in p for p in flt.problems)


def test_tag_index_follows_tag_changes(indexed):
    lib, index = indexed
    from spar_desktop.core.library.models import TagSource
    from spar_desktop.core.library.tags import create_tag

    with lib.session() as s:
        tag = create_tag(s, "user:Offshore wind", "Offshore wind", TagSource.USER, "wind farms at sea")
        tag_id = tag.id
    assert index.sync() == (1, 0)
    assert index.match("wind farms at sea")[0].tag_id == tag_id
    with lib.session() as s:
        s.delete(s.get(type(tag), tag_id))
    assert index.sync() == (0, 1)
    assert all(m.tag_id != tag_id for m in index.match("wind farms at sea"))


def test_keywords_that_match_no_tag_never_widen_to_the_whole_index(indexed):
    """Issue 14.2: 'quarterly tax returns for Mars base' matched no tag and admitted every file."""
    lib, index = indexed
    flt = build_filter(lib, parse_request("quarterly tax returns for Mars base", TODAY), index)
    assert flt.groups == () and set(flt.unmatched) == {"quarterly tax returns", "Mars base"}
    assert names(lib, flt) == set()  # not the 5 files of the index
    exp = explain(lib, flt)
    assert exp.admitted == 0 and exp.emptied_by
    text = "\n".join(exp.lines())
    assert "'quarterly tax returns'" in text and "'Mars base'" in text
    for choice in ("drop", "pick a tag", "whole index"):
        assert choice in text
    # The whole index only on purpose: the choice is kept in the filter (and its JSON).
    everything = replace(flt, all_files=True)
    assert len(names(lib, everything)) == 5 and explain(lib, everything).admitted == 5
    assert WorkspaceFilter.from_json(everything.to_json()).all_files
    assert any("whole index" in line for line in explain(lib, everything).lines())


def test_an_unmatched_keyword_beside_a_matched_one_is_shown_and_does_not_widen(indexed):
    lib, index = indexed
    flt = build_filter(lib, parse_request("incident reports about Mars base", TODAY), index)
    assert [g.label for g in flt.groups] == ["incident reports"] and flt.unmatched == ("Mars base",)
    assert names(lib, flt) == {"gearbox-site-b.md", "blade-crack.md"}
    assert any("'Mars base' → no tag matched" in line for line in explain(lib, flt).lines())
    # Relaxation never removes the last group: an unmatched keyword does not become "every file".
    strict = replace(flt, groups=tuple(replace(g, required=True) for g in flt.groups))
    assert names(lib, relax_groups(lib, strict)) == {"gearbox-site-b.md", "blade-crack.md"}


def test_creating_from_keywords_that_match_nothing_asks_what_to_do(indexed):
    from spar_desktop.core.workspaces.errors import WorkspaceError
    from spar_desktop.core.workspaces.selection import require_scope

    lib, index = indexed
    flt = build_filter(lib, parse_request("quarterly tax returns for Mars base", TODAY), index)
    with pytest.raises(WorkspaceError) as err:
        require_scope(flt)
    message = str(err.value)
    assert "'quarterly tax returns'" in message and "'Mars base'" in message
    for choice in ("drop", "pick a tag", "whole index"):
        assert choice in message
    assert require_scope(replace(flt, all_files=True)).all_files
    dated = build_filter(lib, parse_request("Mars base notes from 2023", TODAY), index)
    assert require_scope(dated) is dated and names(lib, dated) == {"gearbox-site-b.md", "design.md"}


def test_a_whole_index_workspace_saved_by_the_previous_release_keeps_its_files():
    """Release 0.1.0 stored an unscoped filter (no 'all_files' key) and admitted every file with it:
    after an upgrade that workspace must not silently become empty."""
    from spar_desktop.core.workspaces.selection import WorkspaceFilter

    old = WorkspaceFilter().to_json()
    del old["all_files"]
    assert WorkspaceFilter.from_json(old).all_files
    assert not WorkspaceFilter.from_json(WorkspaceFilter().to_json()).all_files  # saved now: means nothing chosen
    scoped = WorkspaceFilter(formats=("pdf",)).to_json()
    del scoped["all_files"]
    assert not WorkspaceFilter.from_json(scoped).all_files


def test_a_filter_saves_as_the_dataclass_fields_say_and_reads_back_equal():
    """The saved filter JSON (a workspace's record, a .sparws export) keeps every field: the
    hand-written conversion gives what dataclasses.asdict gave, and reading it back is equal."""
    import json
    from dataclasses import asdict
    from datetime import date

    from spar_desktop.core.workspaces.selection import TagChoice, TagGroup

    flt = WorkspaceFilter(groups=(TagGroup("reports", (TagChoice(3, "folder", "Reports", 0.7, "lexical"),),
                                           (TagChoice(4, "folder", "Reports/2019", 0.7, "lexical"),), True),),
                          since=date(2019, 5, 1), until=date(2019, 5, 31), formats=("pdf",), pinned=(7, 9),
                          ranked=True, budget=40, sources=(("keyword", "reports", "rules"),), request="CT reports")
    saved = flt.to_json()
    expected = asdict(flt)
    expected.update(since="2019-05-01", until="2019-05-31")
    assert saved == expected
    assert WorkspaceFilter.from_json(json.loads(json.dumps(saved))) == flt

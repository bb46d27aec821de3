"""Taxonomy import/export (JSON, CSV, MeSH tree numbers), assignments, and DAG queries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import select

from spar_desktop.core.library.models import Tag, TagEdge
from spar_desktop.core.library.queries import FileFilter, find_files
from spar_desktop.core.library.tags import descendant_ids, resolve_tags, tag_files, untag_files
from spar_desktop.core.library.taxonomy import (
    TaxonomyError, assign_from_csv, export_taxonomy, import_taxonomy,
)


def edges(session) -> set[tuple[str, str]]:
    names = dict(session.execute(select(Tag.id, Tag.value)).all())
    return {(names[p], names[c]) for p, c in session.execute(select(TagEdge.parent_id, TagEdge.child_id))}


def test_json_tree_with_a_term_under_two_parents(library, tmp_path):
    tree = [
        {"name": "Assets", "children": [{"name": "Turbines", "children": [{"name": "Gearbox", "description": "drive train"}]}]},
        {"name": "Maintenance", "children": [{"name": "Gearbox"}]},
    ]
    f = tmp_path / "tax.json"
    f.write_text(json.dumps(tree), encoding="utf-8")
    with library.session() as s:
        report = import_taxonomy(s, f)
        assert (report.tags_created, report.edges_created) == (4, 3)
        assert edges(s) == {("Assets", "Turbines"), ("Turbines", "Gearbox"), ("Maintenance", "Gearbox")}
        [gear] = resolve_tags(s, "gearbox")
        assert gear.description == "drive train"
        exported = export_taxonomy(s)
    # Export round-trips: the shared term appears under both parents.
    assert [n["name"] for n in exported] == ["Assets", "Maintenance"]
    assert exported[1]["children"][0]["name"] == "Gearbox"


def test_csv_with_cycles_and_duplicates(library, tmp_path):
    f = tmp_path / "tax.csv"
    f.write_text("parent,child,description\n,Safety,\nSafety,Electrical,\nSafety,Electrical,\n"
                 "Electrical,High voltage,\nHigh voltage,Safety,\n", encoding="utf-8")
    with library.session() as s:
        report = import_taxonomy(s, f)
        assert report.duplicates == 1
        assert any("cycle" in p for p in report.problems)
        assert edges(s) == {("Safety", "Electrical"), ("Electrical", "High voltage")}


def test_mesh_tree_numbers_multiple_positions_and_unknown_parents(library, tmp_path):
    f = tmp_path / "mesh.tsv"
    f.write_text("term\ttree_number\tdescription\n"
                 "Neoplasms\tC04\tTumours\n"
                 "Neoplasms by Site\tC04.588\t\n"
                 "Breast Neoplasms\tC04.588.180;C17.800.090.500\t\n"
                 "Skin and Connective Tissue Diseases\tC17\t\n"
                 "Orphan\tZ99.123\t\n", encoding="utf-8")
    with library.session() as s:
        report = import_taxonomy(s, f)
        got = edges(s)
        assert ("Neoplasms", "Neoplasms by Site") in got and ("Neoplasms by Site", "Breast Neoplasms") in got
        assert ("Skin and Connective Tissue Diseases", "Breast Neoplasms") in got  # nearest known ancestor of C17.800.090
        assert any("Orphan" in p and "unknown parent" in p for p in report.problems)
        c04 = resolve_tags(s, "Neoplasms")[0].id
        names = {t.value for t in s.scalars(select(Tag).where(Tag.id.in_(descendant_ids(s, [c04]))))}
        assert names == {"Neoplasms", "Neoplasms by Site", "Breast Neoplasms"}


def test_unreadable_taxonomy_files(library, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with library.session() as s, pytest.raises(TaxonomyError, match="not valid JSON"):
        import_taxonomy(s, bad)
    with library.session() as s, pytest.raises(TaxonomyError, match="cannot read"):
        import_taxonomy(s, tmp_path / "absent.csv")


def test_assignments_manual_tags_and_filtering(library, scanner, share, tmp_path):
    (share / "a").mkdir()
    for n in ("one.txt", "two.txt"):
        (share / "a" / n).write_text(n, encoding="utf-8")
    scanner.scan([str(share)])
    tax = tmp_path / "t.json"
    tax.write_text(json.dumps([{"name": "Finance", "children": [{"name": "Budget"}]}]), encoding="utf-8")
    assign = tmp_path / "assign.csv"
    assign.write_text(f"path,tag\na/one.txt,Budget\n{share / 'a' / 'two.txt'},Finance,Brand New\nnope/x.txt,Budget\n",
                      encoding="utf-8")
    with library.session() as s:
        import_taxonomy(s, tax)
        report = assign_from_csv(s, assign)
        assert (report.files_matched, report.unknown_paths, report.tags_created) == (2, ["nope/x.txt"], 1)
        finance = {t.id for t in resolve_tags(s, "Finance")}
        got = {r.name for r in find_files(s, FileFilter(tag_groups=(frozenset(finance),)))}
        assert got == {"one.txt", "two.txt"}  # Budget is under Finance
        budget = resolve_tags(s, "Budget")[0].id
        one = [r.id for r in find_files(s, FileFilter(tag_groups=(frozenset({budget}),)))]
        assert untag_files(s, one, budget) == 1
        assert find_files(s, FileFilter(tag_groups=(frozenset({budget}),))) == []
        assert tag_files(s, one, budget) == 1 and tag_files(s, one, budget) == 0

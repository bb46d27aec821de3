"""Fuzzing (hypothesis) the taxonomy importers (JSON tree, parent/child CSV, MeSH tree numbers)
and the DMS assignment CSV: whatever the file holds, the import either works (problems listed in
the report) or raises TaxonomyError with a message. Nothing else may escape."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spar_desktop.core.config import load_settings
from spar_desktop.core.library.database import Library
from spar_desktop.core.library.scanner import Scanner
from spar_desktop.core.library.taxonomy import (
    TaxonomyError, assign_from_csv, detect_format, export_taxonomy, import_taxonomy, parse_taxonomy,
)

# SPAR_FUZZ_EXAMPLES=5000 for a long hunt; the default keeps each test well under 20 s.
FUZZ = settings(max_examples=int(os.environ.get("SPAR_FUZZ_EXAMPLES", "200")), deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

TERMS = ["Operations", "Gearbox", "Blade", "C04", "C04.557", "C04.557.337", "C04.588", "A", "a", "", " ", "name",
         "parent", "child", "term", "tree_number", "description", "tag", "path", "Ops/2023", "x\x00y", "ü", "日本",
         "\ufeff", "\"quoted\"", "semi;colon", "a|b", "..", "tax:x"]
CELLS = st.one_of(st.sampled_from(TERMS), st.text(max_size=10))
JSON_KEYS = st.one_of(st.sampled_from(["name", "value", "description", "children"]), st.text(max_size=6))
JSON_LEAVES = st.one_of(st.none(), st.booleans(), st.integers(-(10**30), 10**30), st.floats(), CELLS)
JSON_TREES = st.recursive(JSON_LEAVES, lambda inner: st.one_of(st.lists(inner, max_size=5),
                                                               st.dictionaries(JSON_KEYS, inner, max_size=4)),
                          max_leaves=30)


def csv_text(rows: list[list[str]], sep: str) -> str:
    return "\n".join(sep.join(row) for row in rows)


CSV_FILES = st.builds(csv_text, st.lists(st.lists(CELLS, max_size=5), max_size=12), st.sampled_from([",", "\t", ";"]))
MESH_FILES = st.builds(lambda header, rows: csv_text([header] + rows, ","),
                       st.sampled_from([["term", "tree_number"], ["Term", "Tree Numbers", "description"],
                                        ["name", "treenumber"]]),
                       st.lists(st.lists(CELLS, min_size=0, max_size=4), max_size=12))


class _Rollback(Exception):
    """Ends an example's session without keeping its rows (the next example starts clean)."""


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("tax")
    share = tmp / "share"
    (share / "Ops").mkdir(parents=True)
    for name in ("Ops/a.md", "b.md"):
        (share / name).write_text(f"notes {name}", encoding="utf-8")
    lib = Library.open(load_settings(tmp / "data"))
    Scanner(lib).scan([str(share)])
    yield lib, tmp, share
    lib.close()


def run_import(lib: Library, path: Path, fmt: str | None = None, assign: bool = False) -> None:
    try:
        with lib.session() as s:
            if assign:
                report = assign_from_csv(s, path)
                assert report.files_matched >= 0 and all(isinstance(p, str) for p in report.problems)
            else:
                report = import_taxonomy(s, path, fmt)
                assert all(isinstance(p, str) and p for p in report.problems)
                json.dumps(export_taxonomy(s))  # what `spar tags export` writes
            raise _Rollback
    except _Rollback:
        pass
    except TaxonomyError as exc:
        assert str(exc).strip()


@FUZZ
@given(tree=JSON_TREES)
def test_any_json_tree_imports_or_is_refused_with_a_message(library, tree):
    lib, tmp, _ = library
    path = tmp / "tree.json"
    path.write_text(json.dumps(tree), encoding="utf-8")
    run_import(lib, path)


@FUZZ
@given(text=CSV_FILES)
def test_any_parent_child_csv_imports_or_is_refused_with_a_message(library, text):
    lib, tmp, _ = library
    path = tmp / "tax.csv"
    path.write_text(text, encoding="utf-8")
    run_import(lib, path, "csv")


@FUZZ
@given(text=MESH_FILES)
def test_any_tree_number_file_imports_or_is_refused_with_a_message(library, text):
    lib, tmp, _ = library
    path = tmp / "mesh.csv"
    path.write_text(text, encoding="utf-8")
    run_import(lib, path, "mesh")


@FUZZ
@given(raw=st.binary(max_size=400), fmt=st.sampled_from([None, "json", "csv", "mesh"]))
def test_any_bytes_as_a_taxonomy_import_or_are_refused_with_a_message(library, raw, fmt):
    lib, tmp, _ = library
    path = tmp / "raw.txt"
    path.write_bytes(raw)
    run_import(lib, path, fmt)


@FUZZ
@given(rows=st.lists(st.lists(st.one_of(CELLS, st.sampled_from(["Ops/a.md", "b.md", "/etc/passwd", "../b.md",
                                                                   "Ops\\a.md", "path", "file"])),
                              max_size=4), max_size=10))
def test_any_dms_assignment_csv_imports_or_is_refused_with_a_message(library, rows):
    lib, tmp, _ = library
    path = tmp / "assign.csv"
    path.write_text(csv_text(rows, ","), encoding="utf-8")
    run_import(lib, path, assign=True)


@FUZZ
@given(text=st.text(max_size=300), fmt=st.sampled_from(["json", "csv", "mesh"]))
def test_parsing_any_text_returns_terms_or_raises_taxonomy_error(text, fmt):
    try:
        terms, edges, problems = parse_taxonomy(text, fmt)
    except TaxonomyError as exc:
        assert str(exc).strip()
        return
    names = {t for t, _ in terms}
    assert all(p in names and c in names for p, c in edges)
    detect_format(Path("x.txt"), text)


# Found by the fuzzers above (each escaped as RecursionError, ValueError, csv.Error or a database
# error before the fix): (file name, content, "error" or "problem", words the message holds).
HOSTILE = {
    "json nested 100,000 levels": ("tree.json", "[" * 100_000 + "]" * 100_000, "error", "nested too deeply"),
    "dict nested 100,000 levels": ("tree.json", '{"a":' * 100_000 + "{}" + "}" * 100_000, "error", "nested too deeply"),
    "5,000-digit number": ("tree.json", '[{"name": ' + "9" * 5000 + "}]", "error", "not valid JSON"),
    "a description that is a dict": ("tree.json", '[{"name": "Gearbox", "description": {"a": [1, 2]}}]',
                                     "problem", "description of 'Gearbox' is not text"),
    "a name that is a list": ("tree.json", '[{"name": ["x"]}, {"name": "Blade"}]', "problem", "name is not text"),
    "a name with a lone surrogate": ("tree.json", '[{"name": "bad \\udc80 name"}, {"name": "Blade"}]',
                                     "problem", "undecodable"),
    "a NUL in a CSV term": ("tax.csv", "parent,child\nOps,Gear\x00box\nOps,Blade", "problem", "NUL"),
    "a CSV field over the csv module's limit": ("tax.csv", "parent,child\nOps," + "x" * 200_000, "error",
                                                "line 2: cannot read the CSV"),
    "a tree-number field over the limit": ("mesh.csv", "term,tree_number\nGearbox," + "C04." * 50_000, "error",
                                           "cannot read the CSV"),
}


@pytest.mark.parametrize("label", list(HOSTILE))
def test_hostile_taxonomy_files_are_refused_or_imported_with_the_problem_named(library, label):
    lib, tmp, _ = library
    name, text, outcome, words = HOSTILE[label]
    path = tmp / name
    path.write_text(text, encoding="utf-8")
    fmt = {"tree.json": "json", "tax.csv": "csv", "mesh.csv": "mesh"}[name]
    try:
        with lib.session() as s:
            if outcome == "error":
                with pytest.raises(TaxonomyError, match=words):
                    import_taxonomy(s, path, fmt)
            else:
                report = import_taxonomy(s, path, fmt)
                assert any(words in p for p in report.problems), report.problems
                assert report.tags_created >= 1  # the rest of the file is imported
                assert len(max(report.problems, key=len)) < 300
            raise _Rollback
    except _Rollback:
        pass


def test_a_lone_carriage_return_ends_a_line_as_in_old_mac_files(library):
    lib, tmp, _ = library
    path = tmp / "mac.csv"
    path.write_bytes(b"parent,child\rOperations,Gearbox\rOperations,Blade\r")
    terms, edges, problems = parse_taxonomy(path.read_text(encoding="utf-8"), "csv")
    assert edges == [("Operations", "Gearbox"), ("Operations", "Blade")] and problems == []


def test_problem_lines_quote_long_terms_shortly(library):
    terms, edges, problems = parse_taxonomy("term,tree_number\nGearbox," + "C04." * 20_000 + "1\n", "mesh")
    assert len(problems) == 1 and len(problems[0]) < 400


def test_hostile_assignment_csv_is_refused_with_a_message(library):
    lib, tmp, _ = library
    path = tmp / "assign.csv"
    path.write_text("path,tag\nb.md," + "y" * 200_000, encoding="utf-8")
    with lib.session() as s, pytest.raises(TaxonomyError, match="line 2: cannot read the CSV"):
        assign_from_csv(s, path)

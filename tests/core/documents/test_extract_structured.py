"""CSV/TSV, JSON/JSONL, images, binaries, format overrides and in-memory text."""

from __future__ import annotations

import json

import pytest

from spar_desktop.core.documents.errors import ExtractionError
from spar_desktop.core.documents.extract import extract, extract_text_string
from spar_desktop.core.documents.extract_structured import MAX_DEPTH, flatten


def test_ragged_csv_keeps_header_names_and_warns(tmp_path):
    path = tmp_path / "people.csv"
    path.write_text('name,age,city\nBob,31,Paris\nAlice,29\n\n"Carl, Jr.",40,Rome,extra\n'
                    '"Dana","52","Multi\nline town"\n')
    doc = extract(path)
    assert doc.format == "csv"
    records = doc.text.split("\n\n")
    assert records == [
        "name: Bob; age: 31; city: Paris",
        "name: Alice; age: 29",
        "name: Carl, Jr.; age: 40; city: Rome; column 4: extra",
        "name: Dana; age: 52; city: Multi line town",
    ]
    assert any("2 row(s) have a different number of fields" in w and "row 3" in w
               for w in doc.warnings)


def test_semicolon_csv_delimiter_is_sniffed(tmp_path):
    path = tmp_path / "euro.csv"
    path.write_text("Artikel;Preis;Menge\nSchraube;0,10;500\nMutter;0,05;800\n", encoding="utf-8")
    doc = extract(path)
    assert doc.text.split("\n\n")[0] == "Artikel: Schraube; Preis: 0,10; Menge: 500"
    assert doc.warnings == ()


def test_tsv(tmp_path):
    path = tmp_path / "data.tsv"
    path.write_text("id\tnote\n1\thello, world; and more\n2\t\n")
    doc = extract(path)
    assert doc.format == "tsv"
    assert doc.text == "id: 1; note: hello, world; and more\n\nid: 2"


def test_csv_max_chars_stops_streaming(tmp_path):
    path = tmp_path / "big.csv"
    with open(path, "w") as f:
        f.write("a,b\n")
        for i in range(50_000):
            f.write(f"{i},value {i}\n")
    doc = extract(path, max_chars=5000)
    assert len(doc.text) <= 5000
    assert any("truncated" in w for w in doc.warnings)


def test_json_records_flattened(tmp_path):
    records = [
        {"title": "Pump", "specs": {"power": {"kw": 5.5}, "phases": 3},
         "tags": ["water", "industrial"], "authors": [{"name": "A"}, {"name": "B"}],
         "retired": False, "note": None},
        {"title": "Valve", "specs": {"size": "DN50"}},
    ]
    path = tmp_path / "catalogue.json"
    path.write_text(json.dumps(records))
    doc = extract(path)
    assert doc.format == "json"
    first, second = doc.text.split("\n\n")
    assert first.splitlines() == [
        "title: Pump", "specs.power.kw: 5.5", "specs.phases: 3", "tags: water, industrial",
        "authors.name: A", "authors.name: B", "retired: false", "note: null",
    ]
    assert second.splitlines() == ["title: Valve", "specs.size: DN50"]


def test_json_nested_5000_deep_does_not_crash(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text('{"level":' * 5000 + '"bottom"' + "}" * 5000)
    doc = extract(path)
    assert doc.no_text_reason is None
    assert "bottom" in doc.text
    assert any("nested too deeply" in w for w in doc.warnings)


def test_json_depth_is_bounded_when_parsable(tmp_path):
    path = tmp_path / "deepish.json"
    path.write_text('{"k":' * 200 + "42" + "}" * 200)
    doc = extract(path)
    line = doc.text.splitlines()[0]
    assert line.startswith(".".join(["k"] * MAX_DEPTH) + ": {")
    assert "42" in line
    assert any(f"deeper than {MAX_DEPTH}" in w for w in doc.warnings)


def test_flatten_survives_deep_lists_without_recursion():
    value: object = "leaf"
    for _ in range(900):  # close to the json parser's own limit; flatten must not recurse
        value = [value, {"x": 1}]
    lines = list(flatten(value))
    assert lines and all(isinstance(s, str) for s in lines)


def test_invalid_json_falls_back_to_text(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"title": "half a record", "body": ')
    doc = extract(path)
    assert "half a record" in doc.text
    assert any("not valid JSON" in w for w in doc.warnings)


def test_jsonl_records_and_bad_lines(tmp_path):
    path = tmp_path / "events.jsonl"
    path.write_text('{"user": {"id": 7}, "event": "login"}\nnot json here\n\n{"event": "logout"}\n')
    doc = extract(path)
    assert doc.format == "jsonl"
    assert doc.text.split("\n\n") == ["user.id: 7\nevent: login", "not json here", "event: logout"]
    assert any("1 line(s) are not valid JSON" in w for w in doc.warnings)


def test_json_file_holding_json_lines(tmp_path):
    path = tmp_path / "export.json"
    path.write_text('{"a": 1}\n{"a": 2}\n')
    doc = extract(path)
    assert doc.text == "a: 1\n\na: 2"


@pytest.mark.parametrize("name,data", [
    ("photo.jpg", b"\xff\xd8\xff\xe0" + b"\x00\x10JFIF" + b"\x00" * 200),
    ("scan.png", b"\x89PNG\r\n\x1a\n" + b"\x00" * 200),
    ("noext", b"GIF89a" + b"\x00" * 100),
])
def test_images_have_no_text(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data)
    doc = extract(path)
    assert doc.format == "image" and doc.pages == ()
    assert doc.no_text_reason and "image" in doc.no_text_reason


def test_unknown_binary_has_no_text(tmp_path):
    path = tmp_path / "blob.dat"
    path.write_bytes(bytes(range(256)) * 20)
    doc = extract(path)
    assert doc.format == "binary" and doc.pages == () and doc.no_text_reason


def test_format_override_and_unsupported_format(tmp_path):
    path = tmp_path / "notes.dat"
    path.write_text("a,b\n1,2\n")
    assert extract(path, format="csv").text == "a: 1; b: 2"
    assert extract(path, format="txt").text == "a,b\n1,2"
    with pytest.raises(ExtractionError, match="not a valid Excel file"):  # text forced as a workbook
        extract(path, format="xlsx")
    other = extract(path, format="7z")
    assert other.pages == () and "unsupported" in other.no_text_reason


def test_missing_file_raises(tmp_path):
    from spar_desktop.core.documents.errors import ExtractionError

    with pytest.raises(ExtractionError):
        extract(tmp_path / "nope.txt")


def test_extract_text_string_prepends_title():
    doc = extract_text_string("Body sentence one.", "A Title")
    assert doc.title == "A Title" and doc.text == "A Title\n\nBody sentence one."
    assert [p.page for p in doc.pages] == [1]
    assert extract_text_string("only body", None).text == "only body"
    empty = extract_text_string("  ", "")
    assert empty.pages == () and empty.no_text_reason


def test_utf16_csv_and_jsonl(tmp_path):
    csv_path = tmp_path / "export.csv"
    csv_path.write_bytes("name,città\nBob,Milano\nAnna,Köln\n".encode("utf-16"))
    assert extract(csv_path).text == "name: Bob; città: Milano\n\nname: Anna; città: Köln"
    jl = tmp_path / "export.jsonl"
    jl.write_bytes('{"a": "Köln"}\n{"b": 2}\n'.encode("utf-16"))
    assert extract(jl).text == "a: Köln\n\nb: 2"

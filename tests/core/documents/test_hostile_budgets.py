"""Hostile DOCX, CSV and HTML files: each stays within the per-file budget (memory, characters,
time) and ends with a message or a truncation warning, never a crash or an unbounded build."""

from __future__ import annotations

import tracemalloc
import zipfile
from pathlib import Path

import pytest

from spar_desktop.core.documents import extract_office
from spar_desktop.core.documents.budget import BudgetExceeded, ExtractionBudget
from spar_desktop.core.documents.errors import ExtractionError
from spar_desktop.core.documents.extract import extract
from spar_desktop.core.documents.extract_office import extract_docx
from spar_desktop.core.documents.extract_structured import MAX_LINE_CHARS, extract_csv
from spar_desktop.core.documents.extract_text import extract_html, html_to_text

W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


def _with_body(src: Path, dst: Path, body: str) -> Path:
    """A copy of DOCX ``src`` whose word/document.xml holds ``body`` (inside <w:body>)."""
    xml = (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
           f'<w:document xmlns:w="{W_NS}"><w:body>{body}</w:body></w:document>')
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for item in zin.infolist():
            data = xml.encode() if item.filename == "word/document.xml" else zin.read(item.filename)
            zout.writestr(item.filename, data)
    return dst


def _para(text: str) -> str:
    return f"<w:p><w:r><w:t>{text}</w:t></w:r></w:p>"


# ------------------------------------------------------------------------------------------ DOCX

def test_docx_bomb_is_refused_before_inflating(tmp_path, make_docx):
    seed = make_docx("seed.docx", ["seed"])
    bomb = _with_body(seed, tmp_path / "bomb.docx", _para("lorem ipsum " * 2_500_000))  # 30M chars
    assert bomb.stat().st_size < 1_000_000  # a small file...
    budget = ExtractionBudget(max_inflated_bytes=10_000_000)
    with pytest.raises(BudgetExceeded) as info:  # ...refused from the zip directory alone
        extract_docx(bomb, budget)
    message = str(info.value)
    assert "too large" in message and "10.0 MB" in message and "Settings" in message


def test_large_docx_is_streamed_and_truncated(tmp_path, make_docx):
    seed = make_docx("seed.docx", ["seed"])
    body = "".join(_para(f"paragraph {i} " + "text " * 40) for i in range(40_000))  # ~8M chars
    path = _with_body(seed, tmp_path / "big.docx", body)
    tracemalloc.start()
    try:
        doc = extract(path, max_chars=200_000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert doc.text.startswith("paragraph 0 text")
    assert 199_000 < len(doc.text) <= 200_000
    assert "text truncated at 200,000 characters" in doc.warnings
    # python-docx would hold the whole (~10 MB) body as a tree, many times its size.
    assert peak < 8 * 1024 * 1024, peak


def test_docx_single_giant_paragraph_stops_at_the_limit(tmp_path, make_docx):
    seed = make_docx("seed.docx", ["seed"])
    runs = "".join(f"<w:r><w:t>word{i} </w:t></w:r>" for i in range(600_000))
    path = _with_body(seed, tmp_path / "one-para.docx", f"<w:p>{runs}</w:p>")
    doc = extract(path, max_chars=50_000)
    assert len(doc.text) == 50_000 and doc.text.startswith("word0 word1 ")
    assert doc.warnings == ("text truncated at 50,000 characters",)


def test_streamed_docx_matches_python_docx(tmp_path, make_docx, monkeypatch):
    import docx

    path = make_docx("memo.docx", ["Quarterly Memo", "Revenue\tgrew strongly.", "Closing remarks."],
                     table=[["Region", "Sales"], ["North", "120"], ["South", "80"]], title="Q3 memo")
    d = docx.Document()
    t = d.add_table(rows=2, cols=3)
    t.cell(0, 0).merge(t.cell(0, 2)).text = "Merged header"
    for c, v in enumerate(["a", "b", "c"]):
        t.cell(1, c).text = v
    d.add_paragraph("line one").add_run().add_break()
    merged = tmp_path / "merged.docx"
    d.save(str(merged))
    expected = [extract(path), extract(merged)]
    monkeypatch.setattr(extract_office, "STREAM_ABOVE_BYTES", 0)
    streamed = [extract(path), extract(merged)]
    assert [(s.text, s.title, s.warnings) for s in streamed] == \
        [(e.text, e.title, e.warnings) for e in expected]
    assert "Region | Sales\nNorth | 120" in streamed[0].text


def test_streamed_docx_damaged_body_and_time_limit(tmp_path, make_docx, monkeypatch):
    monkeypatch.setattr(extract_office, "STREAM_ABOVE_BYTES", 0)
    seed = make_docx("seed.docx", ["seed"])
    broken = _with_body(seed, tmp_path / "broken.docx", "<w:p><w:r><w:t>unclosed")
    with pytest.raises(ExtractionError, match="corrupt DOCX: the document body is damaged"):
        extract(broken)
    with pytest.raises(BudgetExceeded, match="too slow to read"):
        extract_docx(seed, ExtractionBudget(max_seconds=-1))


# ------------------------------------------------------------------------------------------- CSV

def test_csv_columns_are_capped(tmp_path):
    path = tmp_path / "wide.csv"
    width = 5_000
    path.write_text(",".join(f"c{i}" for i in range(width)) + "\n" + ",".join("v" for _ in range(width)) + "\n")
    doc = extract(path)  # default budget: 1,000 columns
    assert doc.text.count("v") == 1_000 and "c999: v" in doc.text and "c1000" not in doc.text
    assert any("have more than 1,000 columns" in w and "only the first 1,000" in w for w in doc.warnings)
    assert not any("different number of fields" in w for w in doc.warnings)

    small = extract_csv(path, "csv", ExtractionBudget(max_columns=10))
    assert small.text == "; ".join(f"c{i}: v" for i in range(10))


def test_one_line_csv_is_read_in_bounded_pieces(tmp_path):
    path = tmp_path / "oneline.csv"
    with open(path, "w") as f:
        f.write("name,notes\n")
        f.write('"' + "y" * (20 * 1024 * 1024) + '",tail\n')  # a 20 MB record on one line
        f.write("Bob,fine\n")
    tracemalloc.start()
    try:
        doc = extract(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 10 * 1024 * 1024, peak  # never the 20 MB line as one string
    assert doc.text == "name: Bob; notes: fine"  # the giant row is skipped, the rest is read
    assert any(f"longer than {MAX_LINE_CHARS:,} characters" in w and "line 2" in w for w in doc.warnings)
    assert any("1 row(s) could not be read" in w for w in doc.warnings)


def test_unquoted_long_line_keeps_its_start(tmp_path):
    path = tmp_path / "long.csv"
    path.write_text("a,b\n" + "x," * (MAX_LINE_CHARS // 2 + 10) + "\n1,2\n")
    doc = extract_csv(path, "csv", ExtractionBudget(max_columns=2))
    assert doc.text.split("\n\n") == ["a: x; b: x", "a: 1; b: 2"]


def test_csv_clock_is_checked_while_streaming(tmp_path):
    path = tmp_path / "rows.csv"
    path.write_text("a,b\n" + "1,2\n" * 5_000)
    with pytest.raises(BudgetExceeded, match="too slow to read"):
        extract_csv(path, "csv", ExtractionBudget(max_seconds=-1))


# ------------------------------------------------------------------------------------------ HTML

@pytest.mark.timeout(60)  # BeautifulSoup took about 185 s on this; streaming takes well under 1 s
def test_deeply_nested_html_is_linear(tmp_path):
    path = tmp_path / "nested.html"
    depth = 20_000
    path.write_text("<html><body>" + "<div>x" * depth + "</div>" * depth + "</body></html>")
    doc = extract(path)
    assert doc.text.count("x") == depth


def test_html_is_truncated_at_max_chars(tmp_path):
    path = tmp_path / "long.html"
    path.write_text("<html><body>" + "<p>some words here</p>\n" * 200_000 + "</body></html>")
    doc = extract(path, max_chars=10_000)
    assert 9_900 < len(doc.text) <= 10_000
    assert "text truncated at 10,000 characters" in doc.warnings
    with pytest.raises(BudgetExceeded, match="too slow to read"):
        extract_html(path, ExtractionBudget(max_seconds=-1))


def test_html_stray_end_tags_and_unclosed_head():
    html = ("<html><head><title>Doc</title><body><p>one" + "</span>" * 50_000
            + "<div hidden>secret</div><p>two")
    title, text = html_to_text(html)
    assert title == "Doc" and text == "one\n\ntwo"


def test_the_users_limits_reach_docx_csv_and_html_through_extract(tmp_path, make_docx):
    """Settings ▸ Reading files: extract() hands the whole budget to these readers."""
    doc = _with_body(make_docx(tmp_path / "src.docx", ["x"]), tmp_path / "big.docx", _para("y" * 50_000) * 30)
    with pytest.raises(BudgetExceeded, match="Settings"):
        extract(doc, budget=ExtractionBudget(max_inflated_bytes=100_000))
    wide = tmp_path / "wide.csv"
    wide.write_text(",".join(f"c{i}" for i in range(50)) + "\n" + ",".join("v" * 50) + "\n", encoding="utf-8")
    cut = extract(wide, budget=ExtractionBudget(max_columns=5))
    assert "c5:" not in cut.text and any("column" in w for w in cut.warnings)
    page = tmp_path / "page.html"
    page.write_text("<html><body>" + "<p>word</p>" * 5000 + "</body></html>", encoding="utf-8")
    assert any("truncated" in w for w in extract(page, budget=ExtractionBudget(max_chars=1000)).warnings)

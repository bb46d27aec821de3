"""DOCX, plain text (encodings, huge files), Markdown and HTML extraction."""

from __future__ import annotations

import tracemalloc
import zipfile

import pytest

from spar_desktop.core.documents.errors import ExtractionError
from spar_desktop.core.documents.extract import extract


# ------------------------------------------------------------------------------------------ DOCX

def test_docx_paragraphs_and_tables_in_order(make_docx):
    path = make_docx("memo.docx", ["Quarterly Memo", "Revenue grew strongly.", "Closing remarks."],
                     table=[["Region", "Sales"], ["North", "120"], ["South", "80"]],
                     title="Q3 memo")
    doc = extract(path)
    assert doc.format == "docx" and doc.title == "Q3 memo"
    assert [p.page for p in doc.pages] == [1]
    text = doc.text
    assert "Region | Sales\nNorth | 120\nSouth | 80" in text
    assert text.index("Revenue grew") < text.index("North | 120") < text.index("Closing remarks")
    assert text.startswith("Quarterly Memo\n\n")


def test_docx_merged_cells_not_repeated(tmp_path):
    import docx

    d = docx.Document()
    t = d.add_table(rows=2, cols=3)
    t.cell(0, 0).merge(t.cell(0, 2)).text = "Merged header"
    for c, v in enumerate(["a", "b", "c"]):
        t.cell(1, c).text = v
    path = tmp_path / "merged.docx"
    d.save(str(path))
    text = extract(path).text
    assert text.count("Merged header") == 1
    assert "a | b | c" in text


def test_docx_zip_of_junk_is_rejected(tmp_path):
    path = tmp_path / "fake.docx"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("junk.txt", "not word at all")
    with pytest.raises(ExtractionError, match=r"not a valid DOCX \(zip without word/document.xml\)"):
        extract(path)


def test_docx_that_is_not_a_zip(tmp_path):
    path = tmp_path / "plain.docx"
    path.write_text("hello, I am text")
    with pytest.raises(ExtractionError, match="not a zip"):
        extract(path)


def test_docx_in_ole_container_is_reported_as_protected(tmp_path):
    path = tmp_path / "locked.docx"
    path.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 600)
    with pytest.raises(ExtractionError, match="password-protected"):
        extract(path)


def test_docx_with_broken_xml_is_corrupt(tmp_path, make_docx):
    good = make_docx("good.docx", ["Title", "body"])
    bad = tmp_path / "broken.docx"
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(bad, "w") as dst:
        for item in src.infolist():
            data = src.read(item.filename)
            dst.writestr(item, b"<w:document><unclosed" if item.filename == "word/document.xml" else data)
    with pytest.raises(ExtractionError, match="corrupt DOCX"):
        extract(bad)


# ------------------------------------------------------------------------------------ plain text

WESTERN = "Café naïve “quoted” – déjà vu, Müller’s Straße. " * 40


def test_cp1252_text_is_decoded(tmp_path):
    path = tmp_path / "legacy.txt"
    path.write_bytes(WESTERN.encode("cp1252"))
    doc = extract(path)
    assert doc.text == WESTERN.strip()
    assert not doc.warnings


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-8-sig", "utf-8"])
def test_unicode_encodings(tmp_path, encoding):
    text = "Grüße aus Köln – 東京 and Ωmega.\r\nSecond line."
    path = tmp_path / f"u-{encoding}.txt"
    path.write_bytes(text.encode(encoding))
    doc = extract(path)
    assert doc.text == text.replace("\r\n", "\n")  # universal newlines, no BOM left over


def test_empty_text_file(tmp_path):
    path = tmp_path / "empty.txt"
    path.write_bytes(b"")
    doc = extract(path)
    assert doc.pages == () and doc.no_text_reason == "file is empty"


def test_big_text_file_is_streamed_and_truncated(tmp_path):
    path = tmp_path / "huge.log"
    line = ("2024-01-01 12:00:00 INFO request handled in 12ms path=/api/v1/items id=42\n" * 1000).encode()
    with open(path, "wb") as f:
        for _ in range(30 * 1024 * 1024 // len(line) + 1):  # ~30 MB
            f.write(line)
    assert path.stat().st_size > 30 * 1024 * 1024
    max_chars = 1_000_000
    tracemalloc.start()
    try:
        doc = extract(path, max_chars=max_chars)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(doc.text) <= max_chars
    assert len(doc.text) > max_chars - 100  # trailing newline stripped at most
    assert any("truncated" in w for w in doc.warnings)
    # Reading the whole file would need > 30 MB (bytes) plus the decoded str; streaming needs
    # roughly the kept text a few times over.
    assert peak < 12 * 1024 * 1024, peak


def test_unknown_extension_text_is_sniffed(tmp_path):
    path = tmp_path / "README"
    path.write_text("Just some notes without an extension.")
    doc = extract(path)
    assert doc.format == "txt" and "notes" in doc.text


# -------------------------------------------------------------------------------------- Markdown

def test_markdown_keeps_text_and_finds_title(tmp_path):
    md = "Intro line\n\n# Install Guide\n\n- step *one*\n- step two\n\n```\ncode block\n```\n"
    path = tmp_path / "guide.md"
    path.write_text(md)
    doc = extract(path)
    assert doc.format == "md" and doc.title == "Install Guide"
    assert doc.text == md.strip()


# ------------------------------------------------------------------------------------------ HTML

HTML = """<!DOCTYPE html><html><head><title>  Pump   Manual </title>
<style>body { color: red; } .secret { }</style>
<script>var tracking = "SHOULD_NOT_APPEAR";</script></head>
<body><h1>Pump Manual</h1>
<p>Check the <b>seal</b>ing ring<br>every month.</p>
<div style="display:none">hidden promo</div><p hidden>also hidden</p>
<noscript>enable javascript</noscript>
<table><tr><th>Part</th><th>Interval</th></tr><tr><td>Seal</td><td>30 days</td></tr></table>
<ul><li>first</li><li>second</li></ul>
</body></html>"""


def test_html_visible_text_only(tmp_path):
    path = tmp_path / "manual.html"
    path.write_text(HTML)
    doc = extract(path)
    assert doc.format == "html" and doc.title == "Pump Manual"
    text = doc.text
    for invisible in ("SHOULD_NOT_APPEAR", "color: red", "hidden promo", "also hidden",
                      "enable javascript"):
        assert invisible not in text
    assert "Check the sealing ring\nevery month." in text  # inline tags don't split words
    assert "Part | Interval\nSeal | 30 days" in text
    assert "first\nsecond" in text
    assert text.startswith("Pump Manual\n\n")


def test_html_sniffed_without_extension(tmp_path):
    path = tmp_path / "page"
    path.write_text("<html><body><p>sniffed page</p></body></html>")
    doc = extract(path)
    assert doc.format == "html" and doc.text == "sniffed page"

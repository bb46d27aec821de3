"""PDF extraction: pages, encryption, corruption, scans, truncation."""

from __future__ import annotations

import pytest

from spar_desktop.core.documents.errors import ExtractionError
from spar_desktop.core.documents.extract import extract


def test_multi_page_pdf_keeps_page_numbers_and_title(make_pdf):
    path = make_pdf("report.pdf", ["Alpha page about turbines.", "Beta page about pumps.",
                                   "Gamma page about valves."], title="Plant Report")
    doc = extract(path)
    assert doc.format == "pdf"
    assert doc.title == "Plant Report"
    assert [p.page for p in doc.pages] == [1, 2, 3]
    assert "turbines" in doc.pages[0].text and "pumps" in doc.pages[1].text
    assert "valves" in doc.pages[2].text
    assert doc.no_text_reason is None and doc.warnings == ()
    # page_offsets point at each page's text inside the joined text
    for off, page in zip(doc.page_offsets, doc.pages):
        assert doc.text[off:off + len(page.text)] == page.text


def test_encrypted_pdf_raises_clear_message(make_pdf):
    import pymupdf

    path = make_pdf("secret.pdf", ["classified"], encryption=pymupdf.PDF_ENCRYPT_AES_256,
                    user_pw="pw", owner_pw="owner")
    with pytest.raises(ExtractionError, match="password-protected"):
        extract(path)


def test_owner_password_only_pdf_still_reads(make_pdf):
    import pymupdf

    path = make_pdf("restricted.pdf", ["readable restricted text"],
                    encryption=pymupdf.PDF_ENCRYPT_AES_256, owner_pw="owner",
                    permissions=int(pymupdf.PDF_PERM_ACCESSIBILITY))
    assert "readable restricted text" in extract(path).text


def test_truncated_pdf_is_corrupt(make_pdf, tmp_path):
    data = make_pdf("ok.pdf", ["some text " * 50]).read_bytes()
    bad = tmp_path / "bad.pdf"
    bad.write_bytes(data[:300])
    with pytest.raises(ExtractionError, match="corrupt PDF"):
        extract(bad)


def test_garbage_with_pdf_extension_is_corrupt(tmp_path):
    bad = tmp_path / "junk.pdf"
    bad.write_bytes(b"this is not a pdf at all \x00\x01" * 10)
    with pytest.raises(ExtractionError, match="corrupt PDF"):
        extract(bad)


def test_partly_truncated_pdf_is_repaired_with_warning(make_pdf, tmp_path):
    data = make_pdf("ok.pdf", ["first page words", "second", "third"]).read_bytes()
    cut = tmp_path / "cut.pdf"
    cut.write_bytes(data[: len(data) // 3])
    try:
        doc = extract(cut)
    except ExtractionError as exc:  # mupdf may also give up; either outcome is handled cleanly
        assert "corrupt PDF" in exc.message
    else:
        assert any("repaired" in w for w in doc.warnings)


def test_zero_page_pdf_reports_no_text(tmp_path):
    path = tmp_path / "empty.pdf"
    path.write_bytes(b"%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n"
                     b"2 0 obj << /Type /Pages /Kids [] /Count 0 >> endobj\n"
                     b"trailer << /Root 1 0 R >>\n%%EOF\n")
    doc = extract(path)
    assert doc.pages == () and doc.text == ""
    assert doc.no_text_reason == "PDF has no pages"


def _image_page(page) -> None:
    import pymupdf

    pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 40, 40), False)
    pix.clear_with(180)
    page.insert_image(pymupdf.Rect(50, 50, 300, 300), pixmap=pix)


def test_image_only_pdf_has_no_text_layer(tmp_path):
    import pymupdf

    doc = pymupdf.open()
    for _ in range(2):
        _image_page(doc.new_page())
    path = tmp_path / "scan.pdf"
    doc.save(path)
    result = extract(path)
    assert result.pages == ()
    assert result.no_text_reason == "no text layer (scanned?)"


def test_mixed_pdf_warns_about_scanned_pages(tmp_path):
    import pymupdf

    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "typed cover page")
    _image_page(doc.new_page())
    doc.new_page().insert_text((72, 72), "typed appendix")
    path = tmp_path / "mixed.pdf"
    doc.save(path)
    result = extract(path)
    assert [p.page for p in result.pages] == [1, 3]  # page numbers survive the gap
    assert result.no_text_reason is None
    assert any("no text layer" in w and "2" in w for w in result.warnings)


def test_pdf_max_chars_truncates_with_warning(make_pdf):
    path = make_pdf("long.pdf", [f"page {i} " + "lorem ipsum " * 100 for i in range(5)])
    doc = extract(path, max_chars=2000)
    assert len(doc.text) <= 2000
    assert doc.pages[0].page == 1 and len(doc.pages) < 5
    assert any("truncated" in w for w in doc.warnings)


def test_pdf_detected_by_magic_despite_extension(make_pdf, tmp_path):
    data = make_pdf("real.pdf", ["magic bytes win"]).read_bytes()
    disguised = tmp_path / "download.txt"
    disguised.write_bytes(data)
    doc = extract(disguised)
    assert doc.format == "pdf" and "magic bytes win" in doc.text

"""Office 97–2003 .doc/.ppt through LibreOffice or the text dumpers, and files misnamed .doc.

The .doc/.ppt fixtures were written by LibreOffice (tests/fixtures/legacy/make_fixtures.py).
Tests that need a converter skip when it is not installed; in CI install the Debian packages
libreoffice-writer-nogui libreoffice-impress-nogui antiword catdoc.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from spar_desktop.core.documents.budget import BudgetExceeded, ExtractionBudget
from spar_desktop.core.documents.errors import ExtractionError
from spar_desktop.core.documents.extract import extract

LEGACY = Path(__file__).resolve().parents[2] / "fixtures" / "legacy"
HAS_SOFFICE = bool(shutil.which("soffice") or shutil.which("libreoffice"))
needs_soffice = pytest.mark.skipif(not HAS_SOFFICE, reason="LibreOffice (soffice) is not installed")


def _path_with_only(tmp_path: Path, *tools: str) -> str:
    """A PATH holding only ``tools`` (those installed), so other converters are out of sight."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for tool in tools:
        found = shutil.which(tool)
        if found:
            (bin_dir / tool).symlink_to(found)
    return str(bin_dir)


@needs_soffice
def test_doc_through_libreoffice_keeps_headings_tables_and_title(tmp_path):
    source = tmp_path / "report.doc"
    shutil.copyfile(LEGACY / "report.doc", source)
    doc = extract(source)
    assert doc.format == "doc" and doc.title == "Gearbox inspection"
    assert [p.page for p in doc.pages] == [1]
    assert doc.text.split("\n\n") == ["Gearbox inspection report",
                                      "The main bearing on turbine T7 showed pitting after 40,000 hours.",
                                      "Component | Status\nGearbox | Replace"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.doc"]  # no lock or output file beside it


@needs_soffice
def test_ppt_through_libreoffice_slide_by_slide():
    doc = extract(LEGACY / "deck.ppt")
    assert doc.format == "ppt"
    assert [p.text for p in doc.pages] == [
        "Slide 1: Quarterly outage review\n\nOutage hours fell by 12 percent",
        "Slide 2: Actions\n\nReplace the yaw motor on T4\n\nNotes: Call the crane supplier before May"]
    assert [p.page for p in doc.pages] == [1, 2]


@needs_soffice
def test_a_slow_conversion_is_stopped_at_the_time_limit():
    started = time.perf_counter()
    with pytest.raises(BudgetExceeded, match="too slow to read: stopped after 0.2 s"):
        extract(LEGACY / "deck.ppt", budget=ExtractionBudget(max_seconds=0.2))
    assert time.perf_counter() - started < 5


def test_doc_with_text_dumpers_only(tmp_path, monkeypatch):
    path = _path_with_only(tmp_path, "antiword", "catdoc")
    if not os.listdir(path):
        pytest.skip("neither antiword nor catdoc is installed")
    monkeypatch.setenv("PATH", path)
    doc = extract(LEGACY / "report.doc")
    assert "The main bearing on turbine T7 showed pitting after 40,000 hours." in doc.text
    assert "Gearbox" in doc.text and "Replace" in doc.text
    assert any(w.startswith("read with ") for w in doc.warnings)
    short = extract(LEGACY / "report.doc", budget=ExtractionBudget(max_chars=20))
    assert len(short.text) <= 20 and "text truncated at 20 characters" in short.warnings


def test_without_a_converter_the_message_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", _path_with_only(tmp_path))
    with pytest.raises(ExtractionError, match=r"^legacy Word \.doc file: install LibreOffice \(or catdoc\) to read it$"):
        extract(LEGACY / "report.doc")
    with pytest.raises(ExtractionError, match=r"^legacy PowerPoint \.ppt file: install LibreOffice \(or catppt\)"):
        extract(LEGACY / "deck.ppt")


def test_password_protected_legacy_files(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", _path_with_only(tmp_path))  # refused before any converter runs
    with pytest.raises(ExtractionError, match="^Word document is password-protected$"):
        extract(LEGACY / "encrypted.doc")
    with pytest.raises(ExtractionError, match="^presentation is password-protected$"):
        extract(LEGACY / "encrypted.ppt")


def test_a_doc_that_is_really_rtf_html_text_or_docx(tmp_path, make_docx):
    rtf = tmp_path / "memo.doc"
    rtf.write_bytes(rb"{\rtf1\ansi Budget approved for the yaw motor.\par}")
    html = tmp_path / "page.doc"
    html.write_text("<html><body><h1>Minutes</h1><p>Crane booked for May.</p></body></html>")
    text = tmp_path / "notes.doc"
    text.write_text("Plain notes: check the anemometer.\n", encoding="cp1252")
    docx = tmp_path / "new.doc"
    shutil.copyfile(make_docx("x.docx", ["Report", "Blade crack found on T3."]), docx)
    expected = {rtf: ("Budget approved for the yaw motor.", "an RTF document saved with a .doc name"),
                html: ("Crane booked for May.", "a web page saved with a .doc name"),
                text: ("Plain notes: check the anemometer.", "a plain-text file saved with a .doc name"),
                docx: ("Blade crack found on T3.", "a .docx document saved with a .doc name")}
    for path, (sentence, note) in expected.items():
        doc = extract(path, format="doc")
        assert sentence in doc.text and doc.warnings[0] == note and doc.format == "doc", path.name


def test_a_word_file_named_ppt_says_what_it_holds(tmp_path):
    path = tmp_path / "misnamed.ppt"
    shutil.copyfile(LEGACY / "report.doc", path)
    with pytest.raises(ExtractionError, match=r"holds a Word document; rename it to \.doc"):
        extract(path)


def test_damaged_legacy_file(tmp_path):
    path = tmp_path / "broken.ppt"
    path.write_bytes(b"not an office file at all, just words")
    with pytest.raises(ExtractionError, match="^corrupt presentation: "):
        extract(path)

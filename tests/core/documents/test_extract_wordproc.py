"""OpenDocument text and RTF."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from spar_desktop.core.documents.budget import BudgetExceeded, ExtractionBudget
from spar_desktop.core.documents.errors import ExtractionError
from spar_desktop.core.documents.extract import extract


def make_odt(path: Path, paragraphs: int = 0) -> Path:
    from odf import dc
    from odf.draw import Frame, TextBox
    from odf.office import Annotation
    from odf.opendocument import OpenDocumentText
    from odf.table import Table, TableCell, TableColumn, TableRow
    from odf.text import H, List, ListItem, P, S, Span

    doc = OpenDocumentText()
    doc.text.addElement(H(outlinelevel=1, text="Gearbox inspection report"))
    para = P(text="The main bearing on turbine T7")
    para.addElement(S(c=3))
    para.addElement(Span(text="showed pitting."))
    note = Annotation()
    note.addElement(P(text="REVIEWER COMMENT"))
    para.addElement(note)
    doc.text.addElement(para)
    items = List()
    for text in ("Replace the bearing", "Check the oil"):
        item = ListItem()
        item.addElement(P(text=text))
        items.addElement(item)
    doc.text.addElement(items)
    table = Table(name="Status")
    table.addElement(TableColumn(numbercolumnsrepeated=2))
    for row in (["Component", "Status"], ["Gearbox", "Replace"], ["Blade", "OK"]):
        tr = TableRow()
        for value in row:
            cell = TableCell()
            cell.addElement(P(text=value))
            tr.addElement(cell)
        table.addElement(tr)
    doc.text.addElement(table)
    anchor = P(text="See box:")
    frame = Frame(width="5cm", height="2cm", anchortype="as-char")
    box = TextBox()
    box.addElement(P(text="Torque 450 Nm"))
    frame.addElement(box)
    anchor.addElement(frame)
    doc.text.addElement(anchor)
    for i in range(paragraphs):
        doc.text.addElement(P(text=f"Filler paragraph {i} about turbines."))
    doc.meta.addElement(dc.Title(text="Gearbox inspection"))
    doc.save(str(path))
    return path


def test_odt_headings_paragraphs_lists_tables_in_order(tmp_path):
    doc = extract(make_odt(tmp_path / "report.odt"))
    assert doc.format == "odt" and doc.title == "Gearbox inspection"
    assert [p.page for p in doc.pages] == [1]
    assert doc.text.split("\n\n") == [
        "Gearbox inspection report",
        "The main bearing on turbine T7 showed pitting.",
        "Replace the bearing", "Check the oil",
        "Component: Gearbox; Status: Replace\nComponent: Blade; Status: OK",
        "See box:\nTorque 450 Nm",
    ]
    assert "REVIEWER" not in doc.text


def test_odt_limits_and_damage(tmp_path):
    path = make_odt(tmp_path / "long.odt", paragraphs=2000)
    short = extract(path, budget=ExtractionBudget(max_chars=100))
    assert len(short.text) <= 100 and "text truncated at 100 characters" in short.warnings
    with pytest.raises(BudgetExceeded):
        extract(path, budget=ExtractionBudget(max_seconds=0.0))
    broken = tmp_path / "broken.odt"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(broken, "w") as dst:
        for item in src.infolist():
            data = src.read(item)
            dst.writestr(item.filename, data[:400] if item.filename == "content.xml" else data)
    with pytest.raises(ExtractionError, match="^corrupt document: its content is damaged or incomplete$"):
        extract(broken)
    notzip = tmp_path / "notzip.odt"
    notzip.write_bytes(b"hello, not a zip at all")
    with pytest.raises(ExtractionError, match="^corrupt document: not a valid OpenDocument file$"):
        extract(notzip, format="odt")


RTF = (r"{\rtf1\ansi\ansicpg1252\deff0{\fonttbl{\f0 Arial;}}"
       r"{\info{\title Caf\'e9 inspection}{\author A. Person}}"
       r"\f0\fs24 Inspection of the caf\'e9 roof.\par "
       r"{\pict\pngblip\picw10\pich10 " + "89504e47" * 4000 + r"}"
       r"\b Result:\b0  the \u8364? 40k repair is approved.\par"
       r"{\*\generator Word;}}")


def test_rtf_text_title_and_pictures_left_out(tmp_path):
    path = tmp_path / "memo.rtf"
    path.write_bytes(RTF.encode("ascii"))
    doc = extract(path)
    assert doc.format == "rtf" and doc.title == "Café inspection"
    assert doc.text == "Inspection of the café roof.\nResult: the € 40k repair is approved."
    assert "89504e47" not in doc.text


def test_rtf_over_the_budget_is_refused_and_non_rtf_is_explained(tmp_path):
    path = tmp_path / "big.rtf"
    path.write_bytes(b"{\\rtf1\\ansi " + b"lorem ipsum dolor sit amet \\par " * 40_000 + b"}")
    with pytest.raises(BudgetExceeded, match="^too large: "):
        extract(path, budget=ExtractionBudget(max_chars=1000))
    assert "lorem ipsum" in extract(path).text
    fake = tmp_path / "fake.rtf"
    fake.write_bytes(b"\x00\x01binary junk")
    with pytest.raises(ExtractionError, match="^corrupt RTF: "):
        extract(fake)


def test_rtf_with_megabytes_of_pictures_is_read_quickly(tmp_path):
    import time

    path = tmp_path / "photos.rtf"
    picture = b"{\\pict\\jpegblip " + b"ffd8ffe000104a46\r\n" * 400_000 + b"}"  # ~7 MB of hex
    path.write_bytes(b"{\\rtf1\\ansi Before. \\par " + picture + b" After the photo.\\par}")
    started = time.perf_counter()
    doc = extract(path, budget=ExtractionBudget(max_chars=10_000))
    assert time.perf_counter() - started < 3.0
    assert doc.text == "Before.\nAfter the photo."

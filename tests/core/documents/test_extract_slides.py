"""Presentations: each slide's title, body, tables and notes on its own page; bad decks."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from spar_desktop.core.documents.budget import BudgetExceeded, ExtractionBudget
from spar_desktop.core.documents.errors import ExtractionError
from spar_desktop.core.documents.extract import extract


def make_pptx(path: Path, title: str | None = "Quarterly review") -> Path:
    import pptx
    from pptx.chart.data import CategoryChartData
    from pptx.enum.chart import XL_CHART_TYPE
    from pptx.util import Inches

    prs = pptx.Presentation()
    one = prs.slides.add_slide(prs.slide_layouts[1])
    one.shapes.title.text = "Outage summary"
    one.placeholders[1].text = "Outage hours fell by 12 percent\nCrane hire cost £40k"
    one.notes_slide.notes_text_frame.text = "Mention the crane supplier"

    two = prs.slides.add_slide(prs.slide_layouts[5])  # title only: the rest is placed by hand
    two.shapes.title.text = "Costs by site"
    low = two.shapes.add_textbox(Inches(1), Inches(6.5), Inches(6), Inches(0.5))
    low.text_frame.text = "Source: finance ledger"  # added first, but at the bottom of the slide
    table = two.shapes.add_table(3, 2, Inches(1), Inches(1.5), Inches(6), Inches(1.5)).table
    for r, row in enumerate([["Site", "Cost"], ["North", "£3m"], ["South", "£1m"]]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    group = two.shapes.add_group_shape()
    inner = group.shapes.add_textbox(Inches(1), Inches(4), Inches(3), Inches(0.5))
    inner.text_frame.text = "Grouped callout: North over budget"

    three = prs.slides.add_slide(prs.slide_layouts[6])  # blank: no title
    data = CategoryChartData()
    data.categories = ["North", "South"]
    data.add_series("MWh", (120, 80))
    chart = three.shapes.add_chart(XL_CHART_TYPE.COLUMN_CLUSTERED, Inches(1), Inches(1), Inches(6), Inches(4),
                                   data).chart
    chart.has_title = True
    chart.chart_title.text_frame.text = "Output by site"
    if title:
        prs.core_properties.title = title
    prs.save(str(path))
    return path


def test_pptx_slides_are_pages_with_title_body_tables_and_notes(tmp_path):
    doc = extract(make_pptx(tmp_path / "deck.pptx"))
    assert doc.format == "pptx" and doc.title == "Quarterly review"
    assert [p.page for p in doc.pages] == [1, 2, 3]
    one, two, three = (p.text for p in doc.pages)
    assert one == ("Slide 1: Outage summary\n\nOutage hours fell by 12 percent\nCrane hire cost £40k\n\n"
                   "Notes: Mention the crane supplier")
    assert two.split("\n\n") == ["Slide 2: Costs by site", "Site: North; Cost: £3m\nSite: South; Cost: £1m",
                                 "Grouped callout: North over budget", "Source: finance ledger"]
    assert three == "Slide 3\n\nChart: Output by site"


def test_pptx_title_falls_back_to_the_first_slide(tmp_path):
    assert extract(make_pptx(tmp_path / "deck.pptx", title=None)).title == "Outage summary"


def test_password_protected_pptx(tmp_path):
    from msoffcrypto.format.ooxml import OOXMLFile

    plain = make_pptx(tmp_path / "plain.pptx")
    locked = tmp_path / "locked.pptx"
    with open(plain, "rb") as f, open(locked, "wb") as out:
        OOXMLFile(f).encrypt("secret", out)
    with pytest.raises(ExtractionError, match="^presentation is password-protected$"):
        extract(locked)


def test_corrupt_pptx(tmp_path):
    good = make_pptx(tmp_path / "good.pptx")
    bad = tmp_path / "bad.pptx"
    bad.write_bytes(good.read_bytes()[:2000])
    with pytest.raises(ExtractionError, match="^corrupt presentation: "):
        extract(bad)


def test_pptx_limits(tmp_path):
    path = make_pptx(tmp_path / "deck.pptx")
    doc = extract(path, budget=ExtractionBudget(max_pages=2))
    assert [p.page for p in doc.pages] == [1, 2]
    assert "only the first 2 slides were read (the per-file limit)" in doc.warnings
    short = extract(path, budget=ExtractionBudget(max_chars=40))
    assert len(short.text) <= 40 and "text truncated at 40 characters" in short.warnings
    with pytest.raises(BudgetExceeded, match="too slow to read"):
        extract(path, budget=ExtractionBudget(max_seconds=0.0))


def test_pptx_with_large_media_is_read_without_writing_beside_it(tmp_path):
    share = tmp_path / "share"
    share.mkdir()
    path = make_pptx(share / "video.pptx")
    with zipfile.ZipFile(path, "a", zipfile.ZIP_DEFLATED) as zf:  # a 40 MB "video" (compresses to little)
        zf.writestr("ppt/media/media1.mp4", bytes(40 * 1024 * 1024))
    before = sorted(share.iterdir())
    doc = extract(path)
    assert "Slide 2: Costs by site" in doc.text
    assert sorted(share.iterdir()) == before


# --------------------------------------------------------------------------------------- ODP


def make_odp(path: Path) -> Path:
    from odf import dc
    from odf.draw import Frame, G, Page, TextBox
    from odf.namespaces import PRESENTATIONNS
    from odf.opendocument import OpenDocumentPresentation
    from odf.presentation import Notes
    from odf.style import MasterPage, PageLayout, PageLayoutProperties
    from odf.table import Table, TableCell, TableRow
    from odf.text import P

    doc = OpenDocumentPresentation()
    layout = PageLayout(name="PL")
    layout.addElement(PageLayoutProperties(pagewidth="28cm", pageheight="21cm"))
    doc.automaticstyles.addElement(layout)
    master = MasterPage(name="Default", pagelayoutname=layout)
    doc.masterstyles.addElement(master)

    def frame(text: str, y: str, cls: str | None = None):
        f = Frame(width="20cm", height="2cm", x="2cm", y=y)
        if cls:
            f.setAttrNS(PRESENTATIONNS, "class", cls)
        box = TextBox()
        f.addElement(box)
        box.addElement(P(text=text))
        return f

    one = Page(masterpagename=master, name="one")
    one.addElement(frame("Source: site logs", "15cm"))
    one.addElement(frame("Outage review", "1cm", "title"))
    table_frame = Frame(width="20cm", height="3cm", x="2cm", y="5cm")
    table = Table()
    for row in (["Site", "Hours"], ["North", "12"]):
        tr = TableRow()
        table.addElement(tr)
        for value in row:
            cell = TableCell()
            cell.addElement(P(text=value))
            tr.addElement(cell)
    table_frame.addElement(table)
    one.addElement(table_frame)
    group = G()
    group.addElement(frame("Callout lower", "11cm"))
    group.addElement(frame("Callout upper", "9cm"))
    one.addElement(group)
    notes = Notes()
    notes.addElement(frame("Mention the crane", "1cm", "notes"))
    one.addElement(notes)
    two = Page(masterpagename=master, name="two")
    two.addElement(frame("Next steps", "1cm", "title"))
    two.addElement(frame("Order a new yaw motor", "5cm", "outline"))
    for page in (one, two):
        doc.presentation.addElement(page)
    doc.meta.addElement(dc.Title(text="Outage deck"))
    doc.save(str(path))
    return path


def test_odp_slides_in_reading_order_with_tables_and_notes(tmp_path):
    doc = extract(make_odp(tmp_path / "deck.odp"))
    assert doc.format == "odp" and doc.title == "Outage deck"
    assert [p.page for p in doc.pages] == [1, 2]
    assert doc.pages[0].text.split("\n\n") == [
        "Slide 1: Outage review", "Site: North; Hours: 12", "Callout upper", "Callout lower",
        "Source: site logs", "Notes: Mention the crane"]
    assert doc.pages[1].text == "Slide 2: Next steps\n\nOrder a new yaw motor"


def test_odp_limits_and_damage(tmp_path):
    path = make_odp(tmp_path / "deck.odp")
    doc = extract(path, budget=ExtractionBudget(max_pages=1))
    assert [p.page for p in doc.pages] == [1] and "only the first 1 slides were read (the per-file limit)" in doc.warnings
    broken = tmp_path / "broken.odp"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(broken, "w") as dst:
        for item in src.infolist():
            data = src.read(item)
            dst.writestr(item.filename, data[:300] if item.filename == "content.xml" else data)
    with pytest.raises(ExtractionError, match="^corrupt presentation: "):
        extract(broken)

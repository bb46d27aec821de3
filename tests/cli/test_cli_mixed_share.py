"""A real legacy share, end to end through the CLI: spreadsheets, slides, mail with an attachment,
a zip with a folder inside, a scanned page, an image and duplicates. `spar index` lists them (archive
members and attachments as child documents), a workspace over all of it is built, and a sentence
from each kind is found at the right file and sheet/slide/page (JSON gives the child path)."""

from __future__ import annotations

import io
import json
import os
import zipfile
from datetime import datetime
from email.message import EmailMessage
from pathlib import Path

import pytest

from spar_desktop.cli import main


def spar(capsys, data: Path, *args: str) -> tuple[int, str, str]:
    code = main(["--data-dir", str(data), *args])
    out, err = capsys.readouterr()
    return code, out, err


def _docx_bytes(text: str) -> bytes:
    import docx

    d = docx.Document()
    d.add_paragraph(text)
    buf = io.BytesIO()
    d.save(buf)
    return buf.getvalue()


def _pdf_bytes(pages: list[str]) -> bytes:
    import pymupdf

    doc = pymupdf.open()
    for text in pages:
        page = doc.new_page()
        page.insert_textbox(pymupdf.Rect(72, 72, 540, 760), text, fontsize=11)
    data = doc.tobytes()
    doc.close()
    return data


def _scanned_pdf_and_png(text: str) -> tuple[bytes, bytes]:
    """A page of typed text rasterised at 200 dpi: the PDF has only the image, no text layer."""
    import pymupdf

    src = pymupdf.open()
    page = src.new_page(width=595, height=300)
    page.insert_textbox(pymupdf.Rect(40, 40, 555, 280), text, fontsize=14)
    png = page.get_pixmap(dpi=200).tobytes("png")
    src.close()
    scan = pymupdf.open()
    out = scan.new_page(width=595, height=300)
    out.insert_image(out.rect, stream=png)
    data = scan.tobytes()
    scan.close()
    return data, png


def make_share(root: Path) -> None:
    from openpyxl import Workbook
    from pptx import Presentation

    (root / "Operations").mkdir(parents=True)
    wb = Workbook()
    ws = wb.active
    ws.title = "Summary"
    ws.append(["Site", "Turbines"])
    ws.append(["Brackenridge", 12])
    ws2 = wb.create_sheet("Blade inspections")
    ws2.append(["Asset", "Erosion category", "Inspector"])
    for i in range(1, 13):
        ws2.append([f"BR-T{i:02d}", 4 if i == 12 else 1 + i % 3, "Owen Pritchard"])
    wb.save(root / "Operations" / "inspections.xlsx")

    deck = Presentation()
    for title, body in (("Project Osprey", "Steering committee, March 2024"),
                        ("Battery risks", "Thermal runaway containment requires a sprinkler-free aerosol system")):
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text = body
    deck.save(root / "Operations" / "osprey.pptx")

    mail = EmailMessage()
    mail["From"] = "Catriona Bell <c.bell@example.com>"
    mail["To"] = "Tomasz Nowak <t.nowak@example.com>"
    mail["Date"] = "Tue, 14 May 2019 09:30:00 +0000"
    mail["Subject"] = "Crane hire for the gearbox exchange"
    mail.set_content("Tomasz, the crane booking is confirmed for the 21st. Details attached.")
    mail.add_attachment(_docx_bytes("The mobile crane must stay clear of the substation fence by eleven metres."),
                        maintype="application",
                        subtype="vnd.openxmlformats-officedocument.wordprocessingml.document",
                        filename="crane-plan.docx")
    (root / "Operations" / "crane.eml").write_bytes(bytes(mail))

    notes = "Falcon lessons learned: vibration sensors were mounted on the wrong bearing housing."
    with zipfile.ZipFile(root / "audit-2019.zip", "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("2019/audit.pdf", _pdf_bytes(["Audit cover page.",
                                                   "Finding 7: the permit-to-work register had unsigned entries."]))
        zf.writestr("2019/notes.md", notes)
    (root / "Falcon-notes.md").write_text(notes, encoding="utf-8")  # a loose copy of a zipped file
    (root / "Copies").mkdir()
    (root / "Copies" / "Falcon-notes (1).md").write_text(notes, encoding="utf-8")  # a sync duplicate

    scan, png = _scanned_pdf_and_png("MEMO: the north access road closes for resurfacing on 3 June.")
    (root / "scanned-memo.pdf").write_bytes(scan)
    _, notice = _scanned_pdf_and_png("SAFETY NOTICE: hard hats beyond this gate.")
    (root / "notice.png").write_bytes(notice)
    stamp = datetime(2024, 3, 1).timestamp()
    for p in root.rglob("*"):
        if p.is_file():
            os.utime(p, (stamp, stamp))


@pytest.mark.slow
def test_a_mixed_share_is_read_and_found_at_the_right_place(tmp_path, capsys):
    share, data = tmp_path / "share", tmp_path / "data"
    make_share(share)
    before = {p: p.read_bytes() for p in share.rglob("*") if p.is_file()}

    code, out, _ = spar(capsys, data, "index", str(share), "--quiet")
    assert code == 0 and "inside archives and mails" in out
    code, out, _ = spar(capsys, data, "files", "--json")
    rows = {Path(r["path"]).name if "!/" not in r["path"] else r["path"].split("!/", 1)[1]: r for r in json.loads(out)}
    assert rows["2019/audit.pdf"]["status"] == "ok" and rows["crane-plan.docx"]["format"] == "docx"
    mail = rows["crane.eml"]
    assert mail["title"] == "Crane hire for the gearbox exchange" and mail["author"].startswith("Catriona Bell")
    assert mail["created_at"].startswith("2019-05-14")  # mail dates drive date tags and filters

    code, out, _ = spar(capsys, data, "files", "--duplicates", "--json")
    [group] = json.loads(out)
    assert len(group["paths"]) == 3 and any(p.endswith("audit-2019.zip!/2019/notes.md") for p in group["paths"])

    assert spar(capsys, data, "ws", "create", "all", "--all-files")[0] == 0
    code, out, _ = spar(capsys, data, "ws", "build", "all", "--json")
    built = json.loads(out)
    assert code == 0 and built["duplicates"] == 2, built

    def top(query: str) -> dict:
        code, out, _ = spar(capsys, data, "ws", "search", "all", query, "--json", "--k", "3")
        assert code == 0
        return json.loads(out)["hits"][0]

    hit = top("erosion category of BR-T12")
    assert hit["path"].endswith("inspections.xlsx") and hit["page_start"] == 2  # the second sheet
    assert "BR-T12" in hit["text"] and "Erosion category" in hit["text"]
    hit = top("thermal runaway containment")
    assert hit["path"].endswith("osprey.pptx") and hit["page_start"] == 2  # the second slide
    hit = top("how far must the crane stay from the substation fence")
    assert hit["path"].endswith("crane.eml!/crane-plan.docx")
    hit = top("permit-to-work register unsigned entries")
    assert hit["path"].endswith("audit-2019.zip!/2019/audit.pdf") and hit["page_start"] <= 2 <= hit["page_end"]
    hit = top("vibration sensors mounted on the wrong bearing housing")
    assert len(hit["also_at"]) == 2  # three copies, one hit
    hit = top("north access road resurfacing")
    assert hit["path"].endswith("scanned-memo.pdf") and "resurfacing" in hit["text"].lower()  # OCR
    hit = top("hard hats beyond the gate")
    assert hit["path"].endswith("notice.png")

    code, out, _ = spar(capsys, data, "ws", "files", "all", "--json")
    states = {Path(r["path"]).name: r for r in json.loads(out)}
    assert states["scanned-memo.pdf"]["state"] == "ready" and "OCR" in (states["scanned-memo.pdf"]["error"] or "")
    assert {p: p.read_bytes() for p in share.rglob("*") if p.is_file()} == before  # nothing written in the share

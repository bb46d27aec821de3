"""A share with child documents for the UI tests: a zip holding a PDF, a text file, a workbook
(also lying loose next to it: a copy) and a deck."""

from __future__ import annotations

import zipfile
from pathlib import Path

from tests.ui.conftest import set_mtime, write_pdf

PDF_PAGES = ["Audit scope. The 2019 accounts of the northern site.",
             "Findings. The fuel ledger was not reconciled in March.",
             "Conclusion. Reconcile the ledger monthly."]
SHEETS = {"Summary": "total spend", "Fuel": "diesel litres", "Travel": "train tickets"}
SLIDES = ["Steering committee", "Budget status", "Risks", "Next steps"]


def write_workbook(path: Path) -> Path:
    import openpyxl

    wb = openpyxl.Workbook()
    wb.active.title = next(iter(SHEETS))
    for n, (name, text) in enumerate(SHEETS.items()):
        ws = wb.active if n == 0 else wb.create_sheet(name)
        ws["A1"], ws["A2"] = "Item", text
    wb.save(path)
    return path


def write_deck(path: Path) -> Path:
    from pptx import Presentation

    deck = Presentation()
    for title in SLIDES:
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text = f"{title}: notes for the slide"
    deck.save(path)
    return path


def write_child_share(root: Path) -> Path:
    """share/Finance/Reports.zip (2019/audit.pdf, notes.txt, book.xlsx, deck.pptx) and
    share/Finance/book.xlsx, the same bytes as the zipped workbook."""
    finance = root / "Finance"
    finance.mkdir(parents=True, exist_ok=True)
    work = root.parent / "zip-src"
    work.mkdir(exist_ok=True)
    pdf = write_pdf(work / "audit.pdf", PDF_PAGES)
    book = write_workbook(finance / "book.xlsx")
    deck = write_deck(work / "deck.pptx")
    with zipfile.ZipFile(finance / "Reports.zip", "w") as z:
        z.write(pdf, "2019/audit.pdf")
        z.writestr("notes.txt", "Notes on the audit: the ledger needs a monthly check.")
        z.write(book, "book.xlsx")
        z.write(deck, "deck.pptx")
    for p in (finance / "Reports.zip", book):
        set_mtime(p, 2020)
    return root

"""Files in the formats read beyond plain documents: one of each, so a new user sees them work.

- a scanned memo: a PDF whose only page is an image (no text layer) -> OCR
- a phone photo of a safety notice (JPEG) -> OCR
- a workbook with two sheets (XLSX) -> one page per sheet
- a slide deck with a table and speaker notes (PPTX) -> one page per slide
- a mail reply with a quoted original and an attached DOCX (EML) -> the attachment is a child document
- a zipped folder of 2019 audit papers (ZIP) -> each member is a child document

Glyphs are drawn with PyMuPDF's built-in Base-14 fonts (no system fonts) and composited with Pillow
and numpy using fixed seeds; zips get fixed member timestamps and the Office files fixed core
properties, so re-running the generator produces identical bytes.
"""

from __future__ import annotations

import datetime as dt
import io
import textwrap
import zipfile
from datetime import date as D

from .blocks import H1, H2, META, P, TABLE, UL, Doc, Raw, _fixed_zip, _pdf_date, docx_bytes, pdf_bytes
from .org import BESS_EPC, ENG, FD, HSE, MD, OSPREY_PM, RELIABILITY, SITE_A_MGR, SOLAR_LEAD

SCANNED_MEMO = "Operations/Incident-Reports/2023/IR-2023-002-Site-Memo-Ice-Fall-BR-T05-scanned.pdf"
NOTICE_PHOTO = "Engineering/Project-Osprey/2024/Photos/BESS-Compound-Safety-Notice.jpg"
BLADE_WORKBOOK = "Operations/Asset-Register/Blade-Inspection-Results-2024.xlsx"
OSPREY_DECK = "Management/Steering-Committee/Osprey-Steering-Committee-2024-07-23.pptx"
NEAR_MISS_MAIL = "Operations/Incident-Reports/2024/RE-Near-miss-IR-2024-004-excavator-near-33kV-cable.eml"
AUDIT_ZIP = "Archive/Legacy/Audit-Papers-2019.zip"

MAIL_DOMAIN = "northwind-renewables.example"


def _mail(name: str) -> str:
    first, last = name.split()[-2:]
    return f"{first}.{last}@{MAIL_DOMAIN}".lower()


# ---------------------------------------------------------------------------------------------
# rendering helpers: PyMuPDF draws the text, Pillow/numpy make it look scanned or photographed
# ---------------------------------------------------------------------------------------------
def _raster(page, dpi: int):
    """A PyMuPDF page as a greyscale or RGB Pillow image at ``dpi``."""
    from PIL import Image

    pix = page.get_pixmap(dpi=dpi, alpha=False)
    mode = "L" if pix.n == 1 else "RGB"
    return Image.frombytes(mode, (pix.width, pix.height), pix.samples)


def _jpeg(img, quality: int, dpi: int, exif=None) -> bytes:
    buf = io.BytesIO()
    kwargs = {"exif": exif} if exif is not None else {}
    img.save(buf, "JPEG", quality=quality, optimize=True, dpi=(dpi, dpi), **kwargs)
    return buf.getvalue()


# ---------------------------------------------------------------------------------------------
# 1. scanned memo (PDF, image only)
# ---------------------------------------------------------------------------------------------
MEMO_HEAD = [
    ("NORTHWIND RENEWABLES LTD", "cobo", 15),
    ("Brackenridge Wind Farm - Site Office", "cobo", 12),
    ("", "cour", 12),
    ("M E M O R A N D U M", "cobo", 14),
    ("", "cour", 12),
]
MEMO_FIELDS = [
    ("To:", "All Brackenridge staff and visiting contractors"),
    ("From:", f"{SITE_A_MGR}, Site Manager"),
    ("Cc:", f"{HSE}, Head of HSE"),
    ("Date:", "30 January 2023"),
    ("Ref:", "BR-MEMO-2023-01 (follows near miss IR-2023-002)"),
    ("Subject:", "Ice fall - winter exclusion zone around the turbines"),
]
MEMO_BODY = [
    """On 24 January 2023 a slab of ice about the size of a dinner plate fell from BR-T05 and landed on
    the access road 40 metres from the tower while a technician's van was passing. Nobody was hurt.""",
    "With immediate effect, and until further notice:",
    """1. When the air temperature at the met mast is below 3 degrees C, or ice can be seen on the blades,
    nobody may stand, park or walk within 150 metres of any turbine that is running.""",
    """2. Vehicles use the northern loop road past BR-T01 and BR-T02. The road between BR-T04 and BR-T06
    is closed on icy mornings.""",
    """3. A turbine is stopped and yawed away from the road before anyone approaches it. Wait 30 minutes
    after the rotor stops.""",
    """4. The first person on site each morning sets out the yellow ICE RISK boards at the site
    entrance.""",
    """The ice log is kept in the red binder by the kettle in the site office. Please sign the sheet
    inside it to confirm you have read this memo.""",
]


def scanned_memo() -> bytes:
    import numpy as np
    import pymupdf
    from PIL import Image, ImageFilter

    dpi = 200
    src = pymupdf.open()
    page = src.new_page(width=595, height=842)
    y = 80.0
    for text, font, size in MEMO_HEAD:
        page.insert_text((72, y), text, fontname=font, fontsize=size)
        y += size * 1.45
    for key, val in MEMO_FIELDS:
        page.insert_text((72, y), key.ljust(10) + val, fontname="cobo", fontsize=12)
        y += 17.5
    page.draw_line((72, y - 6), (523, y - 6), width=0.8)
    y += 14
    for para in MEMO_BODY:
        text = " ".join(para.split())
        indent = "   " if text[:2] in ("1.", "2.", "3.", "4.") else ""
        lines = textwrap.wrap(text, 62, subsequent_indent=indent)
        for line in lines:
            page.insert_text((72, y), line, fontname="cobo", fontsize=12)
            y += 17
        y += 9
    y += 16
    for line in ("G. Whitfield", "", f"{SITE_A_MGR}", "Site Manager, Brackenridge"):
        page.insert_text((72, y), line, fontname="cobo", fontsize=12)
        y += 17
    # the site office's "received" stamp, a little crooked
    stamp = pymupdf.Rect(392, 44, 548, 92)
    page.draw_rect(stamp, color=(0.35, 0.35, 0.35), width=1.6)
    page.insert_textbox(stamp + (4, 6, -4, -2), "BR SITE OFFICE\nFILED 31 JAN 2023", fontname="hebo",
                        fontsize=10.5, align=1, color=(0.35, 0.35, 0.35))
    img = _raster(page, dpi).convert("L")
    src.close()

    # scanner look: off-white paper with grain, slightly soft ink, a crooked feed, a few specks
    rng = np.random.default_rng(20230130)
    ink = np.asarray(img, dtype=np.float32) / 255.0
    h, w = ink.shape
    paper = 243.0 + rng.normal(0.0, 3.0, size=(h, w)) + np.linspace(-3.0, 2.0, w)[None, :]
    out = paper * (0.1 + 0.9 * ink)  # ink never quite black
    for _ in range(160):  # dust specks
        cy, cx, r = int(rng.integers(0, h)), int(rng.integers(0, w)), int(rng.integers(1, 3))
        out[max(cy - r, 0):cy + r, max(cx - r, 0):cx + r] *= float(rng.uniform(0.45, 0.8))
    out[:, :10] *= 0.55  # shadow of the scanner lid along the left edge
    scan = Image.fromarray(np.clip(out, 0, 255).astype(np.uint8), "L")
    scan = scan.filter(ImageFilter.GaussianBlur(0.6)).rotate(-0.45, resample=Image.BICUBIC, fillcolor=238)
    jpeg = _jpeg(scan, quality=55, dpi=dpi)

    pdf = pymupdf.open()
    pg = pdf.new_page(width=595, height=842)
    pg.insert_image(pg.rect, stream=jpeg)
    when = _pdf_date(D(2023, 1, 31))
    # what an office multifunction printer writes: no title, no author, no text layer
    pdf.set_metadata({"creator": "NWR-BR-MFP01 Scan to PDF", "producer": "NWR-BR-MFP01 Scan to PDF",
                      "creationDate": when, "modDate": when})
    data = pdf.tobytes(garbage=3, deflate=True, no_new_id=True)
    pdf.close()
    return data


# ---------------------------------------------------------------------------------------------
# 2. photo of a safety notice (JPEG)
# ---------------------------------------------------------------------------------------------
NOTICE_LINES = [  # (text, font, size, colour)
    ("BATTERY ENERGY STORAGE COMPOUND", "hebo", 17, (0, 0, 0)),
    ("HF-BESS-01 - HOLLINS FLATS SOLAR PARK", "hebo", 13, (0, 0, 0)),
    ("", "helv", 8, (0, 0, 0)),
    ("AUTHORISED PERSONS ONLY", "hebo", 16, (0, 0, 0)),
    ("No entry without a Northwind escort and a signed permit", "helv", 12, (0, 0, 0)),
    ("", "helv", 8, (0, 0, 0)),
    ("IN CASE OF FIRE OR SMOKE FROM A CONTAINER:", "hebo", 13, (0, 0, 0)),
    ("DO NOT OPEN CONTAINER DOORS", "hebo", 16, (0.75, 0.05, 0.05)),
    ("Call 999, then the Northwind control room on 01632 960 417", "helv", 12, (0, 0, 0)),
    ("Muster point M3: solar park main gate", "hebo", 13, (0, 0, 0)),
]


NOTICE_WORD_GAP = 0.75  # em: signs are set with generous word spacing (and OCR keeps the words apart)


def _centred_words(page, cx: float, y: float, text: str, font: str, size: float, colour) -> None:
    import pymupdf

    words = text.split()
    widths = [pymupdf.get_text_length(w, fontname=font, fontsize=size) for w in words]
    gap = NOTICE_WORD_GAP * size
    x = cx - (sum(widths) + gap * (len(words) - 1)) / 2
    for word, width in zip(words, widths):
        page.insert_text((x, y), word, fontname=font, fontsize=size, color=colour)
        x += width + gap


def notice_photo() -> bytes:
    import numpy as np
    import pymupdf
    from PIL import Image, ImageDraw, ImageFilter

    # the sign itself
    src = pymupdf.open()
    page = src.new_page(width=420, height=274)
    page.draw_rect(page.rect, color=None, fill=(1, 1, 1))
    page.draw_rect(pymupdf.Rect(0, 0, 420, 62), color=None, fill=(0.80, 0.08, 0.08))
    # warning triangle and the word DANGER in the red band
    page.draw_polyline([(22, 52), (46, 10), (70, 52), (22, 52)], color=(1, 1, 1), fill=(1, 0.85, 0.1), width=2)
    page.insert_text((42.5, 47), "!", fontname="hebo", fontsize=26, color=(0, 0, 0))
    page.insert_text((92, 46), "DANGER", fontname="hebo", fontsize=34, color=(1, 1, 1))
    y = 88.0
    for text, font, size, colour in NOTICE_LINES:
        if text:
            _centred_words(page, 210, y, text, font, size, colour)
        y += size * 1.42
    page.draw_rect(page.rect + (4, 4, -4, -4), color=(0.80, 0.08, 0.08), width=2.5)
    sign = _raster(page, 160).convert("RGB")
    src.close()

    # the scene: a grey-green corrugated container wall, lit from the upper left
    rng = np.random.default_rng(20240809)
    W, H = 1280, 960
    x = np.arange(W, dtype=np.float32)
    ridges = 10.0 * np.sin(x / 9.0)[None, :] + 4.0 * np.sin(x / 3.1)[None, :]
    light = np.linspace(18.0, -22.0, H, dtype=np.float32)[:, None] + np.linspace(10.0, -10.0, W)[None, :]
    base = np.array([118.0, 132.0, 121.0], dtype=np.float32)
    wall = base[None, None, :] + (ridges + light)[:, :, None]
    scene = Image.fromarray(np.clip(wall, 0, 255).astype(np.uint8), "RGB")

    # the sign, slightly turned and in perspective, with a soft shadow and four fixing screws
    sw, sh = sign.size
    sign = sign.rotate(1.6, resample=Image.BICUBIC, expand=True, fillcolor=(0, 0, 0))
    mask = Image.new("L", (sw, sh), 255).rotate(1.6, resample=Image.BICUBIC, expand=True, fillcolor=0)
    ox, oy = (W - sign.width) // 2 + 22, (H - sign.height) // 2 - 6
    shadow = Image.new("L", (W, H), 0)
    shadow.paste(mask, (ox + 14, oy + 16))
    shadow = shadow.filter(ImageFilter.GaussianBlur(12))
    scene = Image.composite(Image.new("RGB", (W, H), (40, 44, 40)), scene, shadow.point(lambda v: v * 0.55))
    scene.paste(sign, (ox, oy), mask)
    draw = ImageDraw.Draw(scene)
    for fx, fy in ((0.03, 0.04), (0.97, 0.04), (0.03, 0.96), (0.97, 0.96)):
        cx, cy = ox + int(fx * sign.width), oy + int(fy * sign.height)
        draw.ellipse((cx - 7, cy - 7, cx + 7, cy + 7), fill=(150, 150, 150), outline=(90, 90, 90))
    # phone camera: a slight keystone, vignetting, sensor noise, soft focus
    scene = scene.transform((W, H), Image.Transform.QUAD, (24, 10, 0, H, W, H - 18, W - 8, 0),
                            resample=Image.BICUBIC)
    arr = np.asarray(scene, dtype=np.float32)
    yy, xx = np.mgrid[0:H, 0:W]
    vignette = 1.0 - 0.28 * (((xx - W / 2) / (W / 2)) ** 2 + ((yy - H / 2) / (H / 2)) ** 2) / 2
    arr = arr * vignette[:, :, None] * np.array([1.03, 1.0, 0.95]) + rng.normal(0.0, 4.5, size=arr.shape)
    photo = Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8), "RGB").filter(ImageFilter.GaussianBlur(0.7))
    exif = Image.Exif()
    exif[0x010F] = "Samsung"  # Make
    exif[0x0110] = "Galaxy XCover6 Pro"  # Model
    exif[0x0132] = "2024:08:09 10:14:32"  # DateTime
    exif[0x013B] = SOLAR_LEAD  # Artist
    return _jpeg(photo, quality=80, dpi=72, exif=exif)


# ---------------------------------------------------------------------------------------------
# 3. workbook (XLSX): blade inspection results, one sheet per site
# ---------------------------------------------------------------------------------------------
BLADE_HEADER = ["Asset", "Inspection date", "Blade erosion category", "Inspector", "Notes"]
DRONE = "Skyline Blade Services (drone)"
BLADE_ROWS = {
    "Brackenridge": [  # LEP shells applied by Project Heron in 2022; inspected April 2024
        ("BR-T01", D(2024, 4, 8), 1, DRONE, "LEP intact on all blades"),
        ("BR-T02", D(2024, 4, 8), 1, DRONE, "LEP intact on all blades"),
        ("BR-T03", D(2024, 4, 9), 2, DRONE, "Blade B: lightning repair of Sept 2023 (IR-2023-019) sound; minor pitting on the new tip"),
        ("BR-T04", D(2024, 4, 9), 1, DRONE, "LEP intact on all blades"),
        ("BR-T05", D(2024, 4, 10), 2, DRONE, "Light pitting blade A, outer 2 m"),
        ("BR-T06", D(2024, 4, 10), 1, DRONE, "LEP intact on all blades"),
        ("BR-T07", D(2024, 4, 11), 2, DRONE, "Light pitting blades A and C"),
        ("BR-T08", D(2024, 4, 11), 1, DRONE, "LEP intact on all blades"),
        ("BR-T09", D(2024, 4, 12), 2, DRONE, "Gel-coat crazing blade C at 14 m, monitor"),
        ("BR-T10", D(2024, 4, 12), 1, DRONE, "LEP intact on all blades"),
        ("BR-T11", D(2024, 4, 15), 2, DRONE, "Light pitting blade B"),
        ("BR-T12", D(2024, 4, 15), 4, f"{DRONE}; confirmed by Jamie Doherty (rope access)",
         "Blade B: LEP shell debonded between 8 and 10 m from the tip, laminate exposed. "
         "Erosion category 4 - rope-access repair to be completed before 30 September 2024"),
    ],
    "Carrow Moor": [  # first full survey since commissioning (no LEP shells on the AW-3.0 blades)
        ("CM-T01", D(2024, 5, 13), 2, DRONE, "Leading-edge pitting outer 3 m, all blades"),
        ("CM-T02", D(2024, 5, 13), 3, DRONE, "Blade A: coating loss over 1.2 m; plan LEP in 2025"),
        ("CM-T03", D(2024, 5, 14), 2, DRONE, "Leading-edge pitting outer 3 m"),
        ("CM-T04", D(2024, 5, 14), 2, DRONE, "Leading-edge pitting outer 2 m"),
        ("CM-T05", D(2024, 5, 15), 3, DRONE, "Blade C: coating loss over 0.8 m"),
        ("CM-T06", D(2024, 5, 15), 2, DRONE, "Leading-edge pitting outer 3 m"),
        ("CM-T07", D(2024, 5, 16), 2, DRONE, "Trailing-edge chip blade B at 22 m, cosmetic"),
        ("CM-T08", D(2024, 5, 16), 2, DRONE, "Leading-edge pitting outer 2 m"),
    ],
}


def blade_workbook() -> bytes:
    from openpyxl import Workbook
    from openpyxl.styles import Alignment, Font, PatternFill

    when = dt.datetime(2024, 5, 31, 9, 0, 0)
    wb = Workbook()
    wb.remove(wb.active)
    head_fill = PatternFill("solid", fgColor="DDE6F0")
    for site, rows in BLADE_ROWS.items():
        ws = wb.create_sheet(site)
        ws.append(BLADE_HEADER)
        for cell in ws[1]:
            cell.font = Font(bold=True, color="12355B")
            cell.fill = head_fill
        for asset, day, cat, inspector, notes in rows:
            ws.append([asset, day, cat, inspector, notes])
        for row in ws.iter_rows(min_row=2, min_col=2, max_col=2):
            row[0].number_format = "yyyy-mm-dd"
        for row in ws.iter_rows(min_row=2, min_col=5, max_col=5):
            row[0].alignment = Alignment(wrap_text=True, vertical="top")
        for col, width in zip("ABCDE", (9, 15, 22, 34, 70)):
            ws.column_dimensions[col].width = width
        ws.freeze_panes = "A2"
        ws.auto_filter.ref = ws.dimensions
    p = wb.properties
    p.title = "Blade inspection results 2024"
    p.subject = "Annual blade inspections, Brackenridge and Carrow Moor"
    p.creator = RELIABILITY
    p.lastModifiedBy = RELIABILITY
    p.keywords = "blades; leading-edge erosion; inspection; drone"
    p.created = when
    p.modified = when
    from openpyxl.writer.excel import ExcelWriter

    buf = io.BytesIO()  # not wb.save(): it stamps the modified date with the current time
    ExcelWriter(wb, zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED)).save()
    return _fixed_zip(buf.getvalue(), when.date())


# ---------------------------------------------------------------------------------------------
# 4. slide deck (PPTX): Project Osprey steering committee
# ---------------------------------------------------------------------------------------------
DECK_SLIDES = [
    {
        "title": "Progress since the June meeting",
        "bullets": [
            "Civil works and container foundations complete (5 July 2024)",
            "All four battery containers delivered on 16 July 2024, the revised date",
            "Both PCS skids and the 33 kV transformer set on their plinths",
            "Cable pull to the new 33 kV bay in HF-SUB 80% complete",
            "Safety: no injuries; two near misses reported, both closed",
        ],
        "notes": "The containers came in on four low-loaders through the Fen Lane gate, the only route the "
                 "weight limit on Hollins Bridge allows. Elena's team kept the solar park running throughout.",
    },
    {
        "title": "Programme to energisation",
        "table": [
            ["Stage", "Activity", "Planned", "Status"],
            ["C0", "Pre-commissioning checks, HVAC run-in", "12-16 Aug 2024", "Ready"],
            ["C1", "Container and BMS commissioning", "19-30 Aug 2024", "Ready"],
            ["C2", "Charge/discharge cycling at 0.5C", "26 Aug - 6 Sep 2024", "Planned"],
            ["C4", "Export limitation scheme proving", "16-20 Sep 2024", "Planned"],
            ["C5", "G99 witness test with the DNO", "24 Sep 2024", "Booked"],
            ["C6", "Energisation and 7-day reliability run", "30 Sep - 7 Oct 2024", "Planned"],
        ],
        "notes": "Float to the grid offer deadline of 31 October 2024 is 31 days. The DNO witness test slot "
                 "on 24 September is confirmed in writing.",
    },
    {
        "title": "Cost",
        "bullets": [
            "Approved capital budget: £4,600,000 (Board, 12 March 2024)",
            "Committed: £4,212,000, of which the Halden EPC contract £3,950,000",
            "Spent to 30 June 2024: £2,940,000",
            "Forecast outturn: £4,480,000",
            "Contingency remaining: £176,000",
        ],
        "notes": f"{FD} has seen the forecast. The only open cost risk is the grid offer extension "
                 "(£12,000) if energisation slips past 31 October.",
    },
    {
        "title": "Risks and decision requested",
        "bullets": [
            "OSP-R02 thermal event / HVAC failure: HVAC redundancy, BMS de-rates at 38 °C and trips at 45 °C",
            "OSP-R04 grid offer expiry on 31 October 2024: float 31 days",
            "OSP-R07 work next to the live solar park: Northwind escort in the inverter stations",
            "DECISION: hold one spare HVAC unit on site for the four containers (£38,000 from contingency)",
        ],
        "notes": "Outcome: the steering committee approved the spare HVAC unit for £38,000, on condition that "
                 "Halden confirms the factory wiring check of all four HVAC units before stage C0.",
    },
]


def osprey_deck() -> bytes:
    from pptx import Presentation
    from pptx.util import Inches, Pt

    when = dt.datetime(2024, 7, 23, 9, 0, 0)
    prs = Presentation()
    prs.slide_width, prs.slide_height = Inches(13.333), Inches(7.5)
    title = prs.slides.add_slide(prs.slide_layouts[0])
    title.shapes.title.text = "Project Osprey - Steering Committee"
    title.placeholders[1].text = (f"Meeting 5, 23 July 2024\n{OSPREY_PM}, Project Manager\n"
                                  "5 MW / 10 MWh battery storage at Hollins Flats")
    title.notes_slide.notes_text_frame.text = (
        f"Chair: {MD}. Present: {ENG}, {FD}, {SOLAR_LEAD}, {HSE}; Ingrid Solberg ({BESS_EPC}) for items 2 and 3.")
    for spec in DECK_SLIDES:
        layout = prs.slide_layouts[5] if "table" in spec else prs.slide_layouts[1]
        slide = prs.slides.add_slide(layout)
        slide.shapes.title.text = spec["title"]
        if "table" in spec:
            rows = spec["table"]
            shape = slide.shapes.add_table(len(rows), len(rows[0]), Inches(0.8), Inches(1.7),
                                           Inches(11.7), Inches(0.5) * len(rows))
            for r, row in enumerate(rows):
                for c, text in enumerate(row):
                    cell = shape.table.cell(r, c)
                    cell.text = text
                    cell.text_frame.paragraphs[0].runs[0].font.size = Pt(16)
        else:
            body = slide.placeholders[1].text_frame
            body.text = spec["bullets"][0]
            for line in spec["bullets"][1:]:
                body.add_paragraph().text = line
        slide.notes_slide.notes_text_frame.text = spec["notes"]
    cp = prs.core_properties
    cp.title = "Project Osprey - Steering Committee, 23 July 2024"
    cp.author = OSPREY_PM
    cp.last_modified_by = OSPREY_PM
    cp.subject = "Project Osprey steering committee"
    cp.keywords = "Project Osprey; BESS; steering committee; programme; cost; risks"
    cp.created = when
    cp.modified = when
    cp.revision = 1
    buf = io.BytesIO()
    prs.save(buf)
    return _fixed_zip(buf.getvalue(), when.date())


# ---------------------------------------------------------------------------------------------
# 5. mail thread with an attachment (EML)
# ---------------------------------------------------------------------------------------------
NEAR_MISS_REPORT = Doc(
    "IR-2024-004-Initial-Report.docx",
    D(2024, 9, 3),
    "IR-2024-004 Initial report - excavator near buried 33 kV cable",
    SOLAR_LEAD,
    subject="Near miss, Hollins Flats, Osprey compound",
    keywords="IR-2024-004; near miss; excavation; buried cable; 33 kV; Project Osprey",
    pages=[[
        H1("Near miss IR-2024-004: excavator close to a buried 33 kV cable"),
        META([
            ("Reference", "IR-2024-004"),
            ("Date and time", "3 September 2024, 14:20"),
            ("Site", "Hollins Flats Solar Park (Site C), Osprey BESS compound, south fence"),
            ("Reported by", f"{SOLAR_LEAD}, Solar Operations Lead"),
            ("Contractor", BESS_EPC),
            ("Severity", "Near miss - high potential"),
        ]),
        H2("What happened"),
        P("""Halden's excavator was digging the surface-water drainage trench along the south fence of the
        Osprey compound. The bucket stopped about 400 mm from the yellow marker tape above the buried 33 kV
        export cable from HF-SUB. The banksman saw the tape and stopped the machine. Nobody was hurt and the
        cable was not damaged."""),
        H2("Immediate causes"),
        UL([
            "The cable avoidance tool (CAT) scan was done on 2 September, before the spoil heap was moved; it was not repeated.",
            "The cable route marker posts on that stretch were buried under the spoil heap.",
            "The permit-to-dig showed the trench 3 metres further north than where it was dug.",
        ]),
        H2("Immediate actions"),
        TABLE([
            ["Action", "Owner", "Due"],
            ["Stop mechanical excavation within 2 m of any cable route; hand digging only", "Halden site manager", "3 Sep 2024 (done)"],
            ["Re-scan the compound with a CAT and re-mark all cable routes", "Halden", "5 Sep 2024"],
            ["Re-issue the permit-to-dig with a drawing of the actual trench line", OSPREY_PM, "6 Sep 2024"],
            ["Toolbox talk on buried services for all Osprey site staff", HSE, "9 Sep 2024"],
        ]),
    ]],
)

MAIL_ORIGINAL = f"""\
Catriona,

Near miss this afternoon in the Osprey compound at Hollins Flats. Halden's
excavator was digging the drainage trench along the south fence and the
bucket stopped about 400 mm from the marker tape over the buried 33 kV
export cable. Work stopped at once; nobody hurt, cable undamaged.

I have logged it as IR-2024-004 - my initial report is attached.

Elena

--
{SOLAR_LEAD}
Solar Operations Lead, Hollins Flats Solar Park
Northwind Renewables Ltd
"""

MAIL_REPLY = f"""\
Thanks Elena - good call stopping the job straight away.

Priya, please ask Halden for their permit-to-dig and the CAT scan record
for the trench before they restart. Until we have both, the rule for the
whole compound is: no mechanical digging within 2 metres of any cable
route - hand digging only. I will add this near miss to the Osprey risk
register under OSP-R07 and give the buried-services toolbox talk on
Monday 9 September.

Elena's report is attached again for Ingrid.

Catriona

--
{HSE}
Head of Health, Safety and Environment
Northwind Renewables Ltd | Kestrel House, Port Ellery

On Tue, 3 Sep 2024 at 16:42, {SOLAR_LEAD} <{_mail(SOLAR_LEAD)}> wrote:
""" + "".join(f"> {line}".rstrip() + "\n" for line in MAIL_ORIGINAL.splitlines())


def near_miss_mail() -> bytes:
    import email.policy
    import email.utils
    from email.message import EmailMessage

    bst = dt.timezone(dt.timedelta(hours=1))
    msg = EmailMessage(policy=email.policy.SMTP)
    msg["From"] = f"{HSE} <{_mail(HSE)}>"
    msg["To"] = f"{SOLAR_LEAD} <{_mail(SOLAR_LEAD)}>"
    msg["Cc"] = f"{OSPREY_PM} <{_mail(OSPREY_PM)}>, Ingrid Solberg <ingrid.solberg@haldenenergy.example>"
    msg["Date"] = email.utils.format_datetime(dt.datetime(2024, 9, 4, 9, 15, 22, tzinfo=bst))
    msg["Subject"] = "RE: Near miss IR-2024-004 - excavator near 33 kV cable"
    msg["Message-ID"] = f"<20240904091522.HSE.4471@{MAIL_DOMAIN}>"
    msg["In-Reply-To"] = f"<20240903164200.SOLAR.1187@{MAIL_DOMAIN}>"
    msg["References"] = f"<20240903164200.SOLAR.1187@{MAIL_DOMAIN}>"
    msg["X-Mailer"] = "Microsoft Outlook 16.0"
    msg.set_content(MAIL_REPLY)
    msg.add_attachment(docx_bytes(NEAR_MISS_REPORT), maintype="application",
                       subtype="vnd.openxmlformats-officedocument.wordprocessingml.document",
                       filename=NEAR_MISS_REPORT.path)
    msg.set_boundary("----=_NextPart_NWR_20240904_091522")
    return msg.as_bytes(policy=email.policy.SMTP)


# ---------------------------------------------------------------------------------------------
# 6. a zipped folder of 2019 audit papers (ZIP)
# ---------------------------------------------------------------------------------------------
AUDITOR = "Calder Safety Consulting"
AUDIT_REPORT = Doc(
    "Audit-Papers-2019/Height-Safety-Audit-Brackenridge-2019.pdf",
    D(2019, 6, 28),
    "Height Safety Audit - Brackenridge Wind Farm - June 2019",
    f"Morag Keane, {AUDITOR}",
    subject="Independent audit of height-safety equipment and practice",
    keywords="audit; working at height; rescue kits; Brackenridge; 2019",
    header=f"{AUDITOR} | Report CSC-19-0412 for Northwind Renewables Ltd",
    pages=[
        [
            H1("Height Safety Audit - Brackenridge Wind Farm"),
            META([
                ("Report", "CSC-19-0412"),
                ("Client", "Northwind Renewables Ltd"),
                ("Site visit", "12-13 June 2019"),
                ("Auditor", f"Morag Keane CMIOSH, {AUDITOR}"),
                ("Issued", "28 June 2019"),
                ("Overall rating", "Satisfactory - improvements required"),
            ]),
            H2("1. Scope"),
            P("""The audit covered the ladders, fall-arrest rails, anchor points, service lifts and rescue
            kits of all 12 turbines, the issue and inspection of personal fall-protection equipment, rescue
            training records and the site's working-at-height procedures. Two turbines (BR-T08 and BR-T11)
            were climbed; the others were inspected at the tower base and from records."""),
            H2("2. Summary"),
            P("""Working practice on site is good: technicians climb in pairs, check their equipment before
            use and know the rescue plan. The weaknesses are in record keeping and in the inspection of
            equipment that is rarely used, above all the rescue kits kept in the nacelles."""),
        ],
        [
            H2("3. Findings"),
            TABLE([
                ["No.", "Finding", "Rating"],
                ["F-01", "Ladder and rail inspection records complete for 2018 and 2019", "Good"],
                ["F-02", "Lanyards and harnesses not individually numbered; issue log incomplete", "Improve"],
                ["F-03", "Rescue drill held in October 2018; next one not yet scheduled", "Improve"],
                ["F-04", "Service lift thorough examinations in date on all 12 turbines", "Good"],
                ["F-05", "Anchor point labels faded on BR-T02 and BR-T10", "Minor"],
                ["F-06", "Two GWO certificates expired in May 2019; the technicians still climbing", "Serious"],
                ["F-07", "The rescue kit in the BR-T08 nacelle carried an inspection tag dated March 2017, more than two years out of date", "Serious"],
            ]),
            H2("4. Recommendations"),
            UL([
                "Inspect every nacelle rescue kit within one month and put all rescue kits on the 6-monthly examination schedule.",
                "Number all lanyards and harnesses and keep an issue log per item.",
                "Stop climbing for anyone whose GWO certificate has expired; keep a training matrix with expiry dates.",
                "Hold a rescue drill at each wind site every 12 months.",
            ]),
        ],
    ],
)

AUDIT_NOTES = """\
SITE NOTES - Brackenridge height safety audit (CSC-19-0412)
M. Keane, 12 June 2019

Weather: dry, wind 9 m/s at hub height, climbing allowed.

Climbed BR-T08 and BR-T11 with the site supervisor, Alan Threlkeld (on site
since commissioning in 2012, knows every turbine).

BR-T08: ladder and rail fine. Rescue kit in the nacelle: bag sealed, tag
dated 03/2017. Alan had not seen a rescue kit list - kits "were done by
Aerion". Photographed the tag (photo 14). -> finding F-07.

BR-T11: the ladder-cage bolt at platform 2 was finger-loose; Alan tightened
it on the spot and logged it. Not a finding - fixed during the visit.

Issue rack in the site office: 16 lanyards, none numbered. Two technicians'
GWO certificates expired in May 2019 (names in the confidential annex).

To do: ask Northwind head office for the 2018 rescue drill attendance sheet.
"""

AUDIT_RESPONSE = f"""\
# Management response to audit CSC-19-0412

**From:** {HSE}, HSE Advisor  
**Date:** 5 July 2019

All seven findings are accepted.

| Finding | Action | Done |
|---|---|---|
| F-06 | Both technicians stood down from climbing until their GWO refresher (booked 24 June) | 24 June 2019 |
| F-07 | All 12 nacelle rescue kits inspected by Aerion; 3 kits replaced, including BR-T08's | 3 July 2019 |
| F-02 | Lanyards and harnesses numbered, issue log started | 1 July 2019 |
| F-03 | Rescue drill booked for both wind sites | 17 September 2019 |

The rescue kits are now on the 6-monthly height-safety equipment examination schedule.
"""


def audit_zip() -> bytes:
    members = [
        ("Audit-Papers-2019/", None, (2019, 7, 12, 16, 2, 0)),
        (AUDIT_REPORT.path, pdf_bytes(AUDIT_REPORT), (2019, 6, 28, 11, 40, 0)),
        ("Audit-Papers-2019/Management-Response-2019-07-05.md", AUDIT_RESPONSE.encode("utf-8"), (2019, 7, 5, 15, 12, 0)),
        ("Audit-Papers-2019/Working-Notes/", None, (2019, 7, 12, 16, 2, 0)),
        ("Audit-Papers-2019/Working-Notes/Auditor-Site-Notes-2019-06-12.txt",
         AUDIT_NOTES.replace("\n", "\r\n").encode("utf-8"), (2019, 6, 12, 18, 25, 0)),
    ]
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data, when in members:
            zi = zipfile.ZipInfo(name, date_time=when)
            if data is None:  # a folder entry, as Windows "Send to > Compressed folder" writes them
                zi.external_attr = (0o40755 << 16) | 0x10
                zf.writestr(zi, b"")
            else:
                zi.compress_type = zipfile.ZIP_DEFLATED
                zi.external_attr = 0o644 << 16
                zf.writestr(zi, data)
    return buf.getvalue()


# ---------------------------------------------------------------------------------------------
def rich_files() -> list[Raw]:
    return [
        Raw(SCANNED_MEMO, D(2023, 1, 30), scanned_memo()),
        Raw(NOTICE_PHOTO, D(2024, 8, 9), notice_photo()),
        Raw(BLADE_WORKBOOK, D(2024, 5, 31), blade_workbook()),
        Raw(OSPREY_DECK, D(2024, 7, 23), osprey_deck()),
        Raw(NEAR_MISS_MAIL, D(2024, 9, 4), near_miss_mail()),
        Raw(AUDIT_ZIP, D(2019, 7, 12), audit_zip()),
    ]

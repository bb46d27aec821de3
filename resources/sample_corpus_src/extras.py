"""The exported intranet page, the deliberately awkward archive files, and the corpus README."""

from __future__ import annotations

import gzip
import io
from datetime import date as D

from .blocks import Raw
from .org import HSE

# ---------------------------------------------------------------------------------------------
# Intranet page (saved from the browser, so it has navigation chrome around the content)
# ---------------------------------------------------------------------------------------------
INTRANET_HTML = """<!DOCTYPE html>
<html lang="en-GB">
<head>
<meta charset="utf-8">
<title>HSE Hub - Northwind Intranet</title>
<meta name="author" content="Catriona Bell">
<meta name="description" content="Health, Safety and Environment hub: policies, procedures, incident reporting and safety statistics.">
<meta name="date" content="2023-11-20">
<style>
 body { font-family: Segoe UI, Arial, sans-serif; margin: 0; color: #1d2733; }
 header { background: #12355b; color: #fff; padding: 12px 24px; }
 nav a { color: #cfe3f7; margin-right: 16px; text-decoration: none; }
 main { display: flex; gap: 24px; padding: 16px 24px; }
 article { flex: 3; } aside { flex: 1; background: #eef4f9; padding: 12px; }
 table { border-collapse: collapse; } td, th { border: 1px solid #b7c6d6; padding: 4px 8px; }
 footer { font-size: 12px; color: #667; padding: 12px 24px; border-top: 1px solid #ccd; }
</style>
<script>/* intranet analytics stub */ window.nwTrack = function () {};</script>
</head>
<body>
<header>
  <strong>Northwind Renewables Intranet</strong>
  <nav>
    <a href="/home">Home</a><a href="/people">People</a><a href="/hse" class="active">HSE Hub</a>
    <a href="/engineering">Engineering</a><a href="/finance">Finance</a><a href="/it">IT Help</a>
  </nav>
</header>
<main>
<article>
  <h1>HSE Hub</h1>
  <p>Welcome to the Health, Safety and Environment hub. Everything you need to work safely at our three
  sites is linked from this page. If in doubt, stop the job and call your site manager or the HSE team
  (Catriona Bell, ext. 2210).</p>

  <h2>Our policies</h2>
  <ul>
    <li><a href="../../HR/Policies/HS-POL-001-Health-and-Safety-Policy.pdf">HS-POL-001 Health and Safety Policy</a> - the overall policy, signed by the Managing Director.</li>
    <li><a href="../../HR/Policies/HS-POL-004-Working-at-Height-Policy.pdf">HS-POL-004 Working at Height Policy</a> - governs all work at height: turbine climbs, nacelle and hub work, roofs and ladders. Two-person rule, GWO certificate, rescue plan.</li>
    <li><a href="../../HR/Policies/HS-POL-005-Electrical-Safety-Policy.docx">HS-POL-005 Electrical Safety Policy</a> - LV, HV, DC and battery systems.</li>
    <li><a href="../../HR/Policies/HS-POL-007-Lone-Working-Policy.md">HS-POL-007 Lone Working Policy</a> - check-in every 2 hours; never climb alone.</li>
  </ul>

  <h2>Key procedures</h2>
  <ul>
    <li><a href="../../Operations/Procedures/OP-PRO-112-Tower-Climb-and-Rescue-Procedure.pdf">OP-PRO-112 Tower Climb and Rescue</a> (implements HS-POL-004)</li>
    <li><a href="../../Operations/Procedures/OP-PRO-118-Isolation-and-Lockout.md">OP-PRO-118 Isolation and Lockout</a> (implements HS-POL-005)</li>
    <li><a href="../../Operations/Procedures/OP-PRO-203-Gearbox-Oil-Sampling.docx">OP-PRO-203 Gearbox Oil Sampling</a> - back to 6-monthly sampling since April 2023</li>
  </ul>

  <h2>Latest news</h2>
  <h3>14 November 2023 - Falcon condition monitoring is live</h3>
  <p>All 20 wind turbines now have drivetrain condition monitoring. The system has already found a bearing
  defect on CM-T06 that was fixed up-tower for a fraction of the cost of a gearbox exchange. Alerts go to
  Daniel Achterberg and the site managers.</p>
  <h3>2 November 2023 - Vehicle collision at Carrow Moor</h3>
  <p>No one was hurt, but please remember: radio the site office before driving up the access track, and
  keep to 15 mph (IR-2023-021).</p>
  <h3>June 2023 - Check your lanyard</h3>
  <p>A damaged fall-arrest lanyard was found in the issue rack at Brackenridge (IR-2023-012). Do a proper
  pre-use check in good light, and put any damaged kit in the red quarantine bin.</p>

  <h2>Safety statistics (year to 31 October 2023)</h2>
  <table>
    <tr><th>Measure</th><th>2022</th><th>2023 YTD</th></tr>
    <tr><td>Lost-time injuries</td><td>0</td><td>0</td></tr>
    <tr><td>First-aid cases</td><td>1</td><td>0</td></tr>
    <tr><td>Near misses reported</td><td>9</td><td>12</td></tr>
    <tr><td>High-potential events</td><td>2</td><td>1</td></tr>
    <tr><td>Days since last lost-time injury</td><td colspan="2">1,412</td></tr>
  </table>
</article>
<aside>
  <h2>Report it</h2>
  <p>Report every incident and near miss within 24 hours using the <a href="/hse/report">incident form</a>.
  You will get an IR number by e-mail.</p>
  <h2>Monthly reminder</h2>
  <p>November: GWO certificates expiring - check the training matrix. Tom Ellery's Working at Height
  certificate expires on 5 December.</p>
  <h2>Contacts</h2>
  <p>HSE: Catriona Bell<br>Brackenridge: Grace Whitfield<br>Carrow Moor: Owen Pritchard<br>Hollins Flats: Elena Petrova</p>
</aside>
</main>
<footer>Page owner: Catriona Bell | Last updated 20 November 2023 | Exported from the Northwind intranet</footer>
</body>
</html>
"""


def intranet_files() -> list[Raw]:
    return [Raw("Intranet/HSE-Hub/HSE-Hub-Home.html", D(2023, 11, 20), INTRANET_HTML.encode("utf-8"))]


# ---------------------------------------------------------------------------------------------
# Awkward files: show how the app reports files it cannot read
# ---------------------------------------------------------------------------------------------
def _legacy_commissioning_pdf() -> bytes:
    import pymupdf

    pdf = pymupdf.open()
    for n in range(3):
        page = pdf.new_page()
        page.insert_text(
            (72, 90),
            f"Brackenridge Wind Farm - Commissioning Report (2012) - section {n + 1}\n\n"
            + "Turbine BR-T%02d commissioning tests completed; power curve verification pending.\n" % (n + 1) * 12,
            fontname="helv", fontsize=10,
        )
    pdf.set_metadata({"title": "Brackenridge Commissioning Report", "author": "Aerion Wind Services",
                      "creationDate": "D:20121105090000+00'00'", "modDate": "D:20121105090000+00'00'"})
    data = pdf.tobytes(garbage=3, deflate=True, no_new_id=True)
    # "copy interrupted": keep only the bytes before the first page object, so there is no page tree,
    # no xref table and no trailer; MuPDF cannot repair it and refuses to open the file.
    cut = data.find(b"/Type/Page/")
    return data[: cut if cut > 0 else 300]


def _legacy_scada_export() -> bytes:
    """A gzip file that someone renamed to .txt - binary content with NUL bytes."""
    text = io.StringIO()
    text.write("timestamp;turbine;wind_ms;power_kw;gbx_oil_c\n")
    for i in range(400):
        text.write(f"2019-01-{1 + i // 144:02d} {(i % 144) // 6:02d}:{(i % 6) * 10:02d};BR-T{1 + i % 12:02d};"
                   f"{6 + (i * 7) % 9}.{i % 10};{(i * 37) % 2300};{48 + (i * 3) % 17}\n")
    return gzip.compress(text.getvalue().encode("ascii"), compresslevel=9, mtime=0)


def awkward_files() -> list[Raw]:
    return [
        Raw("Archive/Legacy/Site-Handover-Notes-2016.txt", D(2016, 6, 30), b""),
        Raw("Archive/Legacy/SCADA-Export-Brackenridge-2019.txt", D(2019, 2, 1), _legacy_scada_export()),
        Raw("Archive/Legacy/Brackenridge-Commissioning-Report-2012.pdf", D(2012, 11, 5), _legacy_commissioning_pdf()),
    ]


# ---------------------------------------------------------------------------------------------
# _README.md for the corpus (underscore: the app skips it when indexing, so chat never cites it)
# ---------------------------------------------------------------------------------------------
README = """# Sample corpus: Northwind Renewables Ltd (fictional)

This folder is the bundled demo file share for SPAR Desktop. **Everything in it is invented**:
the company, people, sites, contracts and numbers. It is regenerated by
`resources/make_sample_corpus.py` (content lives in `resources/sample_corpus_src/`); do not edit
the files by hand.

## The organisation

Northwind Renewables Ltd is a small wind and solar owner-operator (about 60 staff, head office at
Kestrel House, Port Ellery). It runs three sites:

| Site | What | Assets |
|---|---|---|
| A - Brackenridge Wind Farm | 12 x Aerion AW-2.3 (27.6 MW), 2012 | BR-T01 ... BR-T12 |
| B - Carrow Moor Wind Farm | 8 x Aerion AW-3.0 (24 MW), 2016 | CM-T01 ... CM-T08 |
| C - Hollins Flats Solar Park | 18 MWp, 6 central inverters, 2019; 5 MW / 10 MWh battery (2024) | HF-INV-01 ... 06, HF-BESS-01 |

Projects: **Heron** (2022, blade leading-edge repairs), **Falcon** (2023-24, drivetrain condition
monitoring on all 20 turbines, brought forward after the CM-T04 gearbox failure in March 2023) and
**Osprey** (2024, battery storage at Hollins Flats).

People you will meet: Dr Helen Marsh (Managing Director), Rajesh Iyer (Finance Director), Catriona
Bell (Head of HSE), Tomasz Nowak (Head of Engineering), Aisha Okafor (Falcon PM), Priya Sandhu
(Osprey PM), Daniel Achterberg (Reliability Engineer), Grace Whitfield and Owen Pritchard (site
managers), Elena Petrova (solar operations), Samuel Osei (legal / company secretary).

## Layout

```
Engineering/Project-Falcon/2023, 2024   Engineering/Project-Osprey/2024 (+ Photos)   Engineering/Project-Heron/2022
Operations/Incident-Reports/2022..2024  Operations/Procedures   Operations/Maintenance-Logs/2022..2024
Operations/Asset-Register               Finance/Budgets/2022..2024   Finance/Reports
HR/Policies   HR/Training   Legal/Contracts   Management/Board-Minutes/2022..2024
Management/Steering-Committee           Intranet/HSE-Hub
Archive/Legacy        <- a zip of 2019 audit papers, and deliberately awkward files (see below)
_taxonomy/            <- a document-management-system export: term tree + per-file term assignments
_dates.json           <- document date per file (git does not keep file modification times)
```

Formats: PDF (multi-page, with title/author/creation-date metadata), DOCX (core properties set),
Markdown, plain text (one legacy file is Windows-1252 encoded with CRLF line ends), CSV, JSON and an
exported HTML intranet page. One file of each richer format shows what else the app reads:

| File | Format | What it shows |
|---|---|---|
| `Operations/Incident-Reports/2023/IR-2023-002-Site-Memo-Ice-Fall-BR-T05-scanned.pdf` | scanned PDF: one page, an image, no text layer | OCR: the typed memo becomes searchable text |
| `Engineering/Project-Osprey/2024/Photos/BESS-Compound-Safety-Notice.jpg` | phone photo (JPEG) of a safety notice | OCR of a photo |
| `Operations/Asset-Register/Blade-Inspection-Results-2024.xlsx` | workbook, sheets *Brackenridge* and *Carrow Moor* | each sheet is a page, with its header row |
| `Management/Steering-Committee/Osprey-Steering-Committee-2024-07-23.pptx` | slide deck: 5 slides, a table, speaker notes | each slide (with its notes) is a page |
| `Operations/Incident-Reports/2024/RE-Near-miss-IR-2024-004-excavator-near-33kV-cable.eml` | mail reply with a quoted original and an attached DOCX | the attachment `IR-2024-004-Initial-Report.docx` is a child document of the mail |
| `Archive/Legacy/Audit-Papers-2019.zip` | zipped folder: a PDF, a Markdown note and `Working-Notes/` with a text file | each member is a child document of the zip |

## Things to try

Build a workspace from a request, for example:

- "All incident reports for Carrow Moor from 2023"
- "Everything about Project Falcon"
- "Working at height policies and procedures"
- "Board minutes from 2024"
- "Budgets and management accounts for FY2023"

Then ask questions in chat; each has an answer on a specific page:

| Question | Where the answer is |
|---|---|
| What caused the gearbox failure at Site B in March 2023? | `Operations/Incident-Reports/2023/IR-2023-007-Gearbox-Failure-CM-T04.pdf`, page 3 (root cause) |
| Which policy governs working at height? | `HR/Policies/HS-POL-004-Working-at-Height-Policy.pdf`, page 1; also `HS-POL-001` page 2 |
| What was the Falcon project budget for 2023? | `Finance/Budgets/2023/FY2023-Approved-Budget.pdf`, page 2 (£1,250,000), revised to £1,420,000 in `Management/Board-Minutes/2023/Board-Minutes-2023-04-18.pdf`, page 2 |
| What did Project Falcon finally cost? | `Engineering/Project-Falcon/2024/Falcon-Closeout-Report.pdf`, page 2 |
| What are the CMS alarm thresholds for the gearbox? | `Engineering/Project-Falcon/2023/Falcon-CMS-Technical-Specification.pdf`, page 3 |
| How often must gearbox oil be sampled, and why did it change? | `Operations/Procedures/OP-PRO-203-Gearbox-Oil-Sampling.docx` |
| What temperature limits apply to the Osprey battery cells? | `Engineering/Project-Osprey/2024/Osprey-BESS-Design-Basis.pdf`, page 3 |
| Why was Osprey energisation delayed? | `Management/Board-Minutes/2024/Board-Minutes-2024-09-17.md` and `IR-2024-002` (PDF) |
| What wind speed stops tower climbing? | `HR/Policies/HS-POL-004-Working-at-Height-Policy.pdf`, page 2 |
| Who pays for gearbox replacements? | `Legal/Contracts/Aerion-OM-Service-Agreement-Summary-2022.txt` (exclusions) |
| How far from a running turbine must you stay in icy weather? | the scanned memo `IR-2023-002-Site-Memo-Ice-Fall-BR-T05-scanned.pdf` (150 metres; OCR) |
| Where is the muster point for the battery compound? | `Engineering/Project-Osprey/2024/Photos/BESS-Compound-Safety-Notice.jpg` (M3, solar park main gate; OCR) |
| What was the erosion category of BR-T12 in the 2024 inspection? | `Operations/Asset-Register/Blade-Inspection-Results-2024.xlsx`, sheet *Brackenridge* (category 4) |
| What did the Osprey steering committee decide in July 2024? | `Management/Steering-Committee/Osprey-Steering-Committee-2024-07-23.pptx`, slide 5 and its notes (spare HVAC unit, £38,000) |
| How close did the excavator get to the 33 kV cable? | `IR-2024-004-Initial-Report.docx`, attached to the `.eml` in `Operations/Incident-Reports/2024/` (about 400 mm) |
| What did the 2019 height-safety audit find in BR-T08? | `Archive/Legacy/Audit-Papers-2019.zip`, member `Height-Safety-Audit-Brackenridge-2019.pdf`, page 2 (finding F-07) |

Dates: every file's modification time is set to its document date (2022-2024; the archive files are
older), so date filters such as "from 2023" work. Because git does not preserve mtimes, `_dates.json`
maps each relative path to its ISO date; the app restores mtimes from it when it copies the corpus.
To fix the mtimes of a fresh git checkout in place, run
`python resources/make_sample_corpus.py --restore-mtimes`.

## Taxonomy

`_taxonomy/taxonomy.json` is a list of nodes `{"name", "description", "children"}`. A term may occur
under two parents (e.g. *Gearbox* under *Assets > Wind Turbines* and under *Maintenance*; *Training*
under *Safety* and *People*); the name identifies the term. `_taxonomy/assignments.csv` has one row per
file: the relative path (forward slashes), then one or more term names in the following columns (rows
have different lengths; empty cells are ignored). Not every file is assigned, as in a real export.

## Awkward files (error handling demo)

- `Archive/Legacy/Site-Handover-Notes-2016.txt` - empty (0 bytes).
- `Archive/Legacy/SCADA-Export-Brackenridge-2019.txt` - actually a gzip archive renamed to `.txt` (binary).
- `Archive/Legacy/Brackenridge-Commissioning-Report-2012.pdf` - truncated, corrupt PDF.

The app should list these as skipped/failed with a reason rather than stop indexing.
"""


def readme() -> Raw:
    return Raw("_README.md", D(2024, 11, 1), README.encode("utf-8"))

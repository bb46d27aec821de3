"""Spreadsheets: rows found with their column names on their sheet's page, limits, odd files."""

from __future__ import annotations

import datetime as dt
import io
import shutil
import time
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from spar_desktop.core.documents.budget import BudgetExceeded, ExtractionBudget
from spar_desktop.core.documents.chunking import chunk_document
from spar_desktop.core.documents.errors import ExtractionError
from spar_desktop.core.documents.extract import extract
from spar_desktop.core.documents.types import ChunkerConfig

LEGACY = Path(__file__).resolve().parents[2] / "fixtures" / "legacy"


def make_xlsx(path: Path, sheets: dict[str, list[list]], title: str | None = None) -> Path:
    import openpyxl

    wb = openpyxl.Workbook()
    wb.remove(wb.active)
    for name, rows in sheets.items():
        ws = wb.create_sheet(name)
        for row in rows:
            ws.append(row)
    if title:
        wb.properties.title = title
    wb.save(path)
    return path


def make_ods(path: Path, sheets: dict[str, list[list]], title: str | None = None,
             tail_rows: int = 0, repeat_last: int = 1) -> Path:
    """An ODS written with odfpy; ``tail_rows`` empty rows styled to the sheet's end (as Calc
    writes them), the last row of each sheet repeated ``repeat_last`` times."""
    from odf import dc
    from odf.opendocument import OpenDocumentSpreadsheet
    from odf.table import Table, TableCell, TableRow
    from odf.text import P

    doc = OpenDocumentSpreadsheet()
    for name, rows in sheets.items():
        table = Table(name=name)
        for i, row in enumerate(rows):
            tr = TableRow(numberrowsrepeated=repeat_last) if i == len(rows) - 1 and repeat_last > 1 else TableRow()
            for value in row:
                tr.addElement(_ods_cell(value, TableCell, P))
            tr.addElement(TableCell(numbercolumnsrepeated=16000))
            table.addElement(tr)
        if tail_rows:
            tr = TableRow(numberrowsrepeated=tail_rows)
            tr.addElement(TableCell(numbercolumnsrepeated=16384))
            table.addElement(tr)
        doc.spreadsheet.addElement(table)
    if title:
        doc.meta.addElement(dc.Title(text=title))
    doc.save(str(path))
    return path


def _ods_cell(value, TableCell, P):
    if value is None:
        return TableCell()
    if isinstance(value, tuple):  # (number, shown text)
        cell = TableCell(valuetype="float", value=value[0])
        cell.addElement(P(text=value[1]))
        return cell
    if isinstance(value, (int, float)):
        return TableCell(valuetype="float", value=value)  # no text: the number itself is used
    if isinstance(value, dt.date):
        cell = TableCell(valuetype="date", datevalue=value.isoformat())
        cell.addElement(P(text=value.strftime("%d/%m/%y")))
        return cell
    cell = TableCell(valuetype="string")
    cell.addElement(P(text=value))
    return cell


SAMPLES = [["Sample", "Erosion category", "Site", "Inspected"],
           ["BR-T11", 1, "South", dt.datetime(2019, 3, 1)],
           ["BR-T12", 3, "North", dt.datetime(2019, 3, 4)]]


# -------------------------------------------------------------------------------------- XLSX


def test_xlsx_row_carries_column_names_on_its_sheet_page(tmp_path):
    path = make_xlsx(tmp_path / "survey.xlsx", {"Summary": [["Total", 2]], "Data": SAMPLES}, title="Erosion survey")
    doc = extract(path)
    assert doc.format == "xlsx" and doc.title == "Erosion survey"
    assert [p.page for p in doc.pages] == [1, 2]
    data = doc.pages[1].text
    assert data.startswith("Sheet: Data\n")
    assert "Row 3 — Sample: BR-T12; Erosion category: 3; Site: North; Inspected: 2019-03-04" in data.split("\n\n")
    assert "BR-T12" not in doc.pages[0].text


def test_a_chunk_holding_a_row_names_its_columns_and_sheet(tmp_path):
    rows = [["Sample", "Erosion category", "Site"]] + [[f"BR-T{i}", i % 5, "North"] for i in range(400)]
    path = make_xlsx(tmp_path / "big.xlsx", {"Intro": [["About", "x"]], "Data": rows})
    doc = extract(path)
    chunks = chunk_document(doc, ChunkerConfig(method="fixed", child_tokens=40, overlap_tokens=5))
    hit = next(c for c in chunks if "BR-T312;" in c.text or "BR-T312 " in c.text or c.text.endswith("BR-T312"))
    line = next(ln for ln in hit.text.split("\n") if "BR-T312" in ln)
    assert "Sample: BR-T312" in line
    assert hit.page_start == 2


def test_header_blanks_become_letters_and_values_read_like_a_person(tmp_path):
    rows = [["Quarterly erosion report"],  # a caption above the table, not its header
            ["Sample", None, "Depth"],
            ["BR-T12", "North", 2.0], ["BR-T13", None, 2.25],
            ["BR-T14", "West", dt.datetime(2020, 1, 2, 9, 30)], ["BR-T15", True, None, "extra"]]
    doc = extract(make_xlsx(tmp_path / "x.xlsx", {"S": rows}))
    paragraphs = doc.text.split("\n\n")
    assert paragraphs[0] == "Sheet: S\nQuarterly erosion report"
    assert paragraphs[1] == "Columns: Sample; B; Depth"
    assert paragraphs[2:] == ["Row 3 — Sample: BR-T12; B: North; Depth: 2",
                              "Row 4 — Sample: BR-T13; Depth: 2.25",
                              "Row 5 — Sample: BR-T14; B: West; Depth: 2020-01-02 09:30",
                              "Row 6 — Sample: BR-T15; B: TRUE; D: extra"]
    assert doc.title is None


def test_empty_sheets_leave_their_page_number_unused(tmp_path):
    doc = extract(make_xlsx(tmp_path / "x.xlsx", {"A": [["a", "b"], [1, 2]], "Blank": [], "C": [["c"], ["z"]]}))
    assert [p.page for p in doc.pages] == [1, 3]
    assert doc.pages[1].text == "Sheet: C\nColumns: c\n\nRow 2 — c: z"


def test_empty_workbook_says_so(tmp_path):
    doc = extract(make_xlsx(tmp_path / "x.xlsx", {"Sheet1": [], "Sheet2": [[None, None]]}))
    assert doc.pages == () and doc.no_text_reason == "spreadsheet has no cells with values"


def test_password_protected_xlsx(tmp_path):
    from msoffcrypto.format.ooxml import OOXMLFile

    plain = make_xlsx(tmp_path / "plain.xlsx", {"S": SAMPLES})
    locked = tmp_path / "locked.xlsx"
    with open(plain, "rb") as f, open(locked, "wb") as out:
        OOXMLFile(f).encrypt("secret", out)
    with pytest.raises(ExtractionError, match="^spreadsheet is password-protected$"):
        extract(locked)


@pytest.mark.parametrize("damage", ["truncated", "bad_sheet"])
def test_corrupt_xlsx_gets_a_plain_message(tmp_path, damage):
    good = make_xlsx(tmp_path / "good.xlsx", {"S": SAMPLES})
    bad = tmp_path / "bad.xlsx"
    if damage == "truncated":
        bad.write_bytes(good.read_bytes()[:700])
    else:
        with zipfile.ZipFile(good) as src, zipfile.ZipFile(bad, "w") as dst:
            for item in src.infolist():
                data = src.read(item)
                dst.writestr(item, b"<worksheet><sheetData><row r='1'><c" if "worksheets/sheet" in item.filename else data)
    with pytest.raises(ExtractionError) as err:
        extract(bad)
    assert err.value.message.startswith("corrupt spreadsheet: ")
    assert "Error" not in err.value.message and "xml" not in err.value.message.lower()


def test_rows_over_the_limit_are_cut_with_a_warning(tmp_path):
    rows = [["id", "note"]] + [[i, f"note {i}"] for i in range(2, 201)]
    path = make_xlsx(tmp_path / "x.xlsx", {"Data": rows, "Later": [["k"], ["never read"]]})
    doc = extract(path, budget=ExtractionBudget(max_rows=50))
    assert "sheet 'Data' cut at 50 rows (the per-file limit)" in doc.warnings
    assert "Row 50 — id: 50" in doc.text and "Row 51 " not in doc.text
    assert "never read" not in doc.text


def test_columns_sheets_and_characters_are_limited(tmp_path):
    wide = [[f"c{i}" for i in range(6)], list(range(6))]
    path = make_xlsx(tmp_path / "x.xlsx", {"A": wide, "B": [["b"], [1]], "C": [["c"], [1]]})
    doc = extract(path, budget=ExtractionBudget(max_columns=3, max_pages=2))
    assert "Row 2 — c0: 0; c1: 1; c2: 2" in doc.text and "c3" not in doc.text
    assert "sheet 'A': only the first 3 columns were read (the per-file limit)" in doc.warnings
    assert "only the first 2 sheets were read (the per-file limit)" in doc.warnings
    assert [p.page for p in doc.pages] == [1, 2]
    short = extract(path, budget=ExtractionBudget(max_chars=30))
    assert len(short.text) <= 30 and "text truncated at 30 characters" in short.warnings


def test_a_tiny_time_limit_stops_with_budget_exceeded(tmp_path):
    rows = [["id"]] + [[i] for i in range(2000)]
    path = make_xlsx(tmp_path / "x.xlsx", {"S": rows})
    with pytest.raises(BudgetExceeded, match="too slow to read"):
        extract(path, budget=ExtractionBudget(max_seconds=0.0))


def excel_style_xlsx(path: Path, date1904: bool = False) -> Path:
    """An .xlsx as Excel writes it (openpyxl writes inline strings and no dimension): a shared
    string table with rich text and phonetic hints, custom date formats, sparse rows, and a second
    sheet whose elements carry an 'x:' prefix, as some exporters write them."""
    main = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
    rel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    parts = {
        "[Content_Types].xml": '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>',
        "xl/workbook.xml": (f'<workbook xmlns="{main}" xmlns:r="{rel}"><workbookPr date1904="{int(date1904)}"/>'
                            '<sheets><sheet name="Faults" sheetId="1" r:id="rId1"/>'
                            '<sheet name="Chart1" sheetId="2" r:id="rId2"/>'
                            '<sheet name="Prefixed" sheetId="3" r:id="rId3"/></sheets></workbook>'),
        "xl/_rels/workbook.xml.rels": (
            '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            f'<Relationship Id="rId1" Type="{rel}/worksheet" Target="worksheets/sheet1.xml"/>'
            f'<Relationship Id="rId2" Type="{rel}/chartsheet" Target="chartsheets/sheet1.xml"/>'
            f'<Relationship Id="rId3" Type="{rel}/worksheet" Target="/xl/worksheets/sheet2.xml"/>'
            '</Relationships>'),
        "xl/sharedStrings.xml": (
            f'<sst xmlns="{main}"><si><t>Turbine</t></si><si><t>Fault</t></si><si><t>Logged</t></si>'
            '<si><t>Hours</t></si><si><r><t>Gear</t></r><r><rPr><b/></rPr><t xml:space="preserve">box oil</t></r>'
            '<rPh><t>GIAHBOKKUSU</t></rPh></si><si><t>T7</t></si></sst>'),
        "xl/styles.xml": (
            f'<styleSheet xmlns="{main}"><numFmts><numFmt numFmtId="164" formatCode="dd/mm/yyyy;@"/>'
            '<numFmt numFmtId="165" formatCode="[h]:mm"/><numFmt numFmtId="166" formatCode="&quot;Day&quot; 0"/>'
            '</numFmts><cellXfs><xf numFmtId="0"/><xf numFmtId="164"/><xf numFmtId="20"/><xf numFmtId="165"/>'
            '<xf numFmtId="166"/></cellXfs></styleSheet>'),
        "xl/worksheets/sheet1.xml": (
            f'<worksheet xmlns="{main}"><sheetData>'
            '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c><c r="C1" t="s"><v>2</v></c>'
            '<c r="D1" t="s"><v>3</v></c></row>'
            '<row r="4"><c r="A4" t="s"><v>5</v></c><c r="B4" t="s"><v>4</v></c><c r="C4" s="1"><v>43525</v></c>'
            '<c r="D4" s="3"><v>1.5</v></c><c r="F4" t="e"><v>#N/A</v></c></row>'
            '<row><c t="str"><v>T8</v></c><c t="b"><v>1</v></c><c s="2"><v>0.75</v></c><c s="4"><v>7</v></c></row>'
            '</sheetData></worksheet>'),
        "xl/worksheets/sheet2.xml": (
            f'<x:worksheet xmlns:x="{main}"><x:sheetData><x:row r="1"><x:c r="A1" t="inlineStr"><x:is><x:t>Note'
            '</x:t></x:is></x:c></x:row><x:row r="2"><x:c r="A2" t="inlineStr"><x:is><x:t>checked by AB</x:t></x:is>'
            '</x:c></x:row></x:sheetData></x:worksheet>'),
        "docProps/core.xml": ('<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/'
                              'metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/">'
                              '<dc:title>Fault log</dc:title></cp:coreProperties>'),
    }
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, xml in parts.items():
            zf.writestr(name, '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n' + xml)
    return path


@pytest.mark.parametrize("date1904", [False, True])
def test_excel_style_workbook_shared_strings_dates_and_sparse_rows(tmp_path, date1904):
    doc = extract(excel_style_xlsx(tmp_path / "log.xlsx", date1904))
    assert doc.title == "Fault log"
    assert [p.page for p in doc.pages] == [1, 3]  # the chart sheet holds no cells
    logged = "2023-03-02" if date1904 else "2019-03-01"
    assert doc.pages[0].text.split("\n\n")[1:] == [
        f"Row 4 — Turbine: T7; Fault: Gearbox oil; Logged: {logged}; Hours: 1.5; F: #N/A",
        "Row 5 — Turbine: T8; Fault: TRUE; Logged: 18:00; Hours: 7"]
    assert doc.pages[1].text == "Sheet: Prefixed\nColumns: Note\n\nRow 2 — Note: checked by AB"


# --------------------------------------------------------------------------------------- XLS


def test_xls_read_with_xlrd_sheet_by_sheet():
    doc = extract(LEGACY / "survey.xls")  # written by LibreOffice Calc (make_fixtures.py)
    assert doc.format == "xls"
    assert [p.page for p in doc.pages] == [1, 2]
    assert "Row 2 — Sample: BR-T12; Erosion category: 3; Site: North; Inspected: 2019-03-04" in doc.pages[0].text
    assert doc.pages[1].text == "Sheet: Costs\nColumns: Item; Amount\n\nRow 2 — Item: Blade repair; Amount: 12500.5"


def test_xls_row_limit_and_old_workbook_with_an_xlsx_name(tmp_path):
    cut = extract(LEGACY / "survey.xls", budget=ExtractionBudget(max_rows=2))
    assert "sheet 'Samples' cut at 2 rows (the per-file limit)" in cut.warnings
    assert [p.page for p in cut.pages] == [1]
    renamed = tmp_path / "survey.xlsx"
    shutil.copyfile(LEGACY / "survey.xls", renamed)
    doc = extract(renamed)
    assert "Sample: BR-T12" in doc.text
    assert doc.warnings[0] == "an old-format .xls workbook saved with an .xlsx name"


def test_xls_that_is_an_html_table(tmp_path):
    path = tmp_path / "export.xls"
    path.write_text("<html><head><title>Assets</title></head><body><table>"
                    "<tr><th>Asset</th><th>Owner</th><th>Cost</th></tr>"
                    "<tr><td>Pump 4</td><td>Facilities</td><td>1,200</td></tr>"
                    "<tr><td colspan='2'>Pump 5 shared</td><td>900</td></tr></table></body></html>")
    doc = extract(path)
    assert doc.format == "xls"
    assert "an HTML table saved with an .xls name" in doc.warnings
    assert doc.pages[0].text.split("\n\n") == ["Sheet: Assets\nColumns: Asset; Owner; Cost",
                                               "Row 2 — Asset: Pump 4; Owner: Facilities; Cost: 1,200",
                                               "Row 3 — Asset: Pump 5 shared; Cost: 900"]


def test_xls_that_is_tab_separated_text(tmp_path):
    path = tmp_path / "report.xls"
    path.write_text("Site\tTurbines\nNorth\t12\nSouth\t7\n", encoding="cp1252")
    doc = extract(path)
    assert "a delimited text file saved with an .xls name" in doc.warnings
    assert "Row 3 — Site: South; Turbines: 7" in doc.text


def test_xls_that_is_xml_spreadsheet_2003(tmp_path):
    path = tmp_path / "old.xls"
    path.write_text(
        '<?xml version="1.0"?>\n<Workbook xmlns="urn:schemas-microsoft-com:office:spreadsheet" '
        'xmlns:ss="urn:schemas-microsoft-com:office:spreadsheet"><Worksheet ss:Name="Faults"><Table>'
        '<Row><Cell><Data ss:Type="String">Turbine</Data></Cell><Cell><Data ss:Type="String">Date</Data></Cell>'
        '<Cell><Data ss:Type="String">Hours</Data></Cell></Row>'
        '<Row ss:Index="4"><Cell><Data ss:Type="String">T7</Data></Cell>'
        '<Cell><Data ss:Type="DateTime">2018-06-01T00:00:00.000</Data></Cell>'
        '<Cell><Data ss:Type="Number">12.0</Data></Cell></Row></Table></Worksheet></Workbook>')
    doc = extract(path)
    assert doc.pages[0].text.endswith("Row 4 — Turbine: T7; Date: 2018-06-01; Hours: 12")


def test_corrupt_xls(tmp_path):
    path = tmp_path / "broken.xls"
    path.write_bytes((LEGACY / "survey.xls").read_bytes()[:1500])
    with pytest.raises(ExtractionError, match="^corrupt spreadsheet: "):
        extract(path)


# --------------------------------------------------------------------------------------- ODS


def test_ods_rows_sheets_title_and_values(tmp_path):
    sheets = {"Notes": [["Remark", "By"], ["checked", "AB"]],
              "Data": [["Sample", "Erosion category", None, "Inspected", "Cost"],
                       ["BR-T12", 3, "North", dt.date(2019, 3, 4), (1200.5, "£1,200.50")]]}
    doc = extract(make_ods(tmp_path / "s.ods", sheets, title="Erosion survey", tail_rows=1_048_000))
    assert doc.format == "ods" and doc.title == "Erosion survey"
    assert [p.page for p in doc.pages] == [1, 2]
    assert doc.pages[1].text == ("Sheet: Data\nColumns: Sample; Erosion category; C; Inspected; Cost\n\n"
                                 "Row 2 — Sample: BR-T12; Erosion category: 3; C: North; "
                                 "Inspected: 2019-03-04; Cost: £1,200.50")


def test_ods_with_a_million_repeated_rows_finishes_fast(tmp_path):
    path = make_ods(tmp_path / "big.ods", {"S": [["k", "v"], ["a", 1]]}, tail_rows=1_048_576)
    with zipfile.ZipFile(path) as zf:
        assert b'number-rows-repeated="1048576"' in zf.read("content.xml")
    started = time.perf_counter()
    doc = extract(path)
    assert time.perf_counter() - started < 2.0
    assert doc.text == "Sheet: S\nColumns: k; v\n\nRow 2 — k: a; v: 1"


def test_ods_repeated_rows_with_values_count_against_the_limit(tmp_path):
    path = make_ods(tmp_path / "r.ods", {"S": [["k"], ["same"]]}, repeat_last=1_000_000)
    doc = extract(path, budget=ExtractionBudget(max_rows=5))
    assert doc.text.count("k: same") == 4 and "Row 5 — k: same" in doc.text
    assert "sheet 'S' cut at 5 rows (the per-file limit)" in doc.warnings


def test_ods_password_protected_and_corrupt(tmp_path):
    good = make_ods(tmp_path / "s.ods", {"S": [["a"], ["b"]]})
    locked, broken = tmp_path / "locked.ods", tmp_path / "broken.ods"
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(locked, "w") as a, zipfile.ZipFile(broken, "w") as b:
        for item in src.infolist():
            data = src.read(item)
            if item.filename == "META-INF/manifest.xml":
                a.writestr(item.filename, data.replace(b"</manifest:manifest>",
                                                       b"<manifest:encryption-data/></manifest:manifest>"))
            else:
                a.writestr(item.filename, data)
            b.writestr(item.filename, data[: len(data) // 2] if item.filename == "content.xml" else data)
    with pytest.raises(ExtractionError, match="^spreadsheet is password-protected$"):
        extract(locked)
    with pytest.raises(ExtractionError, match="^corrupt spreadsheet: its content is damaged or incomplete$"):
        extract(broken)


def test_ods_tiny_time_limit(tmp_path):
    path = make_ods(tmp_path / "t.ods", {"S": [["k"]] + [[f"v{i}"] for i in range(600)]})
    with pytest.raises(BudgetExceeded):
        extract(path, budget=replace(ExtractionBudget(), max_seconds=0.0))


def test_xls_html_export_with_deep_nesting_is_read_linearly(tmp_path):
    """200,000 nested tables in an .xls "web page": read in one pass, the outer table's rows kept,
    the nested text in its cell; a colspan of a billion stays a short row."""
    path = tmp_path / "hostile.xls"
    deep = "<table><tr><td>" * 200_000 + "core" + "</td></tr></table>" * 200_000
    path.write_text("<html><body><table><tr><th>Site</th><th>Note</th></tr>"
                    f"<tr><td>North</td><td>{deep}</td></tr>"
                    "<tr><td colspan='1000000000'>South wide</td><td>ok</td></tr></table></body></html>")
    doc = extract(path)  # the tree walk this replaced did not finish on this file
    assert "Row 2 — Site: North; Note: core" in doc.text
    assert "Row 3 — Site: South wide" in doc.text
